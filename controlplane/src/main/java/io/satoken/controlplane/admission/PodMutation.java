package io.satoken.controlplane.admission;

import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.Json;
import io.satoken.controlplane.admission.view.PodPatch;
import java.util.Optional;

/**
 * {@code /mutate/pods}: ServiceAccount admission, then agent token injection, answered as one JSONPatch.
 * A denial by either ends the review. The request's object is changed as the patch would change it. A pod
 * created with a token volume mounted through {@code subPath} is admitted with a warning ({@link SubPathWarnings}).
 */
public final class PodMutation implements Admission {

    private final ServiceAccountAdmission serviceAccounts;
    private final AgentTokenInjection agentTokens;

    public PodMutation(ServiceAccountAdmission serviceAccounts, AgentTokenInjection agentTokens) {
        this.serviceAccounts = serviceAccounts;
        this.agentTokens = agentTokens;
    }

    @Override
    public Verdict review(AdmissionRequest request) throws InvalidReviewException, InterruptedException {
        // AD-1: only pods and their ephemeralcontainers, with a Pod object
        String sub = request.subResource();
        if (!request.resource().isCore("pods") || !(sub.isEmpty() || sub.equals("ephemeralcontainers"))
                || request.object() == null || !"Pod".equals(Json.string(request.object(), "kind", "request.object"))) {
            return Verdict.allow();
        }
        PodPatch pod = new PodPatch(request.object());
        Optional<Verdict.Denied> denied = serviceAccounts.admit(request, pod);
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
