package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.write.DirectoryWriter;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A registered directory, its writer, the token last written at each path, so that a rotation can be told from
 * a first write and an unchanged file is not reported, and the future of its first write ({@link RefreshScheduler#put}).
 *
 * <p>A directory re-registered at the same place keeps its writer and its record ({@link #replacedBy}); the writer
 * is also the directory's write lock, held from reading the tokens to reporting what changed, so two keys'
 * attempts never write one directory at once nor report out of order.
 */
final class DirectoryOutput {

    private final TokenDirectory dir;
    private final DirectoryWriter writer;
    /** Updated under the write lock; concurrent because {@link #complete} reads it without that lock. */
    private final Map<String, IssuedToken> written;
    private final CompletableFuture<Void> firstWrite;

    /** @param writtenBefore an earlier run wrote it: its first write is not waited for, and is done already */
    DirectoryOutput(TokenDirectory dir, DirectoryWriter writer, boolean writtenBefore) {
        this(dir, writer, new ConcurrentHashMap<>(),
                writtenBefore ? CompletableFuture.completedFuture(null) : new CompletableFuture<>());
    }

    private DirectoryOutput(TokenDirectory dir, DirectoryWriter writer, Map<String, IssuedToken> written,
            CompletableFuture<Void> firstWrite) {
        this.dir = dir;
        this.writer = writer;
        this.written = written;
        this.firstWrite = firstWrite;
    }

    TokenDirectory dir() {
        return dir;
    }

    /**
     * The same writer and record for the directory's new registration, when it is at the same place; a first write
     * still pending is the new registration's too.
     */
    DirectoryOutput replacedBy(TokenDirectory next) {
        return new DirectoryOutput(next, writer, written,
                firstWrite.isDone() ? new CompletableFuture<>() : firstWrite);
    }

    /** Completes when every file has been written once; fails when the first write cannot happen. */
    CompletableFuture<Void> firstWrite() {
        return firstWrite;
    }

    /** The token last written at the path, or null before the first. */
    IssuedToken writtenAt(String path) {
        return written.get(path);
    }

    /** The tokens last written, one per path. */
    Collection<IssuedToken> writtenTokens() {
        return written.values();
    }

    /** The lock to hold while choosing this directory's tokens and writing them; shared with replacements. */
    Object writeLock() {
        return writer;
    }

    /**
     * True when every file has been written once. Read without the write lock (taking it under the scheduler's lock
     * could deadlock with a write); a stale answer only delays readiness.
     */
    boolean complete() {
        return dir.projections().stream().allMatch(p -> written.containsKey(p.path()));
    }

    /** Writes one token per projection and tells the listener which files changed. Call with the write lock held. */
    void write(Map<Projection, IssuedToken> tokens, RefreshListener listener) throws IOException {
        boolean changed = writer.write(TokenPayload.of(tokens));
        tokens.forEach((p, token) -> {
            IssuedToken before = written.put(p.path(), token);
            // Unchanged on disk (a token adopted at restart, say) is not a write worth reporting.
            if (changed && before != token) {
                listener.written(dir, p, token, before != null && !before.token().equals(token.token()));
            } else if (!changed && before == null) {
                listener.unchanged(dir, p, token);
            }
        });
    }
}
