package io.satoken.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A file's permission bits and owner as {@code ls -n} would give them: {@code "0640 0:34"}. */
final class FileModes {

    private FileModes() {
    }

    /** {@code "0640 0:34"}: the mode's permission bits in octal, then uid:gid (links followed). */
    static String of(Path file) throws IOException {
        return mode(file) + " " + Files.getAttribute(file, "unix:uid") + ":" + Files.getAttribute(file, "unix:gid");
    }

    /** {@code "0755"}: the permission bits (links followed). */
    static String mode(Path file) throws IOException {
        int mode = (Integer) Files.getAttribute(file, "unix:mode");
        return String.format("%04o", mode & 07777);
    }

    static void set(Path file, int mode) throws IOException {
        Files.setAttribute(file, "unix:mode", mode);
    }
}
