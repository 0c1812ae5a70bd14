package io.satoken.agent.token;

import java.time.Duration;
import java.time.Instant;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;
import java.util.function.ToDoubleFunction;
import java.util.random.RandomGenerator;

/**
 * When a cached token must be replaced: the kubelet rules TM-8 with a bounded random jitter.
 *
 * <p>A token needs a refresh once {@code now} is past its <em>deadline</em> minus a jitter {@code j},
 * where the deadline is the earlier of
 * <ul>
 *   <li>{@code iat + 24h} (TM-C1, the max-age rule), and</li>
 *   <li>{@code exp - floor(ttl * 20 / 100)} (the 80 % rule, integer seconds as upstream).</li>
 * </ul>
 * Upstream draws {@code j} on every check; we draw it once per issued token ({@link #refreshAt}), so
 * a cache hit costs no random draw and the refresh timer knows its instant. The agent's policies draw it from
 * the token itself ({@link #fromToken}): a token adopted from disk after a restart gets the jitter it had when
 * it was minted, so a restart moves no refresh earlier. {@code j} is uniform in
 * {@code [0, min(max(maxJitter, ttlFraction * min(ttl, 24h)), window / 2))} where
 * {@code window = exp - deadline}; bounding it by half the refresh window keeps short-lived tokens from
 * being refreshed right after they were issued.
 *
 * <p>{@link #standard()} is kubelet's 10 s. {@link #spread()} adds a jitter proportional to the TTL
 * (10 %: a 1 h token refreshes somewhere in its 42nd to 48th minute, never after the 80 % point), so a
 * node whose tokens were all issued together, as after a restart or a burst of pods, does not refresh
 * them together.
 */
public final class RefreshPolicy {

    /** TM-C1: a token this old is refreshed whatever its TTL. */
    public static final Duration MAX_AGE = Duration.ofHours(24);
    /** TM-C3: kubelet's jitter bound. */
    public static final Duration DEFAULT_MAX_JITTER = Duration.ofSeconds(10);

    /** {@link #spread()}'s share of the TTL over which refreshes are spread. */
    public static final double SPREAD_FRACTION = 0.10;

    private final Duration maxJitter;
    private final double ttlFraction;
    /** Where in its range a token's jitter falls, in [0, 1). */
    private final ToDoubleFunction<IssuedToken> draw;
    /** {@link #untilExpiry()}: a token is served until it expires, since someone else refreshes it. */
    private final boolean untilExpiry;

    /**
     * @param maxJitter jitter bound that holds whatever the TTL; zero disables it
     * @param ttlFraction jitter bound as a share of the TTL (capped at 24 h), in [0, 1); the larger bound wins
     * @param random the source of jitter; shared by refreshing threads, so it must be thread-safe
     */
    public RefreshPolicy(Duration maxJitter, double ttlFraction, RandomGenerator random) {
        this(maxJitter, ttlFraction, token -> Objects.requireNonNull(random, "random").nextDouble());
    }

    /**
     * @param maxJitter jitter bound that holds whatever the TTL; zero disables it
     * @param ttlFraction jitter bound as a share of the TTL (capped at 24 h), in [0, 1); the larger bound wins
     * @param draw where in its range a token's jitter falls, in [0, 1), such as {@link #fromToken}
     */
    public RefreshPolicy(Duration maxJitter, double ttlFraction, ToDoubleFunction<IssuedToken> draw) {
        if (maxJitter.isNegative()) {
            throw new IllegalArgumentException("maxJitter: must not be negative, got " + maxJitter);
        }
        if (!(ttlFraction >= 0 && ttlFraction < 1)) {
            throw new IllegalArgumentException("ttlFraction: must be in [0, 1), got " + ttlFraction);
        }
        this.maxJitter = maxJitter;
        this.ttlFraction = ttlFraction;
        this.draw = Objects.requireNonNull(draw, "draw");
        this.untilExpiry = false;
    }

    private RefreshPolicy() {
        this.maxJitter = Duration.ZERO;
        this.ttlFraction = 0;
        this.draw = token -> 0;
        this.untilExpiry = true;
    }

    /**
     * {@code tokenSource: kubelet}: the kubelet refreshes each token (at 80 % of its life, TM-8) and delivers the new
     * one at the volume's next NodePublishVolume, so the agent's own refresh point would only find the token not yet
     * replaced and cry failure. A token is due only when it expires; a delivered successor is written before then.
     */
    public static RefreshPolicy untilExpiry() {
        return new RefreshPolicy();
    }

    /** Kubelet's numbers: jitter up to 10 s, drawn from the token. */
    public static RefreshPolicy standard() {
        return new RefreshPolicy(DEFAULT_MAX_JITTER, 0, RefreshPolicy::fromToken);
    }

    /** The agent's default: kubelet's 10 s or 10 % of the TTL, whichever is larger, drawn from the token. */
    public static RefreshPolicy spread() {
        return new RefreshPolicy(DEFAULT_MAX_JITTER, SPREAD_FRACTION, RefreshPolicy::fromToken);
    }

    /**
     * A token's own draw: the first 53 bits of the SHA-256 of its text, as a fraction in [0, 1). Tokens differ
     * in their signature, so their draws are as spread as random ones; the same token always draws the same.
     * Knowing a token's refresh time tells nothing of the token that is not already in it.
     */
    public static double fromToken(IssuedToken token) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.token().getBytes(StandardCharsets.UTF_8));
            return (ByteBuffer.wrap(digest).getLong() >>> 11) * 0x1.0p-53;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /**
     * The instant after which the token needs a refresh when the jitter is zero (TM-8).
     * Upstream computes the 80 % window in whole seconds; TTLs under 5 s, which only the demo uses,
     * would round it to nothing, so those are computed in milliseconds.
     */
    public static Instant deadline(IssuedToken token) {
        Duration ttl = token.ttl();
        long ttlSeconds = ttl.getSeconds();
        Duration window = ttlSeconds >= 5
                ? Duration.ofSeconds(ttlSeconds * 20 / 100)
                : Duration.ofMillis(ttl.toMillis() * 20 / 100);
        Instant eightyPercent = token.expiresAt().minus(window);
        if (ttl.compareTo(MAX_AGE) <= 0) {
            return eightyPercent; // iat + 24h is at or past expiry: the max-age rule cannot come first
        }
        Instant maxAge = token.issuedAt().plus(MAX_AGE); // < exp, so it cannot overflow
        return maxAge.isBefore(eightyPercent) ? maxAge : eightyPercent;
    }

    /** TM-8 as upstream states it, for a given jitter: {@code now > deadline - jitter}. */
    public static boolean requiresRefresh(IssuedToken token, Instant now, Duration jitter) {
        return now.isAfter(deadline(token).minus(jitter));
    }

    /** This token's jitter, in milliseconds, uniform below the bound the class comment gives. */
    public Duration drawJitter(IssuedToken token) {
        Duration halfWindow = Duration.between(deadline(token), token.expiresAt()).dividedBy(2);
        Duration ttl = token.ttl().compareTo(MAX_AGE) < 0 ? token.ttl() : MAX_AGE;
        Duration proportional = Duration.ofMillis((long) (ttl.toMillis() * ttlFraction));
        Duration bound = proportional.compareTo(maxJitter) > 0 ? proportional : maxJitter;
        long boundMillis = (halfWindow.compareTo(bound) < 0 ? halfWindow : bound).toMillis();
        if (boundMillis <= 0) {
            return Duration.ZERO;
        }
        double fraction = draw.applyAsDouble(token);
        if (!(fraction >= 0 && fraction < 1)) {
            throw new IllegalStateException("jitter draw: must be in [0, 1), got " + fraction);
        }
        return Duration.ofMillis((long) (fraction * boundMillis));
    }

    /** The instant after which this token must be refreshed: its deadline minus its jitter. */
    public Instant refreshAt(IssuedToken token) {
        if (untilExpiry) {
            return token.expiresAt();
        }
        return deadline(token).minus(drawJitter(token));
    }
}
