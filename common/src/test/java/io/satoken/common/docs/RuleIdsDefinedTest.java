package io.satoken.common.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Code, tests and documents cite upstream rules by ID ({@code TM-8}, {@code AD-7a}, {@code TM-C1}, ranges
 * such as {@code PV-16..PV-18}); each of them must be defined, once, in {@code docs/upstream-rules.md} as a
 * list entry starting with the ID in bold ({@code - **TM-8**}). Only the spec's own prefixes count, so
 * {@code SHA-256} or satoken's own {@code NT-4} are not rule citations of that file.
 */
class RuleIdsDefinedTest {

    static final String DOCS = "docs/upstream-rules.md";

    /** One per area of the upstream spec, as in the table at the top of {@value #DOCS}. */
    static final List<String> PREFIXES = List.of("TM", "PV", "AW", "TC", "CL", "LC", "AD", "SC", "CR", "RC");

    private static final String PREFIX = "(?:" + String.join("|", PREFIXES) + ")";

    /** After the prefix: digits with an optional lowercase letter (AD-7a), or a constants ID (TM-C1, AD-C). */
    private static final String SUFFIX = "(?:C\\d*|\\d+[a-z]?)";

    static final Pattern CITED = Pattern.compile("\\b" + PREFIX + "-" + SUFFIX + "\\b");

    /** {@code PV-16..PV-18} and {@code PV-16..18} (or with an en dash) cite PV-17 too. */
    static final Pattern RANGE = Pattern.compile("\\b(" + PREFIX + ")-(\\d+)(?:\\.\\.|\u2013)(?:\\1-)?(\\d+)\\b");

    static final Pattern DEFINED = Pattern.compile("(?m)^\\s*- \\*\\*(" + PREFIX + "-" + SUFFIX + ")\\*\\*");

    /** Any bold list-entry anchor shaped like a rule ID, whatever its prefix. */
    static final Pattern ANY_ANCHOR = Pattern.compile("(?m)^\\s*- \\*\\*([A-Z]{2,}-[A-Za-z0-9]+)\\*\\*");

    static final Set<String> EXTENSIONS = Set.of("java", "md", "yaml", "yml", "sh", "properties", "txt", "json",
            "xml");

    @Test
    void everyRuleIdCitedInTheRepositoryIsDefinedInDocs() throws IOException {
        Path root = repositoryRoot();
        Set<String> defined = new TreeSet<>(definitions(root));
        Map<String, Path> citedBy = citations(root);

        Map<String, Path> undefined = new TreeMap<>(BY_PREFIX_AND_NUMBER);
        citedBy.forEach((id, file) -> {
            if (!defined.contains(id)) {
                undefined.put(id, file);
            }
        });
        assertThat(citedBy).as("the repository cites rule IDs at all").isNotEmpty();
        assertThat(undefined)
                .withFailMessage("%d rule ID(s) cited but not defined in %s (add a `- **ID**` entry there, or fix"
                        + " the citation):%n%s", undefined.size(), DOCS, undefined.entrySet().stream()
                                .map(e -> "  " + e.getKey() + "  cited in " + root.relativize(e.getValue()))
                                .collect(Collectors.joining(System.lineSeparator())))
                .isEmpty();
    }

    @Test
    void docsDefineNoRuleIdTwice() throws IOException {
        List<String> all = definitions(repositoryRoot());
        Set<String> seen = new TreeSet<>();
        Set<String> twice = new TreeSet<>(BY_PREFIX_AND_NUMBER);
        for (String id : all) {
            if (!seen.add(id)) {
                twice.add(id);
            }
        }
        assertThat(all).as("%s defines rule IDs at all", DOCS).isNotEmpty();
        assertThat(twice).withFailMessage("%s defines these rule IDs more than once: %s", DOCS, twice).isEmpty();
    }

    @Test
    void docsDefineEveryAreaAndNoUnknownPrefix() throws IOException {
        String docs = Files.readString(repositoryRoot().resolve(DOCS));
        Set<String> anchors = new TreeSet<>();
        Matcher m = ANY_ANCHOR.matcher(docs);
        while (m.find()) {
            anchors.add(m.group(1));
        }
        Set<String> defined = new TreeSet<>(definitions(repositoryRoot()));
        assertThat(anchors).as("every bold anchor in %s is a rule ID the test recognises", DOCS)
                .isEqualTo(defined);
        Set<String> prefixes = defined.stream().map(id -> id.substring(0, id.indexOf('-')))
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(prefixes).as("each area of the spec has rules in %s", DOCS)
                .containsExactlyInAnyOrderElementsOf(PREFIXES);
    }

    @Test
    void onlyTheSpecsPrefixesAreTakenForRuleIds() {
        String text = "SHA-256, UTF-8, TLS-1, RFC-7519, P-256, P-384, DNS-1123, ISO-8601, TEST-NET-1, AES-256,"
                + " UTC-5, SRC-1, NT-4 (satoken's own), SC2086, tm-8, PV4;"
                + " rules AD-7a, TM-C1 and AD-C; TC-5's; AW-15.3; PV-16..PV-18; CR-3..5; (CL-1).";
        assertThat(ids(text)).containsExactlyInAnyOrder("AD-7a", "TM-C1", "AD-C", "TC-5", "AW-15",
                "PV-16", "PV-17", "PV-18", "CR-3", "CR-4", "CR-5", "CL-1");
    }

    /** The IDs a text cites, in order of first appearance; a range adds the IDs it spans after its ends. */
    static Set<String> ids(String text) {
        Set<String> ids = new LinkedHashSet<>();
        Matcher m = CITED.matcher(text);
        while (m.find()) {
            ids.add(m.group());
        }
        Matcher r = RANGE.matcher(text);
        while (r.find()) {
            int from = Integer.parseInt(r.group(2));
            int to = Integer.parseInt(r.group(3));
            for (int n = from; n <= to; n++) {
                ids.add(r.group(1) + "-" + n);
            }
        }
        return ids;
    }

    /** The IDs {@value #DOCS} defines, in order, repeats included. */
    static List<String> definitions(Path root) throws IOException {
        List<String> ids = new ArrayList<>();
        Matcher m = DEFINED.matcher(Files.readString(root.resolve(DOCS)));
        while (m.find()) {
            ids.add(m.group(1));
        }
        return ids;
    }

    /** Every ID cited under {@code root}, with the first file (in path order) that cites it. */
    static Map<String, Path> citations(Path root) throws IOException {
        List<Path> files = textFiles(root);

        Map<String, Path> citedBy = new TreeMap<>(BY_PREFIX_AND_NUMBER);
        for (Path file : files) {
            String text;
            try {
                text = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
            } catch (IOException gone) {
                continue;
            }
            for (String id : ids(text)) {
                citedBy.putIfAbsent(id, file);
            }
        }
        return citedBy;
    }

    /**
     * The repository's text files (the {@link #EXTENSIONS}) under {@code root}, in path order, outside {@code target}
     * and dot directories: what the documentation checks read.
     */
    static List<Path> textFiles(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                boolean skipped = !dir.equals(root) && (name.equals("target") || name.startsWith("."));
                return skipped ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                String name = file.getFileName().toString();
                int dot = name.lastIndexOf('.');
                if (attrs.isRegularFile() && dot > 0 && EXTENSIONS.contains(name.substring(dot + 1))) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                // a file another process removed while we walk cites nothing
                return FileVisitResult.CONTINUE;
            }
        });
        files.sort(Comparator.comparing(p -> root.relativize(p).toString()));
        return files;
    }

    /** The nearest directory, from the working directory up, that holds {@value #DOCS} and a pom.xml. */
    static Path repositoryRoot() {
        Path start = Path.of("").toAbsolutePath();
        for (Path dir = start; dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve(DOCS)) && Files.isRegularFile(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new AssertionError("no directory from " + start + " up holds " + DOCS + " and a pom.xml");
    }

    /** TM-2 before TM-10, and TM-C1 after the numbered rules. */
    static final Comparator<String> BY_PREFIX_AND_NUMBER = Comparator
            .comparing((String id) -> id.substring(0, id.indexOf('-')))
            .thenComparing(id -> !Character.isDigit(id.charAt(id.indexOf('-') + 1)))
            .thenComparingInt(id -> {
                String rest = id.substring(id.indexOf('-') + 1).replaceAll("\\D", "");
                return rest.isEmpty() ? -1 : Integer.parseInt(rest);
            })
            .thenComparing(Comparator.naturalOrder());
}
