package io.satoken.agent.pods;

import io.kubernetes.client.openapi.models.V1Pod;

/** Where the agent's Warning Events about a pod go. Messages must never hold a token. */
@FunctionalInterface
public interface PodEventSink {

    /** A TokenRequest for one of the pod's projections failed. */
    String TOKEN_REQUEST_FAILED = "TokenRequestFailed";
    /** A token was issued in the future of the node's clock. */
    String TOKEN_CLOCK_SKEW = "TokenClockSkew";
    /** The pod read a token file once, and has not opened the file since the token in it rotated. */
    String TOKEN_NOT_REREAD = "TokenNotReread";
    /** The pod still holds a token about to expire and has not opened the file since that token was replaced. */
    String TOKEN_EXPIRING_UNREAD = "TokenExpiringUnread";

    void warning(V1Pod pod, String reason, String message);
}
