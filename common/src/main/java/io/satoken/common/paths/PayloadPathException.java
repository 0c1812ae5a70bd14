package io.satoken.common.paths;

/**
 * A payload key is not a safe relative path (AW-15). Thrown before the writer touches the disk.
 * The message starts with the offending path, e.g. {@code invalid path "../x": must not contain '..'}.
 */
public class PayloadPathException extends IllegalArgumentException {

    private final String path;

    public PayloadPathException(String path, String reason) {
        super("invalid path " + PayloadPath.quote(path) + ": " + reason);
        this.path = path;
    }

    /** The path as the caller gave it. */
    public String path() {
        return path;
    }
}
