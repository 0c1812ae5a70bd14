package io.satoken.common.paths;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** AW-15 path validation and AW-7 cleaning of payload keys. */
class PayloadPathTest {

    record Rejected(String name, String path, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    record Accepted(String name, String path, String cleaned) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Rejected> rejected() {
        return Stream.of(
                // AW-15.1
                new Rejected("empty", "", "invalid path \"\": must not be empty"),
                // AW-15.2
                new Rejected("absolute", "/dev/null", "invalid path \"/dev/null\": must be relative path"),
                // AW-15.3: 4097 is one too many
                new Rejected("path of 4097", "a/".repeat(2047) + "aaa", "must be less than or equal to 4096 characters"),
                // AW-15.4
                new Rejected("dot-dot inside", "hello/../etc/x", "invalid path \"hello/../etc/x\": must not contain '..'"),
                new Rejected("dot-dot climbing", "hello/there/../../../../../../etc/passwd",
                        "invalid path \"hello/there/../../../../../../etc/passwd\": must not contain '..'"),
                new Rejected("dot-dot middle", "foo/../bar", "invalid path \"foo/../bar\": must not contain '..'"),
                new Rejected("dot-dot first", "../x", "invalid path \"../x\": must not contain '..'"),
                new Rejected("dot-dot alone", "..", "invalid path \"..\": must not contain '..'"),
                // AW-15.5: 256 is one too many
                new Rejected("element of 256", "x".repeat(256), "filenames must be less than or equal to 255 characters"),
                new Rejected("nested element of 256", "a/" + "x".repeat(256),
                        "filenames must be less than or equal to 255 characters"),
                // AW-15.6
                new Rejected("dot-dot prefix", "..sneaky.txt", "invalid path \"..sneaky.txt\": must not start with '..'"),
                new Rejected("dot-dot bar", "..bar", "invalid path \"..bar\": must not start with '..'"),
                new Rejected("reserved data", "..data", "invalid path \"..data\": must not start with '..'"),
                new Rejected("three dots", "...", "invalid path \"...\": must not start with '..'"),
                // ours, on the cleaned path (AW-5): passes AW-15 but cleans to a reserved name, or to nothing
                new Rejected("dot then reserved", "./..data",
                        "invalid path \"./..data\": must not start with '..' (after cleaning: \"..data\")"),
                new Rejected("dot", ".", "invalid path \".\": must name a file, not the target directory itself"),
                new Rejected("dot slash", "./", "invalid path \"./\": must name a file, not the target directory itself"));
    }

    static Stream<Accepted> accepted() {
        return Stream.of(
                new Accepted("dotfile", ".dotfile", ".dotfile"),
                new Accepted("dot binary", ".binary.bin", ".binary.bin"),
                new Accepted("dot-dot prefix not first", "a/..b", "a/..b"),
                new Accepted("double slash", "foo//bar", "foo/bar"),
                new Accepted("dot slash", "./bar", "bar"),
                new Accepted("trailing slash", "foo/", "foo"),
                new Accepted("deep", "1/2/3/4/5/6/7/8/9/10/.dotfile.lib", "1/2/3/4/5/6/7/8/9/10/.dotfile.lib"),
                new Accepted("path of 4096", "a/".repeat(2047) + "aa", "a/".repeat(2047) + "aa"),
                new Accepted("element of 255", "x".repeat(255), "x".repeat(255)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rejected")
    void validateAndClean_rejects(Rejected c) {
        assertThatThrownBy(() -> PayloadPath.validateAndClean(c.path()))
                .isInstanceOf(PayloadPathException.class)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageEndingWith(c.message())
                .hasMessageStartingWith("invalid path \"");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void validateAndClean_acceptsAndCleans(Accepted c) {
        assertThat(PayloadPath.validateAndClean(c.path())).isEqualTo(c.cleaned());
    }

    @Test
    void validateAndClean_countsUtf8Bytes() {
        // upstream counts bytes (Go len), as the kernel does: 128 two-byte characters are 256 bytes
        assertThatThrownBy(() -> PayloadPath.validateAndClean("é".repeat(128)))
                .hasMessageEndingWith("filenames must be less than or equal to 255 characters");
    }
}
