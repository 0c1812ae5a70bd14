package io.satoken.agent.write;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.Files;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** Writes one version's files into its new timestamped dir, each with its exact mode and owner (AtomicWriter's step 6). */
final class VersionFiles {

    /** Directories start private; {@link DirectoryAccess} then opens them to the files' readers. */
    static final FileAttribute<Set<PosixFilePermission>> DIR_ATTRIBUTE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private VersionFiles() {
    }

    /**
     * Step 6: writes every file of the payload into the open new version dir, making its subdirectories on the
     * way. Every file is created, chmodded and chowned relative to the directory that holds it, never by a path
     * that a link could redirect (see {@link OpenDir}).
     */
    static void write(OpenDir dir, CleanPayload files, DirectoryAccess access) throws IOException {
        Map<String, OpenDir> dirs = new HashMap<>();
        dirs.put("", dir);
        try {
            for (Map.Entry<String, FileContent> e : files.files().entrySet()) {
                String rel = e.getKey();
                FileContent content = e.getValue();
                int slash = rel.lastIndexOf('/');
                OpenDir parent = slash < 0 ? dir : subDir(dirs, rel.substring(0, slash), access);
                String name = rel.substring(slash + 1);
                Set<PosixFilePermission> mode = permissions(content.mode());
                // Created with its own mode, never the umask's default: a token must not be readable by
                // others even until the chmod. umask can only narrow it.
                try (SeekableByteChannel channel = parent.createFile(name, PosixFilePermissions.asFileAttribute(mode))) {
                    ByteBuffer data = ByteBuffer.wrap(content.sharedData());
                    while (data.hasRemaining()) {
                        channel.write(data);
                    }
                }
                PosixFileAttributeView view = parent.view(name);
                view.setPermissions(mode); // exactly the mode, whatever the umask took away
                if (content.uid() != null) {
                    FileOwners.set(parent, name, false, content.uid());
                }
                if (content.gid() != null) {
                    FileOwners.set(parent, name, true, content.gid());
                }
            }
        } finally {
            for (OpenDir open : dirs.values()) {
                if (open != dir) {
                    open.close();
                }
            }
        }
    }

    /** The open subdirectory {@code rel} of the version dir, made with the readers' access when new. */
    private static OpenDir subDir(Map<String, OpenDir> dirs, String rel, DirectoryAccess access) throws IOException {
        OpenDir open = dirs.get(rel);
        if (open != null) {
            return open;
        }
        int slash = rel.lastIndexOf('/');
        OpenDir parent = slash < 0 ? dirs.get("") : subDir(dirs, rel.substring(0, slash), access);
        String name = rel.substring(slash + 1);
        // No mkdirat in java.nio: made by path inside the dir just made, then opened through its parent's
        // descriptor without following a link, so nothing is written unless it is the directory made here.
        Files.createDirectory(parent.path().resolve(name), DIR_ATTRIBUTE);
        open = parent.openChild(name);
        dirs.put(rel, open);
        open.apply(access); // never writable but by the writer
        return open;
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
