package io.satoken.controlplane.admission.view;

import java.util.HashMap;
import java.util.Map;

/**
 * What {@code webhook.ReviewReader} keeps of an AdmissionReview: derived from the {@link Field}s the views and the
 * rules declare ({@link Field.Obj#shape()}), never written by hand, so every member a rule reads is kept and nothing
 * else is.
 */
public sealed interface ReviewShape {

    /** An object: the members {@code named} are kept in their shapes; the others in {@code others}, or skipped if null. */
    record Members(Map<String, ReviewShape> named, ReviewShape others) implements ReviewShape {
        Members(Map<String, ReviewShape> named) {
            this(named, null);
        }

        /** The shape of member {@code name}, or null when it is skipped. */
        public ReviewShape member(String name) {
            ReviewShape shape = named.get(name);
            return shape != null ? shape : others;
        }
    }

    /** A list whose items are kept in {@code item}'s shape. */
    record Items(ReviewShape item) implements ReviewShape {
    }

    /** A string, number, boolean or null, kept as it is. */
    record Scalar() implements ReviewShape {
    }

    /** A value kept whole, whatever it holds: one a rule compares as a whole. */
    record Whole() implements ReviewShape {
    }

    ReviewShape SCALAR = new Scalar();
    ReviewShape WHOLE = new Whole();

    /**
     * What keeps both {@code a} and {@code b}: one member declared twice (a pod's {@code spec} and a TokenRequest's, a
     * volume tested for and read) is kept as both declarations want it.
     *
     * @throws IllegalStateException when they disagree on what the value is (a string here, a list there)
     */
    static ReviewShape union(ReviewShape a, ReviewShape b) {
        if (a == null || b == null) {
            return a == null ? b : a;
        }
        if (a.equals(b)) {
            return a;
        }
        if (a instanceof Whole || b instanceof Whole) {
            return WHOLE;
        }
        if (a instanceof Members x && b instanceof Members y) {
            Map<String, ReviewShape> named = new HashMap<>(x.named());
            y.named().forEach((name, shape) -> named.merge(name, shape, ReviewShape::union));
            return new Members(Map.copyOf(named), union(x.others(), y.others()));
        }
        if (a instanceof Items x && b instanceof Items y) {
            return new Items(union(x.item(), y.item()));
        }
        throw new IllegalStateException("one member declared as two kinds of value: " + a + " and " + b);
    }
}
