/**
 * Writes a directory's token files atomically, in the layout kubelet's AtomicWriter gives projected volumes
 * (AW-1..AW-16). {@link AtomicWriter} puts each version in a fresh timestamped directory and switches the
 * {@code ..data} symlink to it with one rename(2), so a reader sees the whole old set or the whole new set; its
 * {@code write} comment numbers the steps. {@link FileContent} is one file's bytes, mode and owner;
 * {@link DirectoryAccess} chooses the group and mode of the directories from the files' owners; {@code VersionDiff}
 * compares a payload with what is on disk; {@code VersionFiles}, {@code DataLinks} and {@code OldVersions} are the
 * writer's steps 6, 10 and 11, and 12. Path rules come from {@code io.satoken.common.paths}. The refresh scheduler
 * owns one writer per directory, through {@link DirectoryWriter}, the one method it needs.
 */
package io.satoken.agent.write;
