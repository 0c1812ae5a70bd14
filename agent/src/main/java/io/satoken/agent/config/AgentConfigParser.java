package io.satoken.agent.config;

import io.satoken.agent.config.AgentConfig.Mode;
import io.satoken.agent.config.AgentConfig.RereadCheck;
import io.satoken.common.projection.FieldErrors;
import io.satoken.common.projection.SafeYaml;
import io.satoken.common.projection.YamlFields;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the agent's YAML configuration file.
 *
 * <pre>
 * mode: static                 # csi | static | both (required)
 * kubeletDir: /var/lib/kubelet # absolute; where CSI mode finds the kubelet's plugin and pod directories
 * maxUnboundExpirationSeconds: 86400 # 600..604800 (a week), default 86400 (a day): the longest lifetime
 *                              # a projection may ask for, since its token is bound to no object
 * statusSocket: /run/satoken/agent-status.sock # absolute; the status endpoint `explain` reads. Default in
 *                              # csi and both: &lt;kubeletDir&gt;/plugins/tokens.satoken.io/status.sock; none in static
 * rereadCheck: true            # report consumers that do not read a rotated token (TokenNotReread), default true
 * rereadThresholdPercent: 90   # 50..99, default 90: share of the old token's lifetime a consumer has to read the new
 * expiringUnreadMarginSeconds: 300 # 60..86400; a consumer still holding the old token this long before it expires
 *                              # is reported again (TokenExpiringUnread); default max(300, a tenth of the lifetime)
 * tokenSource: request         # request | node-impersonation | kubelet, default request; anything but request needs
 *                              # mode csi (docs/install.md, "Profiles")
 * projections:                 # required when mode is static or both; absent or empty when csi
 *   - namespace: monitoring                  # required, DNS-1123 label
 *     serviceAccount: node-exporter          # required, DNS-1123 subdomain
 *     audiences: [https://vault.example.com] # optional, non-empty; absent = the API server's own
 *     expirationSeconds: 3600                # 600..maxUnboundExpirationSeconds (PV-4), default 3600 (PV-2)
 *     dir: /run/satoken/node-exporter        # required, absolute, normalized, not in &lt;kubeletDir&gt;
 *     file: token                            # default "token", a relative path (PV-7, AW-15)
 *     mode: 0600                             # 0..0777, default 0600
 *     uid: 65534                             # optional owner
 *     gid: 65534                             # optional group
 * </pre>
 *
 * <p>Unknown keys are errors at every level. Every error names the field, the rule and the offending
 * value ({@code projections[1].expirationSeconds: may not specify a duration less than 10 minutes,
 * got 60}), and all of a file's errors are reported together.
 */
public final class AgentConfigParser {

    /** The largest config accepted. */
    public static final int MAX_LENGTH = 1024 * 1024;

    private static final List<String> TOP_KEYS = List.of("mode", "kubeletDir", "projections",
            "maxUnboundExpirationSeconds", "statusSocket", "rereadCheck", "rereadThresholdPercent",
            "expiringUnreadMarginSeconds", "tokenSource");
    private static final List<String> ENTRY_KEYS = List.of("namespace", "serviceAccount", "audiences",
            "expirationSeconds", "dir", "file", "mode", "uid", "gid");

    /** The top-level key that caps static projections' lifetimes. */
    static final String MAX_UNBOUND = "maxUnboundExpirationSeconds";

    private AgentConfigParser() {
    }

    /** Reads and parses a config file; the exception's message starts with the file's name. */
    public static AgentConfig parse(Path file) throws IOException, InvalidConfigException {
        long size = Files.size(file);
        if (size > MAX_LENGTH) {
            throw new InvalidConfigException(file.toString(),
                    List.of("must be at most " + MAX_LENGTH + " bytes, got " + size));
        }
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (CharacterCodingException e) {
            throw new InvalidConfigException(file.toString(), List.of("must be UTF-8 text"));
        }
        return parse(text, file.toString());
    }

    /** Parses a config given as text. */
    public static AgentConfig parse(String yaml) throws InvalidConfigException {
        return parse(yaml, null);
    }

    private static AgentConfig parse(String yaml, String source) throws InvalidConfigException {
        FieldErrors errors = new FieldErrors();
        Object document = SafeYaml.load(yaml, MAX_LENGTH, "config", errors);
        if (!errors.isEmpty()) {
            throw new InvalidConfigException(source, errors.list());
        }
        Map<?, ?> top = document == null ? Map.of() : document instanceof Map<?, ?> m ? m : null;
        if (top == null) {
            errors.invalid("config", "must be a map", document);
            throw new InvalidConfigException(source, errors.list());
        }
        // rootDir (pod mode's) gets its own message below, not "unknown key" with a list that cannot name it
        Map<Object, Object> known = new LinkedHashMap<>(top);
        known.remove("rootDir");
        YamlFields fields = YamlFields.of(known, "", TOP_KEYS, errors);
        Mode mode = mode(fields, errors);
        if (top.containsKey("rootDir")) {
            errors.add("rootDir", "no longer exists: pods get their tokens through CSI volumes (mode: csi) "
                    + "under kubeletDir, and static projections name their own dir");
        }
        Path kubeletDir = fields.has("kubeletDir") ? absoluteDir(fields, "kubeletDir", errors)
                : AgentConfig.DEFAULT_KUBELET_DIR;
        String capRange = "must be between " + AgentConfig.MIN_MAX_UNBOUND_EXPIRATION_SECONDS + " (10 minutes) and "
                + AgentConfig.MAX_MAX_UNBOUND_EXPIRATION_SECONDS + " (a week)";
        Long cap = fields.integer(MAX_UNBOUND, AgentConfig.MIN_MAX_UNBOUND_EXPIRATION_SECONDS, capRange,
                AgentConfig.MAX_MAX_UNBOUND_EXPIRATION_SECONDS, capRange);
        long maxUnbound = cap != null ? cap : AgentConfig.DEFAULT_MAX_UNBOUND_EXPIRATION_SECONDS;
        // an invalid cap has its own error; the projections are then held to the default
        List<StaticProjection> projections = projections(fields, mode, kubeletDir, maxUnbound, errors);
        Optional<Path> statusSocket = fields.has("statusSocket")
                ? Optional.ofNullable(absoluteDir(fields, "statusSocket", errors))
                : mode != null && mode.csi() && kubeletDir != null
                        ? Optional.of(AgentConfig.defaultCsiStatusSocket(kubeletDir)) : Optional.empty();
        RereadCheck reread = rereadCheck(fields, errors);
        AgentConfig.TokenSourceKind tokenSource = tokenSource(fields, mode, errors);
        if (!errors.isEmpty()) {
            throw new InvalidConfigException(source, errors.list());
        }
        return new AgentConfig(mode, kubeletDir, projections, maxUnbound, statusSocket, reread, tokenSource);
    }

    private static AgentConfig.TokenSourceKind tokenSource(YamlFields fields, Mode mode, FieldErrors errors) {
        String value = fields.string("tokenSource");
        if (value == null) {
            return AgentConfig.TokenSourceKind.REQUEST;
        }
        for (AgentConfig.TokenSourceKind kind : AgentConfig.TokenSourceKind.values()) {
            if (kind.value().equals(value)) {
                if (kind != AgentConfig.TokenSourceKind.REQUEST && mode != null && mode.statics()) {
                    errors.invalid("tokenSource", "must be \"request\" when mode is \""
                            + mode.name().toLowerCase(Locale.ROOT) + "\": static projections belong to no pod and no"
                            + " kubelet", value);
                    return AgentConfig.TokenSourceKind.REQUEST;
                }
                return kind;
            }
        }
        errors.invalid("tokenSource", "must be one of \"request\", \"node-impersonation\", \"kubelet\"", value);
        return AgentConfig.TokenSourceKind.REQUEST;
    }

    private static RereadCheck rereadCheck(YamlFields fields, FieldErrors errors) {
        boolean enabled = true;
        Object raw = fields.raw("rereadCheck");
        if (raw instanceof Boolean b) {
            enabled = b;
        } else if (raw != null) {
            errors.invalid(fields.field("rereadCheck"), "must be true or false", raw);
        }
        String range = "must be between " + RereadCheck.MIN_THRESHOLD + " and " + RereadCheck.MAX_THRESHOLD
                + " (percent of the old token's lifetime)";
        Long percent = fields.integer("rereadThresholdPercent", RereadCheck.MIN_THRESHOLD, range,
                RereadCheck.MAX_THRESHOLD, range);
        String marginRange = "must be between " + RereadCheck.MIN_MARGIN_SECONDS + " and "
                + RereadCheck.MAX_MARGIN_SECONDS + " (seconds before the held token expires)";
        Long margin = fields.integer("expiringUnreadMarginSeconds", RereadCheck.MIN_MARGIN_SECONDS, marginRange,
                RereadCheck.MAX_MARGIN_SECONDS, marginRange);
        return new RereadCheck(enabled, percent == null ? RereadCheck.DEFAULT_THRESHOLD : percent.intValue(), margin);
    }

    private static Mode mode(YamlFields fields, FieldErrors errors) {
        String mode = fields.requiredString("mode");
        if (mode == null) {
            return null;
        }
        return switch (mode) {
            case "csi" -> Mode.CSI;
            case "static" -> Mode.STATIC;
            case "both" -> Mode.BOTH;
            case "pods" -> {
                errors.invalid("mode", "\"pods\" (hostPath delivery) was removed: use \"csi\", and give pods a CSI "
                        + "volume of driver tokens.satoken.io", mode);
                yield null;
            }
            default -> {
                errors.invalid("mode", "must be one of \"csi\", \"static\", \"both\"", mode);
                yield null;
            }
        };
    }

    private static List<StaticProjection> projections(YamlFields fields, Mode mode, Path kubeletDir,
            long maxUnbound, FieldErrors errors) {
        Object raw = fields.raw("projections");
        if (raw != null && !(raw instanceof List<?>)) {
            errors.invalid("projections", "must be a list of maps", raw);
            return List.of();
        }
        List<?> entries = raw == null ? List.of() : (List<?>) raw;
        if (mode != null && mode.statics() && entries.isEmpty()) {
            errors.add("projections", "Required value: mode \"" + mode.name().toLowerCase(Locale.ROOT)
                    + "\" needs at least one projection");
        }
        if (mode == Mode.CSI && !entries.isEmpty()) {
            errors.add("projections", "must be empty when mode is \"csi\", got " + entries.size()
                    + (entries.size() == 1 ? " entry" : " entries"));
        }
        ProjectionEntries parsed = new ProjectionEntries(kubeletDir, maxUnbound, errors);
        for (int i = 0; i < entries.size(); i++) {
            String prefix = "projections[" + i + "]";
            if (entries.get(i) instanceof Map<?, ?> entry) {
                parsed.add(YamlFields.of(entry, prefix, ENTRY_KEYS, errors));
            } else {
                errors.invalid(prefix, "must be a map", entries.get(i));
            }
        }
        return parsed.projections();
    }

    /** An absolute, normalized directory; null (with the error recorded) when it is not one. */
    static Path absoluteDir(YamlFields fields, String key, FieldErrors errors) {
        String field = fields.field(key);
        String value = fields.string(key);
        if (value == null) {
            return null;
        }
        if (!value.startsWith("/")) {
            errors.invalid(field, "must be an absolute path", value);
            return null;
        }
        for (String element : value.split("/")) {
            if (element.equals(".") || element.equals("..")) {
                errors.invalid(field, "must be normalized (no '.' or '..' elements)", value);
                return null;
            }
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            errors.invalid(field, "must be a valid path (" + e.getReason() + ")", value);
            return null;
        }
    }
}
