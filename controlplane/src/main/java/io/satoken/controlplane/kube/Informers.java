package io.satoken.controlplane.kube;

import com.google.gson.reflect.TypeToken;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.apis.RbacAuthorizationV1Api;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import io.kubernetes.client.openapi.models.V1ClusterRoleList;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V1ServiceAccountList;
import io.kubernetes.client.util.CallGenerator;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watch;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import okhttp3.Call;

/**
 * The controllers' shared caches: one informer per kind, made on first use, so two controllers that
 * watch ServiceAccounts share one watch. Kinds that are large in a real cluster are narrowed at the
 * server: Secrets to the token type, ConfigMaps to {@code kube-root-ca.crt}.
 *
 * <p>No bookmarks are asked for: client-java 25 fails to parse them (kubernetes-client/java#3439).
 */
public final class Informers implements AutoCloseable {

    /** The Secret type the tokens controller manages. */
    public static final String TOKEN_SECRET_TYPE = "kubernetes.io/service-account-token";
    /** The ConfigMap the root-CA publisher manages. */
    public static final String ROOT_CA_CONFIGMAP = "kube-root-ca.crt";
    /** Pods per page of the pod informer's list. */
    static final int POD_PAGE = 500;

    private final SharedInformerFactory factory;
    private final CoreV1Api core;
    private final RbacAuthorizationV1Api rbac;
    private final List<SharedIndexInformer<?>> made = new ArrayList<>();

    /**
     * @param watchClient a client without a read timeout: a watch is a long-lived request
     */
    public Informers(ApiClient watchClient) {
        this.factory = new SharedInformerFactory(watchClient);
        this.core = new CoreV1Api(watchClient);
        this.rbac = new RbacAuthorizationV1Api(watchClient);
    }

    public SharedIndexInformer<V1Namespace> namespaces() {
        return informer(V1Namespace.class, V1NamespaceList.class, "namespaces",
                p -> core.listNamespace().resourceVersion(p.resourceVersion).timeoutSeconds(p.timeoutSeconds)
                        .watch(p.watch).buildCall(null));
    }

    public SharedIndexInformer<V1ServiceAccount> serviceAccounts() {
        return informer(V1ServiceAccount.class, V1ServiceAccountList.class, "ServiceAccounts",
                p -> core.listServiceAccountForAllNamespaces().resourceVersion(p.resourceVersion)
                        .timeoutSeconds(p.timeoutSeconds).watch(p.watch).buildCall(null));
    }

    /** Secrets of type {@value #TOKEN_SECRET_TYPE} only (TC-1). */
    public SharedIndexInformer<V1Secret> tokenSecrets() {
        return informer(V1Secret.class, V1SecretList.class, "token Secrets",
                p -> core.listSecretForAllNamespaces().fieldSelector("type=" + TOKEN_SECRET_TYPE)
                        .resourceVersion(p.resourceVersion).timeoutSeconds(p.timeoutSeconds).watch(p.watch)
                        .buildCall(null));
    }

    /** ConfigMaps named {@value #ROOT_CA_CONFIGMAP} only; other ConfigMaps never reach the process (RC-2). */
    public SharedIndexInformer<V1ConfigMap> rootCaConfigMaps() {
        return informer(V1ConfigMap.class, V1ConfigMapList.class, "kube-root-ca.crt ConfigMaps",
                p -> core.listConfigMapForAllNamespaces().fieldSelector("metadata.name=" + ROOT_CA_CONFIGMAP)
                        .resourceVersion(p.resourceVersion).timeoutSeconds(p.timeoutSeconds).watch(p.watch)
                        .buildCall(null));
    }

    /**
     * Every pod: only the injection check asks for it, so no other controller holds the cluster's pods; it sets a
     * transform that keeps only the fields it reads, so another user would need its own informer.
     */
    /**
     * Every pod of the cluster, as {@code keep} makes it: the first list is read in pages of {@value #POD_PAGE} and
     * each pod goes through {@code keep} before the next page is read, so a cluster's pods are never all held as
     * full objects at once. (client-java's reflector keeps the list it synced from for as long as the watch after
     * it runs: without this, the full list stays beside the cache.) The informer's own transform should apply
     * {@code keep} to the pods the watch brings.
     */
    public synchronized SharedIndexInformer<V1Pod> pods(UnaryOperator<V1Pod> keep) {
        SharedIndexInformer<V1Pod> informer = factory.getExistingSharedIndexInformer(V1Pod.class);
        if (informer == null) {
            informer = factory.sharedIndexInformerFor(new KeptPods(core, keep), V1Pod.class, 0,
                    new ListWatchBackoff<>("pods"));
            made.add(informer);
        }
        return informer;
    }

    /** The pods' lister-watcher: a paged list through {@code keep}, and a plain watch. */
    private record KeptPods(CoreV1Api core, UnaryOperator<V1Pod> keep) implements ListerWatcher<V1Pod, V1PodList> {
        @Override
        public V1PodList list(CallGeneratorParams params) throws ApiException {
            List<V1Pod> kept = new ArrayList<>();
            String next = null;
            V1ListMeta meta;
            do { // no resourceVersion: a consistent read from etcd, which pages (a cached one ignores the limit)
                V1PodList page = core.listPodForAllNamespaces().limit(POD_PAGE)._continue(next).execute();
                page.getItems().forEach(pod -> kept.add(keep.apply(pod)));
                meta = page.getMetadata();
                next = meta == null ? null : meta.getContinue();
            } while (next != null && !next.isEmpty());
            return new V1PodList().metadata(new V1ListMeta().resourceVersion(meta == null ? null
                    : meta.getResourceVersion())).items(kept);
        }

        @Override
        public Watch<V1Pod> watch(CallGeneratorParams params) throws ApiException {
            ApiClient client = core.getApiClient();
            Call call = core.listPodForAllNamespaces().resourceVersion(params.resourceVersion)
                    .timeoutSeconds(params.timeoutSeconds).watch(true).buildCall(null);
            // the watch client's own HTTP client, whose read timeout is zero (as client-java's factory does)
            return Watch.createWatch(client, client.getHttpClient().newCall(call.request()),
                    TypeToken.getParameterized(Watch.Response.class, V1Pod.class).getType());
        }
    }

    public SharedIndexInformer<V1ClusterRole> clusterRoles() {
        return informer(V1ClusterRole.class, V1ClusterRoleList.class, "ClusterRoles",
                p -> rbac.listClusterRole().resourceVersion(p.resourceVersion).timeoutSeconds(p.timeoutSeconds)
                        .watch(p.watch).buildCall(null));
    }

    /** Starts listing and watching every informer asked for so far; returns at once. */
    public synchronized void start() {
        factory.startAllRegisteredInformers();
    }

    /** True once every informer has finished its first list. */
    public synchronized boolean synced() {
        return made.stream().allMatch(SharedIndexInformer::hasSynced);
    }

    @Override
    public synchronized void close() {
        factory.stopAllRegisteredInformers();
    }

    /**
     * The factory's informer for {@code type}, made with {@code calls} the first time it is asked for. A failed list
     * or watch of {@code kind} costs one log line and backs off ({@link ListWatchBackoff}).
     */
    private synchronized <T extends KubernetesObject, L extends KubernetesListObject> SharedIndexInformer<T> informer(
            Class<T> type, Class<L> listType, String kind, CallGenerator calls) {
        SharedIndexInformer<T> informer = factory.getExistingSharedIndexInformer(type);
        if (informer == null) {
            informer = factory.sharedIndexInformerFor(calls, type, listType, 0, new ListWatchBackoff<>(kind));
            made.add(informer);
        }
        return informer;
    }
}
