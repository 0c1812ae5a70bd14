package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.util.List;

/**
 * Told what the {@link RefreshScheduler} did: files written, fetches and writes that failed. Called on
 * the scheduler's threads, outside its locks; implementations must be quick and must never log a token.
 */
public interface RefreshListener {

    /**
     * A token file's content changed on disk.
     *
     * @param rotation false for the first token written at this path, true when it replaced one
     */
    default void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
    }

    /**
     * A path's first token was already on disk, so nothing was written: a token adopted at start. Not a write; told
     * so that a listener following each file's token knows the one in place.
     */
    default void unchanged(TokenDirectory dir, Projection projection, IssuedToken token) {
    }

    /**
     * A token could not be fetched or refreshed; it will be retried.
     *
     * @param dirs the directories that need this token
     * @param serving true when a still-valid token keeps being served (a failed refresh, TM-5)
     */
    default void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error, boolean serving) {
    }

    /**
     * A token of a directory past its first write (written, by this run or by an earlier one that
     * {@link RefreshScheduler#resume} names, or failed and kept) could not be fetched or refreshed:
     * told once for each such directory that needs it, after {@link #fetchFailed}. The failure that fails a
     * directory's first write is that write's (the future {@link RefreshScheduler#put} answers with, which whoever
     * put the directory reports), and this is not called for it.
     *
     * @param serving true when a still-valid token keeps being served
     */
    default void refreshFailed(TokenDirectory dir, TokenKey key, TokenSourceException error, boolean serving) {
    }

    /** A directory could not be written; the previous files stay and the write is retried. */
    default void writeFailed(TokenDirectory dir, Exception error) {
    }

    RefreshListener NONE = new RefreshListener() { };

    /** Tells each listener in turn. */
    static RefreshListener all(RefreshListener... listeners) {
        List<RefreshListener> each = List.of(listeners);
        return new RefreshListener() {
            @Override
            public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
                each.forEach(l -> l.written(dir, projection, token, rotation));
            }

            @Override
            public void unchanged(TokenDirectory dir, Projection projection, IssuedToken token) {
                each.forEach(l -> l.unchanged(dir, projection, token));
            }

            @Override
            public void fetchFailed(TokenKey key, List<TokenDirectory> dirs, TokenSourceException error,
                    boolean serving) {
                each.forEach(l -> l.fetchFailed(key, dirs, error, serving));
            }

            @Override
            public void refreshFailed(TokenDirectory dir, TokenKey key, TokenSourceException error, boolean serving) {
                each.forEach(l -> l.refreshFailed(dir, key, error, serving));
            }

            @Override
            public void writeFailed(TokenDirectory dir, Exception error) {
                each.forEach(l -> l.writeFailed(dir, error));
            }
        };
    }
}
