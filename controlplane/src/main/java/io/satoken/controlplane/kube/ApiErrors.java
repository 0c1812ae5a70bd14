package io.satoken.controlplane.kube;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;

/**
 * Reads the API server's error answers the way upstream's {@code apierrors.Is*} helpers do. To describe one in a
 * message or a log line, use {@link io.satoken.common.kube.Failures#said}.
 */
public final class ApiErrors {

    /** The status cause type the API server gives when a namespace is being deleted. */
    public static final String NAMESPACE_TERMINATING_CAUSE = "NamespaceTerminating";

    private ApiErrors() {
    }

    public static boolean isNotFound(ApiException e) {
        return e.getCode() == 404;
    }

    public static boolean isConflict(ApiException e) {
        return e.getCode() == 409 && !"AlreadyExists".equals(reason(e));
    }

    public static boolean isAlreadyExists(ApiException e) {
        return e.getCode() == 409 && "AlreadyExists".equals(reason(e));
    }

    public static boolean isUnsupportedMediaType(ApiException e) {
        return e.getCode() == 415;
    }

    /** True when the Status's details carry a cause of {@code type} (e.g. {@value #NAMESPACE_TERMINATING_CAUSE}). */
    public static boolean hasCause(ApiException e, String type) {
        JsonElement status = status(e);
        if (status == null || !status.isJsonObject()) {
            return false;
        }
        JsonElement details = status.getAsJsonObject().get("details");
        if (details == null || !details.isJsonObject()) {
            return false;
        }
        JsonElement causes = details.getAsJsonObject().get("causes");
        if (causes == null || !causes.isJsonArray()) {
            return false;
        }
        for (JsonElement cause : causes.getAsJsonArray()) {
            if (cause.isJsonObject() && cause.getAsJsonObject().has("reason")
                    && type.equals(cause.getAsJsonObject().get("reason").getAsString())) {
                return true;
            }
        }
        return false;
    }

    private static String reason(ApiException e) {
        JsonElement status = status(e);
        if (status == null || !status.isJsonObject() || !status.getAsJsonObject().has("reason")) {
            return "";
        }
        return status.getAsJsonObject().get("reason").getAsString();
    }

    private static JsonElement status(ApiException e) {
        String body = e.getResponseBody();
        if (body == null || body.isBlank()) {
            return null;
        }
        try {
            return JsonParser.parseString(body);
        } catch (RuntimeException notJson) {
            return null;
        }
    }
}
