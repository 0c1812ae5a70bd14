package io.satoken.e2e.node;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The sysctls a test node rewrites, read before it starts and written back when it closes, so a test run
 * leaves the machine's kernel as it found it: the kubelet, with {@code protectKernelDefaults} off, sets
 * {@code vm.overcommit_memory=1}, {@code vm.panic_on_oom=0}, {@code kernel.panic=10},
 * {@code kernel.panic_on_oops=1} and the two {@code kernel.keys} limits (it logs "Updating kernel flag" for
 * each it changes); the CNI bridge plugin, as the pods' gateway, sets {@code net.ipv4.ip_forward=1}.
 */
final class KernelSettings {

    static final List<String> REWRITTEN = List.of("vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic",
            "kernel.panic_on_oops", "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes", "net.ipv4.ip_forward");

    private final Map<String, String> saved;

    private KernelSettings(Map<String, String> saved) {
        this.saved = saved;
    }

    /** Reads the current values. */
    static KernelSettings save() throws IOException {
        Map<String, String> values = new LinkedHashMap<>();
        for (String name : REWRITTEN) {
            values.put(name, read(file(name)));
        }
        return new KernelSettings(values);
    }

    /** Writes the saved values back; reports (never throws) a value it could not restore. */
    void restore() {
        saved.forEach((name, value) -> {
            try {
                if (!read(file(name)).equals(value)) {
                    Files.writeString(file(name), value + "\n");
                }
            } catch (IOException e) {
                System.err.println("node: could not restore " + name + "=" + value + ": " + e.getMessage());
            }
        });
    }

    Map<String, String> values() {
        return Collections.unmodifiableMap(saved);
    }

    /**
     * A sysctl's value, read in one {@code read(2)}: the kernel answers a read at a non-zero offset with EOF,
     * so a reader that starts small (as {@code Files.readString} does on a file of size 0) gets a truncated
     * value: "1" for "10".
     */
    static String read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[4096];
            int n = in.read(buffer);
            return n <= 0 ? "" : new String(buffer, 0, n, StandardCharsets.US_ASCII).strip();
        }
    }

    private static Path file(String name) {
        return Path.of("/proc/sys", name.replace('.', '/'));
    }
}
