package io.satoken.controlplane.webhook;

import io.satoken.controlplane.admission.NodeTokenRestriction;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, when the token webhook starts, that the ServiceAccount it confines ({@code --agent-service-account}) is
 * the node agent's: that it exists and that the agent's DaemonSet (found by its label, {@value #AGENT_SELECTOR},
 * in any namespace) runs as it. A webhook that confines another account confines nothing: the agent's token
 * requests would pass unchecked. That happens when the agent is rendered into another namespace and the control
 * plane is not rendered with it.
 *
 * <ul>
 *   <li>{@link State#CONFIRMED}: a DaemonSet runs as the account, which exists;</li>
 *   <li>{@link State#MISMATCH}: a DaemonSet runs as another account, or the account does not exist: logged as
 *       an error, and the webhook is not ready ({@code /readyz} fails), so a rollout with the wrong account stops
 *       before an old replica goes, and a first install never registers it;</li>
 *   <li>{@link State#NO_AGENT}: no agent DaemonSet yet (the install puts the agent after the webhook): ready, with
 *       a warning. The agent itself reports whether a webhook confines it.</li>
 * </ul>
 * Until it is {@link State#CONFIRMED} the check is repeated, so a corrected DaemonSet or account makes the webhook
 * ready without a restart; once confirmed it is not repeated.
 */
public final class AgentAccountCheck {

    /** The label of the agent's DaemonSet (agent/deploy/30-daemonset.yaml). */
    public static final String AGENT_SELECTOR = "app.kubernetes.io/name=satoken-agent";

    /** What the check found. */
    public enum State {
        PENDING, CONFIRMED, MISMATCH, NO_AGENT;

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** A DaemonSet of the agent: its namespace and name, and the ServiceAccount its pods run as. */
    public record AgentDaemonSet(String namespace, String name, String serviceAccountName) {
        String account() {
            return namespace + "/" + (serviceAccountName == null || serviceAccountName.isEmpty() ? "default"
                    : serviceAccountName);
        }
    }

    /** What the check reads from the API. */
    public interface Cluster {
        /** Whether the ServiceAccount exists. */
        boolean serviceAccountExists(String namespace, String name) throws Exception;

        /** The DaemonSets labelled {@value AgentAccountCheck#AGENT_SELECTOR}, in every namespace. */
        List<AgentDaemonSet> agentDaemonSets() throws Exception;
    }

    private static final Logger log = LoggerFactory.getLogger(AgentAccountCheck.class);

    private final NodeTokenRestriction.AgentAccount agent;
    private final Cluster cluster;
    private volatile State state = State.PENDING;
    private volatile String reason = "not checked yet";

    AgentAccountCheck(NodeTokenRestriction.AgentAccount agent, Cluster cluster, MeterRegistry registry) {
        this.agent = Objects.requireNonNull(agent);
        this.cluster = Objects.requireNonNull(cluster);
        for (State s : State.values()) {
            Gauge.builder("satoken_webhook_agent_account", () -> state == s ? 1 : 0)
                    .description("1 for what the start-up check of --agent-service-account found: confirmed (the "
                            + "agent's DaemonSet runs as it), mismatch (it does not, or the account is missing: not "
                            + "ready), no-agent (no agent DaemonSet yet), pending (not checked yet)")
                    .tag("state", s.label()).register(registry);
        }
    }

    /** Whether the webhook may be ready: not before the first check, never on a mismatch. */
    public boolean allowsReady() {
        State s = state;
        return s == State.CONFIRMED || s == State.NO_AGENT;
    }

    /** Whether it should be run again (until confirmed). */
    public boolean settled() {
        return state == State.CONFIRMED;
    }

    public State state() {
        return state;
    }

    public String reason() {
        return reason;
    }

    /**
     * Runs the check once, and logs what changed: an error for a mismatch, a warning for no agent, one line when
     * confirmed. A failed read keeps the last state (pending at first: not ready) and is logged.
     */
    public State run() {
        State found;
        String why;
        try {
            String configured = agent.namespace() + "/" + agent.name();
            List<AgentDaemonSet> daemonSets = cluster.agentDaemonSets();
            List<String> others = new ArrayList<>();
            for (AgentDaemonSet ds : daemonSets) {
                if (!ds.account().equals(configured)) {
                    others.add("DaemonSet " + ds.namespace() + "/" + ds.name() + " runs as " + ds.account());
                }
            }
            boolean exists = cluster.serviceAccountExists(agent.namespace(), agent.name());
            if (!others.isEmpty()) {
                found = State.MISMATCH;
                why = "--agent-service-account is " + configured + ", but the agent's " + String.join("; ", others)
                        + ": its token requests would not be confined. Render the control plane with the agent's"
                        + " ServiceAccount (docs/install.md, \"Another namespace for the agent\") or correct the flag";
            } else if (!daemonSets.isEmpty() && !exists) {
                found = State.MISMATCH;
                why = "--agent-service-account is " + configured + ", which does not exist, though the agent's"
                        + " DaemonSet names it";
            } else if (daemonSets.isEmpty()) {
                found = State.NO_AGENT;
                why = "no agent DaemonSet (label " + AGENT_SELECTOR + ") in any namespace yet; the token webhook"
                        + " confines " + configured + (exists ? "" : ", which does not exist yet");
            } else {
                found = State.CONFIRMED;
                why = "the agent's DaemonSet runs as " + configured + ", which the token webhook confines";
            }
        } catch (Exception e) {
            log.warn("could not check --agent-service-account {}/{} against the agent's DaemonSet: {}",
                    agent.namespace(), agent.name(), e.toString());
            return state;
        }
        if (found != state || !why.equals(reason)) {
            switch (found) {
                case MISMATCH -> log.error("not ready: {}", why);
                case NO_AGENT -> log.warn("{}", why);
                default -> log.info("{}", why);
            }
        }
        reason = why;
        state = found;
        return found;
    }
}
