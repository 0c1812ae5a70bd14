package io.satoken.controlplane.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import okio.Buffer;

/**
 * Checks a controller's write on a real API server: what it sends (the method and body of every write request,
 * recorded on the wire) and what it changes (the object's whole JSON as the server holds it, read raw, before and
 * after, so that a field no client-java model knows is compared too).
 */
public final class OwnedWrites {

    /** One write request as sent. */
    public record Sent(String method, String path, String contentType, JsonObject body) {
    }

    private final List<Sent> sent = new ArrayList<>();
    private final ApiClient client;

    /** Wraps {@code client}'s HTTP client with a recorder of write requests; use {@link #client()} to write. */
    public OwnedWrites(ApiClient client) {
        this.client = client;
        client.setHttpClient(client.getHttpClient().newBuilder().addInterceptor(this::record).build());
    }

    public ApiClient client() {
        return client;
    }

    public synchronized List<Sent> sent() {
        return List.copyOf(sent);
    }

    private Response record(Interceptor.Chain chain) throws IOException {
        Request request = chain.request();
        if (!request.method().equals("GET") && request.body() != null) {
            Buffer buffer = new Buffer();
            request.body().writeTo(buffer);
            String text = buffer.readUtf8();
            JsonElement body = text.isEmpty() ? new JsonObject() : JsonParser.parseString(text);
            synchronized (this) {
                sent.add(new Sent(request.method(), request.url().encodedPath(),
                        String.valueOf(request.body().contentType()), body.isJsonObject() ? body.getAsJsonObject()
                                : new JsonObject()));
            }
        }
        return chain.proceed(request);
    }

    /** The object at {@code path} (e.g. {@code /api/v1/namespaces/ns/secrets/s}) as the server holds it, raw. */
    public static JsonObject raw(ApiClient client, String path) throws ApiException {
        Map<String, String> headers = new HashMap<>(Map.of("Accept", "application/json"));
        okhttp3.Call call = client.buildCall(client.getBasePath(), path, "GET", List.of(), List.of(), null, headers,
                new HashMap<>(), new HashMap<>(), new String[] {"BearerToken"}, null);
        return client.<JsonObject>execute(call, JsonObject.class).getData();
    }

    /** The top-level members and {@code metadata} members a body sets; what a write claims to own. */
    public static Set<String> members(JsonObject body) {
        Set<String> names = new TreeSet<>();
        for (String name : body.keySet()) {
            if (name.equals("metadata") && body.get(name).isJsonObject()) {
                body.getAsJsonObject(name).keySet().forEach(m -> names.add("metadata." + m));
            } else {
                names.add(name);
            }
        }
        return names;
    }

    /**
     * Paths (dotted) the server's JSON has that client-java's model of {@code type} does not keep: read into the
     * model and written out again, they are gone. A PUT of the model would erase them on the server.
     */
    public static Set<String> unknownToModel(JsonObject raw, Class<?> type) {
        JsonElement roundTrip = JsonParser.parseString(JSON.serialize(JSON.deserialize(raw.toString(), type)));
        Set<String> missing = new TreeSet<>();
        collectMissing("", raw, roundTrip, missing);
        missing.removeIf(p -> p.startsWith("metadata.managedFields")); // client-java never sends them, by design
        return missing;
    }

    private static void collectMissing(String at, JsonElement raw, JsonElement kept, Set<String> missing) {
        if (raw.isJsonObject()) {
            JsonObject keptObject = kept != null && kept.isJsonObject() ? kept.getAsJsonObject() : new JsonObject();
            for (String name : raw.getAsJsonObject().keySet()) {
                String path = at.isEmpty() ? name : at + "." + name;
                if (!keptObject.has(name)) {
                    missing.add(path);
                } else {
                    collectMissing(path, raw.getAsJsonObject().get(name), keptObject.get(name), missing);
                }
            }
        } else if (raw.isJsonArray() && kept != null && kept.isJsonArray()) {
            for (int i = 0; i < raw.getAsJsonArray().size() && i < kept.getAsJsonArray().size(); i++) {
                collectMissing(at + "[" + i + "]", raw.getAsJsonArray().get(i), kept.getAsJsonArray().get(i), missing);
            }
        }
    }

    /**
     * Asserts that {@code after} equals {@code before} except for the top-level members and metadata members
     * named in {@code changed} (dotted, e.g. {@code data}, {@code metadata.annotations}), and the server's own
     * bookkeeping ({@code metadata.resourceVersion}, {@code metadata.managedFields}).
     */
    public static void assertUnchangedExcept(JsonObject before, JsonObject after, Set<String> changed) {
        JsonObject b = without(before, changed);
        JsonObject a = without(after, changed);
        assertThat(a).as("the object apart from %s", changed).isEqualTo(b);
    }

    private static JsonObject without(JsonObject object, Set<String> changed) {
        JsonObject copy = object.deepCopy();
        JsonObject metadata = copy.getAsJsonObject("metadata");
        metadata.remove("resourceVersion");
        metadata.remove("managedFields");
        for (String path : changed) {
            if (path.startsWith("metadata.")) {
                metadata.remove(path.substring("metadata.".length()));
            } else {
                copy.remove(path);
            }
        }
        return copy;
    }
}
