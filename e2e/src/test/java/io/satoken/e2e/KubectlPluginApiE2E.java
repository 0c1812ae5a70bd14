package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kubectl satoken explain} against a real kube-apiserver, with real kubectl: the pod's node, the label and
 * field selectors the plugin asks with, and the agent pod it picks are the API server's own answers. No kubelet
 * runs, so the pods are objects only (their phase set through the status subresource) and the final
 * {@code kubectl exec} fails; the plugin has named the agent it asks by then. ProductPodsE2E runs the whole of it
 * on a real node.
 */
@RequiresKubeApiServer
class KubectlPluginApiE2E {

    private static final Path PLUGIN = E2E.repo().resolve("agent/bin/kubectl-satoken");

    private static Kubectl kubectl;

    @BeforeAll
    static void pods(KubeApiServer server, @TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(Kubectl.installed(), "needs kubectl");
        kubectl = Kubectl.forAdmin(server);
        kubectl.apply(E2E.repo().resolve("agent/deploy/00-namespace.yaml"));
        Path pods = Files.writeString(dir.resolve("pods.yaml"), """
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop}
                ---
                """ + agent("satoken-agent-a", "node-1") + agent("satoken-agent-b", "node-2")
                + agent("satoken-agent-c", "node-2") + pod("cart", "node-2") + pod("queued", null)
                + pod("lonely", "node-3"));
        kubectl.apply(pods);
        // a and b run; c on node-2 was never started (Pending), so b is the one agent of node-2
        for (String agent : new String[] {"satoken-agent-a", "satoken-agent-b"}) {
            Commands.Result r = kubectl.run("-n", "satoken-system", "patch", "pod", agent, "--subresource=status",
                    "--type=merge", "-p", "{\"status\":{\"phase\":\"Running\"}}");
            assertThat(r.exit()).as(r.output()).isZero();
        }
    }

    @Test
    void explain_asksTheRunningAgentOnThePodsNode() throws Exception {
        Commands.Result r = kubectl.plugin(PLUGIN, "explain", "shop/cart");

        assertThat(r.output()).contains("asking satoken-system/satoken-agent-b, the agent on node node-2")
                .doesNotContain("satoken-agent-a", "satoken-agent-c");
    }

    @Test
    void aPodWithoutANode_orANodeWithoutAnAgent_isAnErrorSayingSo() throws Exception {
        Commands.Result queued = kubectl.plugin(PLUGIN, "explain", "shop/queued");
        Commands.Result lonely = kubectl.plugin(PLUGIN, "explain", "shop/lonely");
        Commands.Result missing = kubectl.plugin(PLUGIN, "explain", "shop/nowhere");

        assertThat(queued.exit()).isEqualTo(1);
        assertThat(queued.output()).contains("pod shop/queued has no node");
        assertThat(lonely.exit()).isEqualTo(1);
        assertThat(lonely.output()).contains("no satoken agent runs on node node-3");
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.output()).contains("not found", "cannot read pod shop/nowhere");
    }

    private static String agent(String name, String node) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %s
                  namespace: satoken-system
                  labels: {app.kubernetes.io/name: satoken-agent}
                spec:
                  nodeName: %s
                  containers: [{name: agent, image: satoken-agent}]
                ---
                """.formatted(name, node);
    }

    private static String pod(String name, String node) {
        return """
                apiVersion: v1
                kind: Pod
                metadata: {name: %s, namespace: shop}
                spec:
                  %s
                  containers: [{name: app, image: busybox}]
                ---
                """.formatted(name, node == null ? "restartPolicy: Always" : "nodeName: " + node);
    }
}
