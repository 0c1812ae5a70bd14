package io.satoken.common.projection;

import java.io.StringReader;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.CollectionEndEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.ScalarEvent;
import org.yaml.snakeyaml.representer.Representer;

/**
 * Loads one untrusted YAML or JSON document into plain Java values (maps, lists, strings, numbers,
 * booleans), with limits on size, nesting and aliases. JSON goes through the same parser: it is
 * YAML, once the tabs JSON allows between tokens are turned into spaces.
 *
 * <p>SnakeYAML resolves plain scalars by YAML 1.1: {@code 0640} is the octal int 416, {@code on} is
 * {@code true}, {@code 2024-01-01} a timestamp. Callers check the types they get.
 *
 * <p>Public for the agent's config parser, which loads its file with the same limits.
 */
public final class SafeYaml {

    /** Aliases to lists and maps per document: enough for hand-written reuse, too few for a bomb. */
    static final int MAX_ALIASES = 10;
    /** Nested lists and maps: our formats need four levels at most. */
    static final int MAX_DEPTH = 10;
    /** A problem SnakeYAML reports is cut to this length, as it may quote the input. */
    private static final int PROBLEM_LIMIT = 120;

    private SafeYaml() {
    }

    /**
     * Loads {@code text}. On failure the reason is added to {@code errors} under {@code field} and
     * null is returned; null is also what an empty document gives, so callers look at
     * {@code errors} first.
     *
     * @param maxChars the longest document accepted
     */
    public static Object load(String text, int maxChars, String field, FieldErrors errors) {
        if (text.length() > maxChars) {
            errors.add(field, "must be at most " + maxChars + " characters, got " + text.length());
            return null;
        }
        String yaml = looksLikeJson(text) ? untabJson(text) : text;
        try {
            // 1. reject explicit tags: SnakeYAML fails on e.g. "!!int abc" or "!!str [a]" with
            //    NumberFormatException and ClassCastException rather than a YAMLException. Stop at
            //    the depth limit as step 2 would: the scanner's cost grows with the depth.
            int depth = 0;
            for (Event event : parser(maxChars).parse(new StringReader(yaml))) {
                if (event instanceof CollectionStartEvent && ++depth > MAX_DEPTH) {
                    errors.add(field, "could not be parsed as YAML or JSON: nested deeper than " + MAX_DEPTH
                            + " levels" + at(event.getStartMark()));
                    return null;
                } else if (event instanceof CollectionEndEvent) {
                    depth--;
                }
                String tag = event instanceof ScalarEvent s ? s.getTag()
                        : event instanceof CollectionStartEvent c ? c.getTag() : null;
                if (tag != null) {
                    errors.add(field, "could not be parsed as YAML or JSON: explicit tags are not allowed, got "
                            + FieldErrors.quote(tag) + at(event.getStartMark()));
                    return null;
                }
            }
            // 2. build the values, with the alias, size and duplicate-key checks
            return parser(maxChars).load(yaml);
        } catch (MarkedYAMLException e) {
            errors.add(field, "could not be parsed as YAML or JSON: " + shorten(e.getProblem()) + at(e.getProblemMark()));
        } catch (YAMLException e) {
            errors.add(field, "could not be parsed as YAML or JSON: " + shorten(e.getMessage()));
        }
        return null;
    }

    private static Yaml parser(int maxChars) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(MAX_ALIASES);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setAllowRecursiveKeys(false);
        options.setCodePointLimit(maxChars);
        DumperOptions dumper = new DumperOptions();
        return new Yaml(new SafeConstructor(options), new Representer(dumper), dumper, options);
    }

    private static boolean looksLikeJson(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!Character.isWhitespace(c)) {
                return c == '[' || c == '{';
            }
        }
        return false;
    }

    /**
     * JSON allows tabs between tokens; SnakeYAML's scanner does not. Tabs outside double-quoted
     * strings become spaces; inside them (invalid JSON, valid YAML) they are kept.
     */
    private static String untabJson(String text) {
        if (text.indexOf('\t') < 0) {
            return text;
        }
        StringBuilder b = new StringBuilder(text);
        boolean inString = false;
        for (int i = 0; i < b.length(); i++) {
            char c = b.charAt(i);
            if (inString && c == '\\') {
                i++;
            } else if (c == '"') {
                inString = !inString;
            } else if (c == '\t' && !inString) {
                b.setCharAt(i, ' ');
            }
        }
        return b.toString();
    }

    private static String at(Mark mark) {
        return mark == null ? "" : " (line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1) + ")";
    }

    private static String shorten(String problem) {
        if (problem == null) {
            return "unknown error";
        }
        String oneLine = problem.replaceAll("\\s+", " ").trim();
        return oneLine.length() <= PROBLEM_LIMIT ? oneLine : oneLine.substring(0, PROBLEM_LIMIT) + "...";
    }
}
