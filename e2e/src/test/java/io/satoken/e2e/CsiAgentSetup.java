package io.satoken.e2e;

import io.kubernetes.client.openapi.ApiException;
import io.satoken.agent.testing.KubeletCsiClient;
import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A CSI-mode agent for one node as the DaemonSet runs it, minus the pod: a kubeconfig acting as the agent's
 * ServiceAccount ({@link AgentIdentity}), a config naming the kubelet dir, and its launcher's {@code run}
 * args. Each process {@link #start} starts is registered with the kubelet standing in for the node's and
 * awaited ready; starting again on the same setup is the agent restarted on the same kubelet dir.
 */
record CsiAgentSetup(Path kubeconfig, Path config, Path kubeletDir, String node) {

    static final Duration WAIT = Duration.ofSeconds(60);

    /** Writes the agent's kubeconfig and config under {@code tmp}, with the kubelet dir {@code tmp/kubelet}. */
    static CsiAgentSetup write(KubeApiServer server, Path tmp, String node) throws IOException, ApiException {
        Path kubeletDir = tmp.resolve("kubelet");
        Path kubeconfig = AgentIdentity.kubeconfig(server, tmp.resolve("kubeconfig"));
        Path config = Files.writeString(tmp.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + kubeletDir + "\n");
        return new CsiAgentSetup(kubeconfig, config, kubeletDir, node);
    }

    /**
     * Writes {@code work/agent.kubeconfig} holding {@code token}, and the config, with the kubelet dir
     * {@code work/kubelet} created.
     */
    static CsiAgentSetup withToken(KubeApiServer server, Path work, String node, String token) throws IOException {
        Path kubeletDir = Files.createDirectories(work.resolve("kubelet"));
        Path kubeconfig = work.resolve("agent.kubeconfig");
        server.writeKubeconfig(kubeconfig, token);
        Path config = Files.writeString(work.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + kubeletDir + "\n");
        return new CsiAgentSetup(kubeconfig, config, kubeletDir, node);
    }

    /** {@code run} with this config, kubeconfig and node, metrics on {@code metricsAddress}, then {@code extra}. */
    List<String> args(String metricsAddress, String... extra) {
        List<String> args = new ArrayList<>(List.of("run", "--config", config.toString(), "--kubeconfig",
                kubeconfig.toString(), "--node-name", node, "--metrics-address", metricsAddress));
        args.addAll(List.of(extra));
        return args;
    }

    /** Starts an agent (its log named {@code name}), registers it with {@code kubelet} and waits until it is ready. */
    SatokenProcess start(String name, KubeletCsiClient kubelet, String... extra) throws Exception {
        SatokenProcess agent = launch(name, "127.0.0.1:" + E2E.freePort(), extra);
        try {
            kubelet.register(agent, WAIT);
            agent.awaitReady(WAIT);
        } catch (Exception | Error e) {
            agent.close();
            throw e;
        }
        return agent;
    }

    /** Starts an agent (its log named {@code name}) serving metrics on {@code metricsAddress}; waits for nothing. */
    SatokenProcess launch(String name, String metricsAddress, String... extra) throws IOException {
        return SatokenProcess.agent(name, args(metricsAddress, extra), metricsAddress, Map.of());
    }
}
