package io.satoken.controlplane.admission;

import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.controlplane.admission.view.ContainerView;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.VolumeView;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Warns, without refusing, about a container that mounts a {@value CsiVolumeAttributes#DRIVER} volume through
 * {@code subPath} or {@code subPathExpr}: the kubelet bind-mounts the one version of the file that exists when the
 * container starts, as it does for a projected volume, so the container never sees a refreshed token and is left
 * with an expired one. Kubernetes allows it, so the pod is admitted; the API server shows the warning to the client.
 */
final class SubPathWarnings {

    private SubPathWarnings() {
    }

    /** One warning per such mount, in init then regular containers' order; none for a pod without one. */
    static List<String> of(PodView pod) throws InvalidReviewException {
        Set<String> tokenVolumes = new HashSet<>();
        for (VolumeView volume : pod.volumes()) {
            if (volume.csiDriver("spec.volumes[]").filter(CsiVolumeAttributes.DRIVER::equals).isPresent()) {
                tokenVolumes.add(volume.name());
            }
        }
        List<String> warnings = new ArrayList<>();
        if (tokenVolumes.isEmpty()) {
            return warnings;
        }
        for (ContainerView container : pod.initAndRegularContainers()) {
            for (ContainerView.Mount mount : container.volumeMounts()) {
                String volume = mount.name();
                if (volume == null || !tokenVolumes.contains(volume)) {
                    continue;
                }
                Optional<String> field = mount.subPathField();
                if (field.isPresent()) {
                    warnings.add(container.path() + " (" + container.name() + "): mounts the " + CsiVolumeAttributes.DRIVER
                            + " volume \"" + volume + "\" with " + field.get() + ", so it never sees a refreshed token "
                            + "(as with a projected volume) and keeps one that expires; mount the volume's directory");
                }
            }
        }
        return warnings;
    }
}
