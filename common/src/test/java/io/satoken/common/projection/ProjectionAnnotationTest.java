package io.satoken.common.projection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The entries of {@code satoken.io/projections}: PV-2, PV-4..PV-8, PV-11 and AW-15 on pod input. */
class ProjectionAnnotationTest {

    private static final String A = "satoken.io/projections";

    record Rejected(String name, String value, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    record Accepted(String name, String value, ProjectionSpec spec) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** One entry with {@code path: token} and the given fields, as YAML. */
    private static String entry(String fields) {
        return "- path: token\n  " + fields + "\n";
    }

    private static ProjectionSpec spec(long expirationSeconds, Integer mode, Integer uid, Integer gid) {
        return new ProjectionSpec("token", null, expirationSeconds, mode, uid, gid);
    }

    static Stream<Rejected> fieldRules() {
        String exp = A + "[0].expirationSeconds: ";
        String mode = A + "[0].mode: ";
        String path = A + "[0].path: ";
        return Stream.of(
                // PV-4: 600 is allowed, 599 is not
                new Rejected("expiration 599", entry("expirationSeconds: 599"),
                        exp + "may not specify a duration less than 10 minutes, got 599"),
                new Rejected("expiration 0", entry("expirationSeconds: 0"),
                        exp + "may not specify a duration less than 10 minutes, got 0"),
                new Rejected("expiration negative", entry("expirationSeconds: -3600"),
                        exp + "may not specify a duration less than 10 minutes, got -3600"),
                // PV-5: 2^32 is allowed, 2^32+1 is not
                new Rejected("expiration 2^32+1", entry("expirationSeconds: 4294967297"),
                        exp + "may not specify a duration larger than 2^32 seconds, got 4294967297"),
                new Rejected("expiration Long.MAX", entry("expirationSeconds: 9223372036854775807"),
                        exp + "may not specify a duration larger than 2^32 seconds, got 9223372036854775807"),
                new Rejected("expiration overflows long", entry("expirationSeconds: 99999999999999999999"),
                        exp + "must be an integer that fits in 64 bits, got 99999999999999999999"),
                new Rejected("expiration float", entry("expirationSeconds: 3600.0"),
                        exp + "must be an integer, got 3600.0"),
                new Rejected("expiration exponent", entry("expirationSeconds: 3.6e+3"),
                        exp + "must be an integer, got 3600.0"),
                new Rejected("expiration string", entry("expirationSeconds: \"3600\""),
                        exp + "must be an integer, got \"3600\""),
                new Rejected("expiration with unit", entry("expirationSeconds: 1h"),
                        exp + "must be an integer, got \"1h\""),
                new Rejected("expiration boolean", entry("expirationSeconds: true"),
                        exp + "must be an integer, got true"),
                new Rejected("expiration yes is a YAML 1.1 boolean", entry("expirationSeconds: yes"),
                        exp + "must be an integer, got true"),
                new Rejected("expiration list", entry("expirationSeconds: [3600]"),
                        exp + "must be an integer, got a list"),
                // PV-11: 0..0777
                new Rejected("mode 01000", entry("mode: 01000"),
                        mode + "must be between 0 and 0777 (octal), got 512 (octal 01000)"),
                new Rejected("mode decimal 640 is octal 1200", entry("mode: 640"),
                        mode + "must be between 0 and 0777 (octal), got 640 (octal 01200)"),
                new Rejected("mode negative", entry("mode: -1"),
                        mode + "must be between 0 and 0777 (octal), got -1"),
                new Rejected("mode string 01000", entry("mode: \"01000\""),
                        mode + "must be between 0 and 0777 (octal), got \"01000\""),
                new Rejected("mode string not octal", entry("mode: \"0648\""),
                        mode + "must be between 0 and 0777 (octal), as an integer or a string of octal digits"
                                + " such as \"0640\", got \"0648\""),
                new Rejected("mode string 0o", entry("mode: 0o640"),
                        mode + "must be between 0 and 0777 (octal), as an integer or a string of octal digits"
                                + " such as \"0640\", got \"0o640\""),
                new Rejected("mode string empty", entry("mode: \"\""),
                        mode + "must be between 0 and 0777 (octal), as an integer or a string of octal digits"
                                + " such as \"0640\", got \"\""),
                new Rejected("mode huge octal string", entry("mode: \"7777777777777777777777777\""),
                        mode + "must be between 0 and 0777 (octal), got \"7777777777777777777777777\""),
                new Rejected("mode float", entry("mode: 0.5"),
                        mode + "must be between 0 and 0777 (octal), as an integer or a string of octal digits"
                                + " such as \"0640\", got 0.5"),
                new Rejected("mode boolean", entry("mode: false"),
                        mode + "must be between 0 and 0777 (octal), as an integer or a string of octal digits"
                                + " such as \"0640\", got false"),
                // owner and group ids
                new Rejected("uid negative", entry("uid: -1"), A + "[0].uid: must be between 0 and 2147483647, got -1"),
                new Rejected("uid 2^31", entry("uid: 2147483648"),
                        A + "[0].uid: must be between 0 and 2147483647, got 2147483648"),
                new Rejected("uid string", entry("uid: \"1000\""), A + "[0].uid: must be an integer, got \"1000\""),
                new Rejected("gid negative", entry("gid: -5"), A + "[0].gid: must be between 0 and 2147483647, got -5"),
                new Rejected("gid float", entry("gid: 1.0"), A + "[0].gid: must be an integer, got 1.0"),
                new Rejected("gid overflows long", entry("gid: 99999999999999999999"),
                        A + "[0].gid: must be an integer that fits in 64 bits, got 99999999999999999999"),
                // PV-8: any string, but a string
                new Rejected("audience number", entry("audience: 5"), A + "[0].audience: must be a string, got 5"),
                new Rejected("audience map", entry("audience: {a: b}"), A + "[0].audience: must be a string, got a map"),
                // PV-6
                new Rejected("path missing", "- audience: x\n", path + "Required value"),
                new Rejected("path empty", "- path: \"\"\n", path + "Required value"),
                new Rejected("path null", "- path: null\n", path + "Required value"),
                new Rejected("path number", "- path: 123\n", path + "must be a string, got 123"),
                new Rejected("path list", "- path: [a]\n", path + "must be a string, got a list"),
                // PV-7
                new Rejected("path absolute", "- path: /etc\n", path + "must be a relative path, got \"/etc\""),
                new Rejected("path dot-dot", "- path: ..\n", path + "must not contain '..', got \"..\""),
                new Rejected("path dot-dot first", "- path: ../x\n", path + "must not contain '..', got \"../x\""),
                new Rejected("path dot-dot inside", "- path: a/../b\n", path + "must not contain '..', got \"a/../b\""),
                new Rejected("path dot-dot last", "- path: a/..\n", path + "must not contain '..', got \"a/..\""),
                new Rejected("path reserved ..data", "- path: ..data\n", path + "must not start with '..', got \"..data\""),
                new Rejected("path reserved ..data/token", "- path: ..data/token\n",
                        path + "must not start with '..', got \"..data/token\""),
                new Rejected("path three dots", "- path: ...\n", path + "must not start with '..', got \"...\""),
                // AW-15 through the writer's own check
                new Rejected("path reserved after cleaning", "- path: ./..data\n",
                        path + "must not start with '..' (after cleaning: \"..data\"), got \"./..data\""),
                new Rejected("path dot", "- path: .\n",
                        path + "must name a file, not the target directory itself, got \".\""),
                new Rejected("path element of 256", "- path: " + "x".repeat(256) + "\n",
                        path + "filenames must be less than or equal to 255 characters, got \"" + "x".repeat(64)
                                + "...\" (256 characters)"),
                new Rejected("path of 4097", "- path: " + "a/".repeat(2047) + "aaa\n",
                        path + "must be less than or equal to 4096 characters, got \"" + "a/".repeat(32)
                                + "...\" (4097 characters)"),
                new Rejected("path with newline is escaped", "- path: \"/etc\\nx\"\n",
                        path + "must be a relative path, got \"/etc\\nx\""),
                // one map, known keys only
                new Rejected("unknown key", entry("pth: x"),
                        A + "[0]: unknown key \"pth\" (known keys: path, audience, expirationSeconds, mode, uid, gid)"),
                new Rejected("unknown key not a string", entry("1: x"),
                        A + "[0]: unknown key 1 (known keys: path, audience, expirationSeconds, mode, uid, gid)"),
                new Rejected("keys are case-sensitive", entry("ExpirationSeconds: 600"),
                        A + "[0]: unknown key \"ExpirationSeconds\" (known keys: path, audience, expirationSeconds,"
                                + " mode, uid, gid)"),
                // paths of one pod, compared after cleaning
                new Rejected("duplicate path", "- path: a\n- path: b\n- path: ./a\n",
                        A + "[2].path: must not name the same file as " + A + "[0].path, got \"./a\""),
                new Rejected("file inside a file", "- path: a\n- path: a/b\n",
                        A + "[1].path: must not lie inside the file of " + A + "[0].path, got \"a/b\""),
                new Rejected("file over a directory", "- path: a/b/c\n- path: a/b\n",
                        A + "[1].path: must not name a directory of the file of " + A + "[0].path, got \"a/b\""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fieldRules")
    void parse_fieldRule_rejected(Rejected c) {
        assertThatThrownBy(() -> ProjectionAnnotation.parse(c.value()))
                .isInstanceOf(InvalidProjectionException.class)
                .hasMessage(c.message());
    }

    static Stream<Rejected> documents() {
        return Stream.of(
                new Rejected("empty string", "", A + ": must be a non-empty list of maps, got null"),
                new Rejected("only a comment", "# nothing\n", A + ": must be a non-empty list of maps, got null"),
                new Rejected("YAML null", "null", A + ": must be a non-empty list of maps, got null"),
                new Rejected("scalar", "token", A + ": must be a non-empty list of maps, got \"token\""),
                new Rejected("number", "42", A + ": must be a non-empty list of maps, got 42"),
                new Rejected("map instead of a list", "path: token\n", A + ": must be a non-empty list of maps, got a map"),
                new Rejected("JSON object instead of a list", "{\"path\": \"token\"}",
                        A + ": must be a non-empty list of maps, got a map"),
                new Rejected("empty list", "[]", A + ": must be a non-empty list of maps, got an empty list"),
                new Rejected("list of strings", "[token]", A + "[0]: must be a map, got \"token\""),
                new Rejected("list of lists", "- [path, token]\n", A + "[0]: must be a map, got a list"),
                new Rejected("null entry", "- path: a\n-\n", A + "[1]: must be a map, got null"),
                new Rejected("entry that contains itself", "&a [*a]", A + "[0]: must be a map, got a list"),
                new Rejected("65 entries", entries(65), A + ": must have at most 64 entries, got 65"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("documents")
    void parse_badDocument_rejected(Rejected c) {
        assertThatThrownBy(() -> ProjectionAnnotation.parse(c.value()))
                .isInstanceOf(InvalidProjectionException.class)
                .hasMessage(c.message());
    }

    static Stream<Rejected> notParsed() {
        String bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n"
                + "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                + "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                + "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                + "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
        return Stream.of(
                new Rejected("unclosed flow list", "- path: [token\n", "could not be parsed as YAML or JSON: "),
                new Rejected("bad indentation", "- path: a\n mode: 1\n", "could not be parsed as YAML or JSON: "),
                new Rejected("mismatched brackets", "[{\"path\": \"a\"]}", "could not be parsed as YAML or JSON: "),
                new Rejected("tab indentation", "- path: a\n\tmode: 1\n", "could not be parsed as YAML or JSON: "),
                new Rejected("duplicate key", "[{\"path\": \"a\", \"path\": \"b\"}]",
                        "could not be parsed as YAML or JSON: found duplicate key path (line 1, column"),
                new Rejected("two documents", "- path: a\n---\n- path: b\n",
                        "could not be parsed as YAML or JSON: but found another document (line 2, column 1)"),
                new Rejected("alias bomb", bomb, "could not be parsed as YAML or JSON: Number of aliases for non-scalar"
                        + " nodes exceeds the specified max=10"),
                new Rejected("deeply nested", "[".repeat(10_000) + "]".repeat(10_000),
                        "could not be parsed as YAML or JSON: nested deeper than 10 levels (line 1, column 11)"),
                new Rejected("deeply nested, unclosed", "[".repeat(200_000),
                        "could not be parsed as YAML or JSON: nested deeper than 10 levels (line 1, column 11)"),
                new Rejected("deeply nested block lists", "- ".repeat(100_000) + "a",
                        "could not be parsed as YAML or JSON: nested deeper than 10 levels (line 1, column 21)"),
                new Rejected("Java type tag", "- !!java.io.File {path: a}\n",
                        "could not be parsed as YAML or JSON: explicit tags are not allowed, got \"tag:yaml.org,2002:java.io.File\""),
                new Rejected("int tag on a word", "- path: !!int abc\n",
                        "could not be parsed as YAML or JSON: explicit tags are not allowed, got \"tag:yaml.org,2002:int\""
                                + " (line 1, column 9)"),
                new Rejected("str tag on a list", "- path: !!str [a]\n", "explicit tags are not allowed"),
                new Rejected("binary tag", "- path: !!binary '###'\n", "explicit tags are not allowed"),
                new Rejected("local tag", "- !thing {path: a}\n", "explicit tags are not allowed"),
                new Rejected("too long", "- path: " + "a".repeat(ProjectionAnnotation.MAX_LENGTH),
                        "must be at most 262144 characters, got 262152"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("notParsed")
    void parse_notParsable_rejectedBriefly(Rejected c) {
        assertThatThrownBy(() -> ProjectionAnnotation.parse(c.value()))
                .isInstanceOf(InvalidProjectionException.class)
                .hasMessageStartingWith(A + ": ")
                .hasMessageContaining(c.message())
                .hasNoCause()
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
    }

    static Stream<Accepted> accepted() {
        return Stream.of(
                // PV-2 and the other defaults
                new Accepted("path only", "- path: token\n", ProjectionSpec.of("token")),
                new Accepted("nulls are absent", entry("audience: null\n  expirationSeconds: ~\n  mode: null"),
                        ProjectionSpec.of("token")),
                // PV-8
                new Accepted("audience", entry("audience: https://vault.example.com"),
                        new ProjectionSpec("token", "https://vault.example.com", 3600, null, null, null)),
                new Accepted("empty audience is none", entry("audience: \"\""), ProjectionSpec.of("token")),
                // PV-4, PV-5 boundaries
                new Accepted("expiration 600", entry("expirationSeconds: 600"), spec(600, null, null, null)),
                new Accepted("expiration 2^32", entry("expirationSeconds: 4294967296"), spec(1L << 32, null, null, null)),
                // PV-11 boundaries, and the forms of a mode
                new Accepted("mode 0", entry("mode: 0"), spec(3600, 0, null, null)),
                new Accepted("mode 0777", entry("mode: 0777"), spec(3600, 0777, null, null)),
                new Accepted("mode YAML octal 0640", entry("mode: 0640"), spec(3600, 0640, null, null)),
                new Accepted("mode decimal 416", entry("mode: 416"), spec(3600, 0640, null, null)),
                new Accepted("mode octal string", entry("mode: \"0640\""), spec(3600, 0640, null, null)),
                new Accepted("mode octal string without 0", entry("mode: \"640\""), spec(3600, 0640, null, null)),
                new Accepted("mode string 0777", entry("mode: \"0777\""), spec(3600, 0777, null, null)),
                new Accepted("ids at both ends", entry("uid: 0\n  gid: 2147483647"), spec(3600, null, 0, Integer.MAX_VALUE)),
                // AW-15 accepts, AW-7 cleans
                new Accepted("path cleaned", "- path: ./a//b/\n", ProjectionSpec.of("a/b")),
                new Accepted("dotfile", "- path: .token\n", ProjectionSpec.of(".token")),
                new Accepted("dot-dot prefix not first", "- path: a/..b\n", ProjectionSpec.of("a/..b")),
                new Accepted("element of 255", "- path: " + "x".repeat(255) + "\n", ProjectionSpec.of("x".repeat(255))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void parse_valid_accepted(Accepted c) throws InvalidProjectionException {
        assertThat(ProjectionAnnotation.parse(c.value())).containsExactly(c.spec());
    }

    static Stream<Accepted> sameInput() {
        ProjectionSpec vault = new ProjectionSpec("vault/token", "https://vault", 1800, 0640, 1000, 2000);
        return Stream.of(
                new Accepted("YAML block", "- path: vault/token\n  audience: https://vault\n  expirationSeconds: 1800\n"
                        + "  mode: 0640\n  uid: 1000\n  gid: 2000\n- path: plain\n", vault),
                new Accepted("YAML flow", "[{path: vault/token, audience: 'https://vault', expirationSeconds: 1800,"
                        + " mode: 0640, uid: 1000, gid: 2000}, {path: plain}]", vault),
                new Accepted("JSON, mode as a number", "[{\"path\":\"vault/token\",\"audience\":\"https://vault\","
                        + "\"expirationSeconds\":1800,\"mode\":416,\"uid\":1000,\"gid\":2000},{\"path\":\"plain\"}]", vault),
                new Accepted("JSON, mode as an octal string", "[{\"path\": \"vault/token\", \"audience\": \"https://vault\","
                        + " \"expirationSeconds\": 1800, \"mode\": \"0640\", \"uid\": 1000, \"gid\": 2000},"
                        + " {\"path\": \"plain\"}]", vault),
                new Accepted("JSON indented with tabs", "[\n\t{\n\t\t\"path\":\t\"vault/token\",\n\t\t\"audience\": \"https://vault\",\n"
                        + "\t\t\"expirationSeconds\": 1800,\n\t\t\"mode\": 416,\n\t\t\"uid\": 1000,\n\t\t\"gid\": 2000\n\t},\n"
                        + "\t{\"path\": \"plain\"}\n]\n", vault));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sameInput")
    void parse_yamlAndJsonForms_giveTheSameSpecs(Accepted c) throws InvalidProjectionException {
        assertThat(ProjectionAnnotation.parse(c.value())).containsExactly(c.spec(), ProjectionSpec.of("plain"));
    }

    @Test
    void parse_sixtyFourEntries_accepted() throws InvalidProjectionException {
        assertThat(ProjectionAnnotation.parse(entries(64))).hasSize(64);
    }

    @Test
    void parse_tabInsideAJsonString_isKept() throws InvalidProjectionException {
        // only the tabs between tokens become spaces
        assertThat(ProjectionAnnotation.parse("[\t{\"path\": \"a\", \"audience\": \"x\ty\"}]").get(0).audience())
                .isEqualTo("x\ty");
    }

    @Test
    void parse_nullValue_isRequired() {
        assertThatThrownBy(() -> ProjectionAnnotation.parse(null)).hasMessage(A + ": Required value");
    }

    @Test
    void parse_severalErrors_allReported() {
        assertThatThrownBy(() -> ProjectionAnnotation.parse("- path: /a\n  mode: 01000\n- path: b\n  expirationSeconds: 60\n"))
                .isInstanceOfSatisfying(InvalidProjectionException.class, e -> assertThat(e.errors()).containsExactly(
                        A + "[0].path: must be a relative path, got \"/a\"",
                        A + "[0].mode: must be between 0 and 0777 (octal), got 512 (octal 01000)",
                        A + "[1].expirationSeconds: may not specify a duration less than 10 minutes, got 60"))
                .hasMessage(A + "[0].path: must be a relative path, got \"/a\"; "
                        + A + "[0].mode: must be between 0 and 0777 (octal), got 512 (octal 01000); "
                        + A + "[1].expirationSeconds: may not specify a duration less than 10 minutes, got 60");
    }

    @Test
    void parse_manyErrors_messageShowsTheFirstTen() {
        String value = IntStream.range(0, 64).mapToObj(i -> "- path: /p" + i + "\n").collect(Collectors.joining());
        assertThatThrownBy(() -> ProjectionAnnotation.parse(value))
                .isInstanceOfSatisfying(InvalidProjectionException.class, e -> assertThat(e.errors()).hasSize(64))
                .hasMessageStartingWith(A + "[0].path: must be a relative path, got \"/p0\"; ")
                .hasMessageContaining(A + "[9].path")
                .hasMessageNotContaining(A + "[10].path")
                .hasMessageEndingWith("; and 54 more errors");
    }

    @Test
    void parse_returnsAnImmutableList() throws InvalidProjectionException {
        List<ProjectionSpec> specs = ProjectionAnnotation.parse("- path: a\n");
        assertThatThrownBy(() -> specs.add(ProjectionSpec.of("b"))).isInstanceOf(UnsupportedOperationException.class);
    }

    private static String entries(int n) {
        return IntStream.range(0, n).mapToObj(i -> "- path: t" + i + "\n").collect(Collectors.joining());
    }
}
