package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@code --version}: the release and commit Maven wrote into the build, not {@code dev}. */
class BuildVersionTest {

    @Test
    void current_isTheParentPomsVersionAndACommit() throws Exception {
        BuildVersion v = BuildVersion.current();
        assertThat(v.version()).isEqualTo(parentPomVersion()).isNotEqualTo(BuildVersion.DEV);
        // a build from a tree without .git says "unknown"; this one has .git
        assertThat(v.commit()).matches("[0-9a-f]{7}(-dirty)?|unknown");
    }

    @Test
    void provider_printsTheRootCommandsNameVersionAndCommit() {
        @CommandLine.Command(name = "satoken-test", mixinStandardHelpOptions = true,
                versionProvider = BuildVersion.Provider.class)
        class Root implements Runnable {
            @Override
            public void run() {
            }
        }
        StringWriter out = new StringWriter();
        int exit = ExitCodes.execute(new CommandLine(new Root()), new PrintWriter(out, true),
                new PrintWriter(new StringWriter(), true), "--version");
        assertThat(exit).isZero();
        assertThat(out.toString()).isEqualTo(BuildVersion.current().describe("satoken-test") + "\n")
                .startsWith("satoken-test " + BuildVersion.current().version() + " (commit ");
    }

    record Case(String name, List<String> lines, BuildVersion expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> from() {
        return Stream.of(
                new Case("clean tree", List.of("version=1.2.3", "commit=08346ee", "dirty=false"),
                        new BuildVersion("1.2.3", "08346ee")),
                new Case("modified tree", List.of("version=1.2.3", "commit=08346ee", "dirty=true"),
                        new BuildVersion("1.2.3", "08346ee-dirty")),
                new Case("built without .git", List.of("version=1.2.3", "commit=unknown", "dirty=false"),
                        new BuildVersion("1.2.3", "unknown")),
                new Case("not filtered (run from an IDE)", List.of("version=${project.version}",
                        "commit=${git.commit.id.abbrev}", "dirty=${git.dirty}"), new BuildVersion("dev", "unknown")),
                new Case("no file", List.of(), new BuildVersion("dev", "unknown")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void from(Case c) throws Exception {
        Properties p = new Properties();
        p.load(new java.io.StringReader(String.join("\n", c.lines())));
        assertThat(BuildVersion.from(p)).isEqualTo(c.expected());
    }

    /** The version in the parent pom, next to this module. */
    private static String parentPomVersion() throws Exception {
        String pom = Files.readString(Path.of("..", "pom.xml"));
        Matcher m = Pattern.compile("<artifactId>satoken-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
        assertThat(m.find()).as("the parent pom's version").isTrue();
        return m.group(1);
    }
}
