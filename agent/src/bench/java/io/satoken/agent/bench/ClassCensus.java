package io.satoken.agent.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The classes a JVM loaded, counted by the library they come from: what the agent's class metadata (metaspace,
 * class space, symbols) is spent on. It reads the file that {@code -Xlog:class+load=info:file=PATH} writes,
 * one line per class loaded ({@link #OPTION}); classes unloaded again are still counted (the agent unloads
 * none of its own: they all live in the application class loader).
 */
final class ClassCensus {

    /** The JVM option that makes the log this census reads; {@code %s} is the file. */
    static final String OPTION = "-Xlog:class+load=info:file=%s:uptime";

    /** Group name, then the package prefixes that belong to it; the first group whose prefix matches wins. */
    private static final List<Map.Entry<String, List<String>>> GROUPS = List.of(
            Map.entry("client-java models", List.of("io.kubernetes.client.openapi.models.")),
            Map.entry("client-java (the rest)", List.of("io.kubernetes.client.")),
            Map.entry("Gson, gson-fire", List.of("com.google.gson.", "io.gsonfire.")),
            Map.entry("OkHttp, Okio, Kotlin", List.of("okhttp3.", "okio.", "kotlin.")),
            Map.entry("gRPC, its Netty", List.of("io.grpc.", "io.perfmark.")),
            Map.entry("protobuf, CSI messages", List.of("com.google.protobuf.", "com.google.rpc.", "csi.v1.",
                    "io.satoken.agent.csi.wire.")),
            Map.entry("Guava", List.of("com.google.common.", "com.google.thirdparty.")),
            Map.entry("Caffeine", List.of("com.github.benmanes.caffeine.")),
            Map.entry("Micrometer, Prometheus", List.of("io.micrometer.", "io.prometheus.", "org.HdrHistogram.",
                    "org.LatencyUtils.")),
            Map.entry("nimbus-jose-jwt", List.of("com.nimbusds.")),
            Map.entry("SLF4J, Logback", List.of("org.slf4j.", "ch.qos.logback.")),
            Map.entry("SnakeYAML", List.of("org.yaml.snakeyaml.")),
            Map.entry("picocli", List.of("picocli.")),
            Map.entry("JNA", List.of("com.sun.jna.")),
            Map.entry("BouncyCastle", List.of("org.bouncycastle.")),
            Map.entry("Bucket4j", List.of("io.github.bucket4j.")),
            Map.entry("Jackson", List.of("com.fasterxml.jackson.")),
            Map.entry("Apache Commons", List.of("org.apache.commons.")),
            Map.entry("satoken", List.of("io.satoken.")),
            Map.entry("JDK", List.of("java.", "javax.", "jdk.", "sun.", "com.sun.")));

    /** {@code [0.123s] NAME source: ...} ({@link #OPTION}'s decorations); hidden classes carry {@code /0x...}. */
    private static final Pattern LINE = Pattern.compile("^\\[[^]]*\\] ([^ /]+)");

    private ClassCensus() {
    }

    /** {@code ClassCensus LOG}: the census of a log that {@link #OPTION} wrote, for a JVM run by hand. */
    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: ClassCensus LOG (written by " + String.format(OPTION, "LOG") + ")");
            System.exit(2);
        }
        System.out.println(format(count(Path.of(args[0]))));
    }

    /** Classes by group, in {@link #GROUPS}' order, then "other" and "total"; groups with none are left out. */
    static Map<String, Integer> count(Path log) throws IOException {
        Map<String, Integer> counts = new LinkedHashMap<>();
        GROUPS.forEach(g -> counts.put(g.getKey(), 0));
        counts.put("other", 0);
        int total = 0;
        try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
            for (String line : (Iterable<String>) lines::iterator) {
                Matcher m = LINE.matcher(line);
                if (m.find()) {
                    counts.merge(group(m.group(1)), 1, Integer::sum);
                    total++;
                }
            }
        }
        counts.values().removeIf(n -> n == 0);
        counts.put("total", total);
        return counts;
    }

    static String group(String className) {
        for (Map.Entry<String, List<String>> g : GROUPS) {
            for (String prefix : g.getValue()) {
                if (className.startsWith(prefix)) {
                    return g.getKey();
                }
            }
        }
        return "other";
    }

    /** One line per group, for the driver's report. */
    static String format(Map<String, Integer> counts) {
        StringBuilder out = new StringBuilder();
        counts.forEach((group, n) -> out.append(String.format("[bench]   %-26s %6d%n", group, n)));
        return out.toString().stripTrailing();
    }
}
