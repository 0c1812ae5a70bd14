package io.satoken.agent.write;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.WRITE;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** Writes one version's files into its new timestamped dir, each with its exact mode and owner (AtomicWriter's step 6). */
final class VersionFiles {

    /** Directories start private; {@link DirectoryAccess} then opens them to the files' readers. */
    static final FileAttribute<Set<PosixFilePermission>> DIR_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private VersionFiles() {
    }

    /** Step 6: writes every file of the payload under {@code dir}, making its subdirectories on the way. */
    static void write(Path dir, CleanPayload files, DirectoryAccess access, boolean unixView) throws IOException {
        Set<String> madeDirs = new HashSet<>();
        for (Map.Entry<String, FileContent> e : files.files().entrySet()) {
            String rel = e.getKey();
            FileContent content = e.getValue();
            for (int slash = rel.indexOf('/'); slash > 0; slash = rel.indexOf('/', slash + 1)) {
                String sub = rel.substring(0, slash);
                if (madeDirs.add(sub)) {
                    Path subDir = Files.createDirectory(dir.resolve(sub), DIR_ATTRIBUTE);
                    access.applyTo(subDir); // never writable but by the writer
                }
            }
            Path file = dir.resolve(rel);
            Set<PosixFilePermission> mode = permissions(content.mode());
            // Created with its own mode, never the umask's default: a token must not be readable by
            // others even until the chmod. umask can only narrow it.
            try (SeekableByteChannel channel = Files.newByteChannel(
                    file, EnumSet.of(CREATE_NEW, WRITE), PosixFilePermissions.asFileAttribute(mode))) {
                ByteBuffer data = ByteBuffer.wrap(content.sharedData());
                while (data.hasRemaining()) {
                    channel.write(data);
                }
            }
            Files.setPosixFilePermissions(file, mode); // exactly the mode, whatever the umask took away
            if (content.uid() != null) {
                FileOwners.set(file, false, content.uid(), unixView);
            }
            if (content.gid() != null) {
                FileOwners.set(file, true, content.gid(), unixView);
            }
        }
    }

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
        for (PosixFilePermission p : PosixFilePermission.values()) {
            if ((mode & (0400 >> p.ordinal())) != 0) {
                set.add(p);
            }
        }
        return set;
    }
}
