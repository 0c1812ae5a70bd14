package io.satoken.controlplane.injection;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1OwnerReference;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.controlplane.controller.Reconciler;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The injection check's sync on a cache of pods, a recording of its API calls and a clock moved by hand. */
class InjectionCheckSyncTest {

    private final Cache<V1Pod> cache = new Cache<>();
    private final List<String> calls = new ArrayList<>();
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final InstantSource clock = () -> now;

    private final InjectionCheckSync.PodActions actions = new InjectionCheckSync.PodActions() {
        @Override
        public void warn(V1Pod pod, String reason, String message) {
            calls.add("event " + pod.getMetadata().getName() + " " + reason + ": " + message);
        }

        @Override
        public void delete(V1Pod pod) throws ApiException {
            calls.add("delete " + pod.getMetadata().getName());
        }
    };

    record Case(String name, UnaryOperator<V1Pod> pod, boolean missing, boolean deleted) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("annotated, no volume, owned by a ReplicaSet", p -> owned(p, "ReplicaSet"), true, true),
                new Case("owned by a StatefulSet", p -> owned(p, "StatefulSet"), true, true),
                new Case("owned by a DaemonSet", p -> owned(p, "DaemonSet"), true, true),
                new Case("owned by a Job", p -> owned(p, "Job"), true, true),
                new Case("a bare pod: never deleted", p -> p, true, false),
                new Case("owned by another controller: never deleted", p -> owned(p, "CronTabSet"), true, false),
                new Case("with the webhook's volume", p -> withVolume(owned(p, "ReplicaSet")), false, false),
                new Case("no annotation", p -> owned(noAnnotation(p), "ReplicaSet"), false, false),
                new Case("finished", p -> owned(p, "Job").status(new V1PodStatus().phase("Succeeded")), false, false),
                new Case("being deleted", p -> {
                    p.getMetadata().setDeletionTimestamp(OffsetDateTime.now());
                    return owned(p, "ReplicaSet");
                }, false, false),
                new Case("a mirror pod", p -> {
                    p.getMetadata().putAnnotationsItem("kubernetes.io/config.mirror", "x");
                    return p;
                }, false, false));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void pod_isFoundAndDeleted_onlyAsItsCaseSays(Case c) {
        InjectionCheckSync sync = sync(true);
        cache.add(c.pod().apply(pod("web-1")));
        assertThat(sync.reconcile("shop/web-1")).isEqualTo(Reconciler.Result.DONE);

        assertThat(sync.missing()).isEqualTo(c.missing() ? 1 : 0);
        assertThat(calls.stream().filter(s -> s.startsWith("event")).count()).isEqualTo(c.missing() ? 1 : 0);
        assertThat(calls.contains("delete web-1")).isEqualTo(c.deleted());
    }

    @Test
    void withoutTheFlag_nothingIsDeleted_andTheEventSaysToDeleteIt() {
        InjectionCheckSync sync = sync(false);
        cache.add(owned(pod("web-1"), "ReplicaSet"));
        sync.reconcile("shop/web-1");
        assertThat(calls).singleElement().asString().startsWith("event web-1 TokenVolumeMissing: the pod asks for"
                + " satoken tokens (annotation satoken.io/projections) but has no volume satoken-agent-tokens")
                .endsWith("Delete it once the webhook runs.");
    }

    @Test
    void onePodSyncedAgain_getsOneEvent_andLeavesTheGaugeWhenGone() {
        InjectionCheckSync sync = sync(false);
        cache.add(pod("web-1"));
        sync.reconcile("shop/web-1");
        sync.reconcile("shop/web-1");
        assertThat(calls).hasSize(1);
        assertThat(sync.missing()).isEqualTo(1);
        cache.delete(cache.getByKey("shop/web-1"));
        sync.reconcile("shop/web-1");
        assertThat(sync.missing()).isZero();
    }

    @Test
    void deletions_stayWithinTheBudget_andThePodsOverItAreRetried() {
        InjectionCheckSync sync = new InjectionCheckSync(new Lister<>(cache), actions, true,
                new DeleteBudget(clock, Duration.ofSeconds(2), 2), clock);
        for (int i = 0; i < 4; i++) {
            cache.add(owned(pod("web-" + i), "ReplicaSet"));
        }
        List<Reconciler.Result> results = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            results.add(sync.reconcile("shop/web-" + i));
        }
        assertThat(results).containsExactly(Reconciler.Result.DONE, Reconciler.Result.DONE, Reconciler.Result.RETRY,
                Reconciler.Result.RETRY);
        now = now.plusSeconds(2);
        assertThat(sync.reconcile("shop/web-2")).isEqualTo(Reconciler.Result.DONE);
        assertThat(sync.reconcile("shop/web-3")).isEqualTo(Reconciler.Result.RETRY);
        assertThat(calls.stream().filter(s -> s.startsWith("delete"))).containsExactly("delete web-0", "delete web-1",
                "delete web-2");
    }

    private InjectionCheckSync sync(boolean deletePods) {
        return new InjectionCheckSync(new Lister<>(cache), actions, deletePods,
                new DeleteBudget(clock, Duration.ofSeconds(2), 5), clock);
    }

    private static V1Pod pod(String name) {
        return new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name(name).uid("uid-" + name)
                        .annotations(new java.util.HashMap<>(Map.of("satoken.io/projections", "- {path: token}"))))
                .spec(new V1PodSpec());
    }

    private static V1Pod owned(V1Pod pod, String kind) {
        pod.getMetadata().addOwnerReferencesItem(new V1OwnerReference().kind(kind).name("owner").controller(true)
                .apiVersion("apps/v1").uid("owner-uid"));
        return pod;
    }

    private static V1Pod noAnnotation(V1Pod pod) {
        pod.getMetadata().setAnnotations(null);
        return pod;
    }

    private static V1Pod withVolume(V1Pod pod) {
        pod.getSpec().addVolumesItem(new V1Volume().name("satoken-agent-tokens").csi(new V1CSIVolumeSource()
                .driver("tokens.satoken.io").readOnly(true)));
        return pod;
    }
}
