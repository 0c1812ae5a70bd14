package io.satoken.agent.reload;

import io.kubernetes.client.openapi.models.V1ContainerState;
import io.kubernetes.client.openapi.models.V1ContainerStatus;
import io.kubernetes.client.openapi.models.V1Pod;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.TaskScheduler;
import io.satoken.agent.token.IssuedToken;
import java.io.IOException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends each volume's {@link ReloadRequest} after its token files rotate, and remembers what came of the last one.
 *
 * <p>After a rotation of a registered directory:
 * <ol>
 *   <li>The scheduler reports the write only once the new version is in place (after the {@code ..data} switch), so
 *       a reader woken by the signal reads the new token; a timer hands the work off the scheduler's thread, and a
 *       directory whose several files rotate together is signalled once.</li>
 *   <li>The pod is read from the API server: its uid must still be the volume's, and the container's status gives
 *       its runtime id. A container that is not running is reported ("not running"), not retried: the next
 *       rotation tries again.</li>
 *   <li>The signal goes to the container's main process ({@link ContainerSignaller}), found by the volume's pod uid
 *       (the kubelet's, never the pod's own words) and that container id, so no other pod's process is reached.</li>
 * </ol>
 * Whether the reader then re-read is the read tracker's to see; {@link #last} is what {@code explain} and the
 * {@code TokenNotReread} Event add to it.
 */
public final class ReloadNotifier implements RefreshListener {

    private static final Logger log = LoggerFactory.getLogger(ReloadNotifier.class);

    /** Reads one pod from the API server; null when there is none. */
    @FunctionalInterface
    public interface Pods {
        V1Pod read(String namespace, String name) throws IOException;
    }

    /**
     * The last signal sent for a directory.
     *
     * @param at when it was sent, or tried
     * @param pid the process it reached, or -1
     * @param problem why it was not delivered, or null when it was
     */
    public record Last(ReloadSignal signal, String container, Instant at, boolean delivered, long pid,
            String problem) { }

    /** What a directory asked for, and its last signal. */
    private static final class Registered {
        final PodIdentity pod;
        final ReloadRequest request;
        Last last;
        boolean pending;

        Registered(PodIdentity pod, ReloadRequest request) {
            this.pod = pod;
            this.request = request;
        }
    }

    private final Pods pods;
    private final ContainerSignaller signaller;
    private final TaskScheduler timers;
    private final InstantSource clock;
    private final Counter delivered;
    private final Counter notRunning;
    private final Counter failed;
    /** By directory name; guarded by {@code this}. */
    private final Map<String, Registered> dirs = new HashMap<>();

    public ReloadNotifier(Pods pods, ContainerSignaller signaller, TaskScheduler timers, InstantSource clock,
            MeterRegistry metrics) {
        this.pods = pods;
        this.signaller = signaller;
        this.timers = timers;
        this.clock = clock;
        this.delivered = counter(metrics, "delivered");
        this.notRunning = counter(metrics, "not_running");
        this.failed = counter(metrics, "failed");
    }

    private static Counter counter(MeterRegistry metrics, String result) {
        return Counter.builder("satoken.reload.signals").tag("result", result)
                .description("Reload signals sent to containers after their volume's rotation, by result")
                .register(metrics);
    }

    /** From now on, the directory's rotations are followed by the request's signal; {@code request} names its container. */
    public synchronized void register(String dirName, PodIdentity pod, ReloadRequest request) {
        Objects.requireNonNull(request.container(), "request.container");
        dirs.put(dirName, new Registered(pod, request));
    }

    public synchronized void remove(String dirName) {
        dirs.remove(dirName);
    }

    /** The last signal sent for the directory, if it asks for one and one was sent. */
    public synchronized Optional<Last> last(String dirName) {
        Registered r = dirs.get(dirName);
        return r == null ? Optional.empty() : Optional.ofNullable(r.last);
    }

    /** What the directory asks for, if anything. */
    public synchronized Optional<ReloadRequest> request(String dirName) {
        Registered r = dirs.get(dirName);
        return r == null ? Optional.empty() : Optional.of(r.request);
    }

    @Override
    public void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation) {
        if (!rotation) {
            return;
        }
        synchronized (this) {
            Registered r = dirs.get(dir.name());
            if (r == null || r.pending) {
                return;
            }
            r.pending = true;                                                                        // 1
        }
        timers.schedule(clock.instant(), () -> deliver(dir.name()));
    }

    /** Sends the directory's signal now; called on a timer's thread. */
    void deliver(String dirName) {
        Registered r;
        synchronized (this) {
            r = dirs.get(dirName);
            if (r == null) {
                return;
            }
            r.pending = false;
        }
        ReloadRequest request = r.request;
        Instant at = clock.instant();
        String problem;
        ContainerSignaller.Outcome outcome = null;
        try {
            problem = null;
            V1Pod pod = pods.read(r.pod.namespace(), r.pod.name());                                  // 2
            String id = null;
            if (pod == null || pod.getMetadata() == null || !r.pod.uid().equals(pod.getMetadata().getUid())) {
                problem = "the pod is gone";
            } else {
                V1ContainerStatus status = status(pod, request.container());
                V1ContainerState state = status == null ? null : status.getState();
                if (state == null || state.getRunning() == null || status.getContainerID() == null) {
                    problem = "container " + request.container() + " is not running" + why(state);
                } else {
                    id = status.getContainerID().substring(status.getContainerID().indexOf("://") + 3);
                }
            }
            if (id != null) {
                outcome = signaller.signal(r.pod.uid(), id, request.signal());                       // 3
                problem = outcome.delivered() ? null : outcome.problem();
            }
        } catch (IOException | RuntimeException e) {
            problem = "cannot read the pod: " + e.getMessage();
        }
        Last last = new Last(request.signal(), request.container(), at, problem == null,
                outcome == null ? -1 : outcome.pid(), problem);
        synchronized (this) {
            if (dirs.get(dirName) == r) {
                r.last = last;
            }
        }
        if (problem == null) {
            delivered.increment();
            log.info("sent {} to container {} of pod {} (pid {}) after its token rotated", request.signal(),
                    request.container(), r.pod, last.pid());
        } else {
            (problem.contains("not running") ? notRunning : failed).increment();
            log.warn("not sending {} to container {} of pod {} after its token rotated: {}", request.signal(),
                    request.container(), r.pod, problem);
        }
    }

    private static V1ContainerStatus status(V1Pod pod, String container) {
        List<V1ContainerStatus> statuses = pod.getStatus() == null ? null : pod.getStatus().getContainerStatuses();
        if (statuses == null) {
            return null;
        }
        return statuses.stream().filter(s -> container.equals(s.getName())).findFirst().orElse(null);
    }

    private static String why(V1ContainerState state) {
        if (state == null) {
            return "";
        }
        if (state.getWaiting() != null && state.getWaiting().getReason() != null) {
            return " (waiting: " + state.getWaiting().getReason() + ")";
        }
        if (state.getTerminated() != null) {
            return " (terminated" + (state.getTerminated().getReason() == null ? ""
                    : ": " + state.getTerminated().getReason()) + ")";
        }
        return "";
    }
}
