package io.satoken.controlplane.admission;

import com.nimbusds.jwt.JWTParser;
import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.LoggerFactory;

/**
 * The API server's own audiences (kube-apiserver {@code --api-audiences}). The API server puts them in a
 * TokenRequest that names none before validating admission sees it (PV-3), so NT-6 needs them to match a
 * volume that asks for no audience.
 */
@FunctionalInterface
public interface ApiAudiences {

    /** The in-cluster token of the webhook's own pod, which the kubelet requests with no audience. */
    Path IN_CLUSTER_TOKEN = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token");

    /** The audiences, or empty when they are not known. */
    Optional<List<String>> get();

    static ApiAudiences of(List<String> audiences) {
        Optional<List<String>> known = Optional.of(List.copyOf(audiences));
        return () -> known;
    }

    /**
     * The {@code aud} claim of the ServiceAccount token at {@code token}, read when first needed and kept
     * once found: they change only when the API server is reconfigured, and the webhook is then restarted
     * to see the change. Until the file is readable, empty.
     */
    static ApiAudiences fromToken(Path token) {
        return new ApiAudiences() {
            private volatile Optional<List<String>> found = Optional.empty();
            private final AtomicBoolean warned = new AtomicBoolean();

            @Override
            public Optional<List<String>> get() {
                if (found.isEmpty() && Files.isReadable(token)) {
                    try {
                        List<String> audiences = JWTParser.parse(Files.readString(token).trim()).getJWTClaimsSet()
                                .getAudience();
                        found = audiences == null || audiences.isEmpty() ? Optional.empty()
                                : Optional.of(List.copyOf(audiences));
                    } catch (IOException | ParseException e) {
                        // a parse error's message may quote the token: only its kind is logged, and only once
                        if (warned.compareAndSet(false, true)) {
                            LoggerFactory.getLogger(ApiAudiences.class).warn(
                                    "cannot read the API server's audiences from {}: {}", token,
                                    e instanceof IOException io ? FileErrors.reason(io) : "not a JWT");
                        }
                    }
                }
                return found;
            }
        };
    }
}
