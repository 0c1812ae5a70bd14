package io.satoken.common.kube;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.kubernetes.client.openapi.JSON;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.Date;
import java.util.List;

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
     * with the scalar adapters its static Gson holds, and none of the per-model adapters that validate.
     */
    private static Gson build() {
        Gson clientJava = JSON.getGson();
        GsonBuilder builder = JSON.createGson();
        for (Class<?> scalar : List.of(Date.class, java.sql.Date.class, OffsetDateTime.class, LocalDate.class,
                byte[].class)) {
            builder.registerTypeAdapter(scalar, clientJava.getAdapter(scalar));
        }
        return builder.create();
    }
}
