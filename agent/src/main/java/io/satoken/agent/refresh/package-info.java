/**
 * Keeps every registered token directory holding valid tokens. {@link RefreshScheduler} has one timer per distinct
 * {@code TokenKey}, set at its token's refresh time ({@code token.RefreshPolicy}; no polling loop); when it fires,
 * the token comes from the {@code token.TokenCache}, its one home, and every directory that holds it is rewritten by
 * its {@code write.AtomicWriter}. A failure is retried after a {@link Backoff} delay (capped, jittered, never sooner
 * than Retry-After) while the cache serves the still-valid token. Timers run on a {@link TaskScheduler}, the seam
 * tests drive with a fake clock. Directories are put and removed by {@code csi.CsiVolumes} and
 * {@code statics.StaticTokens}; {@link RefreshScheduler#put} answers with the directory's first write, as a future
 * ({@link RefreshScheduler#resume} puts one an earlier run wrote, whose first write no one waits for).
 * The one {@link RefreshListener} (several, through {@link RefreshListener#all}) observes what happened
 * (metrics, reads, reloads, the clock-skew check, the pods' Warning Events). Before a directory is put, {@link TokenAdoption} puts the still-valid tokens its files hold into the cache,
 * so a restart requests none of them.
 *
 * <p>Inside the scheduler, a {@link KeyRefresh} is one key's state machine (its timer, failures and the one check
 * that an attempt is still current); a {@link DirectoryOutput} is one directory with its
 * {@code write.DirectoryWriter} (passed in, an {@code AtomicWriter} by default), the record of what it wrote and
 * the future of its first write; {@link TokenPayload} makes the files; common's {@code DurationText} writes the
 * retry delays.
 */
package io.satoken.agent.refresh;
