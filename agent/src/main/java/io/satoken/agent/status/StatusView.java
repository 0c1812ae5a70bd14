package io.satoken.agent.status;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.common.text.DurationText;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reads a {@link StatusReport} back: keeps the directories a target names, and prints them for a person. The JSON
 * holds no token, so neither does anything made from it.
 */
public final class StatusView {

    private final JsonObject report;

    private StatusView(JsonObject report) {
        this.report = report;
    }

    /** @throws IllegalArgumentException when the text is not a status report */
    public static StatusView parse(String json) {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(json);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("the status endpoint's answer is not JSON: " + e.getMessage(), e);
        }
        if (!parsed.isJsonObject() || !parsed.getAsJsonObject().has("directories")) {
            throw new IllegalArgumentException("the status endpoint's answer has no \"directories\"");
        }
        return new StatusView(parsed.getAsJsonObject());
    }

    /**
     * Only the directories of a static projection at {@code path}: the directory itself, or one of its files.
     */
    public StatusView staticAt(Path path) {
        JsonArray kept = new JsonArray();
        for (JsonElement element : report.getAsJsonArray("directories")) {
            JsonObject dir = element.getAsJsonObject();
            if (dir.has("pod")) {
                continue;
            }
            Path at = Path.of(dir.get("dir").getAsString());
            boolean matches = at.equals(path);
            for (JsonElement file : dir.getAsJsonArray("files")) {
                matches |= at.resolve(file.getAsJsonObject().get("path").getAsString()).equals(path);
            }
            if (matches) {
                kept.add(dir);
            }
        }
        JsonObject copy = report.deepCopy();
        copy.add("directories", kept);
        return new StatusView(copy);
    }

    public boolean isEmpty() {
        return report.getAsJsonArray("directories").isEmpty();
    }

    public String json() {
        return report.toString();
    }

    /** The report for a person: one block per directory, one per file, times with how far they are from now. */
    public String text() {
        Instant now = Instant.parse(report.get("time").getAsString());
        JsonObject reread = report.getAsJsonObject("rereadCheck");
        boolean watching = reread.get("enabled").getAsBoolean();
        String node = string(report, "node") == null ? "" : ", node " + string(report, "node");
        StringBuilder out = new StringBuilder();
        for (JsonElement element : report.getAsJsonArray("directories")) {
            JsonObject dir = element.getAsJsonObject();
            if (dir.has("pod")) {
                JsonObject pod = dir.getAsJsonObject("pod");
                out.append("Pod ").append(orUnknown(string(pod, "namespace"))).append('/')
                        .append(orUnknown(string(pod, "name"))).append(" (uid ").append(orUnknown(string(pod, "uid")))
                        .append(')').append(node).append('\n');
            } else {
                out.append("Static projection").append(node).append('\n');
            }
            out.append("  directory ").append(string(dir, "dir")).append('\n');
            JsonObject reload = dir.has("reload") ? dir.getAsJsonObject("reload") : null;
            for (JsonElement f : dir.getAsJsonArray("files")) {
                file(out, f.getAsJsonObject(), now, watching, reread.get("thresholdPercent").getAsInt());
                if (reload != null) {
                    line(out, "reload signal", reload(reload, f.getAsJsonObject(), watching));
                }
            }
        }
        return out.toString();
    }

    private static void file(StringBuilder out, JsonObject file, Instant now, boolean watching, int threshold) {
        out.append("  ").append(string(file, "path")).append('\n');
        line(out, "ServiceAccount", string(file, "serviceAccount"));
        List<String> audiences = new ArrayList<>();
        if (file.get("audiences").isJsonArray()) {
            file.getAsJsonArray("audiences").forEach(a -> audiences.add(printable(a.getAsString())));
        }
        line(out, "audiences", file.get("audiences").isJsonNull() ? "the API server's own" : String.join(", ", audiences));
        long seconds = file.get("expirationSeconds").getAsLong();
        line(out, "lifetime asked", seconds == 0 ? "the API server's default"
                : DurationText.of(Duration.ofSeconds(seconds)) + " (expirationSeconds " + seconds + ")");
        if (file.has("boundObject")) {
            JsonObject bound = file.getAsJsonObject("boundObject");
            line(out, "bound to", string(bound, "kind") + " " + string(bound, "name") + " (uid " + string(bound, "uid")
                    + ")");
        } else {
            line(out, "bound to", "nothing (only its expiry ends it)");
        }
        line(out, "state", string(file, "state"));
        line(out, "issued at", when(file, "issuedAt", now, "no token yet"));
        line(out, "expires at", when(file, "expiresAt", now, "no token yet"));
        line(out, "next refresh", when(file, "nextRefresh", now, "being refreshed now"));
        String error = string(file, "lastError");
        line(out, "last error", error == null ? "none" : error + " (" + when(file, "lastErrorAt", now, "?") + ")");
        line(out, "last read", reads(file, now, watching, threshold));
    }

    private static String reads(JsonObject file, Instant now, boolean watching, int threshold) {
        if (!watching) {
            return "not watched (rereadCheck is off, or inotify is not available)";
        }
        boolean hasReader = file.has("hasReader") && file.get("hasReader").getAsBoolean();
        String rotated = stamp(file, "rotatedAt");
        String text;
        if (string(file, "lastRead") == null) {
            if (!hasReader) {
                return "none seen since the agent started";
            }
            text = "before the agent started (its volume's record says so)";
            if (rotated == null) {
                return text + "; none since";
            }
            text += "; the new token was not opened (written at " + rotated + ")";
        } else if (file.get("readCurrentToken").getAsBoolean()) {
            return when(file, "lastRead", now, "?") + ", of the token now in the file";
        } else {
            text = when(file, "lastRead", now, "?") + ", before the rotation at " + rotated
                    + "; the new token was not opened";
        }
        String reported = stamp(file, "notRereadSince");
        if (reported == null) {
            return text + " (reported if not opened by " + threshold + " % of the old token's lifetime)";
        }
        String expiring = stamp(file, "expiringUnreadSince");
        return text + " (reported TokenNotReread at " + reported
                + (expiring == null ? "" : ", TokenExpiringUnread at " + expiring) + ")";
    }

    /**
     * The last reload signal and what followed: "signalled at T, re-read at T+x", "signalled at T, not re-read", or
     * why it was not delivered.
     */
    private static String reload(JsonObject reload, JsonObject file, boolean watching) {
        String what = string(reload, "signal") + " to container " + string(reload, "container");
        String at = string(reload, "signalledAt");
        if (at == null) {
            return what + " after each rotation; none sent yet";
        }
        Instant signalled = Instant.parse(at);
        String when = signalled.truncatedTo(ChronoUnit.MILLIS).toString();
        if (!reload.get("delivered").getAsBoolean()) {
            return what + " at " + when + " not delivered: " + string(reload, "problem");
        }
        String lastRead = string(file, "lastRead");
        if (!watching) {
            return what + ": signalled at " + when + " (re-reads not watched)";
        }
        if (lastRead != null && !Instant.parse(lastRead).isBefore(signalled)) {
            Duration after = Duration.between(signalled, Instant.parse(lastRead));
            return what + ": signalled at " + when + ", re-read at " + lastRead + " (+" + after.toMillis() + " ms)";
        }
        return what + ": signalled at " + when + ", not re-read";
    }

    /** One field; a value the report lacks reads "unknown", never "null". */
    private static void line(StringBuilder out, String label, String value) {
        out.append(String.format(Locale.ROOT, "    %-15s %s%n", label + ":", value == null ? "unknown" : value));
    }

    private static String when(JsonObject object, String name, Instant now, String absent) {
        String at = string(object, name);
        if (at == null) {
            return absent;
        }
        Instant instant = Instant.parse(at);
        Duration d = Duration.between(now, instant);
        String far = d.abs().getSeconds() == 0 ? "now" : d.isNegative() ? ago(d.negated()) + " ago" : "in " + ago(d);
        return instant.truncatedTo(ChronoUnit.SECONDS) + " (" + far + ")";
    }

    /** The instant to the second, or null. */
    private static String stamp(JsonObject object, String name) {
        String at = string(object, name);
        return at == null ? null : Instant.parse(at).truncatedTo(ChronoUnit.SECONDS).toString();
    }

    /** To the second, as Kubernetes writes durations: {@code 45s}, {@code 7m50s}, {@code 1h5m0s}. */
    private static String ago(Duration d) {
        return DurationText.of(Duration.ofSeconds(d.getSeconds()));
    }

    private static String orUnknown(String value) {
        return value == null ? "unknown" : value;
    }

    /** A value of the report, printable: a pod chooses its paths and audiences, and they reach a terminal. */
    private static String string(JsonObject object, String name) {
        JsonElement e = object.get(name);
        return e == null || e.isJsonNull() ? null : printable(e.getAsString());
    }

    /**
     * {@code text} with every character a terminal acts on written as {@code \\uXXXX} instead: C0 and C1 controls
     * (escape sequences, a line break that would fake a line of the report) and the bidirectional overrides that
     * reorder what is shown.
     */
    static String printable(String text) {
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean unsafe = c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e)
                    || (c >= 0x2066 && c <= 0x2069);
            if (unsafe && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (out != null) {
                if (unsafe) {
                    out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? text : out.toString();
    }
}
