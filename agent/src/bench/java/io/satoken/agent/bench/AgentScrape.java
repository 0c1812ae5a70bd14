package io.satoken.agent.bench;

import io.satoken.common.testing.PrometheusText;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/** What the load driver reads from the agent's /metrics: one scrape's figures, and the TokenRequest rate sampler. */
record AgentScrape(String text) {

    static AgentScrape of(String url) throws IOException {
        return new AgentScrape(httpGet(url));
    }

    /** The sum of the samples of {@code name} (a trailing "{" is ignored) whose labels contain all of {@code labels}. */
    double sum(String name, String... labels) {
        return PrometheusText.value(text, name.endsWith("{") ? name.substring(0, name.length() - 1) : name, labels);
    }

    /** Every sample, keyed by its name and labels as the exposition writes them. */
    Map<String, Double> values() {
        Map<String, Double> out = new TreeMap<>();
        PrometheusText.parse(text).families().values().forEach(f -> f.samples().forEach(sample -> out.put(
                sample.name() + (sample.labels().isEmpty() ? "" : sample.labels().entrySet().stream()
                        .map(l -> l.getKey() + "=\"" + l.getValue() + "\"").collect(Collectors.joining(",", "{", "}"))),
                Double.parseDouble(sample.value()))));
        return out;
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
