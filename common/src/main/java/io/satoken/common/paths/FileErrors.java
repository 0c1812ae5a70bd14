package io.satoken.common.paths;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * Why a file could not be read, in the words an operator acts on: every command and log line that names a file it
 * could not read says one of these after the file, never the bare path a {@link FileSystemException} carries as its
 * message, nor a Java class name.
 */
public final class FileErrors {

    private FileErrors() {
    }

    /** "not found", "permission denied", "not a file (a directory)", or what the system said. */
    public static String reason(IOException e) {
        if (e instanceof NoSuchFileException) {
            return "not found";
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NotDirectoryException) {
            return "not found (a part of the path is not a directory)";
        }
        String said = e instanceof FileSystemException f ? f.getReason() : e.getMessage();
        if (said == null || said.isBlank()) {
            return "cannot be read (input/output error)";
        }
        if (said.contains("Is a directory")) {
            return "not a file (a directory)";
        }
        if (said.contains("Not a directory")) {
            return "not found (a part of the path is not a directory)";
        }
        if (said.contains("Too many levels of symbolic links")) {
            return "a loop of symbolic links";
        }
        return "cannot be read (" + said.strip() + ")";
    }

    /** {@code FILE: reason} when the exception names its file, else the reason alone. */
    public static String describe(IOException e) {
        String file = e instanceof FileSystemException f ? f.getFile() : null;
        return file == null ? reason(e) : file + ": " + reason(e);
    }
}
