/**
 * Keeps every registered token directory holding valid tokens. {@link RefreshScheduler} has one timer per distinct
 * {@code TokenKey}, set at its token's refresh time (no polling loop); when it fires, the token comes from the
 * {@code token.TokenCache} and every directory that holds it is rewritten by its {@code write.AtomicWriter}. A
 * failure is retried after a {@link Backoff} delay (capped, jittered, never sooner than Retry-After) while the cache
 * serves the still-valid token. Timers run on a {@link TaskScheduler}, the seam tests drive with a fake clock; what
 * happened goes to {@link RefreshListener}s (metrics, CSI volumes, the clock-skew check). Directories are put and
 * removed by {@code csi.CsiVolumes} and {@code statics.StaticTokens}.
 *
 * <p>Inside the scheduler, a {@link KeyRefresh} is one key's state machine (its timer, token, failures and the one
 * check that an attempt is still current); a {@link DirectoryOutput} is one directory with its
 * {@code write.DirectoryWriter} (passed in, an {@code AtomicWriter} by default), which reports rotations;
 * {@link TokenPayload} makes the files; common's {@code DurationText} writes the retry delays. {@link RefreshPolicy} says
 * when a token is due: at 80 % of its lifetime or after 24 h, less a jitter (TM-8, TM-C1).
 */
package io.satoken.agent.refresh;
