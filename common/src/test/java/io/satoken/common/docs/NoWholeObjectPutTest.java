package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No program PUTs an API object back whole: client-java's {@code replace*} calls (and its {@code LeaseLock}, which
 * makes one) send the object as this client's models know it, erasing every field a newer API server keeps that
 * they lack. Writes are patches of the fields the writer owns (docs/control-plane.md, "Newer API servers").
 */
class NoWholeObjectPutTest {

    /** client-java's PUT methods: {@code replaceNamespacedSecret(}, {@code replaceClusterRole(}, ... */
    static final Pattern PUT = Pattern.compile("\\.replace(?!All\\(|First\\()[A-Z]\\w*\\(|new LeaseLock\\(");

    @Test
    void noMainSource_putsAnApiObjectBack() throws IOException {
        Path root = RuleIdsDefinedTest.repositoryRoot();
        List<String> found = new ArrayList<>();
        for (String module : List.of("common", "agent", "controlplane")) {
            try (Stream<Path> files = Files.walk(root.resolve(module).resolve("src/main/java"))) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    String text = Files.readString(file, StandardCharsets.UTF_8);
                    Matcher m = PUT.matcher(text);
                    while (m.find()) {
                        if (!(m.group().equals("new LeaseLock(") && file.endsWith("PatchingLeaseLock.java"))) {
                            found.add(root.relativize(file) + ": " + m.group());
                        }
                    }
                }
            }
        }

        assertThat(found).as("send a patch of the fields the writer owns instead").isEmpty();
    }

    @Test
    void pattern_catchesClientJavaPuts_notStringReplace() {
        assertThat(PUT.matcher("core.replaceNamespacedSecret(name, ns, s)").find()).isTrue();
        assertThat(PUT.matcher("rbac.replaceClusterRole(name, role)").find()).isTrue();
        assertThat(PUT.matcher("new LeaseLock(ns, name, id, client)").find()).isTrue();
        assertThat(PUT.matcher("text.replaceAll(\"a\", \"b\")").find()).isFalse();
        assertThat(PUT.matcher("text.replace('a', 'b')").find()).isFalse();
    }
}
