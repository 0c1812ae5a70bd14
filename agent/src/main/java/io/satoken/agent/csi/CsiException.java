package io.satoken.agent.csi;

import io.grpc.Status;

/**
 * A CSI call failed; {@link #code()} is the gRPC status the kubelet gets, and the message is what it shows
 * in the pod's FailedMount Event. Messages name the attribute or the cause, never a token.
 */
public final class CsiException extends Exception {

    private final Status.Code code;

    public CsiException(Status.Code code, String message) {
        super(message);
        this.code = code;
    }

    public CsiException(Status.Code code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public Status.Code code() {
        return code;
    }

    /** The status sent to the caller. */
    public Status status() {
        return Status.fromCode(code).withDescription(getMessage());
    }
}
