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
    void daemonSetRunsAsTheAccount_confirmed_ready() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.CONFIRMED);
        assertThat(check.allowsReady()).isTrue();
        assertThat(gauge("confirmed")).isEqualTo(1);
        assertThat(gauge("pending")).isZero();
    }

    /** A tenant's DaemonSet with the agent's label: counted and logged, never a reason to be unready. */
    @Test
    void lookalikeInATenantNamespace_neverDecidesReadiness_butIsCounted() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("tenant", "decoy", "builder"));

        assertThat(check.run()).isEqualTo(State.NO_AGENT);
        assertThat(check.allowsReady()).isTrue();
        assertThat(check.lookalikes()).containsExactly("tenant/decoy runs as tenant/builder");
        assertThat(registry.get("satoken_webhook_agent_lookalike_daemonsets").gauge().value()).isEqualTo(1);

        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.CONFIRMED);
        assertThat(check.allowsReady()).isTrue();
    }

    /** An agent moved without the flag: a look-alike here; the agent's own confinement gauge and alert report it. */
    @Test
    void agentMovedToAnotherNamespace_isALookalike_notAMismatch() {
        accounts.add("other-ns/satoken-agent");
        daemonSets.add(new AgentDaemonSet("other-ns", "satoken-agent", "satoken-agent"));

        assertThat(check.run()).isEqualTo(State.NO_AGENT);
        assertThat(check.reason()).contains("no agent DaemonSet", "in namespace satoken-system");
        assertThat(check.lookalikes()).containsExactly("other-ns/satoken-agent runs as other-ns/satoken-agent");
    }

    @Test
    void daemonSetInTheAgentsNamespace_runningAsAnotherAccount_mismatch_notReady_namingBoth() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "someone-else"));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.allowsReady()).isFalse();
        assertThat(check.reason()).contains("--agent-service-account is satoken-system/satoken-agent",
                "DaemonSet satoken-system/satoken-agent runs as satoken-system/someone-else");
        assertThat(gauge("mismatch")).isEqualTo(1);
    }

    /** Checked for as long as the webhook runs: a confirmed account changed under it turns it unready. */
    @Test
    void confirmed_thenChangedUnderIt_mismatch() {
        accounts.add("satoken-system/satoken-agent");
        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "satoken-agent"));
        assertThat(check.run()).isEqualTo(State.CONFIRMED);

        daemonSets.set(0, new AgentDaemonSet("satoken-system", "satoken-agent", "someone-else"));

        assertThat(check.run()).isEqualTo(State.MISMATCH);
        assertThat(check.allowsReady()).isFalse();
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
    void noAgentYet_ready_andCheckedAgain_thenAWrongAccountIsAMismatch() {
        assertThat(check.run()).isEqualTo(State.NO_AGENT);
        assertThat(check.allowsReady()).as("the install puts the agent after the webhook").isTrue();

        daemonSets.add(new AgentDaemonSet("satoken-system", "satoken-agent", "default"));

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
