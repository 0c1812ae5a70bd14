package io.satoken.common.projection;

import io.satoken.common.paths.PayloadPath;
import io.satoken.common.paths.PayloadPathException;
import java.util.HashMap;
import java.util.Map;

/**
 * The relative paths of the token files of one directory: each checked like a projected volume's
 * path (PV-6, PV-7) and like a payload key of the writer (AW-15), then cleaned, and checked against
 * the paths before it, since the writer would reject the whole directory for two files with the same
 * path or a file inside another.
 *
 * <p>Public for the agent's config parser, whose static files obey the same rules.
 */
public final class TokenFilePaths {

    private final FieldErrors errors;
    /** cleaned path → the field that gave it */
    private final Map<String, String> files = new HashMap<>();
    /** every proper ancestor dir of a file → the field of the first file under it */
    private final Map<String, String> dirs = new HashMap<>();

    public TokenFilePaths(FieldErrors errors) {
        this.errors = errors;
    }

    /**
     * Checks {@code path}, given in {@code field}, and remembers it.
     *
     * @return the cleaned path, or null when it is not valid (the error is recorded)
     */
    public String add(String path, String field) {
        String cleaned = validateAndClean(path, field, errors);
        if (cleaned == null) {
            return null;
        }
        String same = files.get(cleaned);
        if (same != null) {
            errors.invalid(field, "must not name the same file as " + same, path);
            return null;
        }
        String dirOf = dirs.get(cleaned);
        if (dirOf != null) {
            errors.invalid(field, "must not name a directory of the file of " + dirOf, path);
            return null;
        }
        for (int slash = cleaned.indexOf('/'); slash > 0; slash = cleaned.indexOf('/', slash + 1)) {
            String outer = files.get(cleaned.substring(0, slash));
            if (outer != null) {
                errors.invalid(field, "must not lie inside the file of " + outer, path);
                return null;
            }
        }
        files.put(cleaned, field);
        for (int slash = cleaned.indexOf('/'); slash > 0; slash = cleaned.indexOf('/', slash + 1)) {
            dirs.putIfAbsent(cleaned.substring(0, slash), field);
        }
        return cleaned;
    }

    /**
     * PV-6 and PV-7 in upstream's words and order, then the writer's AW-15 checks for what is left
     * (lengths, {@code .}, a reserved name reached by cleaning such as {@code ./..data}).
     *
     * @return the cleaned path, or null when it is not valid (the error is recorded)
     */
    public static String validateAndClean(String path, String field, FieldErrors errors) {
        if (path == null || path.isEmpty()) {
            errors.required(field);
            return null;
        }
        // PV-7: a "local non-reserved path"
        if (path.startsWith("/")) {
            errors.invalid(field, "must be a relative path", path);
            return null;
        }
        for (String element : path.split("/", -1)) {
            if (element.equals("..")) {
                errors.invalid(field, "must not contain '..'", path);
                return null;
            }
        }
        // AW-5: names starting with ".." (such as ..data) belong to the writer
        if (path.startsWith("..")) {
            errors.invalid(field, "must not start with '..'", path);
            return null;
        }
        try {
            return PayloadPath.validateAndClean(path);
        } catch (PayloadPathException e) {
            errors.invalid(field, reason(e), path);
            return null;
        }
    }

    /** The rule out of the writer's message, {@code invalid path "<path>": <rule>}. */
    private static String reason(PayloadPathException e) {
        String message = e.getMessage();
        String prefix = "invalid path \"" + e.path() + "\": ";
        if (message.startsWith(prefix)) {
            return message.substring(prefix.length());
        }
        // a long path is shown shortened: invalid path "<first 80>..." (<n> characters): <rule>
        String longEnd = " characters): ";
        int end = message.indexOf(longEnd);
        return end < 0 ? message : message.substring(end + longEnd.length());
    }
}
