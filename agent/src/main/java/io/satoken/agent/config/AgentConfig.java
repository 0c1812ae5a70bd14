package io.satoken.agent.config;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.common.projection.CsiVolumeAttributes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The agent's configuration file, as {@link AgentConfigParser} reads it: which sources of projections
 * run, where the kubelet keeps its directories, and the static projections.
 *
 * @param kubeletDir the kubelet's root directory; CSI mode serves {@code <kubeletDir>/plugins/tokens.satoken.io/csi.sock},
 *     registers in {@code <kubeletDir>/plugins_registry/} and mounts only under {@code <kubeletDir>/pods/}
 * @param projections the static projections; empty when {@code mode} is {@link Mode#CSI}
 * @param maxUnboundExpirationSeconds the longest lifetime a static projection may ask for: its token is bound
 *     to no object, so nothing but expiry ends it ({@value #MIN_MAX_UNBOUND_EXPIRATION_SECONDS}..{@value
 *     #MAX_MAX_UNBOUND_EXPIRATION_SECONDS}, default {@value #DEFAULT_MAX_UNBOUND_EXPIRATION_SECONDS})
 * @param statusSocket the Unix socket of the local status endpoint that {@code explain} reads; in CSI mode
 *     {@link #defaultCsiStatusSocket} unless the file names one; empty (no endpoint) in static mode unless it does
 * @param rereadCheck whether, and when, consumers that do not re-read a rotated token are reported
 * @param tokenSource where CSI volumes' tokens come from, and so what confines the agent ({@link TokenSourceKind})
 */
public record AgentConfig(Mode mode, Path kubeletDir, List<StaticProjection> projections,
        long maxUnboundExpirationSeconds, Optional<Path> statusSocket, RereadCheck rereadCheck,
        TokenSourceKind tokenSource) {

    /**
     * Where the agent gets tokens, and what stops a compromised node from getting any other.
     */
    public enum TokenSourceKind {
        /**
         * TokenRequest with the agent's own ServiceAccount ({@code serviceaccounts/token create}, cluster-wide):
         * confined only by satoken's token webhook. The default, and the only one static mode has.
         */
        REQUEST("request"),
        /**
         * TokenRequest as the agent's own node ({@code system:node:<node>}) through constrained impersonation
         * (Kubernetes 1.36+): the node authorizer and NodeRestriction confine it as they confine the kubelet.
         */
        NODE_IMPERSONATION("node-impersonation"),
        /**
         * No TokenRequest at all: the kubelet mints each volume's tokens (CSIDriver {@code tokenRequests}) and hands
         * them over on every NodePublishVolume ({@code requiresRepublish}); the agent checks and writes them.
         */
        KUBELET("kubelet");

        private final String value;

        TokenSourceKind(String value) {
            this.value = value;
        }

        /** The config file's spelling. */
        public String value() {
            return value;
        }
    }

    /**
     * Whether the agent reports consumers that do not read a rotated token ({@code TokenNotReread}), and when.
     *
     * @param thresholdPercent how much of the old token's lifetime may pass before a consumer that has not opened
     *     the new token is reported ({@value #MIN_THRESHOLD}..{@value #MAX_THRESHOLD}, default {@value #DEFAULT_THRESHOLD})
     */
    public record RereadCheck(boolean enabled, int thresholdPercent, Long expiringMarginSeconds) {
        public static final int MIN_THRESHOLD = 50;
        public static final int MAX_THRESHOLD = 99;
        public static final int DEFAULT_THRESHOLD = 90;
        public static final long MIN_MARGIN_SECONDS = 60;
        public static final long MAX_MARGIN_SECONDS = 86400;
        public static final RereadCheck DEFAULT = new RereadCheck(true, DEFAULT_THRESHOLD);

        /**
         * @param expiringMarginSeconds how long before the held token's expiry a consumer still not re-reading is
         *     reported again ({@code TokenExpiringUnread}); null for the default, 5 minutes or a tenth of the
         *     token's lifetime, whichever is larger
         */
        public RereadCheck {
            if (thresholdPercent < MIN_THRESHOLD || thresholdPercent > MAX_THRESHOLD) {
                throw new IllegalArgumentException("rereadThresholdPercent: must be between " + MIN_THRESHOLD + " and "
                        + MAX_THRESHOLD + ", got " + thresholdPercent);
            }
            if (expiringMarginSeconds != null && (expiringMarginSeconds < MIN_MARGIN_SECONDS
                    || expiringMarginSeconds > MAX_MARGIN_SECONDS)) {
                throw new IllegalArgumentException("expiringUnreadMarginSeconds: must be between " + MIN_MARGIN_SECONDS
                        + " and " + MAX_MARGIN_SECONDS + ", got " + expiringMarginSeconds);
            }
        }

        public RereadCheck(boolean enabled, int thresholdPercent) {
            this(enabled, thresholdPercent, null);
        }

        /** The margin before a held token's expiry for a token of {@code lifetime}. */
        public java.time.Duration expiringMargin(java.time.Duration lifetime) {
            if (expiringMarginSeconds != null) {
                return java.time.Duration.ofSeconds(expiringMarginSeconds);
            }
            java.time.Duration tenth = lifetime.dividedBy(10);
            java.time.Duration five = java.time.Duration.ofMinutes(5);
            return tenth.compareTo(five) > 0 ? tenth : five;
        }
    }

    /** The status endpoint's socket in CSI mode when the file names none: beside the CSI socket. */
    public static Path defaultCsiStatusSocket(Path kubeletDir) {
        return kubeletDir.resolve("plugins").resolve(CsiVolumeAttributes.DRIVER).resolve("status.sock");
    }

    /** The kubelet's root when the file gives none. */
    public static final Path DEFAULT_KUBELET_DIR = Path.of("/var/lib/kubelet");
    /**
     * An unbound token lives at most a day unless the config says otherwise: a leaked one cannot be
     * revoked short of deleting its ServiceAccount, so its lifetime is the only limit on the damage.
     */
    public static final long DEFAULT_MAX_UNBOUND_EXPIRATION_SECONDS = 24 * 3600;
    /** The cap may be lowered to the API server's minimum lifetime (PV-4), no further. */
    public static final long MIN_MAX_UNBOUND_EXPIRATION_SECONDS = 600;
    /** The cap may be raised to a week, no further. */
    public static final long MAX_MAX_UNBOUND_EXPIRATION_SECONDS = 7 * 24 * 3600;

    /** Which sources of projections the agent runs. */
    public enum Mode {
        /** Pods' CSI inline volumes only (DaemonSet). */
        CSI,
        /** The configured projections only (systemd). */
        STATIC,
        /** Both. */
        BOTH;

        /** Whether the CSI node plugin runs. */
        public boolean csi() {
            return this != STATIC;
        }

        /** Whether the configured projections are written. */
        public boolean statics() {
            return this != CSI;
        }
    }

    public AgentConfig {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(kubeletDir, "kubeletDir");
        projections = List.copyOf(projections);
        Objects.requireNonNull(statusSocket, "statusSocket");
        Objects.requireNonNull(rereadCheck, "rereadCheck");
        Objects.requireNonNull(tokenSource, "tokenSource");
        if (tokenSource != TokenSourceKind.REQUEST && mode.statics()) {
            throw new IllegalArgumentException("tokenSource: must be \"request\" when mode is \""
                    + mode.name().toLowerCase(java.util.Locale.ROOT) + "\" (static projections belong to no pod and"
                    + " no kubelet), got \"" + tokenSource.value() + "\"");
        }
        if (maxUnboundExpirationSeconds < MIN_MAX_UNBOUND_EXPIRATION_SECONDS
                || maxUnboundExpirationSeconds > MAX_MAX_UNBOUND_EXPIRATION_SECONDS) {
            throw new IllegalArgumentException("maxUnboundExpirationSeconds: must be between "
                    + MIN_MAX_UNBOUND_EXPIRATION_SECONDS + " and " + MAX_MAX_UNBOUND_EXPIRATION_SECONDS
                    + ", got " + maxUnboundExpirationSeconds);
        }
        for (StaticProjection p : projections) {
            if (p.ask().expirationSeconds() > maxUnboundExpirationSeconds) {
                throw new IllegalArgumentException("a static projection asks for " + p.ask().expirationSeconds()
                        + " s, more than maxUnboundExpirationSeconds " + maxUnboundExpirationSeconds);
            }
        }
    }

    /** Where the kubelet mounts pods' volumes, the only place CSI mode mounts anything. */
    public Path podsDir() {
        return kubeletDir.resolve("pods");
    }
    /**
     * The static projections as directories: one per {@code dir}, named {@code static:<dir>}, in the
     * order their dirs first appear, each file an unbound token.
     */
    public List<TokenDirectory> staticDirectories() {
        Map<Path, List<Projection>> byDir = new LinkedHashMap<>();
        for (StaticProjection p : projections) {
            byDir.computeIfAbsent(p.dir(), d -> new ArrayList<>()).add(p.projection());
        }
        List<TokenDirectory> dirs = new ArrayList<>(byDir.size());
        byDir.forEach((dir, files) -> dirs.add(new TokenDirectory("static:" + dir, dir, files)));
        return List.copyOf(dirs);
    }
}
