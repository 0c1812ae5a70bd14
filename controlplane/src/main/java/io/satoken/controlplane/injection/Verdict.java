package io.satoken.controlplane.injection;

import io.satoken.common.projection.ProjectionAnnotation;

/**
 * What the check makes of a pod that asks for tokens but has no token volume: whether evicting it would bring it back
 * through the webhook, mutated ({@link #evicts()}), and, for its Event, why or why not.
 *
 * @param owner the pod's controller as the message names it ("ReplicaSet web", "no controller")
 * @param detail what the kind needs said besides (the namespace, the HTTP code)
 */
record Verdict(Kind kind, String owner, String detail) {

    enum Kind {
        /** Its controller's pod template asks for tokens: the webhook missed the pod when it was created. */
        MISSED,
        /** No controller, or one that does not create its pods again: only a person can replace it. */
        NOT_RECREATED,
        /** Its controller's pod template does not ask for tokens: the annotation was added to the pod later. */
        ANNOTATED_AFTER_CREATION,
        /** Its controller could not be read (gone, or the check may not): whether the webhook missed it is unknown. */
        OWNER_UNREADABLE,
        /** In a namespace the pod webhook skips, where the check never evicts. */
        SKIPPED_NAMESPACE
    }

    static Verdict missed(String owner) {
        return new Verdict(Kind.MISSED, owner, "");
    }

    static Verdict notRecreated(String owner) {
        return new Verdict(Kind.NOT_RECREATED, owner, "");
    }

    static Verdict annotatedAfterCreation(String owner) {
        return new Verdict(Kind.ANNOTATED_AFTER_CREATION, owner, "");
    }

    static Verdict ownerUnreadable(String owner, String why) {
        return new Verdict(Kind.OWNER_UNREADABLE, owner, why);
    }

    /** @param why why the webhook does not mutate pods in that namespace */
    static Verdict skippedNamespace(String owner, String why) {
        return new Verdict(Kind.SKIPPED_NAMESPACE, owner, why);
    }

    /** True when evicting the pod brings it back from a template that asks for tokens, through the webhook. */
    boolean evicts() {
        return kind == Kind.MISSED;
    }

    /** The rest of the Event's message, after "the pod asks for tokens but has no volume"; {@code evicting}: the flag. */
    String explanation(boolean evicting) {
        return switch (kind) {
            case MISSED -> ": the webhook did not mutate it (it was down or not registered when the pod was created). "
                    + (evicting ? "Evicting it, as PodDisruptionBudgets allow, so that its " + owner + " creates it again."
                            : "Delete it once the webhook runs.");
            case NOT_RECREATED -> ": the webhook did not mutate it (it was down or not registered when the pod was"
                    + " created). Delete it once the webhook runs (" + owner + ": it is not evicted for you).";
            case ANNOTATED_AFTER_CREATION -> ": the annotation was added after the pod was created (the pod template of"
                    + " its " + owner + " has no " + ProjectionAnnotation.NAME + "), and the webhook mutates a pod"
                    + " only when it is created. It is not evicted; to give the pod tokens, put the annotation in the"
                    + " pod template.";
            case OWNER_UNREADABLE -> ": its " + owner + " could not be read (" + detail + "), so whether it was created"
                    + " asking for tokens is not known. It is not evicted.";
            case SKIPPED_NAMESPACE -> ": " + detail + ". The injection check never evicts pods in this namespace.";
        };
    }
}
