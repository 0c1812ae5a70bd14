package io.satoken.common.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a JVM started with {@code -XX:NativeMemoryTracking=summary} says of its native memory, asked with this
 * JDK's {@code jcmd PID VM.native_memory summary scale=MB}.
 */
public final class NativeMemory {

    private NativeMemory() {
    }

    /**
     * The summary's committed sizes, one line each, stripped: the {@code Total} line first, then one
     * {@code - Category (reserved=..MB, committed=..MB)} line a category.
     */
    public static List<String> committed(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "VM.native_memory", "summary", "scale=MB")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(30, TimeUnit.SECONDS);
        return out.lines().filter(l -> l.contains("committed=") && (l.startsWith("Total") || l.strip().startsWith("-")))
                .map(String::strip).toList();
    }
}
