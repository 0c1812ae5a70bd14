package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The TokenRequests a pod's {@value AgentTokenInjection#DRIVER} volumes let the node agent make: each file's
 * audiences and lifetime, defaulted as the agent defaults them before it sends the request.
 *
 * <p>The volume's files are read by {@link CsiVolumeAttributes}, exactly as the agent reads them to publish
 * the volume. The agent then requests {@code audiences: [audience]}, or none when the audience is absent or
 * empty (PV-3, PV-14), and {@code expirationSeconds} as given, 3600 when absent (PV-2). A volume the agent
 * would refuse to publish asks for nothing.
 */
final class CsiTokenRequests {

    /** A pod's spec, as the API server serves it (not under review). */
    private static final Field.Obj POD_SPEC = Field.root();
    private static final Field.Items VOLUMES = POD_SPEC.objects("volumes");
    private static final Field.Obj CSI = VOLUMES.item().object("csi");
    private static final Field.Str DRIVER = CSI.string("driver");
    private static final Field.StringMap ATTRIBUTES = CSI.stringMap("volumeAttributes");

    /**
     * One request the agent may make for the pod.
     *
     * @param audiences {@code [audience]}, or null for the API server's own audiences (PV-3)
     */
    record Shape(List<String> audiences, long expirationSeconds) {
        Shape {
            audiences = audiences == null ? null : List.copyOf(audiences);
        }

        static Shape of(ProjectionSpec spec) {
            return new Shape(spec.audience() == null ? null : List.of(spec.audience()), spec.expirationSeconds());
        }

        @Override
        public String toString() {
            return "{audiences: " + (audiences == null ? "the API server's own" : audiences)
                    + ", expirationSeconds: " + expirationSeconds + "}";
        }
    }

    private CsiTokenRequests() {
    }

    /** Every request the pod's agent volumes allow, in volume order; empty when it has none. */
    static List<Shape> of(JsonObject podSpec) throws InvalidReviewException {
        List<Shape> shapes = new ArrayList<>();
        List<JsonObject> volumes = VOLUMES.read(podSpec, "spec");
        for (int i = 0; i < volumes.size(); i++) {
            String path = "spec.volumes[" + i + "].csi";
            JsonObject csi = CSI.read(volumes.get(i), "spec.volumes[" + i + "]");
            if (csi == null || !AgentTokenInjection.DRIVER.equals(DRIVER.read(csi, path))) {
                continue;
            }
            shapes.addAll(volume(ATTRIBUTES.read(csi, path)));
        }
        return List.copyOf(shapes);
    }

    private static List<Shape> volume(Map<String, String> values) {
        try {
            return CsiVolumeAttributes.files(values).stream().map(Shape::of).toList();
        } catch (InvalidProjectionException e) {
            return List.of(); // a volume the agent refuses to publish asks for nothing
        }
    }
}
