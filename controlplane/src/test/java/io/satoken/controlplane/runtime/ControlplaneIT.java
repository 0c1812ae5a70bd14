package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1TokenReview;
import io.kubernetes.client.openapi.models.V1TokenReviewSpec;
import io.kubernetes.client.openapi.models.V1TokenReviewStatus;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.jwt.ServiceAccountSigner;
import io.satoken.controlplane.rootca.RootCaBundle;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The controllers in one process against a real kube-apiserver whose {@code --service-account-key-file}
 * is the public half of our signing key: namespaces get their {@code default} ServiceAccount and
 * {@code kube-root-ca.crt}, token Secrets we fill authenticate, and deleted accounts lose their tokens.
 */
@RequiresKubeApiServer
public class ControlplaneIT {

    static final Duration WAIT = Duration.ofSeconds(20);

    static KubeApiServer server;
    static ControlplaneRuntime runtime;
    static CoreV1Api core;
    static byte[] ca;

    @BeforeAll
    static void start(KubeApiServer shared) throws Exception {
        server = shared;
        core = new CoreV1Api(server.adminClient());
        ca = RootCaBundle.load(server.servingCertificate());
        runtime = start(server, false);
    }

    static ControlplaneRuntime start(KubeApiServer server, boolean autoCreate) throws Exception {
        ApiClient watchClient = server.clientFor(server.adminToken());
        watchClient.setReadTimeout(0);
        ApiClient client = server.clientFor(server.adminToken());
        ControlplaneRuntime rt = new ControlplaneRuntime(new ControlplaneRuntime.Settings(
                Set.of("tokens", "serviceaccounts", "root-ca"),
                ServiceAccountSigner.load(server.serviceAccountSigningKey()), RootCaBundle.load(server.servingCertificate()),
                autoCreate, 2, new InetSocketAddress("127.0.0.1", 0), null, null),
                client, watchClient, client);
        rt.startServing();
        return runInBackground(rt);
    }

    /** Runs {@code rt} on a daemon thread until it is closed; returns it. */
    public static ControlplaneRuntime runInBackground(ControlplaneRuntime rt) {
        Thread t = new Thread(() -> {
            try {
                rt.run();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "controlplane-it");
        t.setDaemon(true);
        t.start();
        return rt;
    }

    @AfterAll
    static void stop() {
        if (runtime != null) {
            runtime.close();
        }
    }

    @Test
    void newNamespace_getsDefaultServiceAccountAndRootCaConfigMap() throws Exception { // SC-1, RC-1
        String ns = server.createNamespace("cp-ns");

        await().atMost(WAIT).ignoreExceptions().until(() ->
                core.readNamespacedServiceAccount("default", ns).execute() != null);
        V1ConfigMap cm = await().atMost(WAIT).ignoreExceptions().until(() ->
                core.readNamespacedConfigMap("kube-root-ca.crt", ns).execute(), c -> c != null);
        assertThat(cm.getData()).isEqualTo(Map.of("ca.crt", new String(ca, StandardCharsets.UTF_8)));
        assertThat(cm.getMetadata().getAnnotations()).containsKey("kubernetes.io/description");
    }

    @Test
    void deletedDefaultServiceAccount_isRecreated() throws Exception { // SC-4
        String ns = server.createNamespace("cp-sa");
        V1ServiceAccount first = await().atMost(WAIT).ignoreExceptions().until(() ->
                core.readNamespacedServiceAccount("default", ns).execute(), sa -> sa != null);

        core.deleteNamespacedServiceAccount("default", ns).execute();

        await().atMost(WAIT).ignoreExceptions().until(() -> !first.getMetadata().getUid().equals(
                core.readNamespacedServiceAccount("default", ns).execute().getMetadata().getUid()));
    }

    @Test
    void editedOrDeletedRootCaConfigMap_isRepaired() throws Exception { // RC-2, RC-3
        String ns = server.createNamespace("cp-ca");
        V1ConfigMap cm = await().atMost(WAIT).ignoreExceptions().until(() ->
                core.readNamespacedConfigMap("kube-root-ca.crt", ns).execute(), c -> c != null);
        Map<String, String> expected = Map.of("ca.crt", new String(ca, StandardCharsets.UTF_8));

        cm.setData(Map.of("ca.crt", "tampered", "extra", "x"));
        core.replaceNamespacedConfigMap("kube-root-ca.crt", ns, cm).execute();
        await().atMost(WAIT).until(() -> expected.equals(core.readNamespacedConfigMap("kube-root-ca.crt", ns)
                .execute().getData()));

        core.deleteNamespacedConfigMap("kube-root-ca.crt", ns).execute();
        await().atMost(WAIT).ignoreExceptions().until(() -> expected.equals(
                core.readNamespacedConfigMap("kube-root-ca.crt", ns).execute().getData()));
    }

    @Test
    void tokenSecretFilledByTheController_authenticatesAsItsServiceAccount() throws Exception { // TC-5, CL-1..CL-4
        String ns = server.createNamespace("cp-tok");
        server.createServiceAccount(ns, "builder");
        core.createNamespacedSecret(ns, new V1Secret()
                .metadata(new V1ObjectMeta().name("builder-token").namespace(ns)
                        .putAnnotationsItem("kubernetes.io/service-account.name", "builder"))
                .type("kubernetes.io/service-account-token")).execute();

        V1Secret filled = await().atMost(WAIT).until(() -> core.readNamespacedSecret("builder-token", ns).execute(),
                s -> s.getData() != null && s.getData().containsKey("token"));

        assertThat(filled.getData()).containsOnlyKeys("token", "namespace", "ca.crt");
        assertThat(filled.getData().get("namespace")).asString(StandardCharsets.UTF_8).isEqualTo(ns);
        assertThat(filled.getData().get("ca.crt")).isEqualTo(ca);
        String saUid = core.readNamespacedServiceAccount("builder", ns).execute().getMetadata().getUid();
        assertThat(filled.getMetadata().getAnnotations()).containsEntry("kubernetes.io/service-account.uid", saUid);
        V1TokenReviewStatus review = review(new String(filled.getData().get("token"), StandardCharsets.US_ASCII));
        assertThat(review.getAuthenticated()).isTrue();
        assertThat(review.getUser().getUsername()).isEqualTo("system:serviceaccount:" + ns + ":builder");
    }

    @Test
    void deletedServiceAccount_losesItsTokenSecrets() throws Exception { // TC-3, TC-4
        String ns = server.createNamespace("cp-del");
        server.createServiceAccount(ns, "gone");
        core.createNamespacedSecret(ns, new V1Secret()
                .metadata(new V1ObjectMeta().name("gone-token").namespace(ns)
                        .putAnnotationsItem("kubernetes.io/service-account.name", "gone"))
                .type("kubernetes.io/service-account-token")).execute();
        await().atMost(WAIT).until(() -> core.readNamespacedSecret("gone-token", ns).execute().getData() != null);

        core.deleteNamespacedServiceAccount("gone", ns).execute();

        await().atMost(WAIT).until(() -> notFound(() -> core.readNamespacedSecret("gone-token", ns).execute()));
    }

    @Test
    void tokenSecretForAMissingAccount_isDeleted() throws Exception { // TC-4
        String ns = server.createNamespace("cp-orphan");
        core.createNamespacedSecret(ns, new V1Secret()
                .metadata(new V1ObjectMeta().name("orphan-token").namespace(ns)
                        .putAnnotationsItem("kubernetes.io/service-account.name", "nobody"))
                .type("kubernetes.io/service-account-token")).execute();

        await().atMost(WAIT).until(() -> notFound(() -> core.readNamespacedSecret("orphan-token", ns).execute()));
    }

    @Test
    void legacyAutoCreate_givesEveryAccountAReferencedWorkingToken() throws Exception { // TC-7
        // a second process with auto-create next to the v1.30 one, which never creates Secrets
        try (ControlplaneRuntime legacy = start(server, true)) {
            legacyAutoCreate(server.createNamespace("cp-auto"));
        }
    }

    private static void legacyAutoCreate(String ns) throws Exception {
        server.createServiceAccount(ns, "app");

        V1ServiceAccount sa = await().atMost(WAIT).until(() -> core.readNamespacedServiceAccount("app", ns).execute(),
                a -> a.getSecrets() != null && !a.getSecrets().isEmpty());
        List<String> referenced = sa.getSecrets().stream().map(V1ObjectReference::getName).toList();
        assertThat(referenced).singleElement().asString().startsWith("app-token-").hasSize("app-token-".length() + 5);
        V1Secret secret = await().atMost(WAIT).until(() -> core.readNamespacedSecret(referenced.get(0), ns).execute(),
                s -> s.getData() != null);
        assertThat(review(new String(secret.getData().get("token"), StandardCharsets.US_ASCII)).getUser().getUsername())
                .isEqualTo("system:serviceaccount:" + ns + ":app");
        // the default account gets one too, and nothing makes a second
        await().atMost(WAIT).until(() -> secretsOf(ns, "default") == 1);
        assertThat(secretsOf(ns, "app")).isEqualTo(1);
    }

    static long secretsOf(String ns, String sa) throws ApiException {
        return core.listNamespacedSecret(ns).execute().getItems().stream()
                .filter(s -> s.getMetadata().getAnnotations() != null
                        && sa.equals(s.getMetadata().getAnnotations().get("kubernetes.io/service-account.name")))
                .count();
    }

    static V1TokenReviewStatus review(String token) throws ApiException {
        return new AuthenticationV1Api(server.adminClient())
                .createTokenReview(new V1TokenReview().spec(new V1TokenReviewSpec().token(token))).execute().getStatus();
    }

    interface Call {
        Object run() throws ApiException;
    }

    static boolean notFound(Call call) {
        try {
            call.run();
            return false;
        } catch (ApiException e) {
            return e.getCode() == 404;
        }
    }
}
