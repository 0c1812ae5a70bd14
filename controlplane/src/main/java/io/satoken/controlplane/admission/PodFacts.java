package io.satoken.controlplane.admission;

import io.satoken.common.projection.TokenAsk;
import java.util.List;

/**
 * What the token-request check needs to know about a pod. Once a pod is bound, none of this can change
 * for its uid: nodeName, serviceAccountName and volumes are immutable.
 *
 * @param nodeName "" while the pod is not yet scheduled
 * @param tokenRequests what its {@value AgentTokenInjection#DRIVER} volumes let the agent request
 */
record PodFacts(String namespace, String name, String uid, String nodeName, String serviceAccountName,
        List<TokenAsk> tokenRequests) {

    PodFacts {
        tokenRequests = List.copyOf(tokenRequests);
    }

    boolean bound() {
        return !nodeName.isEmpty();
    }

    String namespacedName() {
        return namespace + "/" + name;
    }
}
