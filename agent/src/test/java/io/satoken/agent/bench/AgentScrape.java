package io.satoken.agent.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** What the load driver reads from the agent's /metrics: one scrape's figures, and the TokenRequest rate sampler. */
record AgentScrape(Map<String, Double> values) {

    static AgentScrape of(String url) throws IOException {
        Map<String, Double> values = new TreeMap<>();
        for (String line : httpGet(url).split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            String name = line.substring(0, space);
            if (name.startsWith("satoken_") || name.startsWith("jvm_memory_used_bytes")
                    || name.startsWith("jvm_memory_committed_bytes") || name.startsWith("jvm_threads_live")
                    || name.startsWith("jvm_gc_pause_seconds_count")) {
                values.put(name, Double.parseDouble(line.substring(space + 1)));
            }
        }
        return new AgentScrape(values);
    }

    double sum(String prefix, String... labels) {
        return values.entrySet().stream()
                .filter(e -> e.getKey().startsWith(prefix) && Arrays.stream(labels).allMatch(e.getKey()::contains))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    double requests() {
        return sum("satoken_token_requests_total{");
    }

    double requests(String result) {
        return sum("satoken_token_requests_total{", "result=\"" + result + "\"");
    }

    static String httpGet(String url) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
        c.setConnectTimeout(2000);
        c.setReadTimeout(10_000);
        try (InputStream in = c.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } finally {
            c.disconnect();
        }
    }

    /** Reads satoken_token_requests_total once a second, for the observed request rate. */
    static final class Sampler {
        final List<long[]> samples = new CopyOnWriteArrayList<>(); // {nanoTime, total requests}
        private final String url;
        private volatile boolean running = true;
        private Thread thread;

        Sampler(String url) {
            this.url = url;
        }

        void start() {
            thread = new Thread(() -> {
                while (running) {
                    try {
                        samples.add(new long[] {System.nanoTime(), Math.round(AgentScrape.of(url).requests())});
                        Thread.sleep(1000);
                    } catch (InterruptedException e) {
                        return;
                    } catch (IOException e) {
                        System.out.println("[bench] metrics scrape failed: " + e);
                    }
                }
            }, "metrics-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            thread.interrupt();
            thread.join();
        }

        /** The highest rate between two consecutive samples, requests/s. */
        double maxRate() {
            double max = 0;
            for (int i = 1; i < samples.size(); i++) {
                long[] a = samples.get(i - 1);
                long[] b = samples.get(i);
                max = Math.max(max, (b[1] - a[1]) / ((b[0] - a[0]) / 1e9));
            }
            return max;
        }

        /** max over all sample pairs of (requests between them − qps × time between them): at most burst. */
        double maxExcess(double qps) {
            double max = 0;
            for (int i = 0; i < samples.size(); i++) {
                for (int j = i + 1; j < samples.size(); j++) {
                    long[] a = samples.get(i);
                    long[] b = samples.get(j);
                    max = Math.max(max, (b[1] - a[1]) - qps * ((b[0] - a[0]) / 1e9));
                }
            }
            return max;
        }

        /** The mean rate from the first sample with a request to the first sample with the final count. */
        double steadyRate() {
            long[] first = samples.stream().filter(s -> s[1] > 0).findFirst().orElse(null);
            long total = samples.isEmpty() ? 0 : samples.get(samples.size() - 1)[1];
            long[] last = samples.stream().filter(s -> s[1] == total).findFirst().orElse(null);
            if (first == null || last == null || last[0] <= first[0]) {
                return Double.NaN;
            }
            return (last[1] - first[1]) / ((last[0] - first[0]) / 1e9);
        }
    }
}
