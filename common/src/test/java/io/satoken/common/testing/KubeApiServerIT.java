package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness itself: the server is up, RBAC is on, kubeconfigs work, and it survives a restart. */
@RequiresKubeApiServer
class KubeApiServerIT {

    private static KubeApiServer server;
    private static String namespace;

    @BeforeAll
    static void setUp(KubeApiServer shared) throws ApiException {
        server = shared;
        namespace = server.createNamespace("harness");
    }

    @Test
    void readyz_answersOk() throws Exception {
        Request readyz = new Request.Builder().url(server.url() + "/readyz")
                .header("Authorization", "Bearer " + server.adminToken()).build();
        try (Response r = server.adminClient().getHttpClient().newCall(readyz).execute()) {
            assertThat(r.code()).isEqualTo(200);
            assertThat(r.body().string()).isEqualTo("ok");
        }
    }

    @Test
    void createNamespace_generatesName() throws ApiException {
        assertThat(namespace).startsWith("harness-").hasSizeGreaterThan("harness-".length());
        assertThat(new CoreV1Api(server.adminClient()).readNamespace(namespace).execute().getMetadata().getName())
                .isEqualTo(namespace);
    }

    @Test
    void rbac_deniesServiceAccountWithoutRoles() throws ApiException {
        String token = server.serviceAccountToken(namespace, "nobody");
        CoreV1Api asNobody = new CoreV1Api(server.clientFor(token));

        assertThatThrownBy(() -> asNobody.listNamespacedSecret(namespace).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(403);
                    assertThat(e.getResponseBody())
                            .contains("system:serviceaccount:" + namespace + ":nobody")
                            .contains("cannot list resource \\\"secrets\\\"");
                });
        // the same request as admin succeeds, so the 403 is authorization, not a broken setup
        assertThat(new CoreV1Api(server.adminClient()).listNamespacedSecret(namespace).execute().getItems())
                .isNotNull();
    }

    @Test
    void writeKubeconfig_actsAsTheTokensUser(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("kubeconfig");
        server.writeKubeconfig(file, server.serviceAccountToken(namespace, "kubeconfig-user"));

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file))).isEqualTo("rw-------");
        ApiClient client;
        try (Reader r = Files.newBufferedReader(file)) {
            client = ClientBuilder.kubeconfig(KubeConfig.loadKubeConfig(r)).build();
        }
        assertThatThrownBy(() -> new CoreV1Api(client).listNamespacedSecret(namespace).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getResponseBody())
                        .contains("system:serviceaccount:" + namespace + ":kubeconfig-user"));
    }

    @Test
    void start_failureReportsTheServersOwnOutputAndCleansUp() {
        KubeApiServer broken = KubeApiServer.builder().flag("--no-such-flag", "1").build();

        assertThatThrownBy(broken::start)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("kube-apiserver exited with status")
                .hasMessageContaining("kube-apiserver.log ---")
                .hasMessageContaining("unknown flag: --no-such-flag");
        assertThat(broken.workDir()).isNull();
    }

    @Test
    void stopThenStart_keepsPortAndEtcdState() throws Exception {
        String url = server.url();
        CoreV1Api admin = new CoreV1Api(server.adminClient());

        server.stop();
        assertThatThrownBy(() -> admin.readNamespace(namespace).execute())
                .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.getCode()).isZero());

        server.start();
        assertThat(server.url()).isEqualTo(url);
        assertThat(admin.readNamespace(namespace).execute().getMetadata().getName()).isEqualTo(namespace);
    }
}
