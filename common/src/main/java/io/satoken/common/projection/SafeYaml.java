package io.satoken.common.projection;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.composer.Composer;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.events.CollectionEndEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.ScalarEvent;
import org.yaml.snakeyaml.parser.Parser;
import org.yaml.snakeyaml.parser.ParserImpl;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.resolver.Resolver;

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

    /** Reads only its tables once built, so threads share it. */
    private static final Resolver RESOLVER = new Resolver();
    /**
     * Builds one document at a time and forgets it after, so each thread keeps one: building one per document
     * cost more than the document (its tables of constructors).
     */
    private static final ThreadLocal<SafeConstructor> CONSTRUCTORS = ThreadLocal.withInitial(() -> {
        SafeConstructor constructor = new SafeConstructor(new LoaderOptions());
        constructor.setAllowDuplicateKeys(false); // LoaderOptions says so too, but only Yaml passes it on
        return constructor;
    });

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
        LoaderOptions options = options(maxChars);
        // one pass: the composer reads the events through CheckedEvents, which refuses explicit tags and
        // stops at the depth limit (the scanner's cost grows with the depth); then the values are built with
        // the alias, size and duplicate-key checks
        SafeConstructor constructor = CONSTRUCTORS.get();
        constructor.setComposer(new Composer(new CheckedEvents(new ParserImpl(new StreamReader(yaml), options)),
                RESOLVER, options));
        try {
            return constructor.getSingleData(Object.class);
        } catch (Refused e) {
            errors.add(field, "could not be parsed as YAML or JSON: " + e.getMessage());
        } catch (MarkedYAMLException e) {
            errors.add(field, "could not be parsed as YAML or JSON: " + shorten(e.getProblem()) + at(e.getProblemMark()));
        } catch (YAMLException e) {
            errors.add(field, "could not be parsed as YAML or JSON: " + shorten(e.getMessage()));
        }
        return null;
    }

    private static LoaderOptions options(int maxChars) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        options.setMaxAliasesForCollections(MAX_ALIASES);
        options.setNestingDepthLimit(MAX_DEPTH);
        options.setAllowRecursiveKeys(false);
        options.setCodePointLimit(maxChars);
        return options;
    }

    /** A document this class refuses although SnakeYAML would read it; the message is the reason. */
    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * The parser's events, each checked as the composer takes it. Explicit tags are refused because
     * SnakeYAML fails on e.g. {@code !!int abc} or {@code !!str [a]} with NumberFormatException and
     * ClassCastException rather than a YAMLException.
     */
    private static final class CheckedEvents implements Parser {
        private final Parser events;
        private int depth;

        CheckedEvents(Parser events) {
            this.events = events;
        }

        @Override
        public boolean checkEvent(Event.ID id) {
            return events.checkEvent(id);
        }

        @Override
        public Event peekEvent() {
            return events.peekEvent();
        }

        @Override
        public Event getEvent() {
            Event event = events.getEvent();
            if (event instanceof CollectionStartEvent && ++depth > MAX_DEPTH) {
                throw new Refused("nested deeper than " + MAX_DEPTH + " levels" + at(event.getStartMark()));
            } else if (event instanceof CollectionEndEvent) {
                depth--;
            }
            String tag = event instanceof ScalarEvent s ? s.getTag()
                    : event instanceof CollectionStartEvent c ? c.getTag() : null;
            if (tag != null) {
                throw new Refused("explicit tags are not allowed, got " + FieldErrors.quote(tag)
                        + at(event.getStartMark()));
            }
            return event;
        }
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
