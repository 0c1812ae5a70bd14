package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.reflect.TypeToken;
import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.AuthenticationV1TokenRequest;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.CoreV1EventList;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleList;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1DaemonSet;
import io.kubernetes.client.openapi.models.V1DaemonSetList;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ServiceAccountList;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfigurationList;
import io.kubernetes.client.openapi.models.VersionInfo;
import io.kubernetes.client.util.Watch;
import io.satoken.common.testing.Kubeconfigs;
import io.satoken.common.testing.ModelSamples;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kind either program reads, with a field its client-java models do not know added to every object at
 * every level (metadata, spec, status, items of lists, maps of objects), as a newer API server sends it: read
 * without error, and with every known field keeping its value. client-java's own adapters throw on the first
 * unknown field ({@code V1PodStatus}: "The field `resources` ... is not defined").
 */
class TolerantJsonTest {

    @BeforeAll
    static void install() {
        TolerantJson.install();
    }

    /** The agent's reads (pod, Events, webhook registrations, TokenRequest, Status, version) and the controllers'. */
    static List<Class<?>> kinds() {
        return List.of(V1Pod.class, V1PodList.class, CoreV1Event.class, CoreV1EventList.class,
                V1ValidatingWebhookConfiguration.class, V1ValidatingWebhookConfigurationList.class,
                AuthenticationV1TokenRequest.class, V1Status.class, VersionInfo.class,
                V1ServiceAccount.class, V1ServiceAccountList.class, V1Secret.class, V1SecretList.class,
                V1ConfigMap.class, V1ConfigMapList.class, V1ClusterRole.class, V1ClusterRoleList.class,
                V1DaemonSet.class, V1DaemonSetList.class, V1Namespace.class, V1NamespaceList.class, V1Lease.class,
                V1Node.class); // the tests' own harness waits on the Node's status (1.36 adds declaredFeatures)
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void unknownFieldsAtEveryLevel_areSkipped_andKnownFieldsKeepTheirValues(Class<?> kind) {
        JsonObject known = ModelSamples.of(kind, false);
        String fromNewerServer = ModelSamples.of(kind, true).toString();
        assertThat(fromNewerServer).contains(ModelSamples.UNKNOWN_FIELD);

        Object read = JSON.deserialize(fromNewerServer, kind);

        assertThat(JsonParser.parseString(JSON.serialize(read))).isEqualTo(known);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kinds")
    void watchEvents_withUnknownFields_areRead(Class<?> kind) {
        JsonObject line = new JsonObject();
        line.addProperty("type", "MODIFIED");
        line.add("object", ModelSamples.of(kind, true));
        line.add(ModelSamples.UNKNOWN_FIELD, ModelSamples.unknownValue());

        Watch.Response<?> event = JSON.deserialize(line.toString(),
                TypeToken.getParameterized(Watch.Response.class, kind).getType());

        assertThat(event.type).isEqualTo("MODIFIED");
        assertThat(JsonParser.parseString(JSON.serialize(event.object))).isEqualTo(ModelSamples.of(kind, false));
    }

    /** The path the agent's publish takes on 1.36: a client built by KubeClients reads a pod over HTTP. */
    @Test
    void aClientFromKubeClients_readsAPodWithFieldsItsModelsLack(@TempDir Path dir) throws Exception {
        JsonObject pod = ModelSamples.of(V1Pod.class, true);
        pod.getAsJsonObject("status").addProperty("resources", "a 1.36 kubelet writes this");
        byte[] body = pod.toString().getBytes(StandardCharsets.UTF_8);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/v1/namespaces/ns/pods/web", exchange -> {
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            Path kubeconfig = Kubeconfigs.withToken(dir.resolve("kubeconfig"),
                    "http://127.0.0.1:" + server.getAddress().getPort());
            ApiClient client = KubeClients.fromKubeconfig(kubeconfig);

            V1Pod read = new CoreV1Api(client).readNamespacedPod("web", "ns").execute();

            assertThat(read.getSpec().getServiceAccountName()).isEqualTo("s");
            assertThat(read.getStatus().getPhase()).isEqualTo("s");
            assertThat(read.getMetadata().getUid()).isEqualTo("s");
        } finally {
            server.stop(0);
        }
    }

    /** client-java's MicroTime format, both ways: six fraction digits and Z written; no fraction read too. */
    @Test
    void timestamps_areWrittenAndReadAsClientJavaDoes() {
        OffsetDateTime at = OffsetDateTime.of(2026, 11, 28, 10, 0, 1, 123_456_000, ZoneOffset.UTC);
        CoreV1Event event = new CoreV1Event().eventTime(at).lastTimestamp(at.withNano(0));

        JsonObject written = JsonParser.parseString(JSON.serialize(event)).getAsJsonObject();
        CoreV1Event read = JSON.deserialize("{\"eventTime\":\"2026-11-28T10:00:01.123456Z\","
                + "\"lastTimestamp\":\"2026-11-28T10:00:01Z\"}", CoreV1Event.class);

        assertThat(written.get("eventTime").getAsString()).isEqualTo("2026-11-28T10:00:01.123456Z");
        assertThat(written.get("lastTimestamp").getAsString()).isEqualTo("2026-11-28T10:00:01.000000Z");
        assertThat(read.getEventTime()).isEqualTo(at);
        assertThat(read.getLastTimestamp()).isEqualTo(at.withNano(0));
    }

    @Test
    void install_twice_keepsOneGson() {
        TolerantJson.install();
        TolerantJson.install();

        assertThat(JSON.getGson()).isSameAs(TolerantJson.gson());
    }

}
