package io.satoken.controlplane.webhook;

/** A review the webhook has no memory for now: answered as unavailable (503), for the API server to call again. */
final class ReviewOverloadException extends Exception {

    private static final long serialVersionUID = 1L;

    ReviewOverloadException(String message) {
        super(message);
    }
}
