package io.satoken.controlplane.admission.view;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A member of untrusted JSON that the control plane reads, declared once, where it is read, and the only way to read
 * one: {@code static final Field.Str NAME = VOLUME.string("name")}, then {@code NAME.read(volume, path)}. The type of
 * the declaration is the type of the read ({@link Str}, {@link Obj}, {@link Items}...); a value of another type is an
 * {@link InvalidReviewException} naming its path, and a missing or {@code null} member reads as absent.
 *
 * <p>Each member is declared on the object that holds it, so the declarations form a tree from a {@link #root()}. The
 * tree under an AdmissionReview's root is what {@code webhook.ReviewReader} keeps ({@link Obj#shape()}): a member that
 * can be read is a member the reader kept. Declarations are static constants, made when their class is initialized;
 * a view's when the review's root is (the root includes the views' roots: {@link Obj#object(String, Obj...)},
 * {@link Obj#objects(String, Obj)}), a rule's when the rule is built, before the webhook serves. A shape derived
 * before a declaration is derived again.
 */
public abstract sealed class Field permits Field.Obj, Field.Items, Field.Str, Field.Bool, Field.Strs, Field.Scalar,
        Field.StringMap, Field.StringListMap {

    /** Counts every declaration, so that a shape derived before the last one is derived again. */
    private static final AtomicLong DECLARATIONS = new AtomicLong();

    private final String name;
    /** What the reader keeps of a value of this kind; null for an object or a list, which derive it. */
    private final ReviewShape kept;

    private Field(String name, ReviewShape kept) {
        this.name = name;
        this.kept = kept;
    }

    /** An object whose place is given where it is included: a review, one item of a list, the object under review. */
    public static Obj root() {
        return new Obj(null, false, List.of());
    }

    /** The member's name; null for a root. */
    public final String name() {
        return name;
    }

    /** What the reader keeps of the member's value. */
    ReviewShape kept() {
        return kept;
    }

    /** An object, read as a whole ({@link #read}) or member by member (the members declared on it). */
    public static final class Obj extends Field {

        private final boolean whole;
        private final List<Obj> included;
        private final List<Field> declared = new CopyOnWriteArrayList<>();
        private volatile Derived derived;

        private record Derived(long declarations, ReviewShape shape) {
        }

        private Obj(String name, boolean whole, List<Obj> included) {
            super(name, null);
            this.whole = whole;
            this.included = included;
        }

        /** Declares the string member {@code name}. */
        public Str string(String name) {
            return declare(new Str(name));
        }

        /** Declares the boolean member {@code name}. */
        public Bool bool(String name) {
            return declare(new Bool(name));
        }

        /** Declares the member {@code name}, a list of strings. */
        public Strs strings(String name) {
            return declare(new Strs(name));
        }

        /** Declares the member {@code name}, a scalar read as the JSON value it is: a number the reader checks. */
        public Scalar scalar(String name) {
            return declare(new Scalar(name));
        }

        /** Declares the object member {@code name}; the members of {@code included} (roots) are its members too. */
        public Obj object(String name, Obj... included) {
            return declare(new Obj(name, false, List.of(included)));
        }

        /** Declares the object member {@code name}, kept whole with whatever it holds: one compared as a whole. */
        public Obj whole(String name) {
            return declare(new Obj(name, true, List.of()));
        }

        /** Declares the member {@code name}, a list of objects, whose members are declared on {@link Items#item()}. */
        public Items objects(String name) {
            return objects(name, root());
        }

        /** Declares the member {@code name}, a list of objects whose members are declared on {@code item}, a root. */
        public Items objects(String name, Obj item) {
            return declare(new Items(name, item));
        }

        /** Declares the member {@code name}, an object whose every member is a string. */
        public StringMap stringMap(String name) {
            return declare(new StringMap(name));
        }

        /** Declares the member {@code name}, an object whose every member is a list of strings. */
        public StringListMap stringListMap(String name) {
            return declare(new StringListMap(name));
        }

        /** The object, or null when absent; {@code path} is where its parent is, for messages. */
        public JsonObject read(JsonObject parent, String path) throws InvalidReviewException {
            return Json.object(parent, name(), path);
        }

        /** Whether the object is there. */
        public boolean present(JsonObject parent, String path) throws InvalidReviewException {
            return read(parent, path) != null;
        }

        /** The members declared on this object and on the roots it includes. */
        public List<Field> members() {
            List<Field> members = new ArrayList<>(declared);
            for (Obj root : included) {
                members.addAll(root.members());
            }
            return members;
        }

        /** Whether the reader keeps the object whole rather than member by member. */
        public boolean keptWhole() {
            return whole;
        }

        /**
         * What the reader keeps of an object read from this root: every member declared under it, in the shape its
         * declarations want, derived again after any later declaration.
         */
        public ReviewShape shape() {
            long declarations = DECLARATIONS.get();
            Derived last = derived;
            if (last == null || last.declarations() != declarations) {
                last = new Derived(declarations, kept());
                derived = last;
            }
            return last.shape();
        }

        @Override
        ReviewShape kept() {
            if (whole) {
                return ReviewShape.WHOLE;
            }
            Map<String, ReviewShape> named = new HashMap<>();
            for (Field member : members()) {
                named.merge(member.name(), member.kept(), ReviewShape::union);
            }
            return new ReviewShape.Members(Map.copyOf(named));
        }

        private <F extends Field> F declare(F field) {
            declared.add(field);
            DECLARATIONS.incrementAndGet();
            return field;
        }
    }

    /** A list of objects. */
    public static final class Items extends Field {

        private final Obj item;

        private Items(String name, Obj item) {
            super(name, null);
            this.item = item;
        }

        /** The root each item is read from: its members are declared on it. */
        public Obj item() {
            return item;
        }

        /** The objects of the list; empty when absent. */
        public List<JsonObject> read(JsonObject parent, String path) throws InvalidReviewException {
            return Json.objects(parent, name(), path);
        }

        @Override
        ReviewShape kept() {
            return new ReviewShape.Items(item.kept());
        }
    }

    /** A string. */
    public static final class Str extends Field {

        private Str(String name) {
            super(name, ReviewShape.SCALAR);
        }

        /** The string, or null when absent. */
        public String read(JsonObject parent, String path) throws InvalidReviewException {
            return Json.string(parent, name(), path);
        }

        /** The string, or "" when absent: Go's zero value, which the upstream rules test for. */
        public String readOrEmpty(JsonObject parent, String path) throws InvalidReviewException {
            return Json.stringOrEmpty(parent, name(), path);
        }

        /** The string, or null when absent or not a string: for what is read before the review is known valid. */
        public String readIfString(JsonObject parent) {
            JsonElement value = parent == null ? null : parent.get(name());
            return value != null && value.isJsonPrimitive() && value.getAsJsonPrimitive().isString()
                    ? value.getAsString() : null;
        }

        /** Whether {@code parent} has the member at all, {@code null} or of any type. */
        public boolean has(JsonObject parent) {
            return parent != null && parent.has(name());
        }

    }

    /** A boolean. */
    public static final class Bool extends Field {

        private Bool(String name) {
            super(name, ReviewShape.SCALAR);
        }

        /** The boolean, or null when absent. */
        public Boolean read(JsonObject parent, String path) throws InvalidReviewException {
            return Json.bool(parent, name(), path);
        }

    }

    /** A list of strings. */
    public static final class Strs extends Field {

        private Strs(String name) {
            super(name, new ReviewShape.Items(ReviewShape.SCALAR));
        }

        /** The strings; empty when absent. */
        public List<String> read(JsonObject parent, String path) throws InvalidReviewException {
            return Json.strings(parent, name(), path);
        }

    }

    /** A number, or any other scalar, read as it is for the reader to check. */
    public static final class Scalar extends Field {

        private Scalar(String name) {
            super(name, ReviewShape.SCALAR);
        }

        /** The value, or null when absent or {@code null}. */
        public JsonElement read(JsonObject parent) {
            JsonElement value = parent == null ? null : parent.get(name());
            return value == null || value.isJsonNull() ? null : value;
        }

    }

    /** An object whose every member is a string, in their order. */
    public static final class StringMap extends Field {

        private StringMap(String name) {
            super(name, new ReviewShape.Members(Map.of(), ReviewShape.SCALAR));
        }

        /** The members; empty when absent. */
        public Map<String, String> read(JsonObject parent, String path) throws InvalidReviewException {
            JsonObject map = Json.object(parent, name(), path);
            Map<String, String> values = new LinkedHashMap<>();
            if (map != null) {
                for (String key : map.keySet()) {
                    values.put(key, Json.string(map, key, path + "." + name()));
                }
            }
            return values;
        }

    }

    /** An object whose every member is a list of strings, in their order. */
    public static final class StringListMap extends Field {

        private StringListMap(String name) {
            super(name, new ReviewShape.Members(Map.of(), new ReviewShape.Items(ReviewShape.SCALAR)));
        }

        /** The members; empty when absent. */
        public Map<String, List<String>> read(JsonObject parent, String path) throws InvalidReviewException {
            JsonObject map = Json.object(parent, name(), path);
            Map<String, List<String>> values = new LinkedHashMap<>();
            if (map != null) {
                for (String key : map.keySet()) {
                    values.put(key, Json.strings(map, key, path + "." + name()));
                }
            }
            return values;
        }

    }
}
