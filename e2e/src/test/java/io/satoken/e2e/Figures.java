package io.satoken.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The figures a failure test measured, for RELIABILITY.md: appended to {@code target/reliability/<test>.txt}
 * and printed with a {@code RELIABILITY} prefix, so one run of the suite gives every figure.
 */
final class Figures {

    private Figures() {
    }

    /** Records {@code figure} (e.g. {@code "torn reads: 0 of 1,204,332 reads"}) under {@code test}. */
    static void record(String test, String figure) {
        String line = Instant.now().truncatedTo(ChronoUnit.SECONDS) + " " + figure + "\n";
        try {
            Files.writeString(E2E.figuresDir().resolve(test + ".txt"), line, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        System.out.println("RELIABILITY " + test + ": " + figure);
    }
}
