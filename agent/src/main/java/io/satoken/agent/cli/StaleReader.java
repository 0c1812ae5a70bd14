package io.satoken.agent.cli;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.token.IssuedToken;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The demo's consumer that never re-reads: it opens one token file once, right after its first token is written,
 * and never again, like a program that reads its token at start and keeps it. What it reads is thrown away.
 */
final class StaleReader implements RefreshListener {

    private final Path file;
    private final InstantSource clock;
    private final PrintWriter out;
    private final AtomicBoolean done = new AtomicBoolean();

    /** @param file the token file to read once, as the writer names it (its directory resolved with its path) */
    StaleReader(Path file, InstantSource clock, PrintWriter out) {
        this.file = file;
        this.clock = clock;
        this.out = out;
    }

    @Override
    public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
        if (!dir.dir().resolve(projection.path()).equals(file) || !done.compareAndSet(false, true)) {
            return;
        }
        String what;
        try {
            Files.readAllBytes(file);
            what = "opened " + file + " once; it will not open it again";
        } catch (IOException e) {
            what = "cannot read " + file + ": " + Failures.inWords(e);
        }
        synchronized (out) {
            out.printf("%s stale reader: %s%n", clock.instant().truncatedTo(ChronoUnit.MILLIS), what);
            out.flush();
        }
    }
}
