package io.satoken.controlplane.webhook;

import io.satoken.controlplane.admission.NodeTokenRestriction;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.controlplane.webhook.AgentAccountCheck.AgentDaemonSet;
import io.satoken.controlplane.webhook.AgentAccountCheck.State;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** What the start-up check of {@code --agent-service-account} concludes from the agent's DaemonSets and account. */
class AgentAccountCheckTest {

    final List<AgentDaemonSet> daemonSets = new ArrayList<>();
    final Set<String> accounts = new HashSet<>();
    boolean failing;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    final AgentAccountCheck check = new AgentAccountCheck(
            NodeTokenRestriction.AgentAccount.parse("--agent-service-account", "satoken-system/satoken-agent"),
            new AgentAccountCheck.Cluster() {
                @Override
                public boolean serviceAccountExists(String namespace, String name) throws IOException {
                    if (failing) {
                        throw new IOException("connection refused");
                    }
                    return accounts.contains(namespace + "/" + name);
                }

                @Override
                public List<AgentDaemonSet> agentDaemonSets() throws IOException {
                    if (failing) {
                        throw new IOException("connection refused");
                    }
                    return daemonSets;
                }
            }, registry);

    @Test
    void beforeTheFirstCheck_notReady() {
        assertThat(check.state()).isEqualTo(State.PENDING);
        assertThat(check.allowsReady()).isFalse();
        assertThat(gauge("pending")).isEqualTo(1);
    }

    @Test
    void daemonSetRunsAsTheAccount_confirmed_ready_andNotRepeated() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.CONFIRMED);
        assertThat(check.allowsReady()).isTrue();
        assertThat(check.settled()).isTrue();
        assertThat(gauge("confirmed")).isEqualTo(1);
        assertThat(gauge("pending")).isZero();
    }

    @Test
    void agentMovedToAnotherNamespace_mismatch_notReady_namingBoth() {
        accounts.add("other-ns/satoken-agent");
        daemonSets.add(new AgentDaemonSet("other-ns", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.allowsReady()).isFalse();
        assertThat(check.settled()).isFalse();
        assertThat(check.reason()).contains("--agent-service-account is satoken-system/satoken-agent",
                "DaemonSet other-ns/satoken-agent runs as other-ns/satoken-agent");
        assertThat(gauge("mismatch")).isEqualTo(1);
    }

    @Test
    void daemonSetWithoutServiceAccountName_runsAsDefault_mismatch() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", null));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.reason()).contains("runs as satoken-system/default");
    }

    @Test
    void daemonSetNamesTheAccount_butItIsMissing_mismatch() {
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.reason()).contains("does not exist");
    }

    @Test
    void noAgentYet_ready_andCheckedAgain_thenAMovedAgentIsAMismatch() {
        assertThat(check.run()).isEqualTo(State.NO_AGENT);
        assertThat(check.allowsReady()).as("the install puts the agent after the webhook").isTrue();
        assertThat(check.settled()).isFalse();

        daemonSets.add(new AgentDaemonSet("other-ns", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.allowsReady()).isFalse();
    }

    @Test
    void mismatchCorrected_becomesConfirmed_withoutRestart() {
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "someone-else"));
        accounts.add("satoken-system/satoken-agent");
        assertThat(check.run()).isEqualTo(State.MISMATCH);

        daemonSets.set(0, new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.CONFIRMED);
        assertThat(check.allowsReady()).isTrue();
    }

    @Test
    void apiUnreachable_keepsTheLastState() {
        failing = true;
        assertThat(check.run()).isEqualTo(State.PENDING);
        assertThat(check.allowsReady()).isFalse();
    }

    private double gauge(String state) {
        return registry.get("satoken_webhook_agent_account").tag("state", state).gauge().value();
    }
}
