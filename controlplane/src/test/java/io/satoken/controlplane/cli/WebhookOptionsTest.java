package io.satoken.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.controlplane.runtime.AdmissionWebhook;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The webhook's flags, checked one by one. */
class WebhookOptionsTest {

    @Test
    void webhooksFlag_namesKnownPathsOnly() {
        assertThat(WebhookOptions.parseWebhooks(AdmissionWebhook.ALL_WEBHOOKS))
                .containsExactlyInAnyOrder("pods", "serviceaccount-token");
        assertThat(WebhookOptions.parseWebhooks(" pods ")).containsExactly("pods");
        for (String bad : List.of("", "pods,", "secrets")) {
            assertThatThrownBy(() -> WebhookOptions.parseWebhooks(bad))
                    .hasMessageStartingWith("--webhooks: unknown webhook \"")
                    .hasMessageEndingWith("\"; the webhooks are agent-tokens, pods, serviceaccount-token");
        }
    }

    @Test
    void tokenCheck_withoutTheAgentAccount_isAFlagError() {
        for (Set<String> webhooks : List.of(Set.of("serviceaccount-token"), Set.of("pods", "serviceaccount-token"))) {
            assertThatThrownBy(() -> WebhookOptions.checkSelection(webhooks, null))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("--webhooks serves serviceaccount-token, which needs "
                            + "--agent-service-account NAMESPACE/NAME");
        }
    }

    @Test
    void apiAudiences_mustBeAListOfNonBlankAudiences() {
        assertThat(WebhookOptions.checkApiAudiences(List.of("https://kubernetes.default.svc")))
                .containsExactly("https://kubernetes.default.svc");
        for (List<String> bad : List.of(List.<String>of(), List.of(" "))) {
            assertThatThrownBy(() -> WebhookOptions.checkApiAudiences(bad))
                    .hasMessageStartingWith("--api-audiences: expected a comma-separated list of audiences");
        }
    }
}
