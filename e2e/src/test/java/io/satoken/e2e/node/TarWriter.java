package io.satoken.e2e.node;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Writes a POSIX ustar archive: regular files, directories and symlinks, owned by root, with fixed
 * timestamps so the same input gives the same bytes (and so the same image digests). Enough for an image
 * layer or an OCI layout; names longer than 100 bytes are refused rather than split.
 */
final class TarWriter implements AutoCloseable {

    private static final int BLOCK = 512;
    /** 2000-01-01, so a rebuild of an image is byte-identical. */
    private static final long MTIME = 946_684_800L;

    private final OutputStream out;

    TarWriter(OutputStream out) {
        this.out = out;
    }

    /** The archive {@code body} writes, in memory. */
    static byte[] toBytes(Body body) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (TarWriter tar = new TarWriter(bytes)) {
            body.write(tar);
        }
        return bytes.toByteArray();
    }

    /** What to put into an archive built by {@link #toBytes}. */
    interface Body {
        void write(TarWriter tar) throws IOException;
    }

    void directory(String name, int mode) throws IOException {
        header(name.endsWith("/") ? name : name + "/", mode, 0, '5', "");
    }

    void file(String name, int mode, byte[] content) throws IOException {
        header(name, mode, content.length, '0', "");
        out.write(content);
        pad(content.length);
    }

    void symlink(String name, String target) throws IOException {
        header(name, 0777, 0, '2', target);
    }

    /** Two zero blocks end the archive. */
    @Override
    public void close() throws IOException {
        out.write(new byte[2 * BLOCK]);
        out.flush();
    }

    private void header(String name, int mode, long size, char type, String linkName) throws IOException {
        byte[] h = new byte[BLOCK];
        put(h, 0, 100, name);
        octal(h, 100, 8, mode);
        octal(h, 108, 8, 0); // uid
        octal(h, 116, 8, 0); // gid
        octal(h, 124, 12, size);
        octal(h, 136, 12, MTIME);
        h[156] = (byte) type;
        put(h, 157, 100, linkName);
        put(h, 257, 6, "ustar");
        put(h, 263, 2, "00");
        put(h, 265, 32, "root");
        put(h, 297, 32, "root");
        // the checksum is computed with its own field as eight spaces
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        String checksum = String.format("%06o", sum);
        put(h, 148, 6, checksum);
        h[154] = 0;
        h[155] = ' ';
        out.write(h);
    }

    private void pad(long size) throws IOException {
        int rest = (int) (size % BLOCK);
        if (rest != 0) {
            out.write(new byte[BLOCK - rest]);
        }
    }

    private static void put(byte[] h, int offset, int length, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > length) {
            throw new IllegalArgumentException("tar: \"" + value + "\" is longer than the " + length + "-byte field");
        }
        System.arraycopy(bytes, 0, h, offset, bytes.length);
    }

    /** An octal number, zero-padded, NUL-terminated, filling the field. */
    private static void octal(byte[] h, int offset, int length, long value) {
        put(h, offset, length, String.format("%0" + (length - 1) + "o", value));
    }
}
