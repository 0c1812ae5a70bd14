package io.satoken.controlplane.bench;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;

import io.satoken.controlplane.admission.AdmissionFixtures;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.PodMutation;
import io.satoken.controlplane.admission.ServiceAccountAdmissionTest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.webhook.AdmissionReviews;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One {@code /mutate/pods} review as the webhook's worker thread does it, without TLS and HTTP: read the
 * AdmissionReview from the request's bytes, run ServiceAccount admission and the agent-token injection,
 * write the response's bytes. The request is {@link WebhookLoad}'s (a Deployment's pod, 5.7 KB, asking for
 * two agent tokens), and the ServiceAccount comes from the informer-cache path, as under load.
 *
 * <p>Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes allocated per review, the figure
 * behind the webhook's young-collection rate.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-XX:+UseSerialGC", "-Xmx256m"})
@State(Scope.Thread)
public class PodReviewBenchmark {

    private byte[] body;
    private PodMutation mutation;
    private Verdict verdict;

    @Setup
    public void setUp() {
        body = WebhookLoad.admissionReview("0f3c2a9e-5b1d-4e77-8a2c-6d4e1f9b7c30", "orders")
                .getBytes(StandardCharsets.UTF_8);
        mutation = ServiceAccountAdmissionTest.mutation(
                new AdmissionFixtures.Accounts().cache(account("default")), false);
        try {
            verdict = mutation.review(AdmissionReviews.read(body, new String[1]));
        } catch (InvalidReviewException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Benchmark
    public byte[] review() throws Exception {
        String[] uid = new String[1];
        AdmissionRequest request = AdmissionReviews.read(body, uid);
        Verdict verdict = mutation.review(request);
        if (!(verdict instanceof Verdict.Patched)) {
            throw new IllegalStateException("the benchmark's pod must be patched");
        }
        return AdmissionReviews.write(uid[0], verdict);
    }

    /** The first step alone: bytes to the request. */
    @Benchmark
    public AdmissionRequest read() throws InvalidReviewException {
        return AdmissionReviews.read(body, new String[1]);
    }

    /** The last step alone: the verdict to the response's bytes. */
    @Benchmark
    public byte[] write() {
        return AdmissionReviews.write("0f3c2a9e-5b1d-4e77-8a2c-6d4e1f9b7c30", verdict);
    }
}
