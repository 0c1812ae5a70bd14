package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.NetworkingV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1IPBlock;
import io.kubernetes.client.openapi.models.V1NetworkPolicyPeer;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.ApiServerClientCertificate;
import io.satoken.controlplane.testing.DeployedManifests;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * README's "Install, in one screen", step 2, taken from README.md itself and applied to a real kube-apiserver in the
 * order it is written: every {@code kubectl} command it names is run as written (from a copy of the repository's
 * manifests, as an operator runs it from a checkout), and each step in words is done the way an operator would,
 * where this harness allows it. Afterwards a pod is still created in an ordinary namespace, through the webhook.
 *
 * <p>What the harness cannot do as a cluster would, and does instead:
 * <ul>
 *   <li>"turn kube-controller-manager's ServiceAccount controllers off": no kube-controller-manager runs here. Until
 *       that step it would have given the new namespaces their {@code kube-root-ca.crt}, which the Deployments mount,
 *       so the test writes those two ConfigMaps;</li>
 *   <li>"turn kube-apiserver's ServiceAccount admission plugin off": the harness starts kube-apiserver with it off
 *       ({@code KubeApiServer}'s default), as a restart with the flag would leave it;</li>
 *   <li>the serving certificate: made with openssl for the Service's name and created with
 *       {@code kubectl create secret tls}; the registrations' {@code caBundle} set with {@code kubectl patch}, as
 *       {@code webhook-configurations.yaml}'s comment shows for an install without cert-manager;</li>
 *   <li>the client CA: kube-apiserver presents a client certificate from a test CA
 *       ({@code --admission-control-config-file}), and that CA is the README's {@code webhook-client-ca.crt};</li>
 *   <li>the {@code ipBlock}: set to {@code 127.0.0.1/32} in the copy, the address the API server's calls come from
 *       here. No network plugin runs, so nothing enforces the NetworkPolicy: the test checks the value that was
 *       applied, not its effect;</li>
 *   <li>{@code rollout status}: no kubelet. The two Deployments, as the API server stored them, run as local
 *       processes ({@link DeployedControlplane}); first every ConfigMap and Secret their pods mount must exist, which is
 *       what a kubelet needs to start them (without the client CA they would hang in ContainerCreating). For the
 *       webhook's Service, which the registrations name, the test plays kube-proxy: the Service's ClusterIP on the
 *       loopback interface (root only), relayed to the webhook process.</li>
 * </ul>
 */
@RequiresKubeApiServer
class InstallSummaryE2E {

    private static final String TEST = "InstallSummaryE2E";
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Far from the harness's default range and from WebhookOutageE2E's 10.0.0.1, so the loopback address is ours. */
    private static final String SERVICE_RANGE = "10.251.73.0/24";
    private static final String PLACEHOLDER = "192.0.2.0/24";
    private static final String API_SERVER_SOURCE = "127.0.0.1/32";
    private static final String NETWORK_POLICY = "controlplane/deploy/50-webhook-network-policy.yaml";
    private static final Pattern COMMAND = Pattern.compile("`(kubectl [^`]+)`");

    private static Path work;
    private static Path checkout;
    private static Path kubeconfig;
    private static KubeApiServer server;
    private static ApiServerClientCertificate clientCertificate;
    private static CoreV1Api core;
    private static final List<SatokenProcess> processes = new ArrayList<>();
    private static ServiceRelay relay;
    private static String serviceIp;
    private static final List<String> done = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        for (String program : List.of("kubectl", "openssl", "ip")) {
            if (!Commands.onPath(program)) {
                System.err.println("*** SKIPPED " + TEST + ": " + program + " not found on PATH ***");
                Assumptions.abort(program + " not found on PATH");
            }
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            System.err.println("*** SKIPPED " + TEST + ": not root, so the Service's ClusterIP cannot be added to lo ***");
            Assumptions.abort("not root");
        }
        work = Files.createTempDirectory("satoken-e2e-install-summary-");
        clientCertificate = ApiServerClientCertificate.write(work.resolve("client-auth"));
        server = clientCertificate.presentedBy(KubeApiServer.builder())
                .flag("--service-cluster-ip-range", SERVICE_RANGE).build().start();
        core = new CoreV1Api(server.adminClient());
        kubeconfig = work.resolve("admin.kubeconfig");
        server.writeKubeconfig(kubeconfig, server.adminToken());
        checkout = Files.createDirectories(work.resolve("checkout"));
        for (String dir : List.of("controlplane/deploy", "agent/deploy", "deploy")) {
            copyTree(E2E.repo().resolve(dir), checkout.resolve(dir));
        }
    }

    @AfterAll
    static void stop() {
        if (relay != null) {
            try {
                relay.close();
            } catch (IOException e) {
                System.err.println(TEST + ": closing the relay: " + e);
            }
        }
        if (serviceIp != null) {
            try {
                Commands.run("ip", List.of("ip", "addr", "del", serviceIp + "/32", "dev", "lo"));
            } catch (IOException | InterruptedException e) {
                System.err.println(TEST + ": ip addr del " + serviceIp + ": " + e);
            }
        }
        processes.forEach(SatokenProcess::close);
        E2E.closeKeepingLogs(server, "install-summary");
        if (work != null) {
            MemoryDirs.delete(work);
        }
    }

    @Test
    void readmeStep2_appliedAsWritten_leavesPodCreationWorking_inAnOrdinaryNamespace() throws Exception {
        List<String> steps = readmeStep2();
        for (String step : steps) {
            apply(step);
        }

        assertThat(done).as("what the test did for README's step 2, in order").containsSubsequence(
                "kubectl apply -f controlplane/deploy/00-namespace.yaml", "serving certificate",
                "kubectl -n satoken-webhook create configmap satoken-webhook-client-ca "
                        + "--from-file=ca.crt=webhook-client-ca.crt",
                "ipBlock", "kubectl apply -k controlplane/deploy", "rollout",
                "kubectl apply -k controlplane/deploy/webhooks", "caBundle", "admission plugin off");
        assertThat(new NetworkingV1Api(server.adminClient()).readNamespacedNetworkPolicy("satoken-webhook",
                "satoken-webhook").execute().getSpec().getIngress().get(0).getFrom())
                .extracting(V1NetworkPolicyPeer::getIpBlock).extracting(V1IPBlock::getCidr)
                .containsExactly(API_SERVER_SOURCE);

        Commands.Result ns = kubectl(List.of("create", "namespace", "ordinary"));
        assertThat(ns.exit()).as(ns.output()).isZero();
        Awaitility.await("the default ServiceAccount of a new namespace, from satoken's controllers").atMost(WAIT)
                .ignoreExceptions().until(() -> core.readNamespacedServiceAccount("default", "ordinary").execute() != null);
        V1Pod[] created = new V1Pod[1];
        Awaitility.await("a pod created in namespace ordinary").atMost(WAIT).ignoreExceptions()
                .until(() -> (created[0] = core.createNamespacedPod("ordinary", pod()).execute()) != null);
        List<String> volumes = Objects.requireNonNull(created[0].getSpec().getVolumes()).stream()
                .map(V1Volume::getName).toList();
        // the ServiceAccount admission and the injection of satoken's webhook, called through its Service
        assertThat(volumes).contains("satoken-agent-tokens").anyMatch(v -> v.startsWith("kube-api-access-"));
        assertThat(relay.relayed()).as("calls that reached the webhook through its Service").isPositive();
    }

    /**
     * README's step 2 up to its warning, cut into its steps: the text between "; " outside backquotes and
     * parentheses. The warning must be there, beside them.
     */
    private static List<String> readmeStep2() throws IOException {
        String readme = Files.readString(E2E.repo().resolve("README.md"));
        int section = readme.indexOf("## Install, in one screen");
        assertThat(section).as("README's section \"Install, in one screen\"").isNotNegative();
        int from = readme.indexOf("\n2. ", section);
        int to = readme.indexOf("\n3. ", from);
        String step = readme.substring(from + 4, to).replaceAll("\\s*\n\\s*", " ");
        int warning = step.indexOf("**The pod webhook fails closed:**");
        assertThat(warning).as("the fail-closed warning in step 2: %s", step).isPositive();
        assertThat(step.substring(warning)).contains(PLACEHOLDER, "kube-system");
        assertThat(Files.readString(E2E.repo().resolve(NETWORK_POLICY))).contains("cidr: " + PLACEHOLDER);
        String sequence = step.substring(step.indexOf(": ") + 2, warning).trim();
        List<String> steps = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean quoted = false;
        int depth = 0;
        for (int i = 0; i < sequence.length(); i++) {
            char c = sequence.charAt(i);
            if (c == '`') {
                quoted = !quoted;
            } else if (!quoted && c == '(') {
                depth++;
            } else if (!quoted && c == ')') {
                depth--;
            } else if (!quoted && depth == 0 && c == ';') {
                steps.add(current.toString().trim());
                current.setLength(0);
                continue;
            }
            current.append(c);
        }
        steps.add(current.toString().trim());
        return steps;
    }

    /** One step: what it says in words, done as the class comment says, then each kubectl command in it, as written. */
    private static void apply(String step) throws Exception {
        // the words outside backquotes and parentheses say what the step is
        String words = step.replaceAll("\\([^)]*\\)", "").replaceAll("`[^`]*`", "`");
        List<String> commands = new ArrayList<>();
        Matcher m = COMMAND.matcher(step.replaceAll("\\([^)]*\\)", ""));
        while (m.find()) {
            commands.add(m.group(1));
        }
        boolean known = !commands.isEmpty();
        if (words.contains("controllers off")) {
            rootCaConfigMaps();
            done.add("controllers off");
            known = true;
        }
        if (words.contains("serving certificate")) {
            servingCertificate();
            known = true;
        }
        if (step.contains("`ipBlock`")) {
            Path policy = checkout.resolve(NETWORK_POLICY);
            String text = Files.readString(policy);
            assertThat(text).contains("cidr: " + PLACEHOLDER);
            Files.writeString(policy, text.replace("cidr: " + PLACEHOLDER, "cidr: " + API_SERVER_SOURCE));
            done.add("ipBlock");
            known = true;
        }
        if (words.contains("admission plugin off")) {
            // the harness's kube-apiserver runs with --disable-admission-plugins=ServiceAccount (KubeApiServer)
            done.add("admission plugin off");
            known = true;
        }
        assertThat(known).as("README's step 2 has a step this test does not know how to take: %s", step).isTrue();
        for (String command : commands) {
            if (command.contains(" rollout status ")) {
                rollout();
                done.add("rollout");
                continue;
            }
            assertThat(command).as("a command the test can split on spaces").doesNotContain("'", "\"", "$", "|");
            List<String> args = new ArrayList<>(List.of(command.substring("kubectl ".length()).split(" +")));
            // "(on 1.26 add `--validate=warn`)": what the README says for this server's version
            Matcher onVersion = Pattern.compile("on 1\\.(\\d+) add `([^`]+)`").matcher(step);
            while (onVersion.find()) {
                if (Integer.parseInt(onVersion.group(1)) == serverMinor()) {
                    args.add(onVersion.group(2));
                }
            }
            Commands.Result result = kubectl(args);
            assertThat(result.exit()).as("%s:%n%s", command, result.output()).isZero();
            done.add(command);
            if (command.equals("kubectl apply -k controlplane/deploy/webhooks") && step.contains("caBundle")) {
                caBundle();
                done.add("caBundle");
            }
        }
    }

    private static int serverMinor() throws ApiException {
        return Integer.parseInt(new VersionApi(server.adminClient()).getCode().execute().getMinor().replaceAll("\\D", ""));
    }

    /** What kube-controller-manager's root-ca-cert-publisher gave the namespaces before it was turned off. */
    private static void rootCaConfigMaps() throws Exception {
        for (String ns : List.of("satoken-controlplane", "satoken-webhook")) {
            core.createNamespacedConfigMap(ns, new V1ConfigMap().metadata(new V1ObjectMeta().name("kube-root-ca.crt"))
                    .data(Map.of("ca.crt", Files.readString(server.servingCertificate())))).execute();
        }
    }

    /** A self-signed certificate for the Service's name, by openssl; the client CA where the README's command reads it. */
    private static void servingCertificate() throws Exception {
        String name = "satoken-webhook.satoken-webhook.svc";
        Commands.Result cert = run("openssl", List.of("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=" + name, "-addext",
                "subjectAltName=DNS:" + name, "-keyout", "tls.key", "-out", "tls.crt"));
        assertThat(cert.exit()).as(cert.output()).isZero();
        Commands.Result secret = kubectl(List.of("-n", "satoken-webhook", "create", "secret", "tls",
                "satoken-webhook-tls", "--cert=tls.crt", "--key=tls.key"));
        assertThat(secret.exit()).as(secret.output()).isZero();
        Files.copy(clientCertificate.ca().cert(), checkout.resolve("webhook-client-ca.crt"));
        done.add("serving certificate");
    }

    /**
     * In place of {@code kubectl rollout status}: the Deployments as stored, each ConfigMap and Secret they mount
     * present, run as processes; then the webhook's Service made reachable at its ClusterIP.
     */
    private static void rollout() throws Exception {
        AppsV1Api apps = new AppsV1Api(server.adminClient());
        Map<String, Path> files = new HashMap<>(DeployedControlplane.mountedFiles(
                new io.satoken.controlplane.webhook.TestCertificates.Pair(checkout.resolve("tls.crt"),
                        checkout.resolve("tls.key"), null),
                clientCertificate, work.resolve("no-signing-key")));
        int webhookPort = -1;
        for (String[] d : List.of(new String[] {"satoken-controlplane", "satoken-controlplane"},
                new String[] {"satoken-webhook", "satoken-webhook"})) {
            V1Deployment deployment = apps.readNamespacedDeployment(d[1], d[0]).execute();
            for (V1Volume v : Objects.requireNonNullElse(deployment.getSpec().getTemplate().getSpec().getVolumes(),
                    List.<V1Volume>of())) {
                mounted(d[0], v);
            }
            DeployedControlplane.Workload workload = new DeployedControlplane.Workload(d[0], d[1],
                    deployment.getSpec().getTemplate().getSpec().getServiceAccountName(),
                    DeployedManifests.args(deployment), deployment);
            DeployedControlplane.Started started = DeployedControlplane.start("install-summary", server, workload,
                    work, files, server.servingCertificate());
            processes.add(started.process());
            if (workload.servesWebhook()) {
                webhookPort = started.port("--webhook-address");
            }
        }
        for (SatokenProcess p : processes) {
            p.awaitReady(WAIT);
        }
        serviceIp = core.readNamespacedService("satoken-webhook", "satoken-webhook").execute().getSpec().getClusterIP();
        Commands.Result add = Commands.run("ip", List.of("ip", "addr", "add", serviceIp + "/32", "dev", "lo"));
        assertThat(add.exit()).as("ip addr add %s/32 dev lo: %s", serviceIp, add.output()).isZero();
        int port = webhookPort;
        relay = ServiceRelay.start("satoken-webhook", new InetSocketAddress(serviceIp, 443),
                () -> List.of(new InetSocketAddress("127.0.0.1", port)));
    }

    /** A ConfigMap or Secret volume's object exists in the Deployment's namespace, as the kubelet needs it. */
    private static void mounted(String namespace, V1Volume v) throws ApiException {
        List<String> configMaps = new ArrayList<>();
        List<String> secrets = new ArrayList<>();
        if (v.getConfigMap() != null) {
            configMaps.add(v.getConfigMap().getName());
        }
        if (v.getSecret() != null) {
            secrets.add(v.getSecret().getSecretName());
        }
        if (v.getProjected() != null) {
            v.getProjected().getSources().forEach(s -> {
                if (s.getConfigMap() != null) {
                    configMaps.add(s.getConfigMap().getName());
                }
                if (s.getSecret() != null) {
                    secrets.add(s.getSecret().getName());
                }
            });
        }
        for (String name : configMaps) {
            try {
                core.readNamespacedConfigMap(name, namespace).execute();
            } catch (ApiException e) {
                throw new AssertionError("ConfigMap " + namespace + "/" + name + ", mounted by volume " + v.getName()
                        + ": " + e.getCode() + "; the pods would stay in ContainerCreating", e);
            }
        }
        for (String name : secrets) {
            try {
                core.readNamespacedSecret(name, namespace).execute();
            } catch (ApiException e) {
                throw new AssertionError("Secret " + namespace + "/" + name + ", mounted by volume " + v.getName()
                        + ": " + e.getCode() + "; the pods would stay in ContainerCreating", e);
            }
        }
    }

    /** Both registrations' caBundle, as the comment of webhook-configurations.yaml shows without cert-manager. */
    private static void caBundle() throws Exception {
        String ca = Base64.getEncoder().encodeToString(Files.readAllBytes(checkout.resolve("tls.crt")));
        for (String kind : List.of("mutatingwebhookconfiguration", "validatingwebhookconfiguration")) {
            int webhooks = kind.startsWith("mutating") ? 2 : 1;
            for (int i = 0; i < webhooks; i++) {
                Commands.Result r = kubectl(List.of("patch", kind, "satoken-controlplane", "--type=json", "-p",
                        "[{\"op\":\"add\",\"path\":\"/webhooks/" + i + "/clientConfig/caBundle\",\"value\":\"" + ca
                                + "\"}]"));
                assertThat(r.exit()).as(r.output()).isZero();
            }
        }
    }

    private static Commands.Result kubectl(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kubectl"));
        command.addAll(args);
        return run("kubectl", command);
    }

    /** {@code command} in the checkout, with the admin's kubeconfig in {@code KUBECONFIG}; output in a suite log. */
    private static Commands.Result run(String name, List<String> command) throws IOException, InterruptedException {
        Path log = E2E.newLog(TEST + "-" + name);
        ProcessBuilder builder = new ProcessBuilder(command).directory(checkout.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
        builder.environment().put("KUBECONFIG", kubeconfig.toString());
        Process p = builder.start();
        boolean finished = p.waitFor(2, TimeUnit.MINUTES);
        if (!finished) {
            p.destroyForcibly();
        }
        return new Commands.Result(finished ? p.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8));
    }

    private static V1Pod pod() {
        V1PodSpec spec = new V1PodSpec().addContainersItem(new V1Container().name("app").image("satoken.test/busybox:1"));
        spec.setOverhead(null);
        return new V1Pod().metadata(new V1ObjectMeta().name("app")
                .annotations(Map.of("satoken.io/projections", "[{path: vault/token, audience: vault}]"))).spec(spec);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }
}
