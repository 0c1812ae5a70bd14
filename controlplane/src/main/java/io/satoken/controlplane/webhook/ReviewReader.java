package io.satoken.controlplane.webhook;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.admission.view.ReviewShape;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Reads an AdmissionReview's bytes, streaming, into the part of it the rules read and nothing more: the
 * {@link ReviewShape} derived from the fields declared under {@link AdmissionReviews#REVIEW}; what no rule reads is checked as JSON and skipped. A value of another type than its shape expects (a string
 * where a list should be) is kept as an empty value of its own type, so the rules still name the field and the type
 * it has, at no cost.
 *
 * <p>What the kept part will hold in memory is counted as it is built, with the sizes of Gson's objects on a 64-bit
 * JVM with compressed references ({@link Cost}), and bounded twice:
 * <ol>
 *   <li>by the body: more than {@value #RETAINED_MULTIPLE} times the body's size plus {@value #RETAINED_ALLOWANCE}
 *       bytes is refused as an amplification (400), whatever memory is free: nested empty lists, say, where a rule
 *       keeps a value whole. Every byte of a real pod is worth keeping only in the few fields the rules read;</li>
 *   <li>by the {@link Charge}: every {@value #CHARGE_STEP} bytes counted are claimed from the webhook's body budget,
 *       in the name of the request's client, so bodies and their parses share one bound; a claim refused ends the
 *       read as {@link ReviewOverloadException} (503).</li>
 * </ol>
 * Nesting deeper than {@value #MAX_DEPTH} levels is refused (400) wherever it is, skipped or kept: no admission
 * rule reads that deep, and a real pod is nested about 20 levels at most (its managed fields).
 */
final class ReviewReader {

    static final int MAX_DEPTH = 64;
    static final int RETAINED_MULTIPLE = 8;
    static final long RETAINED_ALLOWANCE = 256 * 1024;
    static final long CHARGE_STEP = 64 * 1024;

    /** Claims memory for what a read keeps; false when there is none to claim. */
    @FunctionalInterface
    interface Charge {
        boolean take(long bytes);

        /** For reads outside the server: nothing is claimed. */
        Charge NONE = bytes -> true;
    }

    /** Approximate sizes, in bytes, of what Gson keeps (64-bit JVM, compressed references, 8-byte alignment). */
    static final class Cost {
        /** JsonObject, its LinkedTreeMap and the map's header node. */
        static final long OBJECT = 112;
        /** One member of an object: the map's node and the key's String and bytes, without the key's characters. */
        static final long MEMBER = 96;
        /** JsonArray and its ArrayList, empty. */
        static final long ARRAY = 40;
        /** The ArrayList's first array, of ten slots, made at the first item. */
        static final long FIRST_ITEMS = 56;
        /** One item's slot past the first ten, with the list's growth by half. */
        static final long ITEM = 6;
        /** JsonPrimitive of a String, the String and its array, without the characters. */
        static final long STRING = 64;
        /** JsonPrimitive of a number as Gson keeps it (a lazily parsed String), without the digits. */
        static final long NUMBER = 80;
        /** JsonPrimitive of a boolean, or of a shared empty value standing in for one of the wrong type. */
        static final long PRIMITIVE = 16;

        private Cost() {
        }

        /** The bytes of a String's characters: one each when all are Latin-1, else two. */
        static long characters(String s) {
            for (int i = 0; i < s.length(); i++) {
                if (s.charAt(i) > 0xFF) {
                    return 2L * s.length();
                }
            }
            return s.length();
        }
    }

    /** A review's kept part, and the bytes of memory it was counted to hold. */
    record Read(JsonObject review, long retainedBytes) {
    }

    private final JsonReader in;
    private final long bodyBytes;
    private final long maxRetained;
    private final Charge charge;
    private long retained;
    private long charged;

    private ReviewReader(byte[] body, Charge charge) {
        this.in = new JsonReader(new InputStreamReader(new ByteArrayInputStream(body), StandardCharsets.UTF_8));
        in.setStrictness(Strictness.STRICT);
        in.setNestingLimit(MAX_DEPTH);
        this.bodyBytes = body.length;
        this.maxRetained = RETAINED_MULTIPLE * bodyBytes + RETAINED_ALLOWANCE;
        this.charge = charge;
    }

    /**
     * The review's kept part.
     *
     * @throws InvalidReviewException when the body is empty, not one JSON object, nested too deep, or amplifies
     * @throws ReviewOverloadException when {@code charge} refuses the memory the kept part needs
     */
    static Read read(byte[] body, Charge charge) throws InvalidReviewException, ReviewOverloadException {
        if (body.length == 0) {
            throw new InvalidReviewException("AdmissionReview: the request body is empty");
        }
        ReviewReader reader = new ReviewReader(body, charge);
        try (reader.in) {
            JsonObject review = reader.review();
            reader.chargeAll();
            return new Read(review, reader.retained);
        } catch (JsonParseException e) {
            // Gson wraps the reader's own exception; its message is the useful one
            throw notJson(e.getCause() instanceof Exception cause ? cause : e);
        } catch (IOException | IllegalStateException | NumberFormatException e) {
            throw notJson(e);
        }
    }

    /** Reads the whole document, which must be one object; {@code [] } and {@code 7} are skipped, not built. */
    private JsonObject review() throws IOException, InvalidReviewException, ReviewOverloadException {
        JsonToken first = in.peek();
        JsonElement root;
        if (first == JsonToken.BEGIN_OBJECT) {
            root = value(AdmissionReviews.REVIEW.shape());
        } else {
            in.skipValue();
            root = null;
        }
        if (!atEnd()) {
            throw new InvalidReviewException("AdmissionReview: not JSON: data after the end of the document");
        }
        if (root == null) {
            throw new InvalidReviewException("AdmissionReview: must be a JSON object");
        }
        return root.getAsJsonObject();
    }

    private boolean atEnd() {
        try {
            return in.peek() == JsonToken.END_DOCUMENT;
        } catch (IOException | RuntimeException e) {
            return false; // strict: a second value is malformed
        }
    }

    /** The next value, kept as {@code shape} says. */
    private JsonElement value(ReviewShape shape) throws IOException, InvalidReviewException, ReviewOverloadException {
        switch (in.peek()) {
            case BEGIN_OBJECT -> {
                if (!(shape instanceof ReviewShape.Members) && !(shape instanceof ReviewShape.Whole)) {
                    in.skipValue();
                    count(Cost.OBJECT);
                    return new JsonObject();
                }
                return object(shape);
            }
            case BEGIN_ARRAY -> {
                if (!(shape instanceof ReviewShape.Items) && !(shape instanceof ReviewShape.Whole)) {
                    in.skipValue();
                    count(Cost.ARRAY);
                    return new JsonArray();
                }
                return array(shape);
            }
            case STRING -> {
                if (shape instanceof ReviewShape.Members || shape instanceof ReviewShape.Items) {
                    in.skipValue();
                    count(Cost.PRIMITIVE);
                    return new JsonPrimitive("");
                }
                String text = in.nextString();
                count(Cost.STRING + Cost.characters(text));
                return new JsonPrimitive(text);
            }
            case NUMBER -> {
                if (shape instanceof ReviewShape.Members || shape instanceof ReviewShape.Items) {
                    in.skipValue();
                    count(Cost.PRIMITIVE);
                    return new JsonPrimitive(0);
                }
                JsonElement number = JsonParser.parseReader(in); // as Gson keeps it: lazily parsed
                count(Cost.NUMBER + number.getAsString().length());
                return number;
            }
            case BOOLEAN -> {
                count(Cost.PRIMITIVE);
                return new JsonPrimitive(in.nextBoolean());
            }
            case NULL -> {
                in.nextNull();
                return JsonNull.INSTANCE;
            }
            default -> throw new IllegalStateException("unexpected " + in.peek() + " at " + in.getPath());
        }
    }

    private JsonObject object(ReviewShape shape) throws IOException, InvalidReviewException, ReviewOverloadException {
        JsonObject object = new JsonObject();
        count(Cost.OBJECT);
        in.beginObject();
        while (in.hasNext()) {
            String name = in.nextName();
            ReviewShape member = shape instanceof ReviewShape.Members members ? members.member(name) : shape;
            if (member == null) {
                in.skipValue();
            } else {
                count(Cost.MEMBER + Cost.characters(name));
                object.add(name, value(member));
            }
        }
        in.endObject();
        return object;
    }

    private JsonArray array(ReviewShape shape) throws IOException, InvalidReviewException, ReviewOverloadException {
        JsonArray array = new JsonArray();
        count(Cost.ARRAY);
        ReviewShape item = shape instanceof ReviewShape.Items items ? items.item() : shape;
        in.beginArray();
        for (int n = 0; in.hasNext(); n++) {
            count(n == 0 ? Cost.FIRST_ITEMS : n >= 10 ? Cost.ITEM : 0);
            array.add(value(item));
        }
        in.endArray();
        return array;
    }

    /** Counts {@code bytes} more kept; refuses the read when they amplify the body or cannot be claimed. */
    private void count(long bytes) throws InvalidReviewException, ReviewOverloadException {
        retained += bytes;
        if (retained > maxRetained) {
            throw new InvalidReviewException("AdmissionReview: the fields the admission rules read would take more "
                    + "than " + maxRetained + " bytes of memory for a body of " + bodyBytes + " bytes (at most "
                    + RETAINED_MULTIPLE + " times the body plus " + RETAINED_ALLOWANCE + "), at " + in.getPath()
                    + "; refused as an amplification");
        }
        if (retained - charged >= CHARGE_STEP) {
            chargeAll();
        }
    }

    private void chargeAll() throws ReviewOverloadException {
        long owed = retained - charged;
        if (owed <= 0) {
            return;
        }
        if (!charge.take(owed)) {
            throw new ReviewOverloadException("the webhook's memory budget for reviews is full; this review needs "
                    + retained + " bytes for the fields the admission rules read");
        }
        charged = retained;
    }

    private static InvalidReviewException notJson(Exception e) {
        String message = e.getMessage() == null ? "malformed" : e.getMessage();
        if (message.startsWith("Nesting limit")) {
            int path = message.indexOf(" path ");
            return new InvalidReviewException("AdmissionReview: nested more than " + MAX_DEPTH + " levels deep"
                    + (path < 0 ? "" : " at " + abbreviated(message.substring(path + 6)))
                    + "; no admission rule reads that deep");
        }
        int newline = message.indexOf('\n');
        String line = (newline < 0 ? message : message.substring(0, newline))
                .replace("Use JsonReader.setStrictness(Strictness.LENIENT) to accept malformed JSON", "malformed JSON");
        return new InvalidReviewException("AdmissionReview: not JSON: " + abbreviated(line));
    }

    private static String abbreviated(String text) {
        return text.length() > 200 ? text.substring(0, 200) + "…" : text;
    }
}
