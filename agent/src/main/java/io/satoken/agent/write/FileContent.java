package io.satoken.agent.write;

import java.util.Arrays;
import java.util.Objects;

/**
 * One file of a payload (AW-6): its bytes, its exact permission bits and, optionally, its owner.
 *
 * <p>The data is usually a token, so {@link #toString()} shows only its length. The record copies the
 * array on the way in and on the way out, and compares arrays by content.
 *
 * @param data the file content
 * @param mode the permission bits the file gets regardless of umask, e.g. {@code 0600}
 * @param uid the owner uid to set, or {@code null} to leave the owner as the writer creates it
 * @param gid the group gid to set, or {@code null} to leave the group as the writer creates it
 */
public record FileContent(byte[] data, int mode, Integer uid, Integer gid) implements FileOwnership {

    public FileContent {
        Objects.requireNonNull(data, "data");
        if (mode < 0 || mode > 0777) {
            throw new IllegalArgumentException("mode: must be between 0 and 0777, got " + octal(mode));
        }
        if (uid != null && uid < 0) {
            throw new IllegalArgumentException("uid: must not be negative, got " + uid);
        }
        if (gid != null && gid < 0) {
            throw new IllegalArgumentException("gid: must not be negative, got " + gid);
        }
        data = data.clone();
    }

    /** A file with the given content and mode, owned by whoever runs the writer. */
    public static FileContent of(byte[] data, int mode) {
        return new FileContent(data, mode, null, null);
    }

    /** A copy of the content. */
    @Override
    public byte[] data() {
        return data.clone();
    }

    /** The content without a copy, for the writer in this package; callers must not modify it. */
    byte[] sharedData() {
        return data;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileContent other
                && mode == other.mode
                && Objects.equals(uid, other.uid)
                && Objects.equals(gid, other.gid)
                && Arrays.equals(data, other.data);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(data), mode, uid, gid);
    }

    @Override
    public String toString() {
        return "FileContent[<" + data.length + " bytes>, mode=" + String.format("%04o", mode)
                + ", uid=" + uid + ", gid=" + gid + "]";
    }

    private static String octal(int mode) {
        return mode < 0 ? Integer.toString(mode) : "0" + Integer.toOctalString(mode);
    }
}
