package io.satoken.controlplane.rootca;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.controlplane.rootca.RootCaPublisher.Triggers;
import org.junit.jupiter.api.Test;

/** RC-2: the rows of TestConfigMapCreation that are decided by which events queue a namespace. */
class RootCaTriggersTest {

    @Test
    void namespaceAdded_queuesItInAnyPhase() {
        assertThat(Triggers.namespaceAdded(namespace("Active"))).contains("ns");
        assertThat(Triggers.namespaceAdded(namespace("Terminating"))).contains("ns");
    }

    @Test
    void updateNamespaceWithTerminatingState_queuesNothing() {
        assertThat(Triggers.namespaceUpdated(namespace("Terminating"))).isEmpty();
        assertThat(Triggers.namespaceUpdated(namespace("Active"))).contains("ns");
    }

    @Test
    void deleteOrUpdateOfAnotherConfigMap_queuesNothing() {
        assertThat(Triggers.configMapChanged(configMap("other"))).isEmpty();
        assertThat(Triggers.configMapChanged(configMap("kube-root-ca.crt"))).contains("ns");
    }

    static V1Namespace namespace(String phase) {
        return new V1Namespace().metadata(new V1ObjectMeta().name("ns")).status(new V1NamespaceStatus().phase(phase));
    }

    static V1ConfigMap configMap(String name) {
        return new V1ConfigMap().metadata(new V1ObjectMeta().name(name).namespace("ns"));
    }
}
