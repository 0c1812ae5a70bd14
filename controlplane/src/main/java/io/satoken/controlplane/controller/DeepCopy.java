package io.satoken.controlplane.controller;

import io.kubernetes.client.openapi.JSON;

/**
 * A deep copy of an API object through its JSON form: the listers' objects are shared with the informer
 * and must never be changed in place.
 */
public final class DeepCopy {

    private static final JSON JSON = new JSON();

    private DeepCopy() {
    }

    @SuppressWarnings("unchecked")
    public static <T> T of(T object) {
        return (T) JSON.deserialize(JSON.serialize(object), object.getClass());
    }
}
