package io.satoken.common.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The files a {@value #DRIVER} CSI volume asks for, read from its {@code volumeAttributes}: the agent reads
 * them to publish the volume, and the control plane's token webhook to know which TokenRequests the agent
 * may make for the pod (NT-6). One reading, so the two never disagree.
 *
 * <p>A volume asks for one file ({@code audience}, {@code expirationSeconds}, {@code path}, each optional) or
 * for several ({@code projections}, a list in the {@value ProjectionAnnotation#NAME} format); the two ways do
 * not mix. {@code reloadSignal} and {@code reloadContainer} ask the agent to notify the pod after each rotation;
 * the agent reads them (the files are the same either way). Keys under {@value #KUBELET_PREFIX} are the kubelet's pod info and are not read here. Every
 * error names the attribute and the rule, and all of them are reported together.
 */
public final class CsiVolumeAttributes {

    /** The CSI driver's name. */
    public static final String DRIVER = "tokens.satoken.io";
    public static final String AUDIENCE = TokenFileFields.AUDIENCE;
    public static final String EXPIRATION_SECONDS = TokenFileFields.EXPIRATION_SECONDS;
    public static final String PATH = TokenFileFields.PATH;
    public static final String PROJECTIONS = "projections";
    /** The signal the agent sends the pod's container after each rotation of the volume (opt-in). */
    public static final String RELOAD_SIGNAL = "reloadSignal";
    /** The container {@link #RELOAD_SIGNAL} goes to; needed when the pod has several. */
    public static final String RELOAD_CONTAINER = "reloadContainer";
    public static final String DEFAULT_PATH = "token";
    /** The prefix of the keys the kubelet adds (CSIDriver {@code podInfoOnMount: true}). */
    public static final String KUBELET_PREFIX = "csi.storage.k8s.io/";
    private static final Set<String> KEYS = Set.of(AUDIENCE, EXPIRATION_SECONDS, PATH, PROJECTIONS, RELOAD_SIGNAL,
            RELOAD_CONTAINER);

    private CsiVolumeAttributes() {
    }

    /**
     * The files {@code attributes} ask for.
     *
     * @throws InvalidProjectionException naming each bad attribute ({@code volumeAttributes.<key>})
     */
    public static List<ProjectionSpec> files(Map<String, String> attributes) throws InvalidProjectionException {
        FieldErrors errors = new FieldErrors();
        List<String> listErrors = new ArrayList<>();
        List<ProjectionSpec> files = files(attributes, errors, listErrors);
        throwIfAny(errors, listErrors);
        return files;
    }

    /**
     * As {@link #files(Map)}, adding its errors to {@code errors} (the attributes' own) and {@code listErrors}
     * (a {@code projections} list's, already named), for a caller that checks more attributes.
     */
    public static List<ProjectionSpec> files(Map<String, String> attributes, FieldErrors errors,
            List<String> listErrors) {
        for (String key : new TreeSet<>(attributes.keySet())) {
            if (!KEYS.contains(key) && !key.startsWith(KUBELET_PREFIX)) {
                errors.add(field(key), "unknown attribute; the attributes are " + String.join(", ", new TreeSet<>(KEYS)));
            }
        }
        if (attributes.containsKey(PROJECTIONS)) {
            for (String single : List.of(AUDIENCE, EXPIRATION_SECONDS, PATH)) {
                if (attributes.containsKey(single)) {
                    errors.add(field(single), "may not be given with " + field(PROJECTIONS)
                            + "; give it in the list's entries");
                }
            }
            try {
                return ProjectionAnnotation.parse(attributes.get(PROJECTIONS), field(PROJECTIONS));
            } catch (InvalidProjectionException e) {
                listErrors.addAll(e.errors());
                return List.of();
            }
        }
        Map<String, String> single = new TreeMap<>();
        for (String key : List.of(AUDIENCE, EXPIRATION_SECONDS, PATH)) {
            if (attributes.containsKey(key)) {
                single.put(key, attributes.get(key));
            }
        }
        ProjectionSpec file = TokenFileFields.read(YamlFields.ofText(single, "volumeAttributes", errors),
                new TokenFilePaths(errors), DEFAULT_PATH);
        return file == null ? List.of() : List.of(file);
    }

    /** {@code volumeAttributes.<key>}, as errors name an attribute. */
    public static String field(String key) {
        return "volumeAttributes." + key;
    }

    /** Throws the errors gathered by {@link #files(Map, FieldErrors, List)}, if there are any. */
    public static void throwIfAny(FieldErrors errors, List<String> listErrors) throws InvalidProjectionException {
        if (!errors.isEmpty() || !listErrors.isEmpty()) {
            List<String> all = new ArrayList<>(errors.list());
            all.addAll(listErrors);
            throw new InvalidProjectionException(all);
        }
    }
}
