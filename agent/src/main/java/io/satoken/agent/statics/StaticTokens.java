package io.satoken.agent.statics;

import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.refresh.TokenAdoption;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.Directories;
import io.satoken.agent.write.DirectoryAccess;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.time.InstantSource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the scheduler running exactly the static directories of the current config (systemd mode).
 *
 * <p>{@link #apply} moves from the running set to a new one:
 * <ol>
 *   <li>a directory no longer configured is unregistered and its token files are removed (only what the
 *       writer's layout put there; other files and a non-empty directory stay);</li>
 *   <li>an unchanged directory is left alone: no request, no write;</li>
 *   <li>a new directory is created if missing, with its parents, each with the {@link DirectoryAccess} of
 *       its files (0750 and their group, when they have one), adopts still-valid tokens already in it, and
 *       is registered;</li>
 *   <li>a changed directory is registered again: new or changed tokens are requested, files no longer
 *       configured disappear from its payload, a new mode or owner is applied.</li>
 * </ol>
 */
public final class StaticTokens {

    private static final Logger log = LoggerFactory.getLogger(StaticTokens.class);

    private final RefreshScheduler scheduler;
    private final TokenAdoption adoption;
    private final InstantSource clock;
    private final Map<String, TokenDirectory> running = new LinkedHashMap<>();

    public StaticTokens(RefreshScheduler scheduler, TokenAdoption adoption, InstantSource clock) {
        this.scheduler = scheduler;
        this.adoption = adoption;
        this.clock = clock;
    }

    /** Moves to the given directories; see the class comment for the steps. */
    public synchronized void apply(List<TokenDirectory> next) {
        Map<String, TokenDirectory> wanted = next.stream()
                .collect(Collectors.toMap(TokenDirectory::name, d -> d, (a, b) -> b, LinkedHashMap::new));
        for (TokenDirectory gone : List.copyOf(running.values())) {
            if (!wanted.containsKey(gone.name())) {
                scheduler.remove(gone.name()); // 1
                running.remove(gone.name());
                try {
                    new AtomicWriter(gone.dir(), clock).remove();
                    log.info("stopped {}: its token files are removed", gone.dir());
                } catch (IOException e) {
                    log.warn("stopped {}, but removing its token files failed: {}", gone.dir(), Failures.inWords(e));
                }
            }
        }
        for (TokenDirectory dir : wanted.values()) {
            TokenDirectory before = running.get(dir.name());
            if (dir.equals(before)) {
                continue; // 2
            }
            if (before == null) {
                try {
                    Directories.create(dir.dir(), DirectoryAccess.of(dir.projections()));
                } catch (IOException e) {
                    log.error("cannot create {}: {}", dir.dir(), Failures.inWords(e));
                    continue; // the next config change retries it; nothing else is held up
                }
                int adopted = adoption.adopt(dir); // 3
                log.info("started {} ({} file(s), {} adopted from disk)", dir.dir(), dir.projections().size(), adopted);
            } else {
                log.info("changed {}: rewriting", dir.dir()); // 4
            }
            running.put(dir.name(), dir);
            scheduler.put(dir);
        }
    }

    /** The names of the directories running now. */
    public synchronized Set<String> names() {
        return Set.copyOf(running.keySet());
    }

    /** True once every running static directory has had all of its files written. */
    public boolean allWritten() {
        return scheduler.allWritten(names());
    }
}
