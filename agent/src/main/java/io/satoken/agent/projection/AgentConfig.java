package io.satoken.agent.projection;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The agent's configuration file, as {@link AgentConfigParser} reads it: which sources of projections
 * run, where the kubelet keeps its directories, and the static projections.
 *
 * @param kubeletDir the kubelet's root directory; CSI mode serves {@code <kubeletDir>/plugins/tokens.satoken.io/csi.sock},
 *     registers in {@code <kubeletDir>/plugins_registry/} and mounts only under {@code <kubeletDir>/pods/}
 * @param projections the static projections; empty when {@code mode} is {@link Mode#CSI}
 */
public record AgentConfig(Mode mode, Path kubeletDir, List<StaticProjection> projections) {

    /** The kubelet's root when the file gives none. */
    public static final Path DEFAULT_KUBELET_DIR = Path.of("/var/lib/kubelet");

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
