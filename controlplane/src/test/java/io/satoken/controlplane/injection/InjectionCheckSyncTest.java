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
import io.satoken.controlplane.controller.Reconciler.Result;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.OffsetDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The injection check's sync on a cache of pods, controllers read from a map, a recording of its API calls and a clock
 * moved by hand.
 */
class InjectionCheckSyncTest {

    static final String ANNOTATION = "satoken.io/projections";
    static final String OWNER_UID = "owner-uid";

    private final Cache<V1Pod> cache = new Cache<>();
    private final List<String> calls = new ArrayList<>();
    /** What each eviction answers, in turn; success once empty. */
    private final Queue<Integer> evictionAnswers = new ArrayDeque<>();
    private Instant now = Instant.parse("2026-01-01T00:00:00Z");
    private final InstantSource clock = () -> now;
    private OwnerTemplates owners = asks();

    private final InjectionCheckSync.PodActions actions = new InjectionCheckSync.PodActions() {
        @Override
        public void warn(V1Pod pod, String reason, String message) {
            calls.add("event " + pod.getMetadata().getName() + " " + reason + ": " + message);
        }

        @Override
        public void evict(V1Pod pod) throws ApiException {
            Integer code = evictionAnswers.poll();
            if (code != null) {
                throw new ApiException(code, Map.of(), "{\"message\":\"answered " + code + "\"}");
            }
            calls.add("evict " + pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName());
        }
    };

    /** One pod, the controller the check reads for it, and what the check then does; {@code says}: in the Event. */
    record Case(String name, UnaryOperator<V1Pod> pod, OwnerTemplates owner, boolean evictionOn, boolean missing,
            boolean evicted, String says) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case on(String name, UnaryOperator<V1Pod> pod, OwnerTemplates owner, boolean evicted, String says) {
        return new Case(name, pod, owner, true, true, evicted, says);
    }

    static Case off(String name, UnaryOperator<V1Pod> pod, OwnerTemplates owner, String says) {
        return new Case(name, pod, owner, false, true, false, says);
    }

    static Case notMissing(String name, UnaryOperator<V1Pod> pod) {
        return new Case(name, pod, asks(), true, false, false, null);
    }

    static Stream<Case> cases() {
        String notEvicted = "it is not evicted for you";
        return Stream.of(
                on("its ReplicaSet's template asks for tokens: evicted", p -> owned(p, "apps/v1", "ReplicaSet"), asks(),
                        true, "Evicting it, as PodDisruptionBudgets allow, so that its ReplicaSet web creates it again."),
                on("its StatefulSet's template asks: evicted", p -> owned(p, "apps/v1", "StatefulSet"), asks(), true,
                        "so that its StatefulSet web creates it again"),
                on("its DaemonSet's template asks: evicted", p -> owned(p, "apps/v1", "DaemonSet"), asks(), true,
                        "so that its DaemonSet web creates it again"),
                on("its Job's template asks: evicted", p -> owned(p, "batch/v1", "Job"), asks(), true,
                        "so that its Job web creates it again"),
                // the finding: pods patch must not become pods delete
                on("annotated after creation (its ReplicaSet's template does not ask): not evicted",
                        p -> owned(p, "apps/v1", "ReplicaSet"), template(OWNER_UID, Map.of("team", "a")), false,
                        "the annotation was added after the pod was created (the pod template of its ReplicaSet web"
                                + " has no satoken.io/projections)"),
                on("annotated after creation, a template without annotations: not evicted",
                        p -> owned(p, "apps/v1", "StatefulSet"), template(OWNER_UID, null), false,
                        "was added after the pod was created"),
                on("its ReplicaSet is gone (404): not evicted", p -> owned(p, "apps/v1", "ReplicaSet"), fails(404),
                        false, "its ReplicaSet web could not be read (HTTP 404)"),
                on("its ReplicaSet may not be read (403): not evicted", p -> owned(p, "apps/v1", "ReplicaSet"),
                        fails(403), false, "could not be read (HTTP 403)"),
                on("its ReplicaSet was replaced by another of that name: not evicted",
                        p -> owned(p, "apps/v1", "ReplicaSet"), template("new-uid", Map.of(ANNOTATION, "[]")), false,
                        "the ReplicaSet of that name is another one, uid new-uid"),
                on("in kube-system (the webhook fails open there): not evicted",
                        p -> owned(in(p, "kube-system"), "apps/v1", "ReplicaSet"), asks(), false,
                        "recreate the pod yourself once the webhook runs. The injection check never evicts pods in this"
                                + " namespace."),
                on("in the webhook's namespace (skipped): not evicted",
                        p -> owned(in(p, "satoken-webhook"), "apps/v1", "ReplicaSet"), asks(), false,
                        "the pod webhook never mutates the pods of its own namespace"),
                on("a bare pod: not evicted", p -> p, asks(), false, "Delete it once the webhook runs (no controller: "
                        + notEvicted + ")."),
                on("owned by another kind of controller: not evicted", p -> owned(p, "example.com/v1", "CronTabSet"),
                        asks(), false, "(CronTabSet web: " + notEvicted + ")"),
                on("a Job of another API group: not evicted", p -> owned(p, "batch.volcano.sh/v1alpha1", "Job"),
                        asks(), false, "(Job web: " + notEvicted + ")"),
                off("eviction off, its template asks: told to delete it", p -> owned(p, "apps/v1", "ReplicaSet"),
                        asks(), "the webhook did not mutate it (it was down or not registered when the pod was created)."
                                + " Delete it once the webhook runs."),
                off("eviction off, annotated after creation: told where the annotation belongs",
                        p -> owned(p, "apps/v1", "ReplicaSet"), template(OWNER_UID, null),
                        "to give the pod tokens, put the annotation in the pod template."),
                off("eviction off, in kube-system", p -> owned(in(p, "kube-system"), "apps/v1", "ReplicaSet"), asks(),
                        "never evicts pods in this namespace"),
                notMissing("with the webhook's volume", p -> withVolume(owned(p, "apps/v1", "ReplicaSet"))),
                notMissing("no annotation", p -> owned(noAnnotation(p), "apps/v1", "ReplicaSet")),
                notMissing("finished", p -> owned(p, "batch/v1", "Job").status(new V1PodStatus().phase("Succeeded"))),
                notMissing("being deleted", p -> {
                    p.getMetadata().setDeletionTimestamp(OffsetDateTime.now());
                    return owned(p, "apps/v1", "ReplicaSet");
                }),
                notMissing("a mirror pod", p -> {
                    p.getMetadata().putAnnotationsItem("kubernetes.io/config.mirror", "x");
                    return p;
                }));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void pod_isEvictedOnlyWhenItsControllersTemplateAsksForTokens(Case c) {
        owners = c.owner();
        InjectionCheckSync sync = sync(c.evictionOn(), 5);
        V1Pod pod = c.pod().apply(pod("web-1"));
        cache.add((V1Pod) PodFields.keep(pod)); // as the informer's transform leaves it
        String key = pod.getMetadata().getNamespace() + "/web-1";

        assertThat(sync.reconcile(key)).isEqualTo(Result.DONE);

        assertThat(sync.missing()).isEqualTo(c.missing() ? 1 : 0);
        assertThat(calls.contains("evict " + key)).isEqualTo(c.evicted());
        List<String> events = calls.stream().filter(s -> s.startsWith("event")).toList();
        if (c.says() == null) {
            assertThat(events).isEmpty();
            return;
        }
        assertThat(events).singleElement().asString()
                .startsWith("event web-1 TokenVolumeMissing: the pod asks for satoken tokens (annotation"
                        + " satoken.io/projections) but has no volume satoken-agent-tokens")
                .contains(c.says());
        if (!c.evicted()) {
            assertThat(events.get(0)).doesNotContain("Evicting", "Deleting");
        }
    }

    @Test
    void ownerReadFailingOtherwise_isRetried_andTheEventWaitsForItsAnswer() {
        InjectionCheckSync sync = sync(true, 5);
        cache.add(owned(pod("web-1"), "apps/v1", "ReplicaSet"));
        owners = fails(500);
        assertThat(sync.reconcile("shop/web-1")).isEqualTo(Result.RETRY);
        assertThat(calls).isEmpty();
        assertThat(sync.missing()).isEqualTo(1);

        owners = asks();
        assertThat(sync.reconcile("shop/web-1")).isEqualTo(Result.DONE);
        assertThat(calls).hasSize(2).last().isEqualTo("evict shop/web-1");
    }

    @Test
    void withoutEviction_theControllerIsReadOnlyUntilTheEventIsSent() {
        int[] reads = {0};
        owners = (kind, namespace, name) -> {
            reads[0]++;
            return asks().read(kind, namespace, name);
        };
        InjectionCheckSync sync = sync(false, 5);
        cache.add(owned(pod("web-1"), "apps/v1", "ReplicaSet"));
        sync.reconcile("shop/web-1");
        sync.reconcile("shop/web-1");
        assertThat(reads[0]).isEqualTo(1);
    }

    @Test
    void onePodSyncedAgain_getsOneEvent_andLeavesTheGaugeWhenGone() {
        InjectionCheckSync sync = sync(false, 5);
        cache.add(pod("web-1"));
        sync.reconcile("shop/web-1");
        sync.reconcile("shop/web-1");
        assertThat(calls).hasSize(1);
        assertThat(sync.missing()).isEqualTo(1);
        cache.delete(cache.getByKey("shop/web-1"));
        sync.reconcile("shop/web-1");
        assertThat(sync.missing()).isZero();
    }

    /** An eviction's answer, and whether the pod is tried again. */
    record Answer(String name, int code, Result result) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Answer> answers() {
        return Stream.of(
                new Answer("429: a PodDisruptionBudget refuses for now, tried again later", 429, Result.RETRY),
                new Answer("404: the pod is gone already, done", 404, Result.DONE),
                new Answer("409: the uid precondition failed, tried again with the cache's pod", 409, Result.RETRY),
                new Answer("500: tried again", 500, Result.RETRY));
    }

    @ParameterizedTest
    @MethodSource("answers")
    void evictionAnswer_decidesWhetherThePodIsTriedAgain(Answer a) {
        InjectionCheckSync sync = sync(true, 5);
        cache.add(owned(pod("web-1"), "apps/v1", "ReplicaSet"));
        evictionAnswers.add(a.code());

        assertThat(sync.reconcile("shop/web-1")).isEqualTo(a.result());
        assertThat(calls).noneMatch(s -> s.startsWith("evict"));
    }

    @Test
    void podProtectedByADisruptionBudget_isEvictedOnceItAllows() {
        InjectionCheckSync sync = sync(true, 5);
        cache.add(owned(pod("web-1"), "apps/v1", "ReplicaSet"));
        evictionAnswers.addAll(List.of(429, 429));

        List<Result> results = List.of(sync.reconcile("shop/web-1"), sync.reconcile("shop/web-1"),
                sync.reconcile("shop/web-1"));

        assertThat(results).containsExactly(Result.RETRY, Result.RETRY, Result.DONE);
        assertThat(calls).filteredOn(s -> s.startsWith("event")).hasSize(1);
        assertThat(calls).last().isEqualTo("evict shop/web-1");
    }

    @Test
    void evictions_stayWithinTheNamespacesBudget_andThePodsOverItAreRetried() {
        InjectionCheckSync sync = sync(true, 2);
        for (int i = 0; i < 4; i++) {
            cache.add(owned(pod("web-" + i), "apps/v1", "ReplicaSet"));
        }
        List<Result> results = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            results.add(sync.reconcile("shop/web-" + i));
        }
        assertThat(results).containsExactly(Result.DONE, Result.DONE, Result.RETRY, Result.RETRY);
        now = now.plusSeconds(2);
        assertThat(sync.reconcile("shop/web-2")).isEqualTo(Result.DONE);
        assertThat(sync.reconcile("shop/web-3")).isEqualTo(Result.RETRY);
        assertThat(calls.stream().filter(s -> s.startsWith("evict"))).containsExactly("evict shop/web-0",
                "evict shop/web-1", "evict shop/web-2");
    }

    /** The finding's second half: one tenant's pods, annotated or not, cannot use up the repairs of another. */
    @Test
    void oneNamespaceOutOfBudget_doesNotHoldBackAnother() {
        InjectionCheckSync sync = sync(true, 2);
        for (int i = 0; i < 3; i++) {
            cache.add(owned(pod("web-" + i), "apps/v1", "ReplicaSet"));
        }
        cache.add(owned(in(pod("api-0"), "bank"), "apps/v1", "ReplicaSet"));

        List<Result> results = List.of(sync.reconcile("shop/web-0"), sync.reconcile("shop/web-1"),
                sync.reconcile("shop/web-2"), sync.reconcile("bank/api-0"));

        assertThat(results).containsExactly(Result.DONE, Result.DONE, Result.RETRY, Result.DONE);
        assertThat(calls).contains("evict bank/api-0").doesNotContain("evict shop/web-2");
    }

    private InjectionCheckSync sync(boolean evictPods, int burst) {
        return new InjectionCheckSync(new Lister<>(cache), new ReplacementCheck((kind, namespace, name) ->
                owners.read(kind, namespace, name)), actions, evictPods,
                new EvictionBudget(clock, Duration.ofSeconds(2), burst));
    }

    /** A controller whose pod template asks for tokens. */
    static OwnerTemplates asks() {
        return template(OWNER_UID, Map.of(ANNOTATION, "- {path: token}"));
    }

    static OwnerTemplates template(String uid, Map<String, String> annotations) {
        return (kind, namespace, name) -> new OwnerTemplates.Template(uid, annotations);
    }

    static OwnerTemplates fails(int code) {
        return (kind, namespace, name) -> {
            throw new ApiException(code, Map.of(), "{\"message\":\"answered " + code + "\"}");
        };
    }

    private static V1Pod pod(String name) {
        return new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name(name).uid("uid-" + name)
                        .annotations(new HashMap<>(Map.of(ANNOTATION, "- {path: token}"))))
                .spec(new V1PodSpec());
    }

    private static V1Pod in(V1Pod pod, String namespace) {
        pod.getMetadata().setNamespace(namespace);
        return pod;
    }

    private static V1Pod owned(V1Pod pod, String apiVersion, String kind) {
        pod.getMetadata().addOwnerReferencesItem(new V1OwnerReference().kind(kind).name("web").controller(true)
                .apiVersion(apiVersion).uid(OWNER_UID));
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
