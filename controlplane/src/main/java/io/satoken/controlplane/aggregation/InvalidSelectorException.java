package io.satoken.controlplane.aggregation;

/** An aggregation rule's selector that Kubernetes would reject; the message says what and where. */
final class InvalidSelectorException extends Exception {

    private static final long serialVersionUID = 1L;

    InvalidSelectorException(String message) {
        super(message);
    }
}
