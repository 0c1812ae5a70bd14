package io.satoken.agent.write;

import static java.nio.file.LinkOption.NOFOLLOW_LINKS;

import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Gives a file or directory an owner or group, failing with a {@link FileOwnerException} that names the id. */
final class FileOwners {

    private FileOwners() {
    }

    /**
     * Sets the group ({@code group} true) or owner of the entry {@code name} of the open directory {@code dir} to
     * {@code id}, through a descriptor opened without following a link ({@link OpenDir#view}).
     */
    static void set(OpenDir dir, String name, boolean group, int id) throws FileOwnerException {
        Path file = dir.path().resolve(name);
        try {
            if (group) {
                dir.view(name).setGroup(dir.group(id));
            } else {
                dir.view(name).setOwner(dir.user(id));
            }
        } catch (FileSystemException e) {
            throw new FileOwnerException(file, group, id, e.getReason() == null ? Failures.inWords(e) : e.getReason());
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new FileOwnerException(file, group, id, Failures.inWords(e));
        }
    }

    /**
     * Sets {@code file}'s group ({@code group} true) or owner to {@code id}, not following a link.
     *
     * @param unixView whether the file system has the unix attribute view; without it nothing can be set
     */
    static void set(Path file, boolean group, int id, boolean unixView) throws FileOwnerException {
        if (!unixView) {
            throw new FileOwnerException(file, group, id, "the file system has no unix attribute view");
        }
        try {
            Files.setAttribute(file, group ? "unix:gid" : "unix:uid", id, NOFOLLOW_LINKS);
        } catch (FileSystemException e) {
            throw new FileOwnerException(file, group, id, e.getReason() == null ? Failures.inWords(e) : e.getReason());
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            throw new FileOwnerException(file, group, id, Failures.inWords(e));
        }
    }
}
