package io.satoken.controlplane.jwt;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The service-account signing key file cannot be used. The message is one line that names the flag,
 * the file and the problem, because it is what an operator sees when the control plane refuses to start:
 * {@code --service-account-private-key-file /etc/satoken/sa.key: not PEM}.
 *
 * <p>The message never quotes the file's content: a key file that fails to parse may still hold a real
 * private key. For the same reason the parser's own exception is not attached as the cause when the
 * failure was in the key bytes (BouncyCastle does not promise to keep its messages free of the data it
 * choked on); it is attached only for file-system errors.
 */
public final class KeyFileException extends Exception {

    /** The flag of kube-controller-manager this file plays the part of, so operators recognise it. */
    public static final String FLAG = "--service-account-private-key-file";

    private final transient Path file;
    private final String problem;

    public KeyFileException(Path file, String problem) {
        this(file, problem, null);
    }

    public KeyFileException(Path file, String problem, Throwable cause) {
        super(FLAG + " " + file + ": " + problem, cause);
        this.file = Objects.requireNonNull(file, "file");
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    /** The key file as it was given. */
    public Path file() {
        return file;
    }

    /** What was wrong with it, without the flag and file name. */
    public String problem() {
        return problem;
    }
}
