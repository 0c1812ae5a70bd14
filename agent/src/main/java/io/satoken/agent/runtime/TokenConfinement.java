package io.satoken.agent.runtime;

import io.kubernetes.client.openapi.models.V1RuleWithOperations;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.common.kube.Failures;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a webhook confines this agent's TokenRequests. Without one, the agent's credential (RBAC's
 * {@code serviceaccounts/token create}, cluster-wide) can mint a token for any ServiceAccount in the cluster, and
 * one compromised node gives every identity away: the agent says so, loudly, and in a gauge.
 *
 * <p>The agent reads the one registration satoken's control plane ships, the ValidatingWebhookConfiguration
 * {@value #CONFIGURATION} (a {@code get} limited to that name: agent/deploy/10-rbac.yaml). It counts as confining
 * when one of its webhooks checks {@code serviceaccounts/token} creation, fails closed, and either has no
 * matchConditions or has one naming this agent's ServiceAccount (namespace and name, from the agent's in-cluster
 * token). Anything else is {@link State#UNCONFINED}; a read that fails (no RBAC, no API server) is
 * {@link State#UNKNOWN}.
 */
public final class TokenConfinement {

    /** The gauge of what the check found, one series per state. */
    public static final String METRIC = "satoken_agent_token_confinement";
    /** The CEL name of the requesting user's name. */
    private static final String USERNAME = "request.userInfo.username";

    /** The registration of satoken's token webhook (controlplane/deploy/webhooks/webhook-configurations.yaml). */
    public static final String CONFIGURATION = "satoken-controlplane";

    public enum State {
        CONFINED, UNCONFINED, UNKNOWN;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Reads the registration; empty when it does not exist. */
    @FunctionalInterface
    public interface Registrations {
        Optional<V1ValidatingWebhookConfiguration> read(String name) throws Exception;
    }

    private static final Logger log = LoggerFactory.getLogger(TokenConfinement.class);

    /** Null when the API server confines the agent by itself ({@link #byApiServer}). */
    private final Registrations registrations;
    /** system:serviceaccount:NS:NAME, or null when not known (no in-cluster token). */
    private final String username;
    private volatile State state = State.UNKNOWN;
    private volatile String reason = "not checked yet";

    public TokenConfinement(Registrations registrations, String username, MeterRegistry registry) {
        this.registrations = registrations;
        this.username = username;
        for (State s : State.values()) {
            Gauge.builder(METRIC, () -> state == s ? 1 : 0)
                    .description("1 for whether a webhook confines this agent's TokenRequests: confined (the token "
                            + "webhook is registered, fails closed and names this agent), unconfined (it does not: the "
                            + "agent's credential can mint a token for any ServiceAccount), unknown (it could not be read)")
                    .tag("state", s.label()).register(registry);
        }
    }

    /**
     * The confinement of a token source the API server itself confines (node impersonation, kubelet-minted
     * tokens): {@link State#CONFINED} for the given reason, logged once; no webhook is read.
     */
    public static TokenConfinement byApiServer(String reason, MeterRegistry registry) {
        TokenConfinement confinement = new TokenConfinement(null, null, registry);
        confinement.state = State.CONFINED;
        confinement.reason = reason;
        log.info("token requests confined: {}", reason);
        return confinement;
    }

    public State state() {
        return state;
    }

    public String reason() {
        return reason;
    }

    /** Checks once; logs a warning when unconfined or unknown, at start and whenever the state changes. */
    public State check() {
        if (registrations == null) {
            return state; // confined by the API server: there is no registration to read
        }
        State found;
        String why;
        try {
            Optional<V1ValidatingWebhookConfiguration> configuration = registrations.read(CONFIGURATION);
            if (configuration.isEmpty()) {
                found = State.UNCONFINED;
                why = "no ValidatingWebhookConfiguration " + CONFIGURATION + " is registered";
            } else {
                Optional<String> confining = confining(configuration.get());
                found = confining.isPresent() ? State.CONFINED : State.UNCONFINED;
                why = confining.orElseGet(() -> "ValidatingWebhookConfiguration " + CONFIGURATION + " has no webhook"
                        + " that checks serviceaccounts/token creation, fails closed and names "
                        + (username == null ? "this agent" : username));
            }
        } catch (Exception e) {
            found = State.UNKNOWN;
            why = "could not read ValidatingWebhookConfiguration " + CONFIGURATION + ": " + Failures.inWords(e);
        }
        if (found != state || "not checked yet".equals(reason)) {
            if (found == State.CONFINED) {
                log.info("token requests confined: {}", why);
            } else {
                log.warn("token requests NOT confined ({}): {}; this agent's credential can create a token for any "
                        + "ServiceAccount in the cluster. Install the control plane's token webhook (docs/install.md)",
                        found.label(), why);
            }
        }
        reason = why;
        state = found;
        return found;
    }

    /** The confining webhook, described; empty when there is none. */
    private Optional<String> confining(V1ValidatingWebhookConfiguration configuration) {
        for (V1ValidatingWebhook webhook : nonNull(configuration.getWebhooks())) {
            boolean tokens = nonNull(webhook.getRules()).stream().anyMatch(TokenConfinement::tokenCreation);
            boolean failsClosed = webhook.getFailurePolicy() == null || "Fail".equals(webhook.getFailurePolicy());
            // the conditions are ANDed: each must be one this agent's requests are known to satisfy
            boolean namesUs = webhook.getMatchConditions() == null || webhook.getMatchConditions().isEmpty()
                    || (username != null && webhook.getMatchConditions().stream()
                            .allMatch(c -> namesAccount(c.getExpression())));
            if (tokens && failsClosed && namesUs) {
                return Optional.of("webhook " + webhook.getName() + " of " + CONFIGURATION + " checks them");
            }
        }
        return Optional.empty();
    }

    /**
     * Whether a CEL expression is exactly a test that the request's user is this agent: {@code
     * request.userInfo.username == '<username>'}, or the shipped form that spells the username as the concatenation
     * {@code 'system:serviceaccount:' + '<namespace>' + ':' + '<name>'}, either side of {@code ==}, with either
     * quote. Anything else (a negation, an {@code ||}, another user) does not count as confining: a substring test
     * would take {@code !(... == '<username>')} for a match.
     */
    boolean namesAccount(String expression) {
        if (expression == null) {
            return false;
        }
        String condition = withoutBlanksOutsideStrings(expression);
        String[] parts = username.split(":");
        for (char q : new char[] {'\'', '"'}) {
            List<String> spellings = new ArrayList<>(List.of(q + username + q));
            if (parts.length == 4) {
                spellings.add(q + "system:serviceaccount:" + q + "+" + q + parts[2] + q + "+" + q + ":" + q + "+" + q
                        + parts[3] + q);
            }
            for (String spelled : spellings) {
                if (condition.equals(USERNAME + "==" + spelled) || condition.equals(spelled + "==" + USERNAME)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The expression with the blanks between its tokens removed; those inside quoted strings are kept. */
    private static String withoutBlanksOutsideStrings(String expression) {
        StringBuilder out = new StringBuilder();
        char quote = 0;
        for (char c : expression.toCharArray()) {
            if (quote != 0) {
                out.append(c);
                if (c == quote) {
                    quote = 0;
                }
            } else if (c == '\'' || c == '"') {
                quote = c;
                out.append(c);
            } else if (!Character.isWhitespace(c)) {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean tokenCreation(V1RuleWithOperations rule) {
        boolean create = nonNull(rule.getOperations()).stream().anyMatch(o -> o.equals("CREATE") || o.equals("*"));
        boolean resource = nonNull(rule.getResources()).stream()
                .anyMatch(r -> r.equals("serviceaccounts/token") || r.equals("*/*") || r.equals("serviceaccounts/*"));
        return create && resource;
    }

    private static <T> List<T> nonNull(List<T> list) {
        return list == null ? List.of() : list;
    }
}
