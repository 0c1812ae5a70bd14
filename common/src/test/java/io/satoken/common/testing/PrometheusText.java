package io.satoken.common.testing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scrape in Prometheus text format 0.0.4, read into metric families, and the conventions every satoken
 * program's {@code /metrics} keeps (https://prometheus.io/docs/practices/naming/, "Instrumentation"):
 * HELP on every family, counters named {@code _total}, base units, a few buckets per histogram, no NaN.
 */
public record PrometheusText(Map<String, Family> families) {

    /** Histogram buckets per series, {@code +Inf} included. */
    public static final int MAX_BUCKETS = 12;

    /** The figures every program exports, as Prometheus's client libraries name them. */
    public static final List<String> PROCESS_SET = List.of("process_cpu_seconds_total", "process_resident_memory_bytes",
            "process_virtual_memory_bytes", "process_open_fds", "process_max_fds", "process_start_time_seconds");

    public record Sample(String name, Map<String, String> labels, String value) {}

    public record Family(String name, String type, String help, List<Sample> samples) {
        /** The values a label takes in this family's samples. */
        public List<String> labelValues(String label) {
            return samples.stream().map(s -> s.labels().get(label)).filter(v -> v != null).distinct().sorted().toList();
        }
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    public static PrometheusText parse(String text) {
        Map<String, String> help = new LinkedHashMap<>();
        Map<String, String> type = new LinkedHashMap<>();
        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        for (String line : text.lines().toList()) {
            if (line.startsWith("# HELP ")) {
                String rest = line.substring(7);
                int space = rest.indexOf(' ');
                help.put(space < 0 ? rest : rest.substring(0, space), space < 0 ? "" : rest.substring(space + 1).trim());
            } else if (line.startsWith("# TYPE ")) {
                String[] parts = line.substring(7).split(" ");
                type.put(parts[0], parts[1]);
                samples.putIfAbsent(parts[0], new ArrayList<>());
            } else if (!line.isBlank() && !line.startsWith("#")) {
                Matcher m = SAMPLE.matcher(line);
                if (!m.matches()) {
                    throw new IllegalArgumentException("not a sample line: " + line);
                }
                Map<String, String> labels = new TreeMap<>();
                if (m.group(3) != null) {
                    Matcher l = LABEL.matcher(m.group(3));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                samples.get(familyOf(m.group(1), type)).add(new Sample(m.group(1), labels, m.group(4)));
            }
        }
        Map<String, Family> families = new TreeMap<>();
        type.forEach((name, t) -> families.put(name, new Family(name, t, help.getOrDefault(name, ""),
                List.copyOf(samples.get(name)))));
        return new PrometheusText(families);
    }

    /**
     * The sum of the samples named {@code name} whose labels contain every one of {@code labels}
     * ({@code result="failure"}); 0 when there are none, as for a counter never incremented. Reads the text
     * line by line, so it also takes a scrape without # TYPE lines.
     */
    public static double value(String text, String name, String... labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !line.startsWith(name)) {
                continue;
            }
            String rest = line.substring(name.length());
            if (!rest.startsWith("{") && !rest.startsWith(" ")) {
                continue; // another name with this one as prefix
            }
            String labelPart = rest.startsWith("{") ? rest.substring(0, rest.indexOf('}') + 1) : "";
            if (Arrays.stream(labels).allMatch(labelPart::contains)) {
                sum += Double.parseDouble(rest.substring(rest.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private static String familyOf(String sample, Map<String, String> types) {
        if (types.containsKey(sample)) {
            return sample;
        }
        for (String suffix : List.of("_bucket", "_count", "_sum", "_created")) {
            if (sample.endsWith(suffix) && types.containsKey(sample.substring(0, sample.length() - suffix.length()))) {
                return sample.substring(0, sample.length() - suffix.length());
            }
        }
        throw new IllegalArgumentException("sample " + sample + " has no # TYPE line");
    }

    /** What breaks the conventions, one line each; empty when all is well. */
    public List<String> violations() {
        List<String> out = new ArrayList<>();
        for (Family f : families.values()) {
            if (f.help().isBlank()) {
                out.add(f.name() + ": no HELP text");
            }
            if (f.type().equals("counter") != f.name().endsWith("_total")) {
                out.add(f.name() + ": a " + f.type() + (f.type().equals("counter") ? " not named _total" : " named _total"));
            }
            if (f.name().matches(".*_(ns|nanoseconds|ms|milliseconds|us|microseconds|kb|kilobytes|mb|megabytes)(_total)?")) {
                out.add(f.name() + ": not in base units (seconds, bytes)");
            }
            for (Sample s : f.samples()) {
                if (s.value().equals("NaN")) {
                    out.add(s.name() + s.labels() + ": NaN");
                }
            }
            if (f.type().equals("histogram")) {
                Map<Map<String, String>, Integer> buckets = new LinkedHashMap<>();
                for (Sample s : f.samples()) {
                    if (s.name().endsWith("_bucket")) {
                        Map<String, String> series = new TreeMap<>(s.labels());
                        series.remove("le");
                        buckets.merge(series, 1, Integer::sum);
                    }
                }
                buckets.forEach((series, n) -> {
                    if (n > MAX_BUCKETS) {
                        out.add(f.name() + series + ": " + n + " buckets, more than " + MAX_BUCKETS);
                    }
                });
            }
        }
        for (String name : PROCESS_SET) {
            if (!families.containsKey(name)) {
                out.add(name + ": missing (the standard process_* set)");
            }
        }
        return out;
    }
}
