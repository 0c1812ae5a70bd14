package io.satoken.agent.write;

import io.satoken.common.paths.PayloadPath;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads one file of the version a target dir publishes, the way the writer wrote it and no other way: the
 * {@code ..data} link must name a timestamped dir, and every level below it, the file included, is opened
 * through the one above without following a link. A link a pod planted anywhere on the way, or a user-visible
 * name pointed elsewhere, reads as nothing, so what the agent adopts at restart is what it wrote.
 */
public final class PublishedFile {

    private PublishedFile() {
    }

    /**
     * The content of {@code path} (a payload path, AW-15) in the published version under {@code targetDir}; empty
     * when there is no published version, the path is not a regular file there, or it is larger than {@code maxBytes}.
     */
    public static Optional<byte[]> read(Path targetDir, String path, int maxBytes) throws IOException {
        String clean = PayloadPath.validateAndClean(path);
        String version;
        try {
            version = Files.readSymbolicLink(targetDir.resolve(AtomicWriter.DATA_DIR)).toString();
        } catch (NoSuchFileException | NotLinkException e) {
            return Optional.empty();
        }
        if (!AtomicWriter.TIMESTAMPED_DIR.matcher(version).matches()) {
            return Optional.empty();
        }
        List<OpenDir> open = new ArrayList<>();
        try {
            OpenDir dir = OpenDir.open(targetDir);
            open.add(dir);
            dir = dir.openChild(version);
            open.add(dir);
            String[] names = clean.split("/");
            for (int i = 0; i < names.length - 1; i++) {
                dir = dir.openChild(names[i]);
                open.add(dir);
            }
            String name = names[names.length - 1];
            Optional<PosixFileAttributes> attrs = dir.attributes(name);
            if (attrs.isEmpty() || !attrs.get().isRegularFile() || attrs.get().size() > maxBytes) {
                return Optional.empty();
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) attrs.get().size());
            try (SeekableByteChannel channel = dir.readFile(name)) {
                while (buffer.hasRemaining() && channel.read(buffer) >= 0) {
                    // read until full or end of file
                }
            }
            buffer.flip();
            byte[] data = new byte[buffer.remaining()];
            buffer.get(data);
            return Optional.of(data);
        } catch (FileSystemException notThere) { // gone, not a directory, or a link (ELOOP)
            return Optional.empty();
        } finally {
            for (OpenDir dir : open) {
                dir.close();
            }
        }
    }
}
