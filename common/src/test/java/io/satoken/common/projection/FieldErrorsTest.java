package io.satoken.common.projection;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** How messages show offending values: short, on one line, never a collection's contents. */
class FieldErrorsTest {

    record Case(String name, Object value, String shown) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> values() {
        List<Object> selfContaining = new ArrayList<>();
        selfContaining.add(selfContaining);
        return Stream.of(
                new Case("null", null, "null"),
                new Case("string", "/etc", "\"/etc\""),
                new Case("empty string", "", "\"\""),
                new Case("quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\""),
                new Case("newline, tab, return", "a\nb\tc\rd", "\"a\\nb\\tc\\rd\""),
                new Case("control character", "a\u0001b\u007f", "\"a\\u0001b\\u007f\""),
                new Case("long string", "x".repeat(65), "\"" + "x".repeat(64) + "...\" (65 characters)"),
                new Case("64 characters are shown whole", "x".repeat(64), "\"" + "x".repeat(64) + "\""),
                new Case("surrogate pair not split", "x".repeat(63) + "😀" + "y", "\"" + "x".repeat(63) + "...\" (66 characters)"),
                new Case("integer", 599, "599"),
                new Case("long", 4294967297L, "4294967297"),
                new Case("big integer", new BigInteger("99999999999999999999"), "99999999999999999999"),
                new Case("huge big integer", BigInteger.TEN.pow(100), "1" + "0".repeat(63) + "..."),
                new Case("double", 1.5, "1.5"),
                new Case("boolean", true, "true"),
                new Case("map", Map.of("a", "secret"), "a map"),
                new Case("list", List.of("secret"), "a list"),
                new Case("list containing itself", selfContaining, "a list"),
                new Case("set", Set.of(1), "a set"),
                new Case("binary", new byte[] {1}, "binary data"),
                new Case("timestamp", new Date(0), "a timestamp"),
                new Case("any other kind, never by its class", new StringBuilder("x"), "a value of another kind"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("values")
    void describe_showsValuesBriefly(Case c) {
        assertThat(FieldErrors.describe(c.value())).isEqualTo(c.shown());
    }

    @Test
    void message_listsAtMostTen() {
        List<String> errors = Stream.iterate(0, i -> i + 1).limit(12).map(i -> "e" + i).toList();

        assertThat(FieldErrors.message(errors.subList(0, 10))).isEqualTo("e0; e1; e2; e3; e4; e5; e6; e7; e8; e9");
        assertThat(FieldErrors.message(errors)).isEqualTo("e0; e1; e2; e3; e4; e5; e6; e7; e8; e9; and 2 more errors");
    }

    @Test
    void errors_formatFieldRuleAndValue() {
        FieldErrors errors = new FieldErrors();
        errors.required("a.path");
        errors.invalid("a.mode", "must be between 0 and 0777 (octal)", "x");
        errors.add("a", "must have at most 64 entries, got 65");

        assertThat(errors.list()).containsExactly("a.path: Required value",
                "a.mode: must be between 0 and 0777 (octal), got \"x\"", "a: must have at most 64 entries, got 65");
    }
}
