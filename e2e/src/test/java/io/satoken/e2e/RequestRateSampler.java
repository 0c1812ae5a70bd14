package io.satoken.e2e;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Samples an agent's {@code satoken_token_requests_total} (every result) at a fixed period on its own
 * thread, each sample bracketed by the times just before and just after the scrape, so a window between
 * two samples can be measured at its longest.
 */
final class RequestRateSampler implements AutoCloseable {

    /** One scrape: the counter's value, read at some instant between {@code beforeNanos} and {@code afterNanos}. */
    record Sample(long beforeNanos, long afterNanos, double requests) {}

    /** The largest count over any window, compared with what the rate limit allows in it. */
    record Excess(Sample from, Sample to, double counted, double allowed) {
        double seconds() {
            return (to.afterNanos() - from.beforeNanos()) / 1e9;
        }
    }

    private final SatokenProcess agent;
    private final long periodMillis;
    private final List<Sample> samples = new CopyOnWriteArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;
    private volatile int failedScrapes;

    RequestRateSampler(SatokenProcess agent, long periodMillis) {
        this.agent = agent;
        this.periodMillis = periodMillis;
        this.thread = new Thread(this::loop, "request-rate-sampler");
        this.thread.setDaemon(true);
    }

    RequestRateSampler start() {
        thread.start();
        return this;
    }

    private void loop() {
        while (running) {
            long before = System.nanoTime();
            try {
                double value = agent.metric("satoken_token_requests_total");
                samples.add(new Sample(before, System.nanoTime(), value));
            } catch (RuntimeException e) {
                failedScrapes++;
            }
            try {
                Thread.sleep(periodMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    List<Sample> samples() {
        return List.copyOf(samples);
    }

    int failedScrapes() {
        return failedScrapes;
    }

    /**
     * Over every pair of samples (every window the samples delimit, not only neighbours), the count minus
     * what {@code burst + qps * window} allows, window measured at its longest; the worst such window.
     */
    Excess worstWindow(double qps, int burst, double slack) {
        List<Sample> s = new ArrayList<>(samples);
        Excess worst = null;
        for (int i = 0; i < s.size(); i++) {
            for (int j = i + 1; j < s.size(); j++) {
                double counted = s.get(j).requests() - s.get(i).requests();
                double seconds = (s.get(j).afterNanos() - s.get(i).beforeNanos()) / 1e9;
                double allowed = burst + qps * seconds + slack;
                if (worst == null || counted - allowed > worst.counted() - worst.allowed()) {
                    worst = new Excess(s.get(i), s.get(j), counted, allowed);
                }
            }
        }
        return worst;
    }

    /** The highest rate between neighbouring samples over windows of at least {@code minSeconds}, requests/s. */
    double peakRate(double minSeconds) {
        List<Sample> s = new ArrayList<>(samples);
        double peak = 0;
        for (int i = 0; i < s.size(); i++) {
            for (int j = i + 1; j < s.size(); j++) {
                double seconds = (s.get(j).afterNanos() - s.get(i).beforeNanos()) / 1e9;
                if (seconds >= minSeconds) {
                    peak = Math.max(peak, (s.get(j).requests() - s.get(i).requests()) / seconds);
                    break;
                }
            }
        }
        return peak;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join(5000);
    }
}
