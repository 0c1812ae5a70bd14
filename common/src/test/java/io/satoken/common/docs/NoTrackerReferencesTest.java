package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Documents and comments say what a thing is, not which entry of this project's tracker asked for it: such a
 * number means nothing to a reader of a clone. An upstream issue named with its number sign and repository
 * ({@code kubernetes#121472}, {@code issue #121472}) stays: anyone can open it.
 */
class NoTrackerReferencesTest {

    static final Pattern TRACKER_NUMBER = Pattern.compile("(?i)\\bissues? \\d+\\b");

    @Test
    void noFileOfTheRepository_citesATrackerIssueByNumber() throws IOException {
        Path root = RuleIdsDefinedTest.repositoryRoot();
        List<String> found = new ArrayList<>();
        for (Path file : RuleIdsDefinedTest.textFiles(root)) {
            String text;
            try {
                text = Files.readString(file, StandardCharsets.UTF_8);
            } catch (MalformedInputException | java.nio.file.NoSuchFileException skipped) {
                continue;
            }
            Matcher m = TRACKER_NUMBER.matcher(text);
            while (m.find()) {
                found.add(root.relativize(file) + ": \"" + m.group() + "\"");
            }
        }

        assertThat(found).as("say what the thing is instead").isEmpty();
    }

    @Test
    void pattern_catchesTrackerNumbers_notUpstreamOnes() {
        assertThat(TRACKER_NUMBER.matcher("measured before issue " + "14").find()).isTrue();
        assertThat(TRACKER_NUMBER.matcher("Issues " + "3 and 14").find()).isTrue();
        assertThat(TRACKER_NUMBER.matcher("the fix of issue #121472").find()).isFalse();
        assertThat(TRACKER_NUMBER.matcher("kubernetes#124646").find()).isFalse();
    }
}
