package io.satoken.agent.token;

import io.kubernetes.client.openapi.ApiClient;
import java.util.Objects;

/**
 * The agent's TokenRequests made as its own node, {@code system:node:<node>}, through constrained impersonation
 * (Kubernetes 1.36+, {@code tokenSource: node-impersonation}). The API server then confines them as it confines the
 * kubelet's: its node authorizer allows a token only for a ServiceAccount of a pod bound to that node, and
 * NodeRestriction checks the pod binding and the audience. API Priority and Fairness sees one flow per node.
 *
 * <p>Only the user name is sent: constrained impersonation of a node takes no group, uid or extra (the API server
 * sets the node's groups itself), and the agent's credential may act only as the node named by its own token's
 * {@code authentication.kubernetes.io/node-name} claim. The header goes on a client of its own, used for
 * TokenRequests (and {@link NodeImpersonationProbe}) only: pod reads and Events stay the agent's own.
 */
public final class NodeImpersonation {

    /** The header that names the user a request acts as. */
    public static final String HEADER = "Impersonate-User";
    /** The prefix of a node's user name. */
    public static final String NODE_USER_PREFIX = "system:node:";

    private NodeImpersonation() {
    }

    /** The user name of node {@code node}. */
    public static String username(String node) {
        return NODE_USER_PREFIX + Objects.requireNonNull(node, "node");
    }

    /**
     * Makes every request of {@code client} act as node {@code node}. The client must be the caller's own: a client
     * shared with pod reads or Events would send those as the node too.
     */
    public static ApiClient asNode(ApiClient client, String node) {
        if (node == null || node.isBlank()) {
            throw new IllegalArgumentException("node impersonation needs this node's name (--node-name), got none");
        }
        client.addDefaultHeader(HEADER, username(node));
        return client;
    }
}
