package io.satoken.controlplane.admission.view;

/**
 * An AdmissionReview that cannot be reviewed: not JSON, not {@code admission.k8s.io/v1}, or a field of
 * the wrong type. The message names the field and the rule, e.g.
 * {@code request.object.spec.containers: must be a list, got a string}; the webhook answers it as a
 * denied review, never as a server error.
 */
public final class InvalidReviewException extends Exception {
    private static final long serialVersionUID = 1L;

    public InvalidReviewException(String message) {
        super(message);
    }
}
