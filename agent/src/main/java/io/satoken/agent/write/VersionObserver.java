package io.satoken.agent.write;

import java.nio.file.Path;
import java.util.Collection;

/**
 * Told which timestamped version of a directory is current, so that opens of its files can be watched. Called by
 * the {@link AtomicWriter} with its lock held; implementations must be quick and must not touch the files.
 */
public interface VersionObserver {

    /**
     * The writer is about to read {@code versionDir}'s files itself, to compare them with a new payload: opens of
     * them from now on are the agent's, not a consumer's.
     */
    void comparing(Path targetDir, Path versionDir);

    /**
     * {@code versionDir} holds the directory's files, all written and closed, and {@code ..data} points, or is about
     * to point, at it. Called before the switch, so that no consumer's open of a new file goes unseen.
     *
     * @param paths the files' paths relative to {@code versionDir}
     */
    void current(Path targetDir, Path versionDir, Collection<String> paths);

    /** Observes nothing. */
    VersionObserver NONE = new VersionObserver() {
        @Override
        public void comparing(Path targetDir, Path versionDir) {
        }

        @Override
        public void current(Path targetDir, Path versionDir, Collection<String> paths) {
        }
    };
}
