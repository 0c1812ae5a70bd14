package io.satoken.agent.config;

import io.satoken.common.kube.KubeNames;
import io.satoken.common.projection.FieldErrors;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.projection.TokenAsk;
import io.satoken.common.projection.TokenFileFields;
import io.satoken.common.projection.TokenFilePaths;
import io.satoken.common.projection.YamlFields;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the config's projections one entry at a time, checking each against the entries before it: no dir inside
 * another, no file named twice in one dir. The entries read so far are kept for that.
 */
final class ProjectionEntries {

    private final Path kubeletDir;
    private final long maxUnbound;
    private final FieldErrors errors;
    private final List<StaticProjection> projections = new ArrayList<>();
    /** each dir → the field that first named it */
    private final Map<Path, String> dirs = new LinkedHashMap<>();
    /** each dir → the files in it */
    private final Map<Path, TokenFilePaths> files = new HashMap<>();

    ProjectionEntries(Path kubeletDir, long maxUnbound, FieldErrors errors) {
        this.kubeletDir = kubeletDir;
        this.maxUnbound = maxUnbound;
        this.errors = errors;
    }

    /** The projections read, in order; an entry is kept only while no error has been found. */
    List<StaticProjection> projections() {
        return projections;
    }

    /** Reads one entry; its errors go to the shared {@link FieldErrors}. */
    void add(YamlFields fields) {
        String namespace = fields.requiredString("namespace");
        if (namespace != null) {
            KubeNames.dnsLabelProblem(namespace)
                    .ifPresent(problem -> errors.invalid(fields.field("namespace"), problem, namespace));
        }
        String serviceAccount = fields.requiredString("serviceAccount");
        if (serviceAccount != null) {
            KubeNames.dnsSubdomainProblem(serviceAccount)
                    .ifPresent(problem -> errors.invalid(fields.field("serviceAccount"), problem, serviceAccount));
        }
        List<String> audiences = audiences(fields);
        Long expirationSeconds = capped(fields, TokenFileFields.expirationSeconds(fields));
        Path dir = dir(fields);
        String file = file(fields, dir);
        Integer mode = TokenFileFields.mode(fields);
        Integer uid = TokenFileFields.uid(fields);
        Integer gid = TokenFileFields.gid(fields);
        if (errors.isEmpty()) {
            projections.add(new StaticProjection(namespace, serviceAccount, new TokenAsk(audiences,
                    expirationSeconds == null ? ProjectionSpec.DEFAULT_EXPIRATION_SECONDS : expirationSeconds),
                    dir, file, mode == null ? StaticProjection.DEFAULT_MODE : mode, uid, gid));
        }
    }

    /**
     * The lifetime unless it exceeds the cap on unbound tokens, which every static projection's token
     * is; the default lifetime is held to the cap as well, since a lowered cap can be under it.
     */
    private Long capped(YamlFields fields, Long expirationSeconds) {
        boolean given = fields.has(TokenFileFields.EXPIRATION_SECONDS);
        if (given && expirationSeconds == null) {
            return null; // already reported
        }
        long lifetime = given ? expirationSeconds : ProjectionSpec.DEFAULT_EXPIRATION_SECONDS;
        if (lifetime > maxUnbound) {
            errors.add(fields.field(TokenFileFields.EXPIRATION_SECONDS), "an unbound token (no boundObjectRef) may live at most "
                    + AgentConfigParser.MAX_UNBOUND + " = " + maxUnbound + " seconds, got " + lifetime
                    + (given ? "" : " (the default)"));
            return null;
        }
        return expirationSeconds;
    }

    /** Null when absent: the API server's own audiences (PV-3). An empty list says nothing and is refused. */
    private List<String> audiences(YamlFields fields) {
        Object raw = fields.raw("audiences");
        String field = fields.field("audiences");
        if (raw == null) {
            return null;
        }
        if (!(raw instanceof List<?> list)) {
            errors.invalid(field, "must be a list of strings", raw);
            return null;
        }
        if (list.isEmpty()) {
            errors.add(field, "must not be an empty list; leave it out for the API server's own audiences");
            return null;
        }
        List<String> audiences = new ArrayList<>(list.size());
        for (int j = 0; j < list.size(); j++) {
            if (list.get(j) instanceof String s && !s.isEmpty()) {
                audiences.add(s);
            } else {
                errors.invalid(field + "[" + j + "]", "must be a non-empty string", list.get(j));
            }
        }
        return audiences;
    }

    private Path dir(YamlFields fields) {
        String field = fields.field("dir");
        if (!fields.has("dir")) {
            errors.required(field);
            return null;
        }
        Path dir = AgentConfigParser.absoluteDir(fields, "dir", errors);
        if (dir == null) {
            return null;
        }
        if (kubeletDir != null && dir.startsWith(kubeletDir)) {
            errors.invalid(field, "must not be inside " + FieldErrors.quote(kubeletDir.toString())
                    + ", the kubelet's directory", fields.raw("dir"));
            return null;
        }
        if (!dirs.containsKey(dir)) {
            // the writer of the outer dir would own the inner one's top-level name
            for (Map.Entry<Path, String> other : dirs.entrySet()) {
                if (dir.startsWith(other.getKey()) || other.getKey().startsWith(dir)) {
                    errors.invalid(field, "must not be inside or contain " + other.getValue()
                            + " (" + FieldErrors.quote(other.getKey().toString()) + ")", fields.raw("dir"));
                    return null;
                }
            }
            dirs.put(dir, field);
        }
        return dir;
    }

    private String file(YamlFields fields, Path dir) {
        String field = fields.field("file");
        Object raw = fields.raw("file");
        if (raw != null && !(raw instanceof String)) {
            return fields.string("file");
        }
        String file = raw == null ? StaticProjection.DEFAULT_FILE : (String) raw;
        if (dir == null) {
            return TokenFilePaths.validateAndClean(file, field, errors);
        }
        return files.computeIfAbsent(dir, d -> new TokenFilePaths(errors)).add(file, field);
    }
}
