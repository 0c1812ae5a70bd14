package io.satoken.agent.write;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The user this process acts as, from the kernel: the owner of every directory the writer makes. */
final class ProcessUser {

    private static final Path STATUS = Path.of("/proc/self/status");

    private ProcessUser() {
    }

    /** The effective uid: the second field of {@code /proc/self/status}'s {@code Uid:} line (real, effective, saved, fs). */
    static int effectiveUid() throws IOException {
        for (String line : Files.readAllLines(STATUS, StandardCharsets.US_ASCII)) {
            if (line.startsWith("Uid:")) {
                String[] fields = line.substring(4).trim().split("\\s+");
                if (fields.length >= 2) {
                    try {
                        return Integer.parseInt(fields[1]);
                    } catch (NumberFormatException e) {
                        break;
                    }
                }
            }
        }
        throw new IOException(STATUS + ": no effective uid in its Uid: line");
    }
}
