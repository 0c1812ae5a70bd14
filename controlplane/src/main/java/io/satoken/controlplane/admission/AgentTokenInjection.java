package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import java.nio.file.Path;

/**
 * Gives a pod that asks for agent tokens ({@value ProjectionAnnotation#NAME}) the directory the node's agent
 * writes them to: {@code <agent root>/pods/<pod uid>/}, mounted read-only.
 *
 * <p>The pod gets:
 * <ol>
 *   <li>a hostPath volume {@value #VOLUME_NAME} of {@code <agent root>/pods}, type Directory, so a pod on
 *       a node without the agent fails to start with a clear event instead of reading an empty directory;</li>
 *   <li>in every init and regular container, a read-only mount of it at {@value #DEFAULT_MOUNT_PATH} (or the
 *       pod's {@value #MOUNT_PATH_ANNOTATION}) with {@code subPathExpr: $(POD_UID)}, so each pod sees only its
 *       own directory;</li>
 *   <li>and in those containers {@code POD_UID} from the downward API ({@code metadata.uid}).</li>
 * </ol>
 * A container that already sets {@code POD_UID} some other way is refused: the variable picks the directory,
 * and a chosen value would expose another pod's tokens. An invalid annotation is refused with the agent's
 * own message. Applying it to its own output changes nothing.
 */
final class AgentTokenInjection {

    static final String VOLUME_NAME = "satoken-agent-tokens";
    static final String DEFAULT_MOUNT_PATH = "/var/run/secrets/satoken";
    static final String MOUNT_PATH_ANNOTATION = "satoken.io/mount-path";
    static final String POD_UID_ENV = "POD_UID";
    static final String SUB_PATH_EXPR = "$(" + POD_UID_ENV + ")";

    private final String podsDir;

    /** @param agentRootDir the agents' {@code rootDir}; pods' directories are under its {@code pods/} */
    AgentTokenInjection(Path agentRootDir) {
        this.podsDir = agentRootDir.resolve("pods").toString();
    }

    /** Null when allowed (changes recorded in {@code pod}), else a denial. */
    Verdict admit(AdmissionRequest request, PodPatch pod) throws InvalidReviewException {
        if (!request.isCreate() || !request.subResource().isEmpty()
                || pod.hasAnnotation(ServiceAccountAdmission.MIRROR_POD_ANNOTATION)
                || !pod.hasAnnotation(ProjectionAnnotation.NAME)) {
            return null;
        }
        try {
            ProjectionAnnotation.parse(pod.annotation(ProjectionAnnotation.NAME));
        } catch (InvalidProjectionException e) {
            return invalid(e.getMessage());
        }
        String mountPath = pod.hasAnnotation(MOUNT_PATH_ANNOTATION)
                ? pod.annotation(MOUNT_PATH_ANNOTATION) : DEFAULT_MOUNT_PATH;
        String badPath = checkMountPath(mountPath);
        if (badPath != null) {
            return invalid(MOUNT_PATH_ANNOTATION + ": " + badPath);
        }
        boolean hasVolume = false;
        for (JsonObject volume : Json.objects(pod.spec(), "volumes", "spec")) {
            if (VOLUME_NAME.equals(Json.string(volume, "name", "spec.volumes[]"))) {
                if (!isAgentVolume(volume)) {
                    return invalid("spec.volumes[" + VOLUME_NAME + "]: the name is reserved for the agent's token "
                            + "directory (hostPath " + podsDir + ")");
                }
                hasVolume = true;
            }
        }
        for (PodPatch.ContainerRef ref : pod.initAndRegularContainers()) {
            Verdict denied = mountIn(pod, ref, mountPath);
            if (denied != null) {
                return denied;
            }
        }
        if (!hasVolume) {
            pod.appendToSpec("volumes", hostPathVolume());
        }
        return null;
    }

    private Verdict mountIn(PodPatch pod, PodPatch.ContainerRef ref, String mountPath) throws InvalidReviewException {
        boolean mounted = false;
        for (JsonObject mount : Json.objects(ref.container(), "volumeMounts", ref.path())) {
            String path = Json.string(mount, "mountPath", ref.path() + ".volumeMounts[]");
            String name = Json.string(mount, "name", ref.path() + ".volumeMounts[]");
            if (mountPath.equals(path) && !VOLUME_NAME.equals(name)) {
                return invalid(ref.path() + ".volumeMounts: " + mountPath + " is already the mount path of volume "
                        + name + "; set " + MOUNT_PATH_ANNOTATION + " to put the agent's tokens elsewhere");
            }
            mounted |= VOLUME_NAME.equals(name);
        }
        boolean hasEnv = false;
        for (JsonObject env : Json.objects(ref.container(), "env", ref.path())) {
            if (POD_UID_ENV.equals(Json.string(env, "name", ref.path() + ".env[]"))) {
                if (!isPodUidEnv(env)) {
                    return invalid(ref.path() + ".env[" + POD_UID_ENV + "]: must come from the downward API field "
                            + "metadata.uid, because it selects the pod's token directory");
                }
                hasEnv = true;
            }
        }
        if (!mounted) {
            JsonObject mount = TokenVolumes.mount(VOLUME_NAME, mountPath);
            mount.addProperty("subPathExpr", SUB_PATH_EXPR);
            pod.appendToContainer(ref, "volumeMounts", mount);
        }
        if (!hasEnv) {
            pod.appendToContainer(ref, "env", TokenVolumes.fieldEnv(POD_UID_ENV, "metadata.uid"));
        }
        return null;
    }

    private JsonObject hostPathVolume() {
        JsonObject hostPath = new JsonObject();
        hostPath.addProperty("path", podsDir);
        hostPath.addProperty("type", "Directory");
        JsonObject volume = new JsonObject();
        volume.addProperty("name", VOLUME_NAME);
        volume.add("hostPath", hostPath);
        return volume;
    }

    private boolean isAgentVolume(JsonObject volume) throws InvalidReviewException {
        JsonObject hostPath = Json.object(volume, "hostPath", "spec.volumes[]");
        return hostPath != null && podsDir.equals(Json.string(hostPath, "path", "spec.volumes[].hostPath"));
    }

    private static boolean isPodUidEnv(JsonObject env) throws InvalidReviewException {
        JsonObject valueFrom = Json.object(env, "valueFrom", "env[]");
        JsonObject fieldRef = Json.object(valueFrom, "fieldRef", "env[].valueFrom");
        return Json.string(env, "value", "env[]") == null && fieldRef != null
                && "metadata.uid".equals(Json.string(fieldRef, "fieldPath", "env[].valueFrom.fieldRef"));
    }

    /** Null if {@code path} can be a mount path: absolute, without {@code ..}, not the root. */
    private static String checkMountPath(String path) {
        if (path == null || path.isEmpty()) {
            return "must be an absolute path, got an empty value";
        }
        if (!path.startsWith("/")) {
            return "must be an absolute path, got \"" + path + "\"";
        }
        if (path.length() > 4096) {
            return "must be at most 4096 characters, got " + path.length();
        }
        for (String element : path.split("/")) {
            if (element.equals("..")) {
                return "must not contain '..', got \"" + path + "\"";
            }
        }
        if (path.replace("/", "").isEmpty()) {
            return "must not be /";
        }
        return null;
    }

    private static Verdict invalid(String message) {
        return new Verdict(false, null, 422, "Invalid", message);
    }
}
