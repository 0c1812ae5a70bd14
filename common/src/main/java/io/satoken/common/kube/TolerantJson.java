package io.satoken.common.kube;

import com.google.gson.Gson;
import io.kubernetes.client.openapi.JSON;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Date;

/**
 * Makes client-java read every object a newer API server sends, in the whole process.
 *
 * <p>client-java's generated models each register a Gson adapter that rejects any field its version does not
 * list, at every level, whatever {@code JSON.setLenientOnJson} says: one field a newer kubelet adds to a pod's
 * status ({@code status.resources} on 1.36) fails every read of that pod. The Gson installed here reads the
 * models by their declared fields alone, so a field this client does not know is skipped wherever it appears,
 * and a field it knows keeps its name, type and client-java's own adapters (dates, bytes; quantities and
 * int-or-strings carry theirs on the class). What is skipped on a read is never written back: the controllers
 * send patches of the fields they own, never a whole object.
 *
 * <p>client-java keeps one Gson per process ({@link JSON} is static), so {@link #install()} serves every
 * {@code ApiClient}, watch and informer; {@link KubeClients} calls it for each client it builds.
 */
public final class TolerantJson {

    /**
     * The wire format of {@code metav1.Time} and {@code metav1.MicroTime} as client-java writes and reads them:
     * seconds, an optional fraction of up to six digits, and {@code Z} (UTC).
     */
    static final DateTimeFormatter KUBERNETES_TIME = new DateTimeFormatterBuilder()
            .parseDefaulting(ChronoField.OFFSET_SECONDS, 0)
            .append(DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss"))
            .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 6, 6, true).optionalEnd()
            .appendLiteral('Z')
            .toFormatter();

    /** Built once, from client-java's own base and the type adapters it registered. */
    private static final Gson GSON = build();

    private TolerantJson() {
    }

    /** Puts the tolerant Gson in client-java's place; calling it again changes nothing. */
    public static void install() {
        if (JSON.getGson() != GSON) {
            JSON.setGson(GSON);
        }
    }

    /** The tolerant Gson itself, for a caller that parses API objects outside an ApiClient. */
    public static Gson gson() {
        return GSON;
    }

    /**
     * client-java's builder (its V1Status pre-processor, and {@code managedFields} left out of every write)
     * with client-java's scalar adapters, and none of the per-model adapters that validate.
     *
     * <p>The scalar adapters are made here, not asked of client-java's own Gson: that Gson tries its 717
     * per-model factories before any adapter, and each factory loads its model class to compare, so one lookup
     * loaded every model of the API (1,434 classes with their factories; BENCHMARKS.md, "Agent footprint").
     */
    private static Gson build() {
        return JSON.createGson()
                .registerTypeAdapter(Date.class, new JSON.DateTypeAdapter())
                .registerTypeAdapter(java.sql.Date.class, new JSON.SqlDateTypeAdapter())
                .registerTypeAdapter(OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter(KUBERNETES_TIME))
                .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
                .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
                .create();
    }
}
