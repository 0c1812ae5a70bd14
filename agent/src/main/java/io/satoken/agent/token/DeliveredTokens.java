package io.satoken.agent.token;

import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The token source of {@code tokenSource: kubelet}: it mints nothing, and serves for each key the latest token the
 * kubelet delivered for the key's pod and audience.
 *
 * <p>The kubelet mints each pod's tokens under its own NodeRestriction and hands them over at every
 * NodePublishVolume; the CSI server {@link #deliver}s them here, already checked against the pod. The rest of the
 * pipeline is the one every mode shares: the {@link TokenCache} holds what is written, and the refresh scheduler
 * writes it. A delivery that changes a token is written at once (the CSI server asks the scheduler to); the
 * scheduler's own timer, with {@link RefreshPolicy#untilExpiry()}, fires only when a token expires without the
 * kubelet having delivered its successor, which is then a real failure worth a Warning Event.
 *
 * <p>A key's pod is its bound object (the kubelet binds every token to its pod), and its audience is its one
 * audience, or {@code ""} for a key without audiences, as the kubelet names the CSIDriver's empty audience. Expired
 * tokens are dropped at each delivery, so a deleted pod's tokens go within one lifetime. Thread-safe.
 *
 * <p>{@link #deliver} tells which tokens differ from the ones this source last served, not from the ones last
 * delivered: a delivery that lands while the scheduler is fetching the old token (which it then writes) is still new
 * at the next republish, so the file never stays behind the kubelet for longer than one republish. After a restart
 * nothing has been served, so the first republish is new; writing the token the file already holds changes nothing.
 */
public final class DeliveredTokens implements TokenSource {

    private record Slot(String podUid, String audience) {}

    private final InstantSource clock;
    private final Map<Slot, IssuedToken> latest = new ConcurrentHashMap<>();
    private final Map<Slot, IssuedToken> served = new ConcurrentHashMap<>();

    public DeliveredTokens(InstantSource clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Keeps the pod's tokens, by audience, as the latest the kubelet delivered.
     *
     * @return the audiences whose token differs from the one this source last served for them (all of them before
     *     it served any): those the scheduler must fetch again
     */
    public Set<String> deliver(String podUid, Map<String, IssuedToken> byAudience) {
        Instant now = clock.instant();
        latest.values().removeIf(token -> token.isExpired(now));
        served.values().removeIf(token -> token.isExpired(now));
        Set<String> changed = new HashSet<>();
        byAudience.forEach((audience, token) -> {
            Slot slot = new Slot(podUid, audience);
            latest.put(slot, token);
            IssuedToken last = served.get(slot);
            if (last == null || !last.token().equals(token.token())) {
                changed.add(audience);
            }
        });
        return changed;
    }

    /** The audience a key stands for in the kubelet's delivery: its one audience, or "" for the server's own. */
    public static String audienceOf(TokenKey key) {
        return key.ask().kubeletAudience();
    }

    /**
     * The latest token the kubelet delivered for the key's pod and audience.
     *
     * @throws TokenSourceException when it delivered none that is still valid: the kubelet republishes every volume
     *     every minute or two, so this means it stopped (the kubelet is down, or the pod is going away)
     */
    @Override
    public IssuedToken issue(TokenKey key) throws TokenSourceException {
        if (!key.boundObject().isPod()) {
            throw new TokenSourceException(key + ": the kubelet delivers only pod-bound tokens", null, true, null);
        }
        String audience = audienceOf(key);
        Slot slot = new Slot(key.boundObject().uid(), audience);
        IssuedToken token = latest.get(slot);
        Instant now = clock.instant();
        if (token == null) {
            throw new TokenSourceException(key + ": no token from the kubelet yet for audience \"" + audience
                    + "\"; it hands one over at the volume's next NodePublishVolume");
        }
        if (!token.expiresAt().isAfter(now)) {
            throw new TokenSourceException(key + ": the kubelet's latest token for audience \"" + audience
                    + "\" expired at " + token.expiresAt() + " and it has delivered no newer one (it republishes every"
                    + " volume every minute or two: is the kubelet running?)");
        }
        served.put(slot, token);
        return token;
    }
}
