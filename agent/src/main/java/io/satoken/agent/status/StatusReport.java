package io.satoken.agent.status;

import com.google.gson.stream.JsonWriter;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.refresh.FileStatus;
import io.satoken.agent.reload.ReloadNotifier;
import io.satoken.agent.reload.ReloadRequest;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The status endpoint's answer, as JSON: the directories the agent keeps, each file's token by its times and never
 * by its value, its next refresh, its last error and the reads seen of it. {@link StatusView} reads it back.
 *
 * <pre>
 * {"node": "...", "time": "...", "rereadCheck": {"enabled": true, "thresholdPercent": 90},
 *  "directories": [{"name": "csi:csi-...", "dir": "/var/lib/kubelet/pods/.../mount",
 *    "pod": {"namespace": "...", "name": "...", "uid": "..."},     (absent for a static projection's directory)
 *    "reload": {"signal": "SIGHUP", "container": "app", "signalledAt": "...", "delivered": true, "problem": null},
 *                                                                  (absent unless the volume asks for a signal)
 *    "files": [{"path": "token", "serviceAccount": "ns/sa", "audiences": ["vault"], "expirationSeconds": 600,
 *      "boundObject": {"kind": "Pod", "name": "...", "uid": "..."}, "state": "ready",
 *      "issuedAt": "...", "expiresAt": "...", "nextRefresh": "...", "lastError": "...", "lastErrorAt": "...",
 *      "lastRead": "...", "hasReader": true, "readCurrentToken": true, "rotatedAt": "...", "notRereadSince": "...",
 *      "expiringUnreadSince": "..."}]}]}
 * </pre>
 * Absent times are null; {@code audiences} is null when the API server's own are used.
 */
public final class StatusReport {

    /**
     * One directory to report, with its pod when it is a published volume, and the reload signal it asks for with
     * the last one sent.
     */
    public record Entry(FileStatus.Directory directory, Optional<PodIdentity> pod, Optional<ReloadRequest> reload,
            Optional<ReloadNotifier.Last> lastSignal) {

        public Entry(FileStatus.Directory directory, Optional<PodIdentity> pod) {
            this(directory, pod, Optional.empty(), Optional.empty());
        }
    }

    private StatusReport() {
    }

    /**
     * @param tracker the read tracker, or null when reads are not watched (rereadCheck off, or no inotify)
     */
    public static String json(String node, Instant now, int thresholdPercent, List<Entry> entries,
            ReadTracker tracker) {
        StringWriter text = new StringWriter();
        try (JsonWriter out = new JsonWriter(text)) {
            out.beginObject();
            out.name("node").value(node);
            out.name("time").value(now.toString());
            out.name("rereadCheck").beginObject().name("enabled").value(tracker != null)
                    .name("thresholdPercent").value(thresholdPercent).endObject();
            out.name("directories").beginArray();
            for (Entry entry : entries) {
                directory(out, entry, tracker);
            }
            out.endArray();
            out.endObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return text.toString();
    }

    private static void directory(JsonWriter out, Entry entry, ReadTracker tracker) throws IOException {
        FileStatus.Directory directory = entry.directory();
        out.beginObject();
        out.name("name").value(directory.dir().name());
        out.name("dir").value(directory.dir().dir().toString());
        if (entry.pod().isPresent()) {
            PodIdentity pod = entry.pod().get();
            out.name("pod").beginObject().name("namespace").value(pod.namespace()).name("name").value(pod.name())
                    .name("uid").value(pod.uid()).name("serviceAccount").value(pod.serviceAccount()).endObject();
        }
        if (entry.reload().isPresent()) {
            ReloadRequest reload = entry.reload().get();
            out.name("reload").beginObject().name("signal").value(reload.signal().name())
                    .name("container").value(reload.container());
            ReloadNotifier.Last last = entry.lastSignal().orElse(null);
            time(out, "signalledAt", last == null ? null : last.at());
            if (last != null) {
                out.name("delivered").value(last.delivered());
                out.name("problem").value(last.problem());
            }
            out.endObject();
        }
        out.name("files").beginArray();
        for (FileStatus file : directory.files()) {
            Optional<ReadTracker.Reads> reads = tracker == null ? Optional.empty()
                    : tracker.reads(directory.dir().dir(), file.projection().path());
            file(out, file, reads);
        }
        out.endArray();
        out.endObject();
    }

    private static void file(JsonWriter out, FileStatus file, Optional<ReadTracker.Reads> reads) throws IOException {
        Projection projection = file.projection();
        TokenKey key = projection.key();
        out.beginObject();
        out.name("path").value(projection.path());
        out.name("serviceAccount").value(key.namespace() + "/" + key.serviceAccount());
        out.name("audiences");
        if (key.audiences() == null) {
            out.nullValue();
        } else {
            out.beginArray();
            for (String audience : key.audiences()) {
                out.value(audience);
            }
            out.endArray();
        }
        out.name("expirationSeconds").value(key.expirationSeconds());
        BoundObjectRef bound = key.boundObject();
        if (!bound.isNone()) {
            out.name("boundObject").beginObject().name("kind").value(bound.kind()).name("name").value(bound.name())
                    .name("uid").value(bound.uid()).endObject();
        }
        out.name("state").value(file.state().name().toLowerCase(Locale.ROOT));
        time(out, "issuedAt", file.issuedAt());
        time(out, "expiresAt", file.expiresAt());
        time(out, "nextRefresh", file.nextAttempt());
        out.name("lastError").value(file.lastError());
        time(out, "lastErrorAt", file.lastErrorAt());
        if (reads.isPresent()) {
            ReadTracker.Reads seen = reads.get();
            time(out, "lastRead", seen.lastRead());
            out.name("hasReader").value(seen.hasReader());
            out.name("readCurrentToken").value(seen.readCurrent());
            time(out, "rotatedAt", seen.rotatedAt());
            time(out, "notRereadSince", seen.notRereadSince());
            time(out, "expiringUnreadSince", seen.expiringUnreadSince());
        }
        out.endObject();
    }

    private static void time(JsonWriter out, String name, Instant at) throws IOException {
        out.name(name);
        if (at == null) {
            out.nullValue();
        } else {
            out.value(at.truncatedTo(ChronoUnit.MILLIS).toString());
        }
    }
}
