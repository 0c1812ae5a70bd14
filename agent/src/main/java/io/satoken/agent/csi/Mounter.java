package io.satoken.agent.csi;

import java.io.IOException;
import java.nio.file.Path;

/** Mounts the tmpfs that holds one volume's files. The seam tests replace; {@link TmpfsMounter} is the real one. */
public interface Mounter {

    /** Mounts a fresh tmpfs at {@code target}, an existing empty directory. */
    void mountTmpfs(Path target) throws IOException;

    /** Unmounts {@code target}; nothing happens when nothing is mounted there. */
    void unmount(Path target) throws IOException;

    /** Whether this agent's tmpfs is mounted exactly at {@code target}. */
    boolean isMounted(Path target) throws IOException;
}
