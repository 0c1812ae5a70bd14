package io.satoken.agent.token;

import java.util.Objects;

/**
 * The object a token is bound to ({@code spec.boundObjectRef} of a TokenRequest). A token bound to a
 * Pod stops being valid when that Pod is deleted.
 *
 * <p>TM-1: a missing reference counts as the all-empty reference, see {@link #NONE}.
 */
public record BoundObjectRef(String apiVersion, String kind, String name, String uid) {

    /** The all-empty reference that stands for "not bound". */
    public static final BoundObjectRef NONE = new BoundObjectRef("", "", "", "");

    public BoundObjectRef {
        apiVersion = Objects.requireNonNullElse(apiVersion, "");
        kind = Objects.requireNonNullElse(kind, "");
        name = Objects.requireNonNullElse(name, "");
        uid = Objects.requireNonNullElse(uid, "");
    }

    /** A reference to a Pod, as kubelet sends it for projected tokens (PV-14). */
    public static BoundObjectRef pod(String name, String uid) {
        return new BoundObjectRef("v1", "Pod", name, uid);
    }

    public boolean isNone() {
        return equals(NONE);
    }

    public boolean isPod() {
        return "Pod".equals(kind);
    }
}
