package io.satoken.controlplane.admission;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.satoken.controlplane.controller.ApiErrors;
import java.util.Optional;

/**
 * {@code /validate/serviceaccount-token}: confines the node agent's token requests to its own node, the
 * guarantee kubelet gets from the node authorizer. A compromised agent can then mint tokens only for pods
 * that already run on its node, as the ServiceAccounts they already run as.
 *
 * <p>Rules, checked in order for {@code serviceaccounts/token} creates by the agent's ServiceAccount
 * (every other request is allowed unchanged):
 * <ol>
 *   <li>NT-1: the requester is an agent pod: its token names the pod
 *       ({@value #POD_NAME_EXTRA}, {@value #POD_UID_EXTRA}), which exists in the agent's namespace with that
 *       uid and is bound to a node;</li>
 *   <li>NT-2: the request binds the token to a Pod ({@code spec.boundObjectRef.kind: Pod});</li>
 *   <li>NT-3: that pod exists in the request's namespace (with the given uid, if one is given);</li>
 *   <li>NT-4: it is bound to the agent pod's node;</li>
 *   <li>NT-5: it runs as the ServiceAccount whose token is requested.</li>
 * </ol>
 */
final class NodeTokenRestriction implements Admission {

    static final String POD_NAME_EXTRA = "authentication.kubernetes.io/pod-name";
    static final String POD_UID_EXTRA = "authentication.kubernetes.io/pod-uid";

    /** {@code --agent-service-account}: the agents' ServiceAccount, or null to check nothing. */
    record AgentAccount(String namespace, String name) {
        String username() {
            return "system:serviceaccount:" + namespace + ":" + name;
        }

        /** Parses {@code namespace/name}. */
        static AgentAccount parse(String flag, String value) {
            int slash = value.indexOf('/');
            if (slash < 1 || slash == value.length() - 1 || value.indexOf('/', slash + 1) >= 0) {
                throw new IllegalArgumentException(flag + ": expected NAMESPACE/NAME, got \"" + value + "\"");
            }
            return new AgentAccount(value.substring(0, slash), value.substring(slash + 1));
        }
    }

    private final AgentAccount agent;
    private final PodFactsLookup pods;

    NodeTokenRestriction(AgentAccount agent, PodFactsLookup pods) {
        this.agent = agent;
        this.pods = pods;
    }

    @Override
    public Verdict review(AdmissionRequest request) throws InvalidReviewException {
        if (agent == null || !request.isCreate() || !request.resource().isCore("serviceaccounts")
                || !"token".equals(request.subResource())
                || !agent.username().equals(request.userInfo().username())) {
            return Verdict.allow();
        }
        try {
            return check(request);
        } catch (ApiException e) {
            return Verdict.unavailable(prefix() + "could not read a pod: " + ApiErrors.describe(e));
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
        Optional<PodFacts> agentPod = pods.get(agent.namespace(), agentPodName, agentPodUid);
        if (agentPod.isEmpty() || !agentPod.get().bound()) {
            return deny("NT-1: the requester's pod " + agent.namespace() + "/" + agentPodName + " (uid "
                    + agentPodUid + ") does not exist or is not bound to a node");
        }
        // NT-2
        JsonObject spec = Json.object(request.object(), "spec", "request.object");
        JsonObject ref = Json.object(spec, "boundObjectRef", "request.object.spec");
        String kind = Json.stringOrEmpty(ref, "kind", "request.object.spec.boundObjectRef");
        if (!"Pod".equals(kind)) {
            return deny("NT-2: spec.boundObjectRef must name a Pod, got " + (ref == null ? "none" : "kind \"" + kind
                    + "\""));
        }
        // NT-3
        String podName = Json.stringOrEmpty(ref, "name", "request.object.spec.boundObjectRef");
        String podUid = Json.string(ref, "uid", "request.object.spec.boundObjectRef");
        String target = request.namespace() + "/" + podName;
        Optional<PodFacts> pod = pods.get(request.namespace(), podName, podUid);
        if (pod.isEmpty()) {
            return deny("NT-3: spec.boundObjectRef: pod " + target + (podUid == null ? "" : " with uid " + podUid)
                    + " does not exist");
        }
        // NT-4
        String node = agentPod.get().nodeName();
        if (!node.equals(pod.get().nodeName())) {
            return deny("NT-4: pod " + target + " is " + (pod.get().bound() ? "on node " + pod.get().nodeName()
                    : "not bound to a node") + ", but the agent pod " + agentPod.get().namespacedName()
                    + " is on node " + node);
        }
        // NT-5
        String account = pod.get().serviceAccountName().isEmpty() ? ServiceAccountAdmission.DEFAULT_SERVICE_ACCOUNT
                : pod.get().serviceAccountName();
        if (!account.equals(request.name())) {
            return deny("NT-5: pod " + target + " runs as ServiceAccount " + account + ", not " + request.name());
        }
        return Verdict.allow();
    }

    private String prefix() {
        return "node-scoped token request by " + agent.username() + " denied: ";
    }

    private Verdict deny(String reason) {
        return Verdict.forbidden(prefix() + reason);
    }
}
