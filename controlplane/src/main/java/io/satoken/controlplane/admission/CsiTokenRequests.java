package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.projection.TokenAsk;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The TokenRequests a pod's {@value AgentTokenInjection#DRIVER} volumes let the node agent make: each file's
 * audiences and lifetime, defaulted as the agent defaults them before it sends the request.
 *
 * <p>The volume's files are read by {@link CsiVolumeAttributes}, exactly as the agent reads them to publish
 * the volume, and each file's {@link TokenAsk} is what the agent then requests ({@link ProjectionSpec#ask}). A
 * volume the agent would refuse to publish asks for nothing.
 */
final class CsiTokenRequests {

    private CsiTokenRequests() {
    }

    /** Every request the pod's agent volumes allow, in volume order; empty when it has none. */
    static List<TokenAsk> of(JsonObject podSpec) throws InvalidReviewException {
        List<TokenAsk> shapes = new ArrayList<>();
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

    private static List<TokenAsk> volume(JsonObject attributes, String path) throws InvalidReviewException {
        Map<String, String> values = new LinkedHashMap<>();
        if (attributes != null) {
            for (String key : attributes.keySet()) {
                values.put(key, Json.string(attributes, key, path));
            }
        }
        try {
            return CsiVolumeAttributes.files(values).stream().map(ProjectionSpec::ask).toList();
        } catch (InvalidProjectionException e) {
            return List.of(); // a volume the agent refuses to publish asks for nothing
        }
    }
}
