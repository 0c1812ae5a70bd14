package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

/**
 * Walking a YAML document loaded as plain maps and lists (SnakeYAML's SafeConstructor), for the tests that
 * check the deploy manifests file by file: each step asserts the node's type, so a manifest of the wrong
 * shape fails with the key's name instead of a ClassCastException.
 */
public final class YamlTrees {

    private YamlTrees() {
    }

    /** {@code parent[key]}, which must be a list. */
    @SuppressWarnings("unchecked")
    public static List<Object> list(Map<String, Object> parent, String key) {
        Object value = parent.get(key);
        assertThat(value).as(key).isInstanceOf(List.class);
        return (List<Object>) value;
    }

    /** {@code node}, which must be a map. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Object node) {
        assertThat(node).isInstanceOf(Map.class);
        return (Map<String, Object>) node;
    }
}
