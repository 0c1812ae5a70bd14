package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.apis.VersionApi;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The manifests as the README applies them (the kustomize bases with {@code kubectl apply -k}, the examples
 * one by one with {@code -f}) pass {@code kubectl apply --dry-run=server --validate=strict} against a real kube-apiserver: every
 * object is admitted, with no unknown or duplicate field. Only the namespaces are created for real, as a
 * dry run creates nothing the namespaced objects could go in. (The cert-manager example needs cert-manager's
 * CRDs, which the test server does not have.)
 */
@RequiresKubeApiServer
class DeployManifestsE2E {

    private static final Pattern DRY_RUN_LINE = Pattern.compile("(?m)^\\S+ (created|configured|unchanged) \\(server dry run\\)$");

    static Kubectl kubectl;
    static int serverMinor;
    static boolean strictValidation;

    @BeforeAll
    static void namespaces(KubeApiServer server) throws Exception {
        if (!Kubectl.installed()) {
            System.err.println("*** SKIPPED DeployManifestsE2E: kubectl not found on PATH ***");
            Assumptions.abort("kubectl not found on PATH");
        }
        kubectl = Kubectl.forAdmin(server);
        // --validate=strict (server-side field validation) needs kubectl 1.25+; Debian's kubernetes-client is
        // 1.20, which validates against the server's OpenAPI schema on the client side instead
        strictValidation = kubectl.clientMinor() >= 25;
        if (!strictValidation) {
            System.err.println("*** DeployManifestsE2E: kubectl older than 1.25, so validation is client-side ***");
        }
        serverMinor = Integer.parseInt(new VersionApi(server.adminClient()).getCode().execute().getMinor()
                .replaceAll("\\D", ""));
        kubectl.apply(E2E.repo().resolve("agent/deploy/00-namespace.yaml"));
        kubectl.apply(E2E.repo().resolve("controlplane/deploy/00-namespace.yaml"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "agent/deploy",
        "controlplane/deploy",
        "controlplane/deploy/webhooks",
        "agent/deploy/examples/consumer.yaml"})
    void manifests_passServerSideDryRun_withStrictFieldValidation(String manifests) throws Exception {
        dryRun(manifests, E2E.repo().resolve(manifests), objects(E2E.repo().resolve(manifests)));
    }

    /**
     * The base with the opt-in Component legacy-tokens/, as an operator's overlay includes it: the tokens
     * controller's RBAC and the controllers' Deployment mounting the node's key file are admitted (the
     * namespace at the privileged level, which a hostPath needs).
     */
    @Test
    void legacyTokensOverlay_passesServerSideDryRun_withStrictFieldValidation() throws Exception {
        Path overlay = Files.createDirectories(E2E.repo().resolve("e2e/target/deploy-manifests-overlays/legacy-tokens"));
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../../controlplane/deploy
                components:
                  - ../../../../controlplane/deploy/legacy-tokens
                """);
        Path component = E2E.repo().resolve("controlplane/deploy/legacy-tokens/rbac.yaml");
        // a dry run changes no namespace: set the level the overlay sets, or Pod Security warns of the hostPath
        String level = "pod-security.kubernetes.io/enforce=";
        assertThat(kubectl.run("label", "namespace", "satoken-controlplane", level + "privileged", "--overwrite").exit())
                .isZero();
        try {
            dryRun("controlplane/deploy with legacy-tokens", overlay,
                    objects(E2E.repo().resolve("controlplane/deploy")) + kinds(Files.readAllLines(component)));
        } finally {
            kubectl.run("label", "namespace", "satoken-controlplane", level + "restricted", "--overwrite");
        }
    }

    /**
     * The install profile for 1.36+ (deploy/profiles/node-impersonation), applied with one {@code kubectl apply -k}: the
     * base's objects, its ClusterRole replaced (the impersonation verbs are plain strings to RBAC, so any version
     * admits them), and the audience grant to the nodes.
     */
    @Test
    void nodeImpersonationProfile_passesServerSideDryRun_withStrictFieldValidation() throws Exception {
        Path profile = E2E.repo().resolve("deploy/profiles/node-impersonation");
        dryRun("deploy/profiles/node-impersonation", profile, objects(E2E.repo().resolve("agent/deploy"))
                + kinds(Files.readAllLines(profile.resolve("token-audiences.yaml"))));
    }

    /**
     * The injection-only profile (deploy/profiles/injection-only), applied with one {@code kubectl apply -k}: the control
     * plane's objects, the injection check's RBAC, and its own MutatingWebhookConfiguration.
     */
    @Test
    void injectionOnlyProfile_passesServerSideDryRun_withStrictFieldValidation() throws Exception {
        Path profile = E2E.repo().resolve("deploy/profiles/injection-only");
        // the base's objects and the profile's, less the RBAC objects the profile deletes (one "$patch: delete" each)
        long deleted = Files.readAllLines(profile.resolve("kustomization.yaml")).stream()
                .filter(l -> l.strip().equals("$patch: delete")).count();
        dryRun("deploy/profiles/injection-only", profile, objects(E2E.repo().resolve("controlplane/deploy"))
                + kinds(Files.readAllLines(profile.resolve("webhook-configuration.yaml")))
                + kinds(Files.readAllLines(E2E.repo().resolve("controlplane/deploy/injection-check/rbac.yaml")))
                - deleted);
    }

    private static void dryRun(String manifests, Path path, long objects) throws Exception {
        // matchConditions (webhooks/webhook-configurations.yaml) is a 1.28 field: older servers drop it, which is
        // what the file's comment relies on; there, that one unknown field is a warning, nothing else is.
        boolean before128 = serverMinor < 28;
        String validate = !strictValidation ? "true" : before128 ? "warn" : "strict";
        String how = Files.isDirectory(path) ? "-k" : "-f";
        Commands.Result result = kubectl.run("apply", "--dry-run=server", "--validate=" + validate, how, path.toString());

        assertThat(result.exit()).as("kubectl apply --dry-run=server " + how + " %s:%n%s", manifests, result.output()).isZero();
        assertThat(DRY_RUN_LINE.matcher(result.output()).results().count())
                .as("one line per object in %s:%n%s", manifests, result.output())
                .isEqualTo(objects);
        List<String> warnings = result.output().lines().filter(l -> l.toLowerCase().contains("warning")).toList();
        if (!strictValidation) {
            return; // warnings of the old client are not the server's
        } else if (before128) {
            assertThat(warnings).allMatch(w -> w.contains("unknown field \"webhooks[0].matchConditions\""));
        } else {
            assertThat(warnings).isEmpty();
        }
    }

    /**
     * The base with the opt-out Component without-client-certificates/, as an operator's overlay includes it: the
     * same objects are admitted, and the webhook's Deployment no longer names the CA nor mounts its ConfigMap.
     */
    @Test
    void withoutClientCertificatesOverlay_passesServerSideDryRun_andDropsTheClientCa() throws Exception {
        Path overlay = Files.createDirectories(
                E2E.repo().resolve("e2e/target/deploy-manifests-overlays/without-client-certificates"));
        Files.writeString(overlay.resolve("kustomization.yaml"), """
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources:
                  - ../../../../controlplane/deploy
                components:
                  - ../../../../controlplane/deploy/without-client-certificates
                """);
        Commands.Result rendered = kubectl.run("kustomize", overlay.toString());
        String validate = !strictValidation ? "true" : serverMinor < 28 ? "warn" : "strict";
        Commands.Result result = kubectl.run("apply", "--dry-run=server", "--validate=" + validate, "-k",
                overlay.toString());

        assertThat(rendered.exit()).as("kubectl kustomize %s:%n%s", overlay, rendered.output()).isZero();
        assertThat(rendered.output()).doesNotContain("--client-ca-file").doesNotContain("satoken-webhook-client-ca");
        assertThat(result.exit()).as("kubectl apply --dry-run=server -k %s:%n%s", overlay, result.output()).isZero();
        assertThat(DRY_RUN_LINE.matcher(result.output()).results().count())
                .isEqualTo(objects(E2E.repo().resolve("controlplane/deploy")));
    }

    /**
     * The number of objects: the {@code kind:} lines at the top level of each YAML document. For a base, those
     * of every YAML file in its directory and in the bases below it that it lists (agent/deploy/identity), which
     * its rendering must hold too: a file the kustomization leaves out fails here.
     */
    private static long objects(Path path) throws Exception {
        if (!Files.isDirectory(path)) {
            return kinds(Files.readAllLines(path));
        }
        long n = 0;
        try (Stream<Path> s = Files.list(path)) {
            for (Path f : s.filter(p -> p.toString().endsWith(".yaml"))
                    .filter(p -> !p.getFileName().toString().equals("kustomization.yaml")).toList()) {
                n += kinds(Files.readAllLines(f));
            }
        }
        Map<?, ?> kustomization = new org.yaml.snakeyaml.Yaml().load(Files.readString(path.resolve("kustomization.yaml")));
        for (Object resource : (List<?>) kustomization.get("resources")) {
            Path below = path.resolve(resource.toString());
            if (!resource.toString().startsWith("..") && Files.isDirectory(below)) {
                n += objects(below);
            }
        }
        Commands.Result rendered = kubectl.run("kustomize", path.toString());
        assertThat(rendered.exit()).as("kubectl kustomize %s:%n%s", path, rendered.output()).isZero();
        assertThat(kinds(rendered.output().lines().toList())).as("objects rendered from %s", path).isEqualTo(n);
        return n;
    }

    private static long kinds(List<String> lines) {
        return lines.stream().filter(l -> l.startsWith("kind: ")).count();
    }
}
