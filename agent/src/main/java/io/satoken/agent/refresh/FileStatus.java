package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.IssuedToken;
import java.time.Instant;
import java.util.List;

/**
 * What the scheduler knows of one file, for the status endpoint: never the token itself, only its times.
 *
 * @param issuedAt the issue time of the token the file holds, or null before the first token
 * @param expiresAt the expiry of the token the file holds, or null before the first token
 * @param nextAttempt when the token is next refreshed (or retried), or null while an attempt runs
 * @param lastError the last failed fetch or write, or null when none failed since the key was added
 * @param lastErrorAt when that failure happened
 */
public record FileStatus(Projection projection, RefreshScheduler.State state, Instant issuedAt, Instant expiresAt,
        Instant nextAttempt, String lastError, Instant lastErrorAt) {

    /** A directory and its files, in the directory's order. */
    public record Directory(TokenDirectory dir, List<FileStatus> files) {
        public Directory {
            files = List.copyOf(files);
        }
    }

    /** @param token the token the file holds, or null before its first write */
    static FileStatus of(Projection projection, KeyRefresh key, IssuedToken token) {
        return new FileStatus(projection, key.state(), token == null ? null : token.issuedAt(),
                token == null ? null : token.expiresAt(), key.next(), key.lastError(), key.lastErrorAt());
    }
}
