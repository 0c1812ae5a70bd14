package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README is the front door: short enough to read in a few minutes, linking every page of docs/, and
 * linking nothing outside the repository (a clone must be complete without a network).
 */
class ReadmeFrontDoorTest {

    static final int MAX_BYTES = 12 * 1024;
    /** An inline link {@code [text](target)} or a reference definition {@code [label]: target}. */
    static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)|^\\[[^\\]]+\\]:\\s*(\\S+)", Pattern.MULTILINE);

    @Test
    void readme_staysUnder12KiB() throws IOException {
        assertThat(Files.size(readme())).as("README.md in bytes").isLessThanOrEqualTo(MAX_BYTES);
    }

    @Test
    void readme_linksEveryDocsPage() throws IOException {
        Set<String> linked = links(Files.readString(readme())).stream().map(ReadmeFrontDoorTest::withoutAnchor)
                .collect(Collectors.toCollection(TreeSet::new));
        Set<String> pages;
        try (Stream<Path> files = Files.list(RuleIdsDefinedTest.repositoryRoot().resolve("docs"))) {
            pages = files.filter(p -> p.toString().endsWith(".md")).map(p -> "docs/" + p.getFileName())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        pages.removeAll(linked);
        assertThat(pages).as("docs pages the README does not link").isEmpty();
    }

    @Test
    void readme_linksOnlyFilesOfTheRepositoryThatExist() throws IOException {
        Path root = RuleIdsDefinedTest.repositoryRoot();
        List<String> bad = new ArrayList<>();
        for (String target : links(Files.readString(readme()))) {
            String path = withoutAnchor(target);
            if (target.matches("(?i)^[a-z][a-z0-9+.-]*:.*") || target.startsWith("//")) {
                bad.add(target + " (leaves the repository)");
            } else if (!path.isEmpty() && (path.startsWith("/") || !Files.exists(root.resolve(path).normalize())
                    || !root.resolve(path).normalize().startsWith(root))) {
                bad.add(target + " (no such file in the repository)");
            }
        }
        assertThat(bad).isEmpty();
    }

    @Test
    void linkPattern_findsInlineAndReferenceLinks() {
        assertThat(links("see [install](docs/install.md#images) and [x][y]\n[y]: https://example.org\n"))
                .containsExactly("docs/install.md#images", "https://example.org");
    }

    static List<String> links(String markdown) {
        List<String> targets = new ArrayList<>();
        Matcher m = LINK.matcher(markdown);
        while (m.find()) {
            targets.add(m.group(1) != null ? m.group(1) : m.group(2));
        }
        return targets;
    }

    private static String withoutAnchor(String target) {
        int hash = target.indexOf('#');
        return hash < 0 ? target : target.substring(0, hash);
    }

    private static Path readme() {
        return RuleIdsDefinedTest.repositoryRoot().resolve("README.md");
    }
}
