package io.satoken.controlplane.controller;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ResourceEventHandler;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** Builds informer event handlers from lambdas, so a controller states only the events it reacts to. */
public final class EventHandlers {

    private EventHandlers() {
    }

    /** Runs {@code onAddOrUpdate} with the new object on add and update, and {@code onDelete} on delete. */
    public static <T extends KubernetesObject> ResourceEventHandler<T> of(Consumer<T> onAddOrUpdate,
            Consumer<T> onDelete) {
        return of(onAddOrUpdate, (before, after) -> onAddOrUpdate.accept(after), onDelete);
    }

    public static <T extends KubernetesObject> ResourceEventHandler<T> of(Consumer<T> onAdd,
            BiConsumer<T, T> onUpdate, Consumer<T> onDelete) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                onAdd.accept(obj);
            }

            @Override
            public void onUpdate(T before, T after) {
                onUpdate.accept(before, after);
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                // client-java hands over the last known object even for a missed delete
                if (obj != null) {
                    onDelete.accept(obj);
                }
            }
        };
    }

    /** A handler for events the controller ignores. */
    public static <T> Consumer<T> ignore() {
        return obj -> { };
    }
}
