package io.satoken.common.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/**
 * The release and commit a program was built from, as Maven wrote them into {@value #RESOURCE} when common
 * was built: {@code 0.1.0-SNAPSHOT} and {@code 08346ee} (with {@code -dirty} when the tree had uncommitted
 * changes). A build from a source tree without {@code .git} says {@code unknown} for the commit; classes run
 * without Maven's filtering (an IDE) say {@code dev}.
 *
 * @param version the Maven project version
 * @param commit the short commit hash, {@code -dirty} appended for a modified tree, or {@code unknown}
 */
public record BuildVersion(String version, String commit) {

    static final String RESOURCE = "build-version.properties";
    static final String UNKNOWN = "unknown";
    static final String DEV = "dev";

    /** The version of the classes running now. */
    public static BuildVersion current() {
        try (InputStream in = BuildVersion.class.getResourceAsStream(RESOURCE)) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return from(p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + RESOURCE + " from the classpath", e);
        }
    }

    /** Reads the filtered properties; an unfiltered {@code ${...}} counts as absent. */
    static BuildVersion from(Properties p) {
        String version = value(p, "version", DEV);
        String commit = value(p, "commit", UNKNOWN);
        if (!commit.equals(UNKNOWN) && Boolean.parseBoolean(value(p, "dirty", "false"))) {
            commit += "-dirty";
        }
        return new BuildVersion(version, commit);
    }

    private static String value(Properties p, String key, String absent) {
        String v = p.getProperty(key, "").trim();
        return v.isEmpty() || v.startsWith("${") ? absent : v;
    }

    /** {@code satoken-agent 0.1.0-SNAPSHOT (commit 08346ee)}: what {@code --version} prints. */
    public String describe(String program) {
        return program + " " + version + " (commit " + commit + ")";
    }

    /**
     * picocli's {@code versionProvider} for every satoken command: the root command's name and
     * {@link #current()}.
     */
    public static final class Provider implements CommandLine.IVersionProvider {

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public String[] getVersion() {
            return new String[] {current().describe(spec.root().name())};
        }
    }
}
