package io.satoken.agent.token;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthenticationV1Api;
import io.kubernetes.client.openapi.apis.VersionApi;
import io.kubernetes.client.openapi.models.V1SelfSubjectReview;
import io.kubernetes.client.openapi.models.V1UserInfo;
import io.satoken.common.kube.Failures;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks, before the agent serves any volume, that the API server lets this agent act as its own node
 * ({@link NodeImpersonation}); the agent refuses to start in that mode otherwise, rather than mint tokens with a
 * credential nothing confines. Three questions, each answered by the API server itself:
 *
 * <ol>
 *   <li>{@code GET /version}: which Kubernetes, for the messages (constrained impersonation is alpha in 1.35, beta
 *       and on by default from 1.36);
 *   <li>a SelfSubjectReview with the agent's own credential: who the agent is, and the node its token names
 *       ({@value #NODE_NAME_EXTRA}, set for a token bound to a pod on a Node, Kubernetes 1.30+). It must be this
 *       node ({@code --node-name});
 *   <li>the same review sent as {@code system:node:<node>}: the API server must answer with that user. It checks
 *       {@code impersonate:associated-node} on {@code nodes} (API group {@code authentication.k8s.io}) and
 *       {@code impersonate-on:associated-node:create} on {@code selfsubjectreviews}, as it checks
 *       {@code impersonate-on:associated-node:create} on {@code serviceaccounts/token} for each TokenRequest.
 * </ol>
 *
 * <p>Every refusal says what was found, the server's version and the alternatives. The server's own words are
 * quoted from its Status message; no credential appears.
 */
public final class NodeImpersonationProbe {

    /** The user extra a ServiceAccount token bound to a pod on a node carries, from its node claim. */
    public static final String NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name";
    /** The first minor version of Kubernetes 1 where constrained impersonation is on by default. */
    static final int DEFAULT_ON_MINOR = 36;
    static final String ALTERNATIVES = "Alternatives: tokenSource: request, with satoken's token webhook installed"
            + " (controlplane/deploy/webhooks), or tokenSource: kubelet, where the kubelet mints the tokens (any"
            + " version); docs/install.md, \"Node impersonation (Kubernetes 1.36+)\"";
    private static final Pattern MINOR = Pattern.compile("^v?(\\d+)\\.(\\d+)");

    /** What the API server answers; {@link #api} asks a real one, tests script it. */
    public interface Server {
        /** {@code /version}'s gitVersion, e.g. {@code v1.36.2}. */
        String version() throws ApiException;

        /** A SelfSubjectReview with the agent's own credential. */
        V1UserInfo reviewSelf() throws ApiException;

        /** The same review, sent impersonating the node. */
        V1UserInfo reviewAsNode() throws ApiException;
    }

    /** Why node impersonation cannot be used; the message is the whole explanation, ready for the log. */
    public static final class Unavailable extends Exception {
        Unavailable(String message) {
            super(message);
        }
    }

    private NodeImpersonationProbe() {
    }

    /**
     * The questions asked of a real API server.
     *
     * @param own the agent's own client
     * @param asNode the client made with {@link NodeImpersonation#asNode}
     */
    public static Server api(ApiClient own, ApiClient asNode) {
        VersionApi version = new VersionApi(own);
        AuthenticationV1Api self = new AuthenticationV1Api(own);
        AuthenticationV1Api node = new AuthenticationV1Api(asNode);
        return new Server() {
            @Override
            public String version() throws ApiException {
                return version.getCode().execute().getGitVersion();
            }

            @Override
            public V1UserInfo reviewSelf() throws ApiException {
                return userOf(self.createSelfSubjectReview(new V1SelfSubjectReview()).execute());
            }

            @Override
            public V1UserInfo reviewAsNode() throws ApiException {
                return userOf(node.createSelfSubjectReview(new V1SelfSubjectReview()).execute());
            }
        };
    }

    private static V1UserInfo userOf(V1SelfSubjectReview review) {
        return review == null || review.getStatus() == null ? null : review.getStatus().getUserInfo();
    }

    /**
     * Asks the three questions.
     *
     * @return the confinement in force, in words for the start log
     * @throws Unavailable when the API server does not let this agent act as node {@code node}
     */
    public static String check(Server server, String node) throws Unavailable {
        Objects.requireNonNull(node, "node");
        String nodeUser = NodeImpersonation.username(node);
        String version;
        try {
            version = server.version();
        } catch (ApiException e) {
            throw unavailable("unknown", "cannot read the API server's version (GET /version: "
                    + Failures.said(e) + ")");
        }
        V1UserInfo self;
        try {
            self = server.reviewSelf();
        } catch (ApiException e) {
            // before 1.28 the review is not served, and RBAC refuses it first (403) where the built-in roles lack it
            int minor = minor(version);
            throw unavailable(version, (e.getCode() == 404 || (minor >= 0 && minor < 28)
                    ? "the API server does not serve SelfSubjectReview (authentication.k8s.io/v1, Kubernetes 1.28+), nor"
                            + " constrained impersonation (beta and on by default from 1.36); "
                    : "") + "a SelfSubjectReview with the agent's own credential failed: "
                    + Failures.said(e));
        }
        String agent = self == null || self.getUsername() == null ? "(unnamed)" : self.getUsername();
        String claimed = nodeClaim(self);
        if (claimed == null) {
            throw unavailable(version, "the agent's credential (user " + agent + ") names no node (no " + NODE_NAME_EXTRA
                    + "): it must be a ServiceAccount token bound to a pod on this node, as the DaemonSet's projected"
                    + " token is from Kubernetes 1.30 (a kubeconfig's own credential, or an older server's token, cannot"
                    + " act as a node)");
        }
        if (!claimed.equals(node)) {
            throw unavailable(version, "the agent's credential (user " + agent + ") belongs to a pod on node " + claimed
                    + ", not on this node (--node-name " + node + "): it may act only as " + NodeImpersonation.username(claimed));
        }
        V1UserInfo asNode;
        try {
            asNode = server.reviewAsNode();
        } catch (ApiException e) {
            throw unavailable(version, "the API server refused to let " + agent + " act as " + nodeUser + " ("
                    + Failures.said(e) + "); " + likelyCause(version, agent));
        }
        String answered = asNode == null ? null : asNode.getUsername();
        if (!nodeUser.equals(answered)) {
            throw unavailable(version, "a SelfSubjectReview sent as " + nodeUser + " was answered for "
                    + (answered == null ? "no user" : answered) + ": the " + NodeImpersonation.HEADER + " header does"
                    + " not reach the API server (a proxy between them may drop it)");
        }
        return "TokenRequests are made as " + nodeUser + " through constrained impersonation (kube-apiserver " + version
                + " answered as " + nodeUser + " for " + agent + "): the node authorizer and NodeRestriction allow them"
                + " only for pods bound to node " + node;
    }

    /** The node the reviewed user's token names, or null when it names none (or more than one). */
    static String nodeClaim(V1UserInfo user) {
        Map<String, List<String>> extra = user == null ? null : user.getExtra();
        List<String> values = extra == null ? null : extra.get(NODE_NAME_EXTRA);
        return values == null || values.size() != 1 || values.get(0).isBlank() ? null : values.get(0);
    }

    /** What most likely stands in the way on this version. */
    static String likelyCause(String version, String agent) {
        int minor = minor(version);
        if (minor >= 0 && minor < 35) {
            return "Kubernetes " + version + " has no constrained impersonation (alpha in 1.35, beta and on by default"
                    + " from 1.36)";
        }
        String rbac = "the ClusterRole of deploy/profiles/node-impersonation (impersonate:associated-node on"
                + " nodes in API group authentication.k8s.io, impersonate-on:associated-node:create on"
                + " serviceaccounts/token and selfsubjectreviews) must be bound to " + agent;
        if (minor == 35) {
            return "on Kubernetes 1.35 constrained impersonation is alpha: the API server needs --feature-gates="
                    + "ConstrainedImpersonation=true, and " + rbac;
        }
        return rbac + ", and the API server's feature gate ConstrainedImpersonation must not be off";
    }

    /** The minor version of a Kubernetes 1.x gitVersion, or -1 when it cannot be read. */
    static int minor(String version) {
        Matcher m = version == null ? null : MINOR.matcher(version);
        if (m == null || !m.find() || !"1".equals(m.group(1))) {
            return -1;
        }
        return Integer.parseInt(m.group(2));
    }

    private static Unavailable unavailable(String version, String what) {
        return new Unavailable("tokenSource: node-impersonation cannot be used with this API server (Kubernetes "
                + version + "): " + what + ". The agent does not fall back to minting tokens with its own credential. "
                + ALTERNATIVES);
    }
}
