package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import java.util.Map;
import io.satoken.controlplane.admission.view.ContainerView;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.PodPatch;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.VolumeView;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Turns a pod's {@value ProjectionAnnotation#NAME} annotation into the CSI inline volume the node's agent
 * serves, mounted read-only in every init and regular container.
 *
 * <p>The pod gets:
 * <ol>
 *   <li>a volume {@value #VOLUME_NAME}: {@code csi} of driver {@value #DRIVER}, read-only, whose attribute
 *       {@code projections} is the annotation's value as written, with {@code reloadSignal} and
 *       {@code reloadContainer} from the {@value #RELOAD_SIGNAL_ANNOTATION} and {@value #RELOAD_CONTAINER_ANNOTATION}
 *       annotations when given (no other attribute). The kubelet tells the agent
 *       which pod and ServiceAccount the volume is for, so nothing else about the pod goes in it;</li>
 *   <li>in every init and regular container, a read-only mount of it at {@value #DEFAULT_MOUNT_PATH} (or
 *       the pod's {@value #MOUNT_PATH_ANNOTATION}).</li>
 * </ol>
 * An invalid annotation is refused with the agent's own message, so the pod fails at creation rather than
 * at mount time. A volume of the reserved name that is not exactly the one the annotation asks for is
 * refused, so the annotation always says what the pod gets. Applying this to its own output changes
 * nothing (AD-7a), which is what a reinvocation does.
 */
public final class AgentTokenInjection {

    static final String VOLUME_NAME = "satoken-agent-tokens";
    /** The agent's CSI driver (agent/deploy's CSIDriver object). */
    static final String DRIVER = CsiVolumeAttributes.DRIVER;
    /** The volume attribute the agent reads the projections list from. */
    static final String PROJECTIONS_ATTRIBUTE = CsiVolumeAttributes.PROJECTIONS;
    static final String DEFAULT_MOUNT_PATH = "/var/run/secrets/satoken";
    static final String MOUNT_PATH_ANNOTATION = "satoken.io/mount-path";
    /** The signal the agent sends after each rotation: the volume attribute {@code reloadSignal}. */
    static final String RELOAD_SIGNAL_ANNOTATION = "satoken.io/reload-signal";
    /** The container it goes to: the volume attribute {@code reloadContainer}. */
    static final String RELOAD_CONTAINER_ANNOTATION = "satoken.io/reload-container";

    private static final Field.Str PROJECTIONS = PodView.ANNOTATIONS.string(ProjectionAnnotation.NAME);
    private static final Field.Str MOUNT_PATH = PodView.ANNOTATIONS.string(MOUNT_PATH_ANNOTATION);
    private static final Field.Str RELOAD_SIGNAL = PodView.ANNOTATIONS.string(RELOAD_SIGNAL_ANNOTATION);
    private static final Field.Str RELOAD_CONTAINER = PodView.ANNOTATIONS.string(RELOAD_CONTAINER_ANNOTATION);

    /** Empty when allowed (changes recorded in {@code pod}), else the denial. */
    Optional<Verdict.Denied> admit(AdmissionRequest request, PodPatch pod) throws InvalidReviewException {
        // AD-2: mirror pods are the kubelet's own; they are not mutated
        PodView view = pod.view();
        if (!request.isCreate() || !request.subResource().isEmpty()
                || view.hasAnnotation(ServiceAccountAdmission.MIRROR_POD)
                || !view.hasAnnotation(PROJECTIONS)) {
            return Optional.empty();
        }
        String projections = view.annotation(PROJECTIONS).orElse(null);
        try {
            ProjectionAnnotation.parse(projections);
        } catch (InvalidProjectionException e) {
            return invalid(e.getMessage());
        }
        String mountPath = view.hasAnnotation(MOUNT_PATH)
                ? view.annotation(MOUNT_PATH).orElse(null) : DEFAULT_MOUNT_PATH;
        Optional<String> badPath = checkMountPath(mountPath);
        if (badPath.isPresent()) {
            return invalid(MOUNT_PATH_ANNOTATION + ": " + badPath.get());
        }
        if (view.hasAnnotation(RELOAD_CONTAINER) && !view.hasAnnotation(RELOAD_SIGNAL)) {
            return invalid(RELOAD_CONTAINER_ANNOTATION + ": may be given only with " + RELOAD_SIGNAL_ANNOTATION
                    + ", which names the signal");
        }
        Map<String, String> attributes = new TreeMap<>(Map.of(PROJECTIONS_ATTRIBUTE, projections));
        // the agent checks the signal and the container when it publishes the volume, naming the attribute
        view.annotation(RELOAD_SIGNAL).ifPresent(v -> attributes.put(CsiVolumeAttributes.RELOAD_SIGNAL, v));
        view.annotation(RELOAD_CONTAINER)
                .ifPresent(v -> attributes.put(CsiVolumeAttributes.RELOAD_CONTAINER, v));
        JsonObject wanted = TokenVolumes.csi(VOLUME_NAME, DRIVER, attributes);
        boolean hasVolume = false;
        for (VolumeView volume : view.volumes()) {
            if (volume.named(VOLUME_NAME)) {
                Optional<Verdict.Denied> denied = checkExisting(volume, wanted);
                if (denied.isPresent()) {
                    return denied;
                }
                hasVolume = true;
            }
        }
        for (ContainerView container : view.initAndRegularContainers()) {
            Optional<Verdict.Denied> denied = mountIn(pod, container, mountPath);
            if (denied.isPresent()) {
                return denied;
            }
        }
        if (!hasVolume) {
            pod.appendToSpec(PodView.VOLUMES, wanted);
        }
        return Optional.empty();
    }

    /** A volume of the reserved name must be the one this class would add: ours from an earlier call. */
    private static Optional<Verdict.Denied> checkExisting(VolumeView volume, JsonObject wanted)
            throws InvalidReviewException {
        String field = "spec.volumes[" + VOLUME_NAME + "]";
        Optional<JsonObject> csi = volume.csi(field);
        if (csi.isEmpty() || !volume.csiDriver(field).filter(DRIVER::equals).isPresent()) {
            return invalid(field + ": the name is reserved for the agent's token volume (csi driver " + DRIVER + ")");
        }
        if (!csi.get().equals(wanted.getAsJsonObject("csi"))) {
            return invalid(field + ".csi: must be {driver: " + DRIVER + ", readOnly: true, volumeAttributes: {"
                    + PROJECTIONS_ATTRIBUTE + ": <the " + ProjectionAnnotation.NAME + " annotation>, and the reload "
                    + "annotations' attributes}}, "
                    + "so that the annotation says which tokens the pod gets");
        }
        return Optional.empty();
    }

    private static Optional<Verdict.Denied> mountIn(PodPatch pod, ContainerView container, String mountPath)
            throws InvalidReviewException {
        boolean mounted = false;
        for (ContainerView.Mount mount : container.volumeMounts()) {
            String path = mount.mountPath();
            String name = mount.name();
            if (mountPath.equals(path) && !VOLUME_NAME.equals(name)) {
                return invalid(container.path() + ".volumeMounts: " + mountPath
                        + " is already the mount path of volume " + name + "; set " + MOUNT_PATH_ANNOTATION
                        + " to put the agent's tokens elsewhere");
            }
            mounted |= VOLUME_NAME.equals(name);
        }
        if (!mounted) {
            pod.appendToContainer(container, ContainerView.VOLUME_MOUNTS, TokenVolumes.mount(VOLUME_NAME, mountPath));
        }
        return Optional.empty();
    }

    /** What is wrong with {@code path} as a mount path (absolute, without {@code ..}, not the root), if anything. */
    private static Optional<String> checkMountPath(String path) {
        if (path == null || path.isEmpty()) {
            return Optional.of("must be an absolute path, got an empty value");
        }
        if (!path.startsWith("/")) {
            return Optional.of("must be an absolute path, got \"" + path + "\"");
        }
        if (path.length() > 4096) {
            return Optional.of("must be at most 4096 characters, got " + path.length());
        }
        for (String element : path.split("/")) {
            if (element.equals("..")) {
                return Optional.of("must not contain '..', got \"" + path + "\"");
            }
        }
        if (path.replace("/", "").isEmpty()) {
            return Optional.of("must not be /");
        }
        return Optional.empty();
    }

    private static Optional<Verdict.Denied> invalid(String message) {
        return Optional.of(Verdict.deny(422, "Invalid", message));
    }
}
