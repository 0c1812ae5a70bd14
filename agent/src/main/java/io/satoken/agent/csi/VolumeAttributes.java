package io.satoken.agent.csi;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.common.projection.FieldErrors;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.projection.TokenFilePaths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads a CSI volume's {@code volumeAttributes} and the pod info the kubelet adds to them.
 *
 * <p>A pod asks for one file ({@code audience}, {@code expirationSeconds}, {@code path}, each optional) or
 * for several ({@code projections}, a YAML or JSON list in the {@code satoken.io/projections} format); the
 * two ways do not mix. The pod's identity comes only from the kubelet's {@code csi.storage.k8s.io/*}
 * keys: the kubelet writes them over any the pod gave (CSIDriver {@code podInfoOnMount: true}).
 * Every error names the attribute and the rule, and all of them are reported together.
 */
public final class VolumeAttributes {

    static final String AUDIENCE = "audience";
    static final String EXPIRATION_SECONDS = "expirationSeconds";
    static final String PATH = "path";
    static final String PROJECTIONS = "projections";
    static final String DEFAULT_PATH = "token";

    static final String POD_NAME = "csi.storage.k8s.io/pod.name";
    static final String POD_NAMESPACE = "csi.storage.k8s.io/pod.namespace";
    static final String POD_UID = "csi.storage.k8s.io/pod.uid";
    static final String SERVICE_ACCOUNT = "csi.storage.k8s.io/serviceAccount.name";
    static final String EPHEMERAL = "csi.storage.k8s.io/ephemeral";
    private static final String KUBELET_PREFIX = "csi.storage.k8s.io/";
    private static final Set<String> KEYS = Set.of(AUDIENCE, EXPIRATION_SECONDS, PATH, PROJECTIONS);

    /** What one volume asks for, and for whom. */
    public record Request(PodIdentity pod, List<ProjectionSpec> files) {}

    private VolumeAttributes() {
    }

    /**
     * @throws InvalidProjectionException naming each bad attribute; the CSI server answers InvalidArgument
     *     with it, which the kubelet shows in the pod's FailedMount Event
     */
    public static Request parse(Map<String, String> context) throws InvalidProjectionException {
        FieldErrors errors = new FieldErrors();
        Set<String> unknown = new TreeSet<>();
        for (String key : context.keySet()) {
            if (!KEYS.contains(key) && !key.startsWith(KUBELET_PREFIX)) {
                unknown.add(key);
            }
        }
        for (String key : unknown) {
            errors.add(field(key), "unknown attribute; the attributes are " + String.join(", ", new TreeSet<>(KEYS)));
        }
        PodIdentity pod = pod(context, errors);
        List<String> listErrors = new ArrayList<>();
        List<ProjectionSpec> files = files(context, errors, listErrors);
        if (!errors.isEmpty() || !listErrors.isEmpty()) {
            List<String> all = new ArrayList<>(errors.list());
            all.addAll(listErrors);
            throw new InvalidProjectionException(all);
        }
        return new Request(pod, files);
    }

    /** @param listErrors receives the errors of a {@code projections} list, already named */
    private static List<ProjectionSpec> files(Map<String, String> context, FieldErrors errors,
            List<String> listErrors) {
        if (context.containsKey(PROJECTIONS)) {
            for (String single : List.of(AUDIENCE, EXPIRATION_SECONDS, PATH)) {
                if (context.containsKey(single)) {
                    errors.add(field(single), "may not be given with " + field(PROJECTIONS)
                            + "; give it in the list's entries");
                }
            }
            try {
                return ProjectionAnnotation.parse(context.get(PROJECTIONS), field(PROJECTIONS));
            } catch (InvalidProjectionException e) {
                listErrors.addAll(e.errors());
                return List.of();
            }
        }
        String audience = context.get(AUDIENCE); // PV-8: any string; empty means the API server's own
        long expirationSeconds = expirationSeconds(context.get(EXPIRATION_SECONDS), errors);
        String path = TokenFilePaths.validateAndClean(context.getOrDefault(PATH, DEFAULT_PATH), field(PATH), errors);
        if (path == null) {
            return List.of();
        }
        return List.of(new ProjectionSpec(path, audience, expirationSeconds, null, null, null));
    }

    /** PV-2, PV-4, PV-5: 3600 when absent, 600 .. 2^32. */
    private static long expirationSeconds(String value, FieldErrors errors) {
        if (value == null) {
            return ProjectionSpec.DEFAULT_EXPIRATION_SECONDS;
        }
        long seconds;
        try {
            seconds = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            errors.invalid(field(EXPIRATION_SECONDS), "must be a whole number of seconds", value);
            return 0;
        }
        if (seconds < ProjectionAnnotation.MIN_EXPIRATION_SECONDS) {
            errors.invalid(field(EXPIRATION_SECONDS), ProjectionAnnotation.PV4, value);
        } else if (seconds > ProjectionAnnotation.MAX_EXPIRATION_SECONDS) {
            errors.invalid(field(EXPIRATION_SECONDS), ProjectionAnnotation.PV5, value);
        }
        return seconds;
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
        return "volumeAttributes." + key;
    }
}
