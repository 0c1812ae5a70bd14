package io.satoken.controlplane.rootca;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.controlplane.controller.DeepCopy;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec 8's TestConfigMapCreation table (RC-1..RC-3) against {@link RootCaSync}. */
class RootCaSyncTest {

    static final String CA = "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n";

    /** The ConfigMap in the cache when the namespace is synced (null: none), and the expected write. */
    record Case(String name, V1ConfigMap cached, String expectedAction) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> configMapCreation() {
        Map<String, String> extra = new HashMap<>(Map.of("ca.crt", CA, "test", "test"));
        // RC-2 filters which events reach a sync; "delete other configmap", "update with other configmap" and a
        // terminating namespace update never queue the namespace, so their sync is not run (RootCaTriggersTest)
        return Stream.of(
                new Case("create new namesapce", null, "create"),
                new Case("delete ca configmap", null, "create"),
                new Case("update ca configmap with adding field", configMap(extra, true), "update"),
                new Case("update ca configmap with modifying field", configMap(Map.of("ca.crt", "other"), true), "update"),
                new Case("up-to-date configmap is not updated again", configMap(Map.of("ca.crt", CA), true), null),
                new Case("configmap without the description annotation", configMap(Map.of("ca.crt", CA), false),
                        "update"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void configMapCreation(Case c) {
        Cache<V1ConfigMap> cache = new Cache<>();
        if (c.cached() != null) {
            cache.add(c.cached());
        }
        List<V1ConfigMap> created = new ArrayList<>();
        List<V1ConfigMap> updated = new ArrayList<>();
        RootCaSync sync = new RootCaSync(new Lister<>(cache), new ConfigMapWriter() {
            @Override
            public void create(V1ConfigMap cm) {
                created.add(cm);
            }

            @Override
            public void update(V1ConfigMap current, Map<String, String> data, String description) {
                V1ConfigMap desired = DeepCopy.of(current).data(data);
                desired.getMetadata().putAnnotationsItem(RootCaSync.DESCRIPTION_ANNOTATION, description);
                updated.add(desired);
            }
        }, CA);

        assertThat(sync.reconcile("ns")).isEqualTo(Result.DONE);

        List<V1ConfigMap> written = "create".equals(c.expectedAction()) ? created : updated;
        assertThat(created.size() + updated.size()).isEqualTo(c.expectedAction() == null ? 0 : 1);
        if (c.expectedAction() != null) {
            V1ConfigMap cm = written.get(0);
            assertThat(cm.getMetadata().getName()).isEqualTo("kube-root-ca.crt");
            assertThat(cm.getMetadata().getNamespace()).isEqualTo("ns");
            assertThat(cm.getData()).isEqualTo(Map.of("ca.crt", CA)); // RC-1: exactly ca.crt
            assertThat(cm.getMetadata().getAnnotations()).containsEntry(RootCaSync.DESCRIPTION_ANNOTATION,
                    RootCaSync.DESCRIPTION);
        }
    }

    /** RC-3's update, as a patch: the data made exactly {ca.crt}, the description set, guarded by the version read. */
    @Test
    void update_patchesOnlyTheDataAndTheDescription_andNeverEditsTheCachedObject() {
        V1ConfigMap cached = configMap(new HashMap<>(Map.of("ca.crt", "old", "extra", "x")), false);
        cached.getMetadata().putLabelsItem("team", "a").putAnnotationsItem("note", "keep");
        Cache<V1ConfigMap> cache = new Cache<>();
        cache.add(cached);
        List<String> patches = new ArrayList<>();
        RootCaSync sync = new RootCaSync(new Lister<>(cache), new ConfigMapWriter() {
            @Override
            public void create(V1ConfigMap cm) {
                throw new AssertionError("no create expected");
            }

            @Override
            public void update(V1ConfigMap current, Map<String, String> data, String description) {
                patches.add(ApiConfigMapWriter.patch(current, data, description).json());
            }
        }, CA);

        sync.reconcile("ns");

        assertThat(JsonParser.parseString(patches.get(0))).isEqualTo(JsonParser.parseString("""
                {"metadata": {"resourceVersion": "5", "annotations": {"kubernetes.io/description": %s}},
                 "data": {"ca.crt": %s, "extra": null}}""".formatted(quote(RootCaSync.DESCRIPTION), quote(CA))));
        assertThat(cached.getData()).containsEntry("ca.crt", "old");
        assertThat(cached.getMetadata().getAnnotations()).doesNotContainKey(RootCaSync.DESCRIPTION_ANNOTATION);
    }

    private static String quote(String text) {
        return new JsonPrimitive(text).toString();
    }

    @Test
    void createErrors_namespaceGoneOrTerminatingAreIgnored_othersRetry() { // RC-3
        for (var answer : List.of(Map.entry(404, "{\"reason\":\"NotFound\"}"), Map.entry(403,
                "{\"details\":{\"causes\":[{\"reason\":\"NamespaceTerminating\"}]}}"), Map.entry(500, "{}"))) {
            RootCaSync sync = new RootCaSync(new Lister<>(new Cache<>()), new ConfigMapWriter() {
                @Override
                public void create(V1ConfigMap cm) throws ApiException {
                    throw new ApiException(answer.getKey(), Map.of(), answer.getValue());
                }

                @Override
                public void update(V1ConfigMap current, Map<String, String> data, String description) {
                }
            }, CA);
            assertThat(sync.reconcile("ns")).as("HTTP %d", answer.getKey())
                    .isEqualTo(answer.getKey() == 500 ? Result.RETRY : Result.DONE);
        }
    }

    static V1ConfigMap configMap(Map<String, String> data, boolean described) {
        V1ObjectMeta meta = new V1ObjectMeta().name("kube-root-ca.crt").namespace("ns").resourceVersion("5");
        if (described) {
            meta.putAnnotationsItem(RootCaSync.DESCRIPTION_ANNOTATION, "anything");
        }
        return new V1ConfigMap().metadata(meta).data(data);
    }
}
