package io.satoken.controlplane.webhook;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AppsV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.admission.NodeTokenRestriction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks that the ServiceAccount the token webhook confines ({@code --agent-service-account}) is the node agent's:
 * that it exists and that the agent's DaemonSet runs as it. A webhook that confines another account confines
 * nothing: the agent's token requests would pass unchecked.
 *
 * <p>The agent's DaemonSet is the one labelled {@value #AGENT_SELECTOR} in the account's own namespace: a pod can
 * run only as an account of its namespace, so the agent and its account live together. Labelled DaemonSets in other
 * namespaces are look-alikes: anyone who may create a DaemonSet in their own namespace can make one, so they never
 * decide readiness. They are counted ({@code satoken_webhook_agent_lookalike_daemonsets}) and logged, and an agent
 * really moved there without the flag following it is reported by the agent itself
 * ({@code satoken_agent_token_confinement}, alert {@code SatokenAgentTokensUnconfined}).
 *
 * <ul>
 *   <li>{@link State#CONFIRMED}: a DaemonSet there runs as the account, which exists;</li>
 *   <li>{@link State#MISMATCH}: a DaemonSet there runs as another account, or the account does not exist: logged
 *       as an error, and the webhook is not ready ({@code /readyz} fails; alert
 *       {@code SatokenWebhookAgentAccountMismatch}), so a rollout with the wrong account stops before an old replica
 *       goes, and a first install never registers it;</li>
 *   <li>{@link State#NO_AGENT}: no agent DaemonSet there yet (the install puts the agent after the webhook):
 *       ready, with a warning.</li>
 * </ul>
 * The check is repeated for as long as the webhook runs, so a corrected DaemonSet or account makes it ready, and a
 * later mismatch unready, without a restart.
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
    private volatile List<String> lookalikes = List.of();

    public AgentAccountCheck(NodeTokenRestriction.AgentAccount agent, Cluster cluster, MeterRegistry registry) {
        this.agent = Objects.requireNonNull(agent);
        this.cluster = Objects.requireNonNull(cluster);
        for (State s : State.values()) {
            Gauge.builder("satoken_webhook_agent_account", () -> state == s ? 1 : 0)
                    .description("1 for what the start-up check of --agent-service-account found: confirmed (the "
                            + "agent's DaemonSet runs as it), mismatch (it does not, or the account is missing: not "
                            + "ready), no-agent (no agent DaemonSet yet), pending (not checked yet)")
                    .tag("state", s.label()).register(registry);
        }
        Gauge.builder("satoken_webhook_agent_lookalike_daemonsets", () -> lookalikes.size())
                .description("DaemonSets labelled " + AGENT_SELECTOR + " outside the namespace of"
                        + " --agent-service-account: not the agent, never a reason to be unready; see the log")
                .register(registry);
    }

    /** The agent's ServiceAccount and DaemonSets, read from the API server (get and list: 10-rbac.yaml). */
    public static Cluster live(ApiClient client) {
        CoreV1Api core = new CoreV1Api(client);
        AppsV1Api apps = new AppsV1Api(client);
        return new Cluster() {
            @Override
            public boolean serviceAccountExists(String namespace, String name) throws ApiException {
                try {
                    core.readNamespacedServiceAccount(name, namespace).execute();
                    return true;
                } catch (ApiException e) {
                    if (e.getCode() == 404) {
                        return false;
                    }
                    throw e;
                }
            }

            @Override
            public List<AgentDaemonSet> agentDaemonSets() throws ApiException {
                return apps.listDaemonSetForAllNamespaces().labelSelector(AGENT_SELECTOR).execute()
                        .getItems().stream().map(ds -> new AgentDaemonSet(
                                ds.getMetadata().getNamespace(), ds.getMetadata().getName(),
                                ds.getSpec().getTemplate().getSpec().getServiceAccountName()))
                        .toList();
            }
        };
    }

    /** Whether the webhook may be ready: not before the first check, never on a mismatch. */
    public boolean allowsReady() {
        State s = state;
        return s == State.CONFIRMED || s == State.NO_AGENT;
    }

    public State state() {
        return state;
    }

    public String reason() {
        return reason;
    }

    /** The labelled DaemonSets outside the agent's namespace, as "namespace/name runs as namespace/account". */
    public List<String> lookalikes() {
        return lookalikes;
    }

    /**
     * Runs the check once, and logs what changed: an error for a mismatch, a warning for no agent, one line when
     * confirmed. A failed read keeps the last state (pending at first: not ready) and is logged.
     */
    public State run() {
        State found;
        String why;
        List<String> elsewhere = new ArrayList<>();
        try {
            String configured = agent.namespace() + "/" + agent.name();
            List<AgentDaemonSet> daemonSets = new ArrayList<>();
            for (AgentDaemonSet ds : cluster.agentDaemonSets()) {
                if (ds.namespace().equals(agent.namespace())) {
                    daemonSets.add(ds);
                } else {
                    elsewhere.add(ds.namespace() + "/" + ds.name() + " runs as " + ds.account());
                }
            }
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
                why = "no agent DaemonSet (label " + AGENT_SELECTOR + ") in namespace " + agent.namespace()
                        + " yet; the token webhook confines " + configured + (exists ? "" : ", which does not exist yet");
            } else {
                found = State.CONFIRMED;
                why = "the agent's DaemonSet runs as " + configured + ", which the token webhook confines";
            }
        } catch (Exception e) {
            log.warn("could not check --agent-service-account {}/{} against the agent's DaemonSet: {}",
                    agent.namespace(), agent.name(), Failures.inWords(e));
            return state;
        }
        if (found != state || !why.equals(reason)) {
            switch (found) {
                case MISMATCH -> log.error("not ready: {}", why);
                case NO_AGENT -> log.warn("{}", why);
                default -> log.info("{}", why);
            }
        }
        if (!elsewhere.equals(lookalikes) && !elsewhere.isEmpty()) {
            log.warn("DaemonSets labelled {} outside namespace {}, not the agent (readiness does not depend on them;"
                    + " an agent really moved there is unconfined until the control plane follows it): {}",
                    AGENT_SELECTOR, agent.namespace(), String.join("; ", elsewhere));
        }
        lookalikes = List.copyOf(elsewhere);
        reason = why;
        state = found;
        return found;
    }
}
