package io.satoken.agent.write;

import java.nio.file.FileSystemException;
import java.nio.file.Path;

/**
 * The writer could not give a file or directory its owner or group: the id is not valid on this node (a chown
 * failing with EINVAL, as for an id outside the agent's user namespace), the writer may not (EPERM without
 * CAP_CHOWN), or the file system has no owners. Says which id, so a caller can name where it came from.
 */
public final class FileOwnerException extends FileSystemException {

    private final boolean group;
    private final int id;
    private final String why;

    /**
     * @param group true for the group ({@code unix:gid}), false for the owner ({@code unix:uid})
     * @param reason why, as the system said it ("Invalid argument")
     */
    public FileOwnerException(Path file, boolean group, int id, String reason) {
        super(file.toString(), null, "cannot set " + (group ? "group " : "owner ") + id + ": " + reason);
        this.group = group;
        this.id = id;
        this.why = reason;
    }

    /** True when the group could not be set, false for the owner. */
    public boolean group() {
        return group;
    }

    public int id() {
        return id;
    }

    /** The system's reason alone ("Invalid argument"). */
    public String why() {
        return why;
    }
}
