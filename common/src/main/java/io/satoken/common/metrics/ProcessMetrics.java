package io.satoken.common.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalDouble;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The standard Prometheus {@code process_*} set, as the official client libraries export it:
 * {@code process_cpu_seconds_total}, {@code process_resident_memory_bytes}, {@code process_virtual_memory_bytes},
 * {@code process_open_fds}, {@code process_max_fds} and {@code process_start_time_seconds}.
 *
 * <p>Memory and file descriptors are read from {@code /proc/self} ({@code status}, {@code fd/}, {@code limits}).
 * A figure whose source is missing at bind time (not Linux) is left out rather than reported as NaN; a read
 * that fails later repeats the last good value. CPU time and the start time come from the JVM.
 */
public final class ProcessMetrics implements MeterBinder {

    private final Path procSelf;
    private final Supplier<OptionalDouble> cpuSeconds;
    private final double startSeconds;

    /** Reads this process's {@code /proc/self}. */
    public ProcessMetrics() {
        this(Path.of("/proc/self"), ProcessMetrics::jvmCpuSeconds,
                ManagementFactory.getRuntimeMXBean().getStartTime() / 1000.0);
    }

    ProcessMetrics(Path procSelf, Supplier<OptionalDouble> cpuSeconds, double startSeconds) {
        this.procSelf = procSelf;
        this.cpuSeconds = cpuSeconds;
        this.startSeconds = startSeconds;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (cpuSeconds.get().isPresent()) {
            FunctionCounter.builder("process.cpu", cpuSeconds, s -> s.get().orElse(0))
                    .baseUnit("seconds")
                    .description("Total user and system CPU time spent in seconds.")
                    .register(registry);
        }
        Gauge.builder("process.start.time", () -> startSeconds)
                .baseUnit("seconds")
                .description("Start time of the process since unix epoch in seconds.")
                .register(registry);
        gauge(registry, "process.resident.memory", "bytes", "Resident memory size in bytes.",
                () -> statusKilobytes("VmRSS:") * 1024);
        gauge(registry, "process.virtual.memory", "bytes", "Virtual memory size in bytes.",
                () -> statusKilobytes("VmSize:") * 1024);
        gauge(registry, "process.open.fds", null, "Number of open file descriptors.", this::openFds);
        gauge(registry, "process.max.fds", null, "Maximum number of open file descriptors.", this::maxFds);
    }

    /** What a /proc read answers; it may fail. */
    @FunctionalInterface
    private interface ProcRead {
        double read() throws IOException;
    }

    private static void gauge(MeterRegistry registry, String name, String unit, String help, ProcRead read) {
        AtomicReference<Double> last = new AtomicReference<>();
        try {
            last.set(read.read());
        } catch (IOException | RuntimeException e) {
            return; // no /proc here: leave the figure out
        }
        Gauge.builder(name, () -> {
                    try {
                        last.set(read.read());
                    } catch (IOException | RuntimeException e) {
                        // keep the last good value; a gap in /proc must not become NaN
                    }
                    return last.get();
                })
                .baseUnit(unit)
                .description(help)
                .register(registry);
    }

    private double statusKilobytes(String field) throws IOException {
        for (String line : Files.readAllLines(procSelf.resolve("status"))) {
            if (line.startsWith(field)) {
                // "VmRSS:	   12345 kB"
                return Double.parseDouble(line.substring(field.length()).trim().split("\\s+")[0]);
            }
        }
        throw new IOException(procSelf.resolve("status") + ": no " + field + " line");
    }

    private double openFds() throws IOException {
        try (Stream<Path> fds = Files.list(procSelf.resolve("fd"))) {
            return fds.count();
        }
    }

    private double maxFds() throws IOException {
        for (String line : Files.readAllLines(procSelf.resolve("limits"))) {
            if (line.startsWith("Max open files")) {
                // "Max open files            1048576              1048576              files"
                return Double.parseDouble(line.substring("Max open files".length()).trim().split("\\s+")[0]);
            }
        }
        throw new IOException(procSelf.resolve("limits") + ": no \"Max open files\" line");
    }

    private static OptionalDouble jvmCpuSeconds() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            long nanos = os.getProcessCpuTime();
            return nanos < 0 ? OptionalDouble.empty() : OptionalDouble.of(nanos / 1e9);
        }
        return OptionalDouble.empty();
    }
}
