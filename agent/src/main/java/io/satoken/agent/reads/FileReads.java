package io.satoken.agent.reads;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.token.IssuedToken;
import java.time.Instant;

/**
 * One token file's reads, as {@link ReadTracker} follows them. Versions are the tracker's count of the
 * directory's versions: the token now in the file appeared in version {@link #since}, so an open in that
 * version or a later one is a read of it. Not thread-safe: the tracker calls it with its lock held.
 */
final class FileReads {

    Projection projection;
    IssuedToken token;
    long since;
    Instant lastRead;
    long lastReadVersion = -1;
    boolean everRead;
    Instant rotatedAt;
    Instant flaggedAt;
    /** When the consumer was reported still holding a token about to expire ({@code TokenExpiringUnread}). */
    Instant expiringAt;
    /** Counts the file's tokens, so that a check set for an earlier one does nothing. */
    long checks;
    TaskScheduler.Cancellable check;
    TaskScheduler.Cancellable escalation;
    /** The second report is due no later than the first, so the first's check makes it too. */
    boolean escalateWithCheck;

    /** A new token is in the file from {@code version} on; a check set for the one before is called off. */
    void newToken(Projection projection, IssuedToken token, long version) {
        this.projection = projection;
        this.token = token;
        this.since = version;
        this.rotatedAt = null;
        cancelCheck();
    }

    /** The file was opened in {@code version}; true when that is a read of the token now in the file. */
    boolean read(Instant at, long version) {
        everRead = true;
        if (version < since) {
            return false;
        }
        lastRead = at;
        lastReadVersion = version;
        return true;
    }

    /** Whether the file's consumer is overdue: it read the file before, but not the token now in it. */
    boolean due() {
        return everRead && lastReadVersion < since;
    }

    void cancelCheck() {
        checks++;
        if (check != null) {
            check.cancel();
            check = null;
        }
        if (escalation != null) {
            escalation.cancel();
            escalation = null;
        }
    }

    ReadTracker.Reads snapshot() {
        return new ReadTracker.Reads(lastRead, everRead, lastReadVersion >= since, rotatedAt, flaggedAt,
                expiringAt);
    }
}
