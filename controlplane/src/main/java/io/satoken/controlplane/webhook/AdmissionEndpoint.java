package io.satoken.controlplane.webhook;

import io.satoken.common.kube.Failures;
import io.satoken.controlplane.admission.Admission;
import io.satoken.controlplane.admission.AdmissionRequest;
import io.satoken.controlplane.admission.Verdict;
import io.satoken.controlplane.admission.view.InvalidReviewException;
import io.satoken.controlplane.https.Endpoint;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admission rules as the HTTPS server's {@link Endpoint}: each path's {@link Admission} reviews the
 * AdmissionReview POSTed to it, and every answer, the server's own refusals included, is an AdmissionReview whose
 * verdict says what happened, so the API server shows the reason.
 */
public final class AdmissionEndpoint implements Endpoint {

    private static final Logger log = LoggerFactory.getLogger(AdmissionEndpoint.class);

    private final Map<String, Admission> routes;

    public AdmissionEndpoint(Map<String, Admission> routes) {
        this.routes = Map.copyOf(routes);
    }

    @Override
    public Set<String> paths() {
        return routes.keySet();
    }

    @Override
    public Exchange exchange(String path, byte[] body, Memory memory) {
        return new Review(path, routes.get(path), body, memory);
    }

    /** Denied without a uid: unavailable (503) for a 5xx, for the API server to call again; else invalid (400). */
    @Override
    public byte[] refusal(int status, String message) {
        return AdmissionReviews.write(null, status >= 500 ? Verdict.unavailable(message) : Verdict.invalid(message));
    }

    /** One review: its body parsed (claiming what the parse keeps), then decided by its path's rule. */
    private static final class Review implements Exchange {

        private final String path;
        private final Admission admission;
        private final Memory memory;
        private byte[] body;
        /** The request's uid, known once the body is parsed; the late answer carries it too. */
        private final String[] uid = new String[1];

        Review(String path, Admission admission, byte[] body, Memory memory) {
            this.path = path;
            this.admission = admission;
            this.body = body;
            this.memory = memory;
        }

        @Override
        public Answer answer() throws InterruptedException {
            Verdict verdict;
            String result;
            try {
                AdmissionRequest parsed = AdmissionReviews.read(body, uid, memory::claim);
                body = null; // the parse keeps what the rule reads
                verdict = admission.review(parsed);
                result = verdict instanceof Verdict.Denied ? "denied"
                        : verdict instanceof Verdict.Patched ? "patched" : "allowed";
            } catch (InvalidReviewException e) {
                verdict = Verdict.invalid(e.getMessage());
                result = "invalid";
            } catch (ReviewOverloadException e) {
                verdict = Verdict.unavailable(e.getMessage());
                result = "overloaded";
            } catch (RuntimeException e) {
                log.error("webhook {}: review failed", path, e);
                verdict = Verdict.unavailable("the webhook failed to review the request: " + Failures.inWords(e));
                result = "error";
            }
            return new Answer(result, AdmissionReviews.write(uid[0], verdict));
        }

        @Override
        public byte[] late(String message) {
            return AdmissionReviews.write(uid[0], Verdict.unavailable(message));
        }
    }
}
