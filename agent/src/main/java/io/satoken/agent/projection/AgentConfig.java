package io.satoken.agent.projection;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The agent's configuration file, as {@link AgentConfigParser} reads it: which sources of
 * projections run, where pod directories go, and the static projections.
 *
 * @param rootDir pod mode writes {@code <rootDir>/pods/<podUID>/}
 * @param projections the static projections; empty when {@code mode} is {@link Mode#PODS}
 */
public record AgentConfig(Mode mode, Path rootDir, List<StaticProjection> projections) {

    /** The root when the file gives none. */
    public static final Path DEFAULT_ROOT_DIR = Path.of("/var/lib/satoken");

    /** Which sources of projections the agent runs. */
    public enum Mode {
        /** Pod annotations only (DaemonSet). */
        PODS,
        /** The configured projections only (systemd). */
        STATIC,
        /** Both. */
        BOTH;

        /** Whether pod annotations are watched. */
        public boolean pods() {
            return this != STATIC;
        }

        /** Whether the configured projections are written. */
        public boolean statics() {
            return this != PODS;
        }
    }

    public AgentConfig {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(rootDir, "rootDir");
        projections = List.copyOf(projections);
    }

    /** Where pod mode writes the pods' directories, {@code <rootDir>/pods}. */
    public Path podsDir() {
        return rootDir.resolve("pods");
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
