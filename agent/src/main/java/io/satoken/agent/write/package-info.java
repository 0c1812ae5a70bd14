/**
 * Writes a directory's token files atomically, in the layout kubelet's AtomicWriter gives projected volumes
 * (AW-1..AW-16). {@link AtomicWriter} puts each version in a fresh timestamped directory and switches the
 * {@code ..data} symlink to it with one rename(2), so a reader sees the whole old set or the whole new set; the
 * whole algorithm is in that one file, its {@code write} comment numbering the steps and the parts of each step
 * following in order. {@code OpenDir} holds a directory open for the operations no link may redirect
 * ({@code openat}, {@code unlinkat}). {@link FileContent} is one file's bytes, mode and owner;
 * {@link DirectoryAccess} chooses the group and mode of the directories from the files' owners;
 * {@link Directories} makes a static projection's directories; {@link PublishedFile} reads a file of the published
 * version back. Path rules come from {@code io.satoken.common.paths}. The refresh scheduler owns one writer per
 * directory, through {@link DirectoryWriter}, the one method it needs.
 */
package io.satoken.agent.write;
