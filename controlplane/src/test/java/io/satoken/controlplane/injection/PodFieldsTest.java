package io.satoken.controlplane.injection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1EmptyDirVolumeSource;
import io.kubernetes.client.openapi.models.V1ManagedFieldsEntry;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodCondition;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pod informer's transform. That the check decides the same on what it keeps is shown by
 * {@link InjectionCheckSyncTest}'s decision table, which caches pods through it, as the informer does.
 */
class PodFieldsTest {

    static final OffsetDateTime DELETED = OffsetDateTime.parse("2026-01-01T00:00:00Z");

    /** The paged list keeps each pod, then the informer's transform sees it again: no second copy. */
    @Test
    void aKeptPod_isKeptAsItIs() {
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name("web-1").uid("uid-1"))
                .spec(new V1PodSpec().addContainersItem(new V1Container().name("app")));
        KubernetesObject once = PodFields.keep(pod);

        assertThat(PodFields.keep(once)).isSameAs(once);
    }

    @Test
    void keepsTheFieldsTheCheckReads_andDropsTheRest() {
        V1OwnerReference controller = new V1OwnerReference().apiVersion("apps/v1").kind("ReplicaSet").name("web")
                .uid("rs-uid").controller(true);
        V1Pod pod = new V1Pod().apiVersion("v1").kind("Pod").metadata(new V1ObjectMeta().namespace("shop")
                        .name("web-1").uid("uid-1").resourceVersion("42").deletionTimestamp(DELETED)
                        .labels(Map.of("app", "web"))
                        .annotations(Map.of("satoken.io/projections", "[{path: token}]",
                                "kubernetes.io/config.mirror", "x", "team", "a"))
                        .addOwnerReferencesItem(new V1OwnerReference().apiVersion("v1").kind("Node").name("n")
                                .uid("node-uid"))
                        .addOwnerReferencesItem(controller)
                        .addManagedFieldsItem(new V1ManagedFieldsEntry().manager("kubelet")))
                .spec(new V1PodSpec().nodeName("n").addContainersItem(new V1Container().name("app").image("app:1"))
                        .addVolumesItem(new V1Volume().name("cache").emptyDir(new V1EmptyDirVolumeSource()))
                        .addVolumesItem(new V1Volume().name("satoken-agent-tokens").csi(new V1CSIVolumeSource()
                                .driver("tokens.satoken.io").readOnly(true)
                                .volumeAttributes(Map.of("projections", "[]")))))
                .status(new V1PodStatus().phase("Running").podIP("10.0.0.1")
                        .addConditionsItem(new V1PodCondition().type("Ready").status("True")));

        assertThat(PodFields.keep(pod)).isEqualTo(new V1Pod().apiVersion("v1").kind("Pod")
                .metadata(new V1ObjectMeta().namespace("shop").name("web-1").uid("uid-1").resourceVersion("42")
                        .deletionTimestamp(DELETED)
                        .annotations(Map.of("satoken.io/projections", "", "kubernetes.io/config.mirror", ""))
                        .ownerReferences(List.of(controller)))
                .spec(new V1PodSpec().containers(null).overhead(null).volumes(List.of(new V1Volume()
                        .name("satoken-agent-tokens").csi(new V1CSIVolumeSource().driver("tokens.satoken.io")))))
                .status(new V1PodStatus().phase("Running")));
    }

    @Test
    void aPodWithNoneOfThem_keepsItsKeyOnly() {
        V1Pod pod = new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name("web-1")
                .annotations(Map.of("team", "a"))).spec(new V1PodSpec().addContainersItem(new V1Container()));

        assertThat(PodFields.keep(pod)).isEqualTo(new V1Pod().metadata(new V1ObjectMeta().namespace("shop")
                .name("web-1").annotations(null).ownerReferences(null))
                .spec(new V1PodSpec().containers(null).overhead(null).volumes(null)));
    }

    @Test
    void anythingButAPod_aTombstone_passesAsItIs() {
        V1ConfigMap other = new V1ConfigMap().metadata(new V1ObjectMeta().name("x"));
        assertThat(PodFields.keep(other)).isSameAs(other);
    }
}
