package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * BENCHMARKS.md and RELIABILITY.md hold the current figures, not their history (git keeps that): each stays a page a
 * reader can take in, under 40,000 bytes, and says where the older figures are.
 */
class FiguresPagesTest {

    static final long MAX_BYTES = 40_000;

    @ParameterizedTest
    @ValueSource(strings = {"BENCHMARKS.md", "RELIABILITY.md"})
    void page_holdsCurrentFiguresOnly_underItsSize(String page) throws IOException {
        Path file = RuleIdsDefinedTest.repositoryRoot().resolve(page);

        assertThat(Files.size(file)).as("%s: older figures belong to git, not the page", page).isLessThan(MAX_BYTES);
        assertThat(Files.readString(file)).as(page).contains("git log -p -- " + page);
    }
}
