package io.satoken.agent.reload;

import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1Pod;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.FieldErrors;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a volume asks to be done after each rotation: send {@code signal} to {@code container} of its pod.
 *
 * @param container the container's name; null until checked against the pod's spec when the volume asks for none
 */
public record ReloadRequest(ReloadSignal signal, String container) {

    public ReloadRequest {
        Objects.requireNonNull(signal, "signal");
    }

    /**
     * The request in a volume's attributes, or null when it asks for none; errors go to {@code errors}, each naming
     * the attribute.
     */
    public static ReloadRequest parse(Map<String, String> attributes, FieldErrors errors) {
        String signal = attributes.get(CsiVolumeAttributes.RELOAD_SIGNAL);
        String container = attributes.get(CsiVolumeAttributes.RELOAD_CONTAINER);
        if (signal == null) {
            if (container != null) {
                errors.add(CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_CONTAINER), "may be given only with "
                        + CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_SIGNAL) + ", which names the signal");
            }
            return null;
        }
        ReloadSignal parsed = ReloadSignal.of(signal).orElse(null);
        if (parsed == null) {
            errors.invalid(CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_SIGNAL), "must be one of "
                    + ReloadSignal.names(), signal);
        }
        if (container != null && container.isEmpty()) {
            errors.add(CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_CONTAINER), "must name a container, got"
                    + " an empty value");
        }
        return parsed == null ? null : new ReloadRequest(parsed, container == null || container.isEmpty() ? null
                : container);
    }

    /**
     * This request with its container checked against the pod's regular containers: the one named, or the pod's
     * only container when none is.
     *
     * @throws IllegalArgumentException naming {@code volumeAttributes.reloadContainer} and the pod's containers
     */
    public ReloadRequest forPod(V1Pod pod) {
        List<String> names = pod.getSpec() == null ? List.of()
                : Objects.requireNonNullElse(pod.getSpec().getContainers(), List.<V1Container>of()).stream()
                        .map(V1Container::getName).toList();
        String field = CsiVolumeAttributes.field(CsiVolumeAttributes.RELOAD_CONTAINER);
        if (container == null) {
            if (names.size() != 1) {
                throw new IllegalArgumentException(field + ": Required value: the pod has " + names.size()
                        + " containers (" + String.join(", ", names) + "); name the one to send " + signal + " to");
            }
            return new ReloadRequest(signal, names.get(0));
        }
        if (!names.contains(container)) {
            throw new IllegalArgumentException(field + ": Invalid value: \"" + container + "\": the pod has no such"
                    + " container (its containers: " + String.join(", ", names) + ")");
        }
        return this;
    }
}
