package io.satoken.controlplane.rootca;

import static io.satoken.controlplane.controller.Reconciler.Result.DONE;
import static io.satoken.controlplane.controller.Reconciler.Result.RETRY;

import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.common.kube.Failures;
import io.satoken.controlplane.kube.ApiErrors;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.Reconciler;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The root-CA publisher's sync (spec 8): the namespace's {@code kube-root-ca.crt} holds exactly our CA. */
final class RootCaSync implements Reconciler<String> {

    static final String CA_KEY = "ca.crt";
    static final String DESCRIPTION_ANNOTATION = "kubernetes.io/description";
    /** RC-1: what the bundle is for, in our words; only its presence is checked. */
    static final String DESCRIPTION = "CA bundle for verifying kube-apiserver through its in-cluster endpoints"
            + " (the kubernetes service IP or kubernetes.default.svc). Other uses are not guaranteed to work"
            + " the same way on every Kubernetes distribution.";

    private static final Logger log = LoggerFactory.getLogger(RootCaSync.class);

    private final Lister<V1ConfigMap> configMaps;
    private final ConfigMapWriter api;
    private final String rootCa;

    RootCaSync(Lister<V1ConfigMap> configMaps, ConfigMapWriter api, String rootCa) {
        this.configMaps = configMaps;
        this.api = api;
        this.rootCa = rootCa;
    }

    /** RC-3: create when missing, replace data that is not exactly {@code {ca.crt}}, else nothing. */
    @Override
    public Result reconcile(String namespace) {
        V1ConfigMap cm = configMaps.namespace(namespace).get(Informers.ROOT_CA_CONFIGMAP);
        if (cm == null) {
            try {
                api.create(new V1ConfigMap()
                        .metadata(new V1ObjectMeta().name(Informers.ROOT_CA_CONFIGMAP).namespace(namespace)
                                .putAnnotationsItem(DESCRIPTION_ANNOTATION, DESCRIPTION))
                        .data(Map.of(CA_KEY, rootCa)));
                log.info("created configmap {}/{}", namespace, Informers.ROOT_CA_CONFIGMAP);
                return DONE;
            } catch (ApiException e) {
                if (ApiErrors.isNotFound(e) || ApiErrors.hasCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                    return DONE;
                }
                log.warn("creating configmap {}/{}: {}", namespace, Informers.ROOT_CA_CONFIGMAP, Failures.said(e));
                return RETRY;
            }
        }
        Map<String, String> annotations = cm.getMetadata().getAnnotations();
        boolean described = annotations != null && !annotations.getOrDefault(DESCRIPTION_ANNOTATION, "").isEmpty();
        if (Map.of(CA_KEY, rootCa).equals(cm.getData()) && described) {
            return DONE;
        }
        try {
            api.update(cm, Map.of(CA_KEY, rootCa), DESCRIPTION);
            log.info("repaired configmap {}/{}", namespace, Informers.ROOT_CA_CONFIGMAP);
            return DONE;
        } catch (ApiException e) {
            log.warn("updating configmap {}/{}: {}", namespace, Informers.ROOT_CA_CONFIGMAP, Failures.said(e));
            return RETRY;
        }
    }
}
