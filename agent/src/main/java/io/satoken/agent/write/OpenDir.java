package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.READ;
import static java.nio.file.StandardOpenOption.WRITE;

import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A directory held open, and the operations on its entries that no link can redirect: each is made relative to
 * the open directory ({@code openat(2)}, {@code fstatat(2)}, {@code unlinkat(2)}) and never follows a link. So a
 * name is resolved once, in the directory the writer holds, and a pod that planted a link, or swapped a directory
 * for one between two steps, makes the writer fail rather than act outside the volume.
 *
 * <p>Only a target directory is opened by path ({@link #open}): the CSI target path the kubelet chose, or a
 * static projection's directory from the agent's config; no pod names any part of it. Everything below it is
 * reached with {@link #openChild}.
 */
final class OpenDir implements AutoCloseable {

    private final SecureDirectoryStream<Path> stream;
    private final Path path;

    private OpenDir(SecureDirectoryStream<Path> stream, Path path) {
        this.stream = stream;
        this.path = path;
    }

    /** Opens a target directory by its path, which is trusted (see the class comment). */
    static OpenDir open(Path dir) throws IOException {
        DirectoryStream<Path> stream = Files.newDirectoryStream(dir);
        if (stream instanceof SecureDirectoryStream<Path> secure) {
            return new OpenDir(secure, dir);
        }
        stream.close();
        throw new FileSystemException(dir.toString(), null,
                "the file system cannot act relative to an open directory (openat): no token is written here");
    }

    /** The path this directory was reached by, for messages and for the file system's principals. */
    Path path() {
        return path;
    }

    /** Opens the directory {@code name} in this one; a link there, or anything but a directory, fails. */
    OpenDir openChild(String name) throws IOException {
        return new OpenDir(stream.newDirectoryStream(name(name), NOFOLLOW_LINKS), path.resolve(name));
    }

    /**
     * The names in this directory now, links and all, none followed. Each call lists afresh, through a new
     * descriptor of this same directory ({@code openat(fd, ".")}): a stream's entries can be read only once.
     */
    List<String> names() throws IOException {
        List<String> names = new ArrayList<>();
        try (SecureDirectoryStream<Path> again = stream.newDirectoryStream(path.getFileSystem().getPath("."),
                NOFOLLOW_LINKS)) {
            for (Path entry : again) {
                names.add(entry.getFileName().toString());
            }
        }
        return names;
    }

    /** {@code name}'s own attributes, a link's rather than its target's; empty when there is no such name. */
    Optional<PosixFileAttributes> attributes(String name) throws IOException {
        try {
            return Optional.of(view(name).readAttributes());
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    /** This directory's own attributes, from its descriptor. */
    PosixFileAttributes attributes() throws IOException {
        return stream.getFileAttributeView(PosixFileAttributeView.class).readAttributes();
    }

    /** Creates the file {@code name}, which must not exist yet, with at most the given mode. */
    SeekableByteChannel createFile(String name, FileAttribute<?> mode) throws IOException {
        return stream.newByteChannel(name(name), Set.<OpenOption>of(CREATE_NEW, WRITE, NOFOLLOW_LINKS), mode);
    }

    /** Opens the file {@code name} to read; a link there fails. */
    SeekableByteChannel readFile(String name) throws IOException {
        return stream.newByteChannel(name(name), Set.<OpenOption>of(READ, NOFOLLOW_LINKS));
    }

    /**
     * The attribute view of the entry {@code name}: its changes open the entry without following a link
     * ({@code O_NOFOLLOW}) and act on that descriptor, never on a path.
     */
    PosixFileAttributeView view(String name) {
        return stream.getFileAttributeView(name(name), PosixFileAttributeView.class, NOFOLLOW_LINKS);
    }

    /**
     * Sets the group ({@code group} true) or owner of the entry {@code name} to {@code id}, through a descriptor
     * opened without following a link ({@link #view}); fails with a {@link FileOwnerException} that names the id.
     */
    void setOwner(String name, boolean group, int id) throws FileOwnerException {
        Path file = path.resolve(name);
        try {
            if (group) {
                view(name).setGroup(group(id));
            } else {
                view(name).setOwner(user(id));
            }
        } catch (FileSystemException e) {
            throw new FileOwnerException(file, group, id, e.getReason() == null ? Failures.inWords(e) : e.getReason());
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new FileOwnerException(file, group, id, Failures.inWords(e));
        }
    }

    /**
     * Gives this directory the access, through its own descriptor: the group first, then the mode, so the mode
     * is never wider than its group's right to it.
     */
    void apply(DirectoryAccess access) throws IOException {
        PosixFileAttributeView view = stream.getFileAttributeView(PosixFileAttributeView.class);
        if (access.gid() != null) {
            GroupPrincipal group = group(access.gid());
            if (!group.equals(view.readAttributes().group())) {
                try {
                    view.setGroup(group);
                } catch (FileSystemException e) {
                    throw new FileOwnerException(path, true, access.gid(), e.getReason() == null ? Failures.inWords(e) : e.getReason());
                }
            }
        }
        view.setPermissions(access.permissions());
    }

    /**
     * Deletes {@code name} and, when it is a directory, everything below it, each level through the directory
     * opened above it. A link is deleted, never followed; a name already gone is fine.
     */
    void deleteTree(String name) throws IOException {
        Optional<PosixFileAttributes> attrs = attributes(name);
        if (attrs.isEmpty()) {
            return;
        }
        try {
            if (!attrs.get().isDirectory()) {
                stream.deleteFile(name(name));
                return;
            }
            try (OpenDir dir = openChild(name)) {
                for (String entry : dir.names()) {
                    dir.deleteTree(entry);
                }
            }
            stream.deleteDirectory(name(name));
        } catch (NoSuchFileException gone) {
            // removed meanwhile
        }
    }

    /** Deletes the whole tree at {@code path}, through its parent opened by path; see {@link #deleteTree(String)}. */
    static void deleteTree(Path path) throws IOException {
        Path parent = path.toAbsolutePath().getParent();
        if (parent == null) {
            throw new FileSystemException(path.toString(), null, "will not delete a file system's root");
        }
        try (OpenDir dir = open(parent)) {
            dir.deleteTree(path.getFileName().toString());
        }
    }

    /** The user with this uid, whether or not the node's user database names it. */
    UserPrincipal user(int uid) throws IOException {
        // A name the user database does not know is taken as the number itself by the default provider.
        return path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(Integer.toString(uid));
    }

    /** The group with this gid, whether or not the node's group database names it. */
    GroupPrincipal group(int gid) throws IOException {
        return path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByGroupName(Integer.toString(gid));
    }

    @Override
    public void close() throws IOException {
        stream.close();
    }

    /** A single name as a relative path of this file system: the form every relative operation takes. */
    private Path name(String name) {
        if (name.isEmpty() || name.indexOf('/') >= 0 || name.equals(".") || name.equals("..")) {
            throw new IllegalArgumentException(path + ": not a single name in a directory: \"" + name + "\"");
        }
        return path.getFileSystem().getPath(name);
    }
}
