package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.webhook.AdmissionWebhookIT;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The real kube-apiserver's built-in ServiceAccount admission plugin, switched on, against the volume the
 * webhook injects (AD-6, as {@link ServiceAccountAdmissionTest#projected} pins it): the same
 * {@code kube-api-access-*} volume, source by source, and the same mount.
 *
 * <p>OpenShift's fork of Kubernetes adds one source to that volume: the ConfigMap
 * {@code openshift-service-ca.crt} (key {@code service-ca.crt}), which only OpenShift's service-CA operator
 * fills. It does not touch what this test checks: the token, {@code ca.crt} and {@code namespace} files a
 * pod reads are the upstream ones, unchanged. So exactly that source, in exactly that shape, is set
 * aside when the server adds it; any other difference fails. Its {@code /version} does not say it is
 * OpenShift's, so the source itself is what tells.
 */
@RequiresKubeApiServer
class BuiltInPluginParityIT {

    /** What OpenShift's ServiceAccount admission plugin appends to the volume's sources. */
    static final JsonElement OPENSHIFT_SERVICE_CA = JsonParser.parseString(("{'configMap':{"
            + "'name':'openshift-service-ca.crt','items':[{'key':'service-ca.crt','path':'service-ca.crt'}]}}")
            .replace('\'', '"'));

    static KubeApiServer server;

    @BeforeAll
    static void start() throws Exception {
        // the harness turns the plugin off; here nothing else is turned off instead
        server = KubeApiServer.builder().flag("--disable-admission-plugins", "").build().start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void builtInPlugin_injectsTheWebhooksVolume_apartFromOpenShiftsServiceCaSource() throws Exception {
        String namespace = server.createNamespace("parity");
        server.createServiceAccount(namespace, "default");
        CoreV1Api admin = new CoreV1Api(server.adminClient());

        V1Pod created = admin.createNamespacedPod(namespace, AdmissionWebhookIT.pod("plain", null)).execute();

        assertThat(created.getSpec().getServiceAccountName()).isEqualTo("default");
        V1Volume volume = created.getSpec().getVolumes().get(0);
        assertThat(volume.getName()).matches("kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}");
        JsonObject actual = JsonParser.parseString(server.adminClient().getJSON().serialize(volume.getProjected()))
                .getAsJsonObject();
        JsonArray sources = actual.getAsJsonArray("sources");
        boolean openShift = sources.remove(OPENSHIFT_SERVICE_CA);
        System.out.println("==== ServiceAccount admission plugin of " + server.gitVersion() + ": "
                + (openShift ? "OpenShift's (adds the openshift-service-ca.crt source, set aside)" : "upstream's")
                + " ====");
        JsonObject expected = JsonParser.parseString(ServiceAccountAdmissionTest.projected(volume.getName())
                .replace('\'', '"')).getAsJsonObject().getAsJsonObject("projected");
        assertThat(actual).isEqualTo(expected);
        assertThat(created.getSpec().getContainers().get(0).getVolumeMounts()).singleElement().satisfies(mount -> {
            assertThat(mount.getName()).isEqualTo(volume.getName());
            assertThat(mount.getMountPath()).isEqualTo("/var/run/secrets/kubernetes.io/serviceaccount");
            assertThat(mount.getReadOnly()).isTrue();
        });
    }
}
