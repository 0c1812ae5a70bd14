package io.satoken.e2e;

import io.satoken.e2e.node.KubeletNode;
import java.util.List;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * {@link AccessParityE2E} with the agent in the node-impersonation profile ({@link CsiDriverNode#startImpersonating}):
 * the same pod shapes, the same contract, with every token requested as the node under NodeRestriction and no
 * webhook. Skipped, loudly, below Kubernetes 1.36 (the v1.36 tier runs it).
 */
@ResourceLock(KubeletNode.RESOURCE)
class AccessParityNodeImpersonationE2E extends AccessParityE2E {

    @Override
    CsiDriverNode startNode(String name) throws Exception {
        return CsiDriverNode.startImpersonating(name, "parity-impersonation-agent", List.of(AUDIENCE));
    }
}
