package io.satoken.agent.csi;

import io.satoken.agent.projection.PodOwners;
import io.satoken.agent.write.FileOwnerException;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.ProjectionSpec;
import java.util.List;

/**
 * Where a volume's file owners and groups come from (the pod's securityContext, or a {@code projections} entry's
 * {@code uid} and {@code gid}), to say which field holds an id the node refused.
 */
record FileOwnerFields(PodOwners owners, List<ProjectionSpec> specs) {

    FileOwnerFields {
        specs = List.copyOf(specs);
    }

    /**
     * E.g. {@code spec.securityContext.fsGroup: cannot give the token files group 70000 on this node (chown: Invalid
     * argument)}.
     */
    String describe(FileOwnerException refused) {
        String field = owners.fieldOf(refused.group(), refused.id(), specs,
                CsiVolumeAttributes.field(CsiVolumeAttributes.PROJECTIONS));
        return (field == null ? "" : field + ": ") + "cannot give the token files " + (refused.group() ? "group " : "owner ")
                + refused.id() + " on this node (chown: " + refused.why() + "); use an id the node's agent can chown to";
    }
}
