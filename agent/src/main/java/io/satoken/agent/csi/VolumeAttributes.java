package io.satoken.agent.csi;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.reload.ReloadRequest;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.FieldErrors;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads a CSI volume's {@code volumeAttributes} and the pod info the kubelet adds to them.
 *
 * <p>The files come from {@link CsiVolumeAttributes}, the reading the control plane's token webhook shares.
 * The pod's identity comes only from the kubelet's {@code csi.storage.k8s.io/*}
 * keys: the kubelet writes them over any the pod gave (CSIDriver {@code podInfoOnMount: true}).
 * Every error names the attribute and the rule, and all of them are reported together.
 */
public final class VolumeAttributes {

    static final String POD_NAME = "csi.storage.k8s.io/pod.name";
    static final String POD_NAMESPACE = "csi.storage.k8s.io/pod.namespace";
    static final String POD_UID = "csi.storage.k8s.io/pod.uid";
    static final String SERVICE_ACCOUNT = "csi.storage.k8s.io/serviceAccount.name";
    static final String EPHEMERAL = "csi.storage.k8s.io/ephemeral";

    /** What one volume asks for, and for whom. */
    /** @param reload the signal to send after each rotation, or null (its container not yet checked) */
    public record Request(PodIdentity pod, List<ProjectionSpec> files, ReloadRequest reload) {}

    private VolumeAttributes() {
    }

    /**
     * @throws InvalidProjectionException naming each bad attribute; the CSI server answers InvalidArgument
     *     with it, which the kubelet shows in the pod's FailedMount Event
     */
    public static Request parse(Map<String, String> context) throws InvalidProjectionException {
        FieldErrors errors = new FieldErrors();
        List<String> listErrors = new ArrayList<>();
        List<ProjectionSpec> files = CsiVolumeAttributes.files(context, errors, listErrors);
        ReloadRequest reload = ReloadRequest.parse(context, errors);
        PodIdentity pod = pod(context, errors);
        CsiVolumeAttributes.throwIfAny(errors, listErrors);
        return new Request(pod, files, reload);
    }

    private static PodIdentity pod(Map<String, String> context, FieldErrors errors) {
        List<String> missing = new ArrayList<>();
        for (String key : List.of(POD_NAMESPACE, POD_NAME, POD_UID, SERVICE_ACCOUNT)) {
            String value = context.get(key);
            if (value == null || value.isEmpty()) {
                missing.add(key);
            }
        }
        if (!missing.isEmpty()) {
            errors.add(field(missing.get(0)), "Required value: the kubelet gives the pod's identity only when the "
                    + "CSIDriver tokens.satoken.io has podInfoOnMount: true (missing " + String.join(", ", missing) + ")");
            return null;
        }
        if (!"true".equals(context.get(EPHEMERAL))) {
            errors.add(field(EPHEMERAL), "must be \"true\": tokens.satoken.io serves only inline (ephemeral) "
                    + "volumes in a pod's spec, not PersistentVolumes");
        }
        String uid = context.get(POD_UID);
        if (uid.contains("/") || uid.startsWith(".")) {
            errors.invalid(field(POD_UID), "must be a plain name", uid);
        }
        return new PodIdentity(context.get(POD_NAMESPACE), context.get(POD_NAME), uid, context.get(SERVICE_ACCOUNT));
    }

    private static String field(String key) {
        return CsiVolumeAttributes.field(key);
    }
}
