package io.satoken.controlplane.testing;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.controlplane.webhook.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@code controlplane/deploy} asks of the API server by default: a client certificate it presents to the
 * webhook. Written as the "Client certificates" steps of docs/control-plane.md write them: a CA (the webhook's
 * {@code --client-ca-file}, in a cluster the ConfigMap {@code satoken-webhook-client-ca}), a certificate it signs for
 * the API server, a kubeconfig presenting that certificate to every webhook (user {@code "*"}: the tests reach the
 * webhook at a loopback port chosen later), and the AdmissionConfiguration naming the kubeconfig for both webhook
 * plugins, which kube-apiserver takes with {@code --admission-control-config-file}.
 *
 * @param ca the CA, whose certificate the webhook Deployment mounts at {@link #MOUNTED_CA}
 * @param apiServer the API server's client certificate and key
 * @param admissionConfiguration the file for {@code --admission-control-config-file}
 */
public record ApiServerClientCertificate(TestCertificates.Authority ca, TestCertificates.Pair apiServer,
        Path admissionConfiguration) {

    /** Where the webhook Deployment mounts the CA ({@code --client-ca-file}). */
    public static final String MOUNTED_CA = "/etc/satoken/client-ca/ca.crt";
    /** The API server's client certificate's common name. */
    public static final String COMMON_NAME = "kube-apiserver-webhook-client";

    /** Writes the CA, the API server's certificate, the kubeconfig and the AdmissionConfiguration under {@code dir}. */
    public static ApiServerClientCertificate write(Path dir) throws Exception {
        Files.createDirectories(dir);
        TestCertificates.Authority ca = TestCertificates.authority(dir.resolve("client-ca"), "satoken-webhook-clients");
        TestCertificates.Pair apiServer = TestCertificates.client(dir.resolve("apiserver"), COMMON_NAME, ca);
        Path admission = admissionConfiguration(dir, "*", apiServer);
        return new ApiServerClientCertificate(ca, apiServer, admission);
    }

    /**
     * Writes a kubeconfig presenting {@code apiServer} to the webhooks whose host:port is {@code user} ({@code "*"}:
     * every webhook) and the AdmissionConfiguration naming it for both webhook plugins; returns the latter.
     */
    public static Path admissionConfiguration(Path dir, String user, TestCertificates.Pair apiServer) throws Exception {
        Path kubeconfig = Files.writeString(dir.resolve("webhook-kubeconfig.yaml"), """
                apiVersion: v1
                kind: Config
                users:
                  - name: "%s"
                    user:
                      client-certificate: %s
                      client-key: %s
                """.formatted(user, apiServer.cert(), apiServer.key()));
        return Files.writeString(dir.resolve("admission-configuration.yaml"), """
                apiVersion: apiserver.config.k8s.io/v1
                kind: AdmissionConfiguration
                plugins:
                  - name: ValidatingAdmissionWebhook
                    configuration:
                      apiVersion: apiserver.config.k8s.io/v1
                      kind: WebhookAdmissionConfiguration
                      kubeConfigFile: %1$s
                  - name: MutatingAdmissionWebhook
                    configuration:
                      apiVersion: apiserver.config.k8s.io/v1
                      kind: WebhookAdmissionConfiguration
                      kubeConfigFile: %1$s
                """.formatted(kubeconfig));
    }

    /** {@code builder} with the AdmissionConfiguration, so that the API server presents the certificate. */
    public KubeApiServer.Builder presentedBy(KubeApiServer.Builder builder) {
        return builder.flag("--admission-control-config-file", admissionConfiguration.toString());
    }

    /** A certificate the same CA signs for {@code commonName}: a client other than the API server that holds one. */
    public TestCertificates.Pair another(Path dir, String commonName) throws Exception {
        return TestCertificates.client(dir, commonName, ca);
    }
}
