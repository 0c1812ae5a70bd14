package io.satoken.controlplane.admission;

import io.kubernetes.client.openapi.ApiException;
import io.satoken.common.kube.Failures;
import io.satoken.common.projection.TokenAsk;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.TokenRequestView;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code /validate/serviceaccount-token}: confines the node agent's token requests as NodeRestriction
 * confines a kubelet's. A compromised agent can then mint only the tokens its node's pods already ask it
 * for: bound to one of those pods, as that pod's ServiceAccount, with the audience and lifetime the pod's
 * {@value AgentTokenInjection#DRIVER} volume names. No namespace and no pod is exempt.
 *
 * <p>Rules, checked in order for {@code serviceaccounts/token} creates by the agent's ServiceAccount;
 * every other requester is allowed unchanged after reading only {@code userInfo.username} (what a
 * matchCondition filters on, on API servers that have them):
 * <ol>
 *   <li>NT-1: the requester is an agent pod, and its node is known: its token names the pod
 *       ({@value #POD_NAME_EXTRA}, {@value #POD_UID_EXTRA}). From Kubernetes 1.30 the token names the pod's
 *       node too ({@value #NODE_NAME_EXTRA}), which is taken as it is, with no read; without it (older
 *       servers, or the feature off) the pod is read: it must exist in the agent's namespace with that uid
 *       and be bound to a node. Both are the API server's word: its authenticator put the extras there from
 *       the token it verified, and checked for this very request that the pod still exists with that uid
 *       (from 1.30, that the node does too); a token can only be bound to a pod of its ServiceAccount's
 *       namespace that runs as that account, and a pod's node never changes once set. The one other source
 *       of such extras is impersonation, which needs {@code impersonate} on the agent's ServiceAccount and
 *       on {@code userextras/authentication.kubernetes.io/...}: whoever may do that is trusted as far as the
 *       API server trusts them (on older servers they could name any agent pod, and so its node);</li>
 *   <li>NT-2: the request binds the token to one pod: {@code spec.boundObjectRef} has kind {@code Pod},
 *       a name and a uid (kubelet always gives the uid; without it the token could bind to a pod created
 *       later under the same name);</li>
 *   <li>NT-3: that pod exists now in the request's namespace with that uid, read live, never from a
 *       cache: a pod deleted, or deleted and created again under the same name, is refused;</li>
 *   <li>NT-4: it is bound to the agent pod's node, as NT-1 learnt it;</li>
 *   <li>NT-5: it runs as the ServiceAccount whose token is requested;</li>
 *   <li>NT-6: {@code spec.audiences} and {@code spec.expirationSeconds} equal one of the files the pod's
 *       {@value AgentTokenInjection#DRIVER} volumes ask for, defaulted as the agent defaults them
 *       ({@link CsiTokenRequests}). A file with no audience matches the API server's own audiences, which
 *       the API server has filled in by now (PV-3); when the webhook does not know them, it matches none.</li>
 * </ol>
 */
public final class NodeTokenRestriction implements Admission {

    static final String POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name";
    static final String POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid";
    /** Kubernetes 1.30+ (ServiceAccountTokenPodNodeInfo): the node of the pod a token is bound to. */
    static final String NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name";
    private static final String REF = "spec.boundObjectRef";

    /** {@code --agent-service-account}: the agents' ServiceAccount. */
    public record AgentAccount(String namespace, String name) {
        String username() {
            return "system:serviceaccount:" + namespace + ":" + name;
        }

        /** Parses {@code namespace/name}. */
        public static AgentAccount parse(String flag, String value) {
            int slash = value.indexOf('/');
            if (slash < 1 || slash == value.length() - 1 || value.indexOf('/', slash + 1) >= 0) {
                throw new IllegalArgumentException(flag + ": expected NAMESPACE/NAME, got \"" + value + "\"");
            }
            return new AgentAccount(value.substring(0, slash), value.substring(slash + 1));
        }
    }

    private final AgentAccount agent;
    private final PodFactsLookup pods;
    private final ApiAudiences apiAudiences;

    /** @param agent required: without it there is nothing to confine, and allowing all would fail open */
    public NodeTokenRestriction(AgentAccount agent, PodFactsLookup pods, ApiAudiences apiAudiences) {
        this.agent = Objects.requireNonNull(agent, "agent");
        this.pods = Objects.requireNonNull(pods, "pods");
        this.apiAudiences = Objects.requireNonNull(apiAudiences, "apiAudiences");
    }

    @Override
    public Verdict review(AdmissionRequest request) throws InvalidReviewException {
        // the fast path: anyone else's request is neither looked up nor read further
        if (!agent.username().equals(request.userInfo().username()) || !request.isCreate()
                || !request.resource().isCore("serviceaccounts") || !"token".equals(request.subResource())) {
            return Verdict.allow();
        }
        try {
            return check(request);
        } catch (ApiException e) {
            return Verdict.unavailable(prefix() + "could not read a pod: " + Failures.said(e));
        }
    }

    private Verdict check(AdmissionRequest request) throws InvalidReviewException, ApiException {
        // NT-1
        String agentPodName = request.userInfo().extraValue(POD_NAME_EXTRA);
        String agentPodUid = request.userInfo().extraValue(POD_UID_EXTRA);
        if (agentPodName == null || agentPodUid == null) {
            return deny("NT-1: the requester's token is not bound to a pod (no " + POD_NAME_EXTRA + " and "
                    + POD_UID_EXTRA + "); the agent must use its pod's projected token");
        }
        String agentPod = agent.namespace() + "/" + agentPodName;
        // from 1.30 the token names its pod's node; before, or without it, the agent pod is read
        String node = request.userInfo().extraValue(NODE_NAME_EXTRA);
        String nodeFrom = "named by its token";
        if (node == null || node.isEmpty()) {
            Optional<PodFacts> found = pods.requester(agent.namespace(), agentPodName, agentPodUid);
            if (found.isEmpty() || !found.get().bound()) {
                return deny("NT-1: the requester's pod " + agentPod + " (uid " + agentPodUid
                        + ") does not exist or is not bound to a node");
            }
            node = found.get().nodeName();
            nodeFrom = "read from the pod";
        }
        // NT-2
        TokenRequestView token = new TokenRequestView(request.object());
        TokenRequestView.BoundObjectRef ref = token.boundObjectRef();
        String kind = ref.kind();
        if (!"Pod".equals(kind)) {
            return deny("NT-2: " + REF + " must name a Pod, got " + (ref.present() ? "kind \"" + kind + "\"" : "none"));
        }
        String podName = ref.name();
        String podUid = ref.uid();
        if (podName.isEmpty() || podUid.isEmpty()) {
            return deny("NT-2: " + REF + "." + (podName.isEmpty() ? "name" : "uid") + ": Required value: the "
                    + "token must be bound to one pod by name and uid");
        }
        // NT-3
        String target = request.namespace() + "/" + podName;
        Optional<PodFacts> found = pods.target(request.namespace(), podName, podUid);
        if (found.isEmpty()) {
            return deny("NT-3: " + REF + ": pod " + target + " with uid " + podUid + " does not exist");
        }
        PodFacts pod = found.get();
        // NT-4
        if (!node.equals(pod.nodeName())) {
            return deny("NT-4: pod " + target + " is " + (pod.bound() ? "on node " + pod.nodeName()
                    : "not bound to a node") + ", but the agent pod " + agentPod + " is on node " + node
                    + " (" + nodeFrom + ")");
        }
        // NT-5
        String account = pod.serviceAccountName().isEmpty() ? ServiceAccountAdmission.DEFAULT_SERVICE_ACCOUNT
                : pod.serviceAccountName();
        if (!account.equals(request.name())) {
            return deny("NT-5: pod " + target + " runs as ServiceAccount " + account + ", not " + request.name());
        }
        return checkAsked(pod, target, token);
    }

    /** NT-6. */
    private Verdict checkAsked(PodFacts pod, String target, TokenRequestView token) throws InvalidReviewException {
        List<String> audiences = token.audiences();
        long seconds = token.expirationSeconds();
        // the API server fills both in before validating admission; absent values are its defaults
        Optional<List<String>> defaults = apiAudiences.get();
        for (TokenAsk asked : pod.tokenRequests()) {
            if (asked.matches(audiences, seconds, defaults)) {
                return Verdict.allow();
            }
        }
        String got = "spec.audiences " + audiences + " and spec.expirationSeconds " + seconds;
        if (pod.tokenRequests().isEmpty()) {
            return deny("NT-6: " + got + ": pod " + target + " has no " + AgentTokenInjection.DRIVER
                    + " volume, so it asks the agent for no token");
        }
        return deny("NT-6: " + got + " are not what pod " + target + "'s " + AgentTokenInjection.DRIVER
                + " volumes ask for: " + pod.tokenRequests() + (defaults.isEmpty()
                        && pod.tokenRequests().stream().anyMatch(TokenAsk::serverOwnAudiences)
                        ? " (the API server's own audiences are not known to the webhook: --api-audiences)" : ""));
    }

    private String prefix() {
        return "node-scoped token request by " + agent.username() + " denied: ";
    }

    private Verdict deny(String reason) {
        return Verdict.forbidden(prefix() + reason);
    }
}
