package io.satoken.controlplane.admission;

import io.satoken.controlplane.admission.view.InvalidReviewException;

/** One webhook path's decision for one request. */
@FunctionalInterface
public interface Admission {

    /**
     * @throws InvalidReviewException when the request's object is malformed; answered as a denied review
     * @throws InterruptedException when the webhook is stopping or the request's deadline passed
     */
    Verdict review(AdmissionRequest request) throws InvalidReviewException, InterruptedException;
}
