package io.satoken.agent.write;

/** A token file's permission bits and owner, as far as the directories above it need to know them. */
public interface FileOwnership {

    /** The permission bits, 0..0777. */
    int mode();

    /** The owner's uid, or null when the file keeps the writer's. */
    Integer uid();

    /** The group's gid, or null when the file keeps the writer's. */
    Integer gid();
}
