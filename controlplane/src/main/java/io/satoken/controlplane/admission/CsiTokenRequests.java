package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * The TokenRequests a pod's {@value AgentTokenInjection#DRIVER} volumes let the node agent make: each file's
 * audiences and lifetime, defaulted as the agent defaults them before it sends the request.
 *
 * <p>A volume asks for one file ({@code audience}, {@code expirationSeconds}, {@code path}) or for a
 * {@code projections} list in the {@value ProjectionAnnotation#NAME} format, parsed by common's
 * {@link ProjectionAnnotation}. The agent then requests {@code audiences: [audience]}, or none when the
 * audience is absent or empty (PV-3, PV-14), and {@code expirationSeconds} as given, 3600 when absent (PV-2).
 *
 * <p>A volume the agent would refuse to mount (a bad lifetime, a bad list, both forms at once) asks for
 * nothing here. Checks that do not change what is requested (the path, unknown attributes) are left to
 * the agent: this reading is never stricter than the agent's, so a volume it serves always gets its
 * tokens, and where it is looser it still allows only what the pod's own volume names.
 */
final class CsiTokenRequests {

    static final String AUDIENCE = "audience";
    static final String EXPIRATION_SECONDS = "expirationSeconds";
    static final String PATH = "path";

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
        List<JsonObject> volumes = Json.objects(podSpec, "volumes", "spec");
        for (int i = 0; i < volumes.size(); i++) {
            String path = "spec.volumes[" + i + "].csi";
            JsonObject csi = Json.object(volumes.get(i), "csi", "spec.volumes[" + i + "]");
            if (csi == null || !AgentTokenInjection.DRIVER.equals(Json.string(csi, "driver", path))) {
                continue;
            }
            shapes.addAll(volume(Json.object(csi, "volumeAttributes", path), path + ".volumeAttributes"));
        }
        return List.copyOf(shapes);
    }

    private static List<Shape> volume(JsonObject attributes, String path) throws InvalidReviewException {
        String projections = Json.string(attributes, AgentTokenInjection.PROJECTIONS_ATTRIBUTE, path);
        String audience = Json.string(attributes, AUDIENCE, path);
        String expiration = Json.string(attributes, EXPIRATION_SECONDS, path);
        if (projections != null) {
            if (audience != null || expiration != null || Json.string(attributes, PATH, path) != null) {
                return List.of(); // the agent refuses to mix the two forms
            }
            try {
                return ProjectionAnnotation.parse(projections, path + "." + AgentTokenInjection.PROJECTIONS_ATTRIBUTE)
                        .stream().map(Shape::of).toList();
            } catch (InvalidProjectionException e) {
                return List.of();
            }
        }
        Long seconds = expirationSeconds(expiration);
        if (seconds == null) {
            return List.of();
        }
        // PV-8: any audience; an empty one is none, as in ProjectionSpec
        return List.of(new Shape(audience == null || audience.isEmpty() ? null : List.of(audience), seconds));
    }

    /** PV-2, PV-4, PV-5 as the agent applies them to the attribute: 3600 when absent; null when refused. */
    private static Long expirationSeconds(String value) {
        if (value == null) {
            return ProjectionSpec.DEFAULT_EXPIRATION_SECONDS;
        }
        long seconds;
        try {
            seconds = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return null;
        }
        return seconds < ProjectionAnnotation.MIN_EXPIRATION_SECONDS
                || seconds > ProjectionAnnotation.MAX_EXPIRATION_SECONDS ? null : seconds;
    }
}
