package io.satoken.agent.write;

import java.io.IOException;
import java.util.Map;

/** Publishes one directory's files as one version; {@link AtomicWriter} is the real one, tests pass their own. */
@FunctionalInterface
public interface DirectoryWriter {

    /**
     * Publishes the payload as the directory's new content.
     *
     * @param payload relative path to content
     * @return true when the files on disk changed, false when the payload was already there
     */
    boolean write(Map<String, FileContent> payload) throws IOException;
}
