package io.satoken.controlplane.testing;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AdmissionregistrationV1Api;
import io.kubernetes.client.openapi.models.AdmissionregistrationV1WebhookClientConfig;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.kubernetes.client.util.Yaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * {@code controlplane/deploy} as the tests run it outside a cluster, for the module's ITs and the e2e suite
 * alike: the Deployments' container args with only what a process outside a pod must change, and the
 * webhook configurations registered with a loopback URL in place of the Service.
 */
public final class DeployedManifests {

    /** The webhook configurations' file in {@code controlplane/deploy}. */
    public static final String WEBHOOK_CONFIGURATIONS = "webhooks/webhook-configurations.yaml";
    /** The opt-in Component of the legacy tokens controller in {@code controlplane/deploy}. */
    public static final String LEGACY_TOKENS = "legacy-tokens";
    private static final String ARGS = "/spec/template/spec/containers/0/args/";

    private DeployedManifests() {
    }

    /** Every Deployment in {@code deployDir}'s YAML files (not its examples), in file order. */
    public static List<V1Deployment> deployments(Path deployDir) throws IOException {
        List<V1Deployment> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(deployDir)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml"))
                    .filter(f -> !f.getFileName().toString().equals("kustomization.yaml")).sorted().toList()) {
                for (Object o : Yaml.loadAll(file.toFile())) {
                    if (o instanceof V1Deployment d) {
                        found.add(d);
                    }
                }
            }
        }
        return found;
    }

    /**
     * The controllers' args as the Component {@value #LEGACY_TOKENS} leaves them: its JSON patch's operations on
     * the container's args ({@code test}, {@code replace}, {@code add}), applied to the Deployment's. A
     * {@code test} that fails fails here, as it fails kustomize.
     */
    @SuppressWarnings("unchecked")
    public static List<String> withLegacyTokens(Path deployDir, V1Deployment controllers) throws IOException {
        List<String> args = new ArrayList<>(args(controllers));
        Object ops;
        try (var reader = Files.newBufferedReader(deployDir.resolve(LEGACY_TOKENS).resolve("deployment-patch.yaml"))) {
            ops = new org.yaml.snakeyaml.Yaml(new org.yaml.snakeyaml.constructor.SafeConstructor(
                    new org.yaml.snakeyaml.LoaderOptions())).load(reader);
        }
        for (Map<String, Object> op : (List<Map<String, Object>>) ops) {
            String path = (String) op.get("path");
            if (!path.startsWith(ARGS)) {
                continue;
            }
            String at = path.substring(ARGS.length());
            String value = (String) op.get("value");
            switch ((String) op.get("op")) {
                case "test" -> {
                    if (!args.get(Integer.parseInt(at)).equals(value)) {
                        throw new IllegalStateException(path + ": expected " + value + ", the base has "
                                + args.get(Integer.parseInt(at)));
                    }
                }
                case "replace" -> args.set(Integer.parseInt(at), value);
                case "add" -> args.add(at.equals("-") ? args.size() : Integer.parseInt(at), value);
                default -> throw new IllegalStateException(path + ": unexpected op " + op.get("op"));
            }
        }
        return List.copyOf(args);
    }

    /**
     * The Deployment's first container's args, with {@code $(NAME)} expanded from the container's env as the kubelet
     * does (a name the env does not set stays as written).
     */
    public static List<String> args(V1Deployment deployment) {
        var container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
        Map<String, String> env = new java.util.HashMap<>();
        if (container.getEnv() != null) {
            container.getEnv().stream().filter(e -> e.getValue() != null).forEach(e -> env.put(e.getName(), e.getValue()));
        }
        List<String> args = new ArrayList<>();
        for (String arg : container.getArgs()) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)").matcher(arg);
            StringBuilder expanded = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(expanded, java.util.regex.Matcher.quoteReplacement(
                        env.getOrDefault(m.group(1), m.group())));
            }
            m.appendTail(expanded);
            args.add(expanded.toString());
        }
        return List.copyOf(args);
    }

    /**
     * The Deployment's args for a local process: a flag in {@code addresses} gets that {@code HOST:PORT}, and
     * a value naming a path the pod mounts gets the local file {@code files} maps it to. A mounted path
     * missing from {@code files} fails, so a new mount is never silently left out.
     */
    public static List<String> localArgs(V1Deployment deployment, Map<String, Path> files,
            Map<String, String> addresses) {
        List<String> local = new ArrayList<>();
        for (String arg : args(deployment)) {
            int eq = arg.indexOf('=');
            String flag = eq < 0 ? arg : arg.substring(0, eq);
            String value = eq < 0 ? null : arg.substring(eq + 1);
            if (addresses.containsKey(flag)) {
                value = addresses.get(flag);
            } else if (value != null && value.startsWith("/")) {
                Path file = files.get(value);
                if (file == null) {
                    throw new IllegalStateException(deployment.getMetadata().getName() + ": no local file for " + arg);
                }
                value = file.toString();
            }
            local.add(value == null ? flag : flag + "=" + value);
        }
        return local;
    }

    /** Registers {@code deployDir}'s webhook configurations with {@code base} + each Service path as URL. */
    public static void registerWebhooks(ApiClient admin, Path deployDir, String base, byte[] caBundle)
            throws IOException, ApiException {
        AdmissionregistrationV1Api api = new AdmissionregistrationV1Api(admin);
        for (Object o : Yaml.loadAll(deployDir.resolve(WEBHOOK_CONFIGURATIONS).toFile())) {
            if (o instanceof V1MutatingWebhookConfiguration m) {
                m.getWebhooks().forEach(w -> w.clientConfig(url(w.getClientConfig(), base, caBundle)));
                api.createMutatingWebhookConfiguration(m).execute();
            } else if (o instanceof V1ValidatingWebhookConfiguration v) {
                v.getWebhooks().forEach(w -> w.clientConfig(url(w.getClientConfig(), base, caBundle)));
                api.createValidatingWebhookConfiguration(v).execute();
            }
        }
    }

    private static AdmissionregistrationV1WebhookClientConfig url(AdmissionregistrationV1WebhookClientConfig config,
            String base, byte[] caBundle) {
        return new AdmissionregistrationV1WebhookClientConfig().url(base + config.getService().getPath())
                .caBundle(caBundle);
    }
}
