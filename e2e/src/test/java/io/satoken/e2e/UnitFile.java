package io.satoken.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parts of a systemd unit a test needs to start its service by hand: {@code ExecStart=} split into
 * words and the {@code Environment=} assignments (double-quoted words as systemd reads them; no specifiers,
 * no escapes, which our unit does not use).
 */
final class UnitFile {

    private final List<String> execStart;
    private final Map<String, String> environment;
    private final List<String> settings;

    private UnitFile(List<String> execStart, Map<String, String> environment, List<String> settings) {
        this.execStart = execStart;
        this.environment = environment;
        this.settings = settings;
    }

    static UnitFile parse(Path unit) throws IOException {
        List<String> exec = null;
        Map<String, String> env = new LinkedHashMap<>();
        List<String> settings = new ArrayList<>();
        for (String line : Files.readAllLines(unit)) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("#") && !l.startsWith("[")) {
                settings.add(l);
            }
            if (l.startsWith("ExecStart=")) {
                if (exec != null) {
                    throw new IllegalStateException(unit + ": more than one ExecStart=");
                }
                exec = words(l.substring("ExecStart=".length()));
            } else if (l.startsWith("Environment=")) {
                for (String assignment : words(l.substring("Environment=".length()))) {
                    int eq = assignment.indexOf('=');
                    env.put(assignment.substring(0, eq), assignment.substring(eq + 1));
                }
            }
        }
        if (exec == null) {
            throw new IllegalStateException(unit + ": no ExecStart=");
        }
        return new UnitFile(List.copyOf(exec), Map.copyOf(env), List.copyOf(settings));
    }

    List<String> execStart() {
        return execStart;
    }

    Map<String, String> environment() {
        return environment;
    }

    /** Every blank-separated word of every {@code key=} line, in order (e.g. each of several InaccessiblePaths=). */
    List<String> values(String key) {
        List<String> values = new ArrayList<>();
        for (String setting : settings) {
            if (setting.startsWith(key + "=")) {
                values.addAll(words(setting.substring(key.length() + 1)));
            }
        }
        return values;
    }

    /** Every {@code Key=value} line, as written. */
    List<String> settings() {
        return settings;
    }

    /** Splits on blanks, keeping a double-quoted word (quotes removed) whole. */
    private static List<String> words(String s) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : s.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                any = true;
            } else if (Character.isWhitespace(c) && !quoted) {
                if (any) {
                    words.add(word.toString());
                    word.setLength(0);
                    any = false;
                }
            } else {
                word.append(c);
                any = true;
            }
        }
        if (any) {
            words.add(word.toString());
        }
        return words;
    }
}
