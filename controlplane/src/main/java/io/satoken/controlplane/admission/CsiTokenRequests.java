package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.projection.TokenAsk;
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
 * the volume, and each file's {@link TokenAsk} is what the agent then requests ({@link ProjectionSpec#ask}). A
 * volume the agent would refuse to publish asks for nothing.
 */
final class CsiTokenRequests {

    /** A pod's spec, as the API server serves it (not under review). */
    private static final Field.Obj POD_SPEC = Field.root();
    private static final Field.Items VOLUMES = POD_SPEC.objects("volumes");
    private static final Field.Obj CSI = VOLUMES.item().object("csi");
    private static final Field.Str DRIVER = CSI.string("driver");
    private static final Field.StringMap ATTRIBUTES = CSI.stringMap("volumeAttributes");

    private CsiTokenRequests() {
    }

    /** Every request the pod's agent volumes allow, in volume order; empty when it has none. */
    static List<TokenAsk> of(JsonObject podSpec) throws InvalidReviewException {
        List<TokenAsk> shapes = new ArrayList<>();
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

    private static List<TokenAsk> volume(Map<String, String> values) {
        try {
            return CsiVolumeAttributes.files(values).stream().map(ProjectionSpec::ask).toList();
        } catch (InvalidProjectionException e) {
            return List.of(); // a volume the agent refuses to publish asks for nothing
        }
    }
}
