package io.satoken.agent.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1MatchCondition;
import io.kubernetes.client.openapi.models.V1RuleWithOperations;
import io.kubernetes.client.openapi.models.V1ValidatingWebhook;
import io.kubernetes.client.openapi.models.V1ValidatingWebhookConfiguration;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.agent.runtime.TokenConfinement.State;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Whether the agent counts itself confined, from the token webhook's registration as the API server holds it. */
class TokenConfinementTest {

    static final String AGENT = "system:serviceaccount:satoken-system:satoken-agent";
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @Test
    void noRegistration_unconfined_gaugeSaysSo() {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.empty(), AGENT, registry);

        assertThat(confinement.check()).isEqualTo(State.UNCONFINED);
        assertThat(confinement.reason()).contains("no ValidatingWebhookConfiguration satoken-controlplane");
        assertThat(gauge("unconfined")).isEqualTo(1);
        assertThat(gauge("confined")).isZero();
    }

    @Test
    void confinedByTheApiServer_readsNoRegistration_staysConfinedOnRecheck() {
        TokenConfinement confinement = TokenConfinement.byApiServer("the kubelet mints every token", registry);

        assertThat(confinement.check()).isEqualTo(State.CONFINED);
        assertThat(confinement.reason()).isEqualTo("the kubelet mints every token");
        assertThat(gauge("confined")).isEqualTo(1);
        assertThat(gauge("unconfined")).isZero();
        assertThat(gauge("unknown")).isZero();
    }

    @Test
    void shippedRegistration_namingThisAgent_confined() {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration("Fail",
                "request.userInfo.username == 'system:serviceaccount:' + 'satoken-system' + ':' + 'satoken-agent'")),
                AGENT, registry);

        assertThat(confinement.check()).isEqualTo(State.CONFINED);
        assertThat(gauge("confined")).isEqualTo(1);
    }

    @Test
    void registrationWithoutMatchConditions_asOn126_confined() {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration("Fail", null)), AGENT,
                registry);

        assertThat(confinement.check()).isEqualTo(State.CONFINED);
    }

    @Test
    void registrationNamingAnotherNamespacesAgent_unconfined() {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration("Fail",
                "request.userInfo.username == 'system:serviceaccount:' + 'satoken-system' + ':' + 'satoken-agent'")),
                "system:serviceaccount:other-ns:satoken-agent", registry);

        assertThat(confinement.check()).isEqualTo(State.UNCONFINED);
        assertThat(confinement.reason()).contains("names system:serviceaccount:other-ns:satoken-agent");
    }

    record Condition(String name, String expression, boolean confining) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Only an exact test that the user is this agent counts; the old substring test took a negation for one. */
    static List<Condition> conditions() {
        String shipped = "request.userInfo.username == 'system:serviceaccount:' + 'satoken-system' + ':' + 'satoken-agent'";
        return List.of(
                new Condition("the shipped form", shipped, true),
                new Condition("the whole username, double quotes, reversed",
                        "\"" + AGENT + "\" == request.userInfo.username", true),
                new Condition("without blanks", shipped.replace(" ", ""), true),
                new Condition("negated", "!(" + shipped + ")", false),
                new Condition("not equal", shipped.replace("==", "!="), false),
                new Condition("or anyone", shipped + " || true", false),
                new Condition("and never", shipped + " && false", false),
                new Condition("a blank inside the name", shipped.replace("'satoken-agent'", "'satoken-agent '"), false),
                new Condition("another user", "request.userInfo.username == 'system:serviceaccount:x:satoken-agent'",
                        false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("conditions")
    void matchCondition_confinesOnlyWhenItIsExactlyThisAgent(Condition c) {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration("Fail",
                c.expression())), AGENT, registry);

        assertThat(confinement.check()).isEqualTo(c.confining() ? State.CONFINED : State.UNCONFINED);
    }

    /** matchConditions are ANDed: one the agent cannot evaluate makes the others not enough. */
    @Test
    void aSecondConditionBesideTheExactOne_unconfined() {
        V1ValidatingWebhookConfiguration registration = registration("Fail",
                "request.userInfo.username == '" + AGENT + "'");
        registration.getWebhooks().get(0).getMatchConditions()
                .add(new V1MatchCondition().name("only-on-tuesdays").expression("false"));
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration), AGENT, registry);

        assertThat(confinement.check()).isEqualTo(State.UNCONFINED);
    }

    @Test
    void registrationFailingOpen_unconfined() {
        TokenConfinement confinement = new TokenConfinement(name -> Optional.of(registration("Ignore", null)), AGENT,
                registry);

        assertThat(confinement.check()).isEqualTo(State.UNCONFINED);
    }

    @Test
    void unreadable_unknown() {
        TokenConfinement confinement = new TokenConfinement(name -> {
            throw new IOException("HTTP 403");
        }, AGENT, registry);

        assertThat(confinement.check()).isEqualTo(State.UNKNOWN);
        assertThat(gauge("unknown")).isEqualTo(1);
    }

    @Test
    void webhookRegisteredLater_theRecheckFindsIt() {
        V1ValidatingWebhookConfiguration[] held = new V1ValidatingWebhookConfiguration[1];
        TokenConfinement confinement = new TokenConfinement(name -> Optional.ofNullable(held[0]), AGENT, registry);
        assertThat(confinement.check()).isEqualTo(State.UNCONFINED);

        held[0] = registration("Fail", null);

        assertThat(confinement.check()).isEqualTo(State.CONFINED);
        assertThat(gauge("unconfined")).isZero();
    }

    private static V1ValidatingWebhookConfiguration registration(String failurePolicy, String condition) {
        V1ValidatingWebhook webhook = new V1ValidatingWebhook().name("serviceaccount-token.satoken.io")
                .failurePolicy(failurePolicy).rules(List.of(new V1RuleWithOperations().apiGroups(List.of(""))
                        .apiVersions(List.of("v1")).operations(List.of("CREATE"))
                        .resources(List.of("serviceaccounts/token"))));
        if (condition != null) {
            webhook.matchConditions(new ArrayList<>(List.of(
                    new V1MatchCondition().name("node-agent").expression(condition))));
        }
        return new V1ValidatingWebhookConfiguration().webhooks(List.of(webhook));
    }

    private double gauge(String state) {
        return registry.get("satoken_agent_token_confinement").tag("state", state).gauge().value();
    }
}
