package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubectl plugin {@code agent/bin/kubectl-satoken} against a stand-in kubectl that answers as the API server
 * would and records every call: {@code explain NS/POD} asks the agent on the pod's own node, found by label and
 * field selector, never another; a pod without a node, a node without a running agent and bad usage each fail
 * saying so. ProductPodsE2E runs it against a real node; here the cases a real cluster rarely shows on demand.
 */
class KubectlPluginE2E {

    private static final Path PLUGIN = E2E.repo().resolve("agent/bin/kubectl-satoken");
    /** Answers {@code get pod} with $FAKE_NODE (or fails with $FAKE_POD_ERROR), {@code get pods} with $FAKE_AGENTS. */
    private static final String FAKE_KUBECTL = """
            #!/usr/bin/env bash
            printf '%s\\n' "$*" >> "$FAKE_LOG"
            case " $* " in
              *" get pod "*)
                if [ -n "${FAKE_POD_ERROR:-}" ]; then echo "$FAKE_POD_ERROR" >&2; exit 1; fi
                printf '%s' "${FAKE_NODE:-}" ;;
              *" get pods "*) printf '%b' "${FAKE_AGENTS:-}" ;;
              *" exec "*) echo "explained by the agent" ;;
              *) echo "unexpected: $*" >&2; exit 3 ;;
            esac
            """;

    @TempDir
    Path dir;

    private Path log;

    record Run(int exit, String out, String err, List<String> calls) {
    }

    @BeforeEach
    void fakeKubectl() throws IOException {
        Path kubectl = dir.resolve("bin/kubectl");
        Files.createDirectories(kubectl.getParent());
        Files.writeString(kubectl, FAKE_KUBECTL);
        Files.setPosixFilePermissions(kubectl, PosixFilePermissions.fromString("rwxr-xr-x"));
        log = dir.resolve("calls");
    }

    @Test
    void explain_asksTheAgentOnThePodsNode_throughTheApiServer() throws Exception {
        Run r = plugin(Map.of("FAKE_NODE", "node-2", "FAKE_AGENTS",
                "satoken-agent-old Running 2026-01-01T00:00:00Z\\nsatoken-agent-new Running \\n"),
                "explain", "shop/cart", "-o", "json", "--context", "prod");

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).isEqualTo("explained by the agent\n");
        assertThat(r.err()).contains("asking satoken-system/satoken-agent-new, the agent on node node-2");
        assertThat(r.calls()).containsExactly(
                "--context prod -n shop get pod cart -o jsonpath={.spec.nodeName}",
                "--context prod -n satoken-system get pods -l app.kubernetes.io/name=satoken-agent --field-selector "
                        + "spec.nodeName=node-2 -o jsonpath={range .items[*]}{.metadata.name}{\" \"}{.status.phase}"
                        + "{\" \"}{.metadata.deletionTimestamp}{\"\\n\"}{end}",
                "--context prod -n satoken-system exec satoken-agent-new -c agent -- satoken-agent explain --config "
                        + "/etc/satoken/agent.yaml --output json shop/cart");
    }

    @Test
    void aPodWithoutANode_isAnError_andNoAgentIsAsked() throws Exception {
        Run r = plugin(Map.of("FAKE_NODE", ""), "explain", "shop/cart");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("pod shop/cart has no node (spec.nodeName is empty");
        assertThat(r.calls()).hasSize(1);
    }

    @Test
    void aNodeWithoutARunningAgent_isAnError_namingTheNode() throws Exception {
        Run none = plugin(Map.of("FAKE_NODE", "node-3", "FAKE_AGENTS", ""), "explain", "shop/cart");
        Run pending = plugin(Map.of("FAKE_NODE", "node-3", "FAKE_AGENTS", "satoken-agent-x Pending \\n"),
                "explain", "shop/cart");

        assertThat(none.exit()).isEqualTo(1);
        assertThat(none.err()).contains("no satoken agent runs on node node-3, where pod shop/cart runs");
        assertThat(pending.exit()).isEqualTo(1);
        assertThat(pending.err()).contains("no satoken agent is running on node node-3", "satoken-agent-x (Pending)");
        assertThat(pending.calls()).noneMatch(c -> c.contains(" exec "));
    }

    @Test
    void twoRunningAgentsOnOneNode_areNotPickedFrom() throws Exception {
        Run r = plugin(Map.of("FAKE_NODE", "node-1", "FAKE_AGENTS", "a Running \\nb Running \\n"),
                "explain", "shop/cart");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("2 satoken agents run on node node-1 (a b)");
        assertThat(r.calls()).noneMatch(c -> c.contains(" exec "));
    }

    @Test
    void anUnreadablePod_isAnError_afterKubectlsOwnMessage() throws Exception {
        Run r = plugin(Map.of("FAKE_POD_ERROR", "Error from server (NotFound): pods \"cart\" not found"),
                "explain", "shop/cart");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("pods \"cart\" not found", "cannot read pod shop/cart");
    }

    @Test
    void badUsage_exits2NamingTheRule_withoutCallingKubectl() throws Exception {
        Run shape = plugin(Map.of(), "explain", "cart");
        Run missing = plugin(Map.of(), "explain");
        Run flag = plugin(Map.of(), "explain", "shop/cart", "--output");
        Run unknown = plugin(Map.of(), "frobnicate");

        assertThat(shape.exit()).isEqualTo(2);
        assertThat(shape.err()).contains("NAMESPACE/NAME cart: must be a namespace and a pod name joined by one /");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("NAMESPACE/NAME: required");
        assertThat(flag.exit()).isEqualTo(2);
        assertThat(flag.err()).contains("--output: needs a value");
        assertThat(unknown.exit()).isEqualTo(2);
        assertThat(unknown.err()).contains("unknown command \"frobnicate\"");
        assertThat(List.of(shape, missing, flag, unknown)).allSatisfy(r -> assertThat(r.calls()).isEmpty());
    }

    @Test
    void kubectl_runsItAsAPlugin_foundOnPath() throws Exception {
        Path real = realKubectl();
        ProcessBuilder pb = new ProcessBuilder(real.toString(), "satoken", "help").redirectErrorStream(true);
        pb.environment().put("PATH", PLUGIN.getParent() + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("Usage: kubectl satoken explain NAMESPACE/NAME");
    }

    private Run plugin(Map<String, String> env, String... args) throws Exception {
        Files.deleteIfExists(log);
        Files.createFile(log);
        List<String> command = new ArrayList<>(List.of(PLUGIN.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile());
        pb.environment().put("PATH", dir.resolve("bin") + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        pb.environment().put("FAKE_LOG", log.toString());
        pb.environment().putAll(env);
        Process p = pb.start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), Files.readString(dir.resolve("out")), Files.readString(dir.resolve("err")),
                Files.readAllLines(log));
    }

    private static Path realKubectl() {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path k = Path.of(d, "kubectl");
            if (Files.isExecutable(k)) {
                return k;
            }
        }
        System.err.println("*** SKIPPED KubectlPluginE2E.kubectl_runsItAsAPlugin: kubectl is not installed ***");
        Assumptions.assumeTrue(false, "needs kubectl");
        return null;
    }
}
