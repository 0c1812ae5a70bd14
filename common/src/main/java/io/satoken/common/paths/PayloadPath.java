package io.satoken.common.paths;

import java.nio.charset.StandardCharsets;

/**
 * Validation and cleaning of payload keys, the relative paths of the files the agent's
 * {@code AtomicWriter} writes (AW-7, AW-15).
 *
 * <p>Lengths are counted in UTF-8 bytes, as upstream counts them (Go's {@code len}) and as the kernel
 * limits them; for ASCII paths that is the number of characters the messages speak of.
 */
public final class PayloadPath {

    /** AW-15: the longest path allowed. */
    public static final int MAX_PATH_LENGTH = 4096;
    /** AW-15: the longest path element allowed. */
    public static final int MAX_ELEMENT_LENGTH = 255;

    private static final int QUOTE_LIMIT = 80;

    private PayloadPath() {
    }

    /**
     * Checks a key against AW-15, then cleans it: empty and {@code .} elements and trailing slashes go
     * ({@code foo//bar} gives {@code foo/bar}, {@code ./bar} gives {@code bar}).
     *
     * <p>Two checks go beyond upstream, both on the cleaned path: it must still name something
     * ({@code .} and {@code ./} are rejected; upstream fails later, writing a file over the directory),
     * and its first element must still not start with {@code ..}: {@code ./..data} passes the AW-15
     * check, which looks at the raw first element {@code .}, yet cleans to the reserved name
     * {@code ..data} (AW-5).
     *
     * @return the cleaned path
     * @throws PayloadPathException when the key is not allowed
     */
    public static String validateAndClean(String path) {
        validate(path);
        StringBuilder cleaned = new StringBuilder(path.length());
        for (String element : path.split("/")) {
            if (element.isEmpty() || element.equals(".")) {
                continue;
            }
            if (cleaned.length() > 0) {
                cleaned.append('/');
            }
            cleaned.append(element);
        }
        if (cleaned.length() == 0) {
            throw new PayloadPathException(path, "must name a file, not the target directory itself");
        }
        if (cleaned.length() > 2 && cleaned.charAt(0) == '.' && cleaned.charAt(1) == '.') {
            throw new PayloadPathException(path, "must not start with '..' (after cleaning: " + quote(cleaned.toString()) + ")");
        }
        return cleaned.toString();
    }

    /** AW-15, in upstream's order, on the path as given (before cleaning). */
    private static void validate(String path) {
        if (path == null || path.isEmpty()) {
            throw new PayloadPathException("", "must not be empty");
        }
        if (path.charAt(0) == '/') {
            throw new PayloadPathException(path, "must be relative path");
        }
        if (utf8Length(path) > MAX_PATH_LENGTH) {
            throw new PayloadPathException(path, "must be less than or equal to " + MAX_PATH_LENGTH + " characters");
        }
        // split with limit -1 keeps trailing empty elements, like Go's strings.Split
        String[] elements = path.split("/", -1);
        for (String element : elements) {
            if (element.equals("..")) {
                throw new PayloadPathException(path, "must not contain '..'");
            }
            if (utf8Length(element) > MAX_ELEMENT_LENGTH) {
                throw new PayloadPathException(path,
                        "filenames must be less than or equal to " + MAX_ELEMENT_LENGTH + " characters");
            }
        }
        // only the first element is checked: "a/..b" is allowed
        if (elements[0].startsWith("..") && elements[0].length() > 2) {
            throw new PayloadPathException(path, "must not start with '..'");
        }
    }

    private static int utf8Length(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return s.getBytes(StandardCharsets.UTF_8).length;
            }
        }
        return s.length();
    }

    /** The path in double quotes, shortened when long so a message stays readable. */
    public static String quote(String path) {
        if (path.length() <= QUOTE_LIMIT) {
            return '"' + path + '"';
        }
        return '"' + path.substring(0, QUOTE_LIMIT) + "...\" (" + path.length() + " characters)";
    }
}
