package io.satoken.controlplane.injection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1LabelSelectorRequirement;
import io.kubernetes.client.openapi.models.V1MutatingWebhook;
import io.kubernetes.client.openapi.models.V1MutatingWebhookConfiguration;
import io.kubernetes.client.util.Yaml;
import io.satoken.controlplane.testing.DeployedManifests;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The namespaces where the check never evicts are the ones the pod webhook's registration skips, read from
 * {@code deploy/webhooks/webhook-configurations.yaml}: a namespace added there and not here would have its annotated
 * pods evicted without end, since none would come back mutated.
 */
class SkippedNamespacesTest {

    @Test
    void neverEvictsIn_theNamespacesThePodWebhookSkips() throws IOException {
        List<V1MutatingWebhook> webhooks = Yaml.loadAll(Path.of("deploy", DeployedManifests.WEBHOOK_CONFIGURATIONS)
                        .toFile()).stream().filter(V1MutatingWebhookConfiguration.class::isInstance)
                .map(V1MutatingWebhookConfiguration.class::cast).flatMap(c -> c.getWebhooks().stream()).toList();
        V1MutatingWebhook pods = webhooks.stream().filter(w -> w.getName().equals("pods.serviceaccount.satoken.io"))
                .findFirst().orElseThrow();
        List<String> skipped = pods.getNamespaceSelector().getMatchExpressions().stream()
                .filter(e -> e.getKey().equals("kubernetes.io/metadata.name") && e.getOperator().equals("NotIn"))
                .flatMap(e -> e.getValues().stream()).toList();

        assertThat(ReplacementCheck.SKIPPED_NAMESPACES.keySet()).containsExactlyInAnyOrderElementsOf(skipped);
        // the webhook's own namespace is one of them, as the Service the registration calls says
        assertThat(skipped).contains(pods.getClientConfig().getService().getNamespace());
        // and no other pod webhook has a namespaceSelector the check would have to know about but kube-system's
        assertThat(webhooks).filteredOn(w -> w != pods).allSatisfy(w -> assertThat(w.getNamespaceSelector()
                .getMatchExpressions()).extracting(V1LabelSelectorRequirement::getOperator, e -> e.getValues())
                .containsExactly(org.assertj.core.groups.Tuple.tuple("In", List.of("kube-system"))));
    }
}
