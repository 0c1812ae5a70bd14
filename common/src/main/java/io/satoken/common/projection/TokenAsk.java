package io.satoken.common.projection;

import java.util.List;
import java.util.Optional;

/**
 * What a token file asks the API server for, and the one place that decides what a file without an audience
 * means: it asks for none, so the API server issues the token for its own audiences (PV-3). Every reader of a
 * file ({@link TokenFileFields}) and every check of a token against a file (the agent adopting a token it finds on
 * disk, the webhook's NT-6, the kubelet's tokens named by audience) asks this class.
 *
 * @param audiences the audiences requested, in order; null asks for the API server's own (PV-3)
 * @param expirationSeconds the requested lifetime; 0 leaves it to the API server (PV-2)
 */
public record TokenAsk(List<String> audiences, long expirationSeconds) {

    /** How the kubelet names the API server's own audiences among a CSI driver's tokens. */
    public static final String KUBELET_SERVER_OWN = "";

    public TokenAsk {
        audiences = audiences == null ? null : List.copyOf(audiences);
    }

    /**
     * The audiences a file that names {@code audience} requests (PV-8, PV-14): that one, or null, the API server's
     * own, when it names none; an empty name is none.
     */
    public static List<String> audiences(String audience) {
        return audience == null || audience.isEmpty() ? null : List.of(audience);
    }

    /** Whether the token is for the API server's own audiences (PV-3). */
    public boolean serverOwnAudiences() {
        return audiences == null;
    }

    /** The audience as the kubelet names a CSI driver's token: the one requested, or "" for the API server's own. */
    public String kubeletAudience() {
        return audiences == null || audiences.isEmpty() ? KUBELET_SERVER_OWN : audiences.get(0);
    }

    /**
     * Why a token that carries {@code carried} is not one issued for this ask, or null when it is: the same
     * audiences in the same order; for an ask for the API server's own, the server's own audiences, which must be
     * known ({@code serverOwn}): a token asked for without audiences cannot be told apart from one for any other
     * audience without them.
     */
    public String audienceMismatch(List<String> carried, Optional<List<String>> serverOwn) {
        if (audiences == null && serverOwn.isEmpty()) {
            return "requested without audiences, and the API server's own audiences are not known";
        }
        List<String> expected = audiences != null ? audiences : serverOwn.get();
        return expected.equals(carried) ? null : "audiences are " + carried + ", not " + expected
                + (audiences == null ? " (the API server's own)" : "");
    }

    /** Whether a request for {@code carried} audiences and {@code seconds} is this ask (NT-6), as {@link #audienceMismatch}. */
    public boolean matches(List<String> carried, long seconds, Optional<List<String>> serverOwn) {
        return seconds == expirationSeconds && audienceMismatch(carried, serverOwn) == null;
    }

    @Override
    public String toString() {
        return "{audiences: " + (audiences == null ? "the API server's own" : audiences)
                + ", expirationSeconds: " + expirationSeconds + "}";
    }
}
