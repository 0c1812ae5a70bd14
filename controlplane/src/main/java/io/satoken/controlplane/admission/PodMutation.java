package io.satoken.controlplane.admission;

import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Field;
import io.satoken.controlplane.admission.view.PodPatch;
import io.satoken.controlplane.admission.view.PodView;
import java.util.Optional;

/**
 * {@code /mutate/pods}: ServiceAccount admission, then agent token injection, answered as one JSONPatch.
 * A denial by either ends the review. {@code /mutate/pods/agent-tokens} is the injection alone
 * ({@link #agentTokensOnly}), for an API server whose own ServiceAccount plugin has already admitted the pod. The request's object is changed as the patch would change it. A pod
 * created with a token volume mounted through {@code subPath} is admitted with a warning ({@link SubPathWarnings}).
 */
public final class PodMutation implements Admission {

    private static final Field.Str KIND = PodView.POD.string("kind");

    /** Null on the injection-only path. */
    private final ServiceAccountAdmission serviceAccounts;
    private final AgentTokenInjection agentTokens;

    public PodMutation(ServiceAccountAdmission serviceAccounts, AgentTokenInjection agentTokens) {
        this.serviceAccounts = java.util.Objects.requireNonNull(serviceAccounts, "serviceAccounts");
        this.agentTokens = agentTokens;
    }

    private PodMutation(AgentTokenInjection agentTokens) {
        this.serviceAccounts = null;
        this.agentTokens = agentTokens;
    }

    /**
     * The agent token injection without ServiceAccount admission: the pod is neither defaulted nor checked
     * against its ServiceAccount, which kube-apiserver's own plugin has done before any webhook is called.
     */
    public static PodMutation agentTokensOnly(AgentTokenInjection agentTokens) {
        return new PodMutation(agentTokens);
    }

    @Override
    public Verdict review(AdmissionRequest request) throws InvalidReviewException, InterruptedException {
        // AD-1: only pods and their ephemeralcontainers, with a Pod object
        String sub = request.subResource();
        if (!request.resource().isCore("pods") || !(sub.isEmpty() || sub.equals("ephemeralcontainers"))
                || request.object() == null || !"Pod".equals(KIND.read(request.object(), "request.object"))) {
            return Verdict.allow();
        }
        PodPatch pod = new PodPatch(request.object());
        Optional<Verdict.Denied> denied = serviceAccounts == null ? Optional.empty() : serviceAccounts.admit(request, pod);
        if (denied.isEmpty()) {
            denied = agentTokens.admit(request, pod);
        }
        if (denied.isPresent()) {
            return denied.get();
        }
        Verdict verdict = pod.changed() ? Verdict.patch(pod.operations()) : Verdict.allow();
        return request.isCreate() && sub.isEmpty() ? verdict.withWarnings(SubPathWarnings.of(pod.view())) : verdict;
    }
}
