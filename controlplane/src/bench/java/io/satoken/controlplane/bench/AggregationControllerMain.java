package io.satoken.controlplane.bench;

import io.kubernetes.client.openapi.ApiClient;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.satoken.common.kube.KubeClients;
import io.satoken.controlplane.aggregation.AggregationController;
import io.satoken.controlplane.controller.ControllerMetrics;
import io.satoken.controlplane.kube.Informers;
import java.nio.file.Path;

/**
 * The aggregation controller alone in its own JVM, for {@link AggregationLoad}: the driver measures this
 * process's CPU from /proc, as it does kube-controller-manager's. Prints {@code READY} once the caches have
 * synced and the workers run, and the controller's meters when it is stopped (SIGTERM).
 *
 * <pre>java -cp ... io.satoken.controlplane.bench.AggregationControllerMain KUBECONFIG WORKERS</pre>
 */
public final class AggregationControllerMain {

    private AggregationControllerMain() {
    }

    public static void main(String[] args) throws Exception {
        Path kubeconfig = Path.of(args[0]);
        int workers = Integer.parseInt(args[1]);
        ApiClient client = KubeClients.fromFlags(kubeconfig);
        ApiClient watch = KubeClients.fromFlags(kubeconfig);
        watch.setReadTimeout(0); // a watch is a long-lived request
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Informers informers = new Informers(watch);
        AggregationController controller = new AggregationController(informers, client, workers,
                new ControllerMetrics(registry));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Meter meter : registry.getMeters()) {
                if (meter.getId().getName().startsWith("satoken_")) {
                    StringBuilder line = new StringBuilder("METER ").append(meter.getId().getName())
                            .append(meter.getId().getTags());
                    for (Measurement m : meter.measure()) {
                        line.append(' ').append(m.getStatistic()).append('=').append(m.getValue());
                    }
                    System.out.println(line);
                }
            }
            System.out.flush();
        }, "print-meters"));
        informers.start();
        while (!informers.synced()) {
            Thread.sleep(20);
        }
        controller.start();
        System.out.println("READY");
        System.out.flush();
        Thread.currentThread().join(); // until SIGTERM
    }
}
