package io.satoken.common.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric tables of docs/operations.md, read as the scrape tests' contract, so that the page and the tests cannot
 * drift apart. A row is {@code | `family` | type; more | labels (values) | meaning |}. Its labels cell holds
 * {@code ;}-separated labels, each written one of three ways:
 * <ul>
 *   <li>{@code `label` = `a`, `b` (a note), `c`}: these values, each present from the first scrape; a note that
 *       says {@code (the selected ones)} or {@code (the served ones)} makes them the most that may be present;</li>
 *   <li>{@code `label` (as above)}: the values of that label in an earlier row;</li>
 *   <li>{@code `label` (`A`, `B`…)}, with no {@code =}: values that come from outside, not checked.</li>
 * </ul>
 */
public final class OperationsMetrics {

    /** docs/operations.md, from a module's directory, where Maven runs the tests. */
    public static final Path PAGE = Path.of("..", "docs", "operations.md");

    private static final Pattern LABEL = Pattern.compile("`([a-z_]+)`\\s*(=|\\()?(.*)", Pattern.DOTALL);
    private static final Pattern TICKED = Pattern.compile("`([^`]+)`");

    private OperationsMetrics() {
    }

    /** The rows of the table under {@code heading} (for example {@code ### Agent}), one entry for each label. */
    public static List<DocumentedMetric> table(Path page, String heading) {
        List<String> lines;
        try {
            lines = Files.readAllLines(page);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int start = lines.indexOf(heading);
        if (start < 0) {
            throw new IllegalArgumentException(page + ": no heading \"" + heading + "\"");
        }
        List<DocumentedMetric> metrics = new ArrayList<>();
        Map<String, List<String>> valuesOf = new HashMap<>();
        Map<String, Boolean> selectableOf = new HashMap<>();
        for (String line : lines.subList(start + 1, lines.size())) {
            if (line.startsWith("#")) {
                break;
            }
            if (!line.startsWith("| `")) {
                continue;
            }
            List<String> cells = cells(line);
            String family = ticked(cells.get(0)).get(0);
            String type = cells.get(1).split("[;\\s]", 2)[0];
            List<String> labels = topLevel(cells.get(2), ';');
            if (labels.isEmpty()) {
                metrics.add(new DocumentedMetric(family, type, null, List.of(), false));
            }
            for (String label : labels) {
                Matcher m = LABEL.matcher(label.strip());
                if (!m.matches()) {
                    throw new IllegalArgumentException(page + ": " + family + ": cannot read the label \"" + label + "\"");
                }
                String name = m.group(1);
                String rest = m.group(3);
                if ("=".equals(m.group(2))) {
                    boolean selectable = rest.contains("(the selected ones)") || rest.contains("(the served ones)");
                    List<String> values = ticked(outsideParentheses(rest)).stream().sorted().toList();
                    valuesOf.put(name, values);
                    selectableOf.put(name, selectable);
                    metrics.add(new DocumentedMetric(family, type, name, values, selectable));
                } else if (rest.startsWith("as above")) {
                    if (!valuesOf.containsKey(name)) {
                        throw new IllegalArgumentException(page + ": " + family + ": `" + name + "` (as above), but no "
                                + "row above gives its values");
                    }
                    metrics.add(new DocumentedMetric(family, type, name, valuesOf.get(name), selectableOf.get(name)));
                } else {
                    // values from outside (an HTTP status, a verb): the family and type are still checked
                    metrics.add(new DocumentedMetric(family, type, null, List.of(), false));
                }
            }
        }
        if (metrics.isEmpty()) {
            throw new IllegalArgumentException(page + ": no metric rows under \"" + heading + "\"");
        }
        return metrics.stream().distinct().toList();
    }

    /** The cells of a table row; {@code \|} is a pipe inside a cell. */
    private static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        for (int i = 1; i < row.length(); i++) {
            char c = row.charAt(i);
            if (c == '\\' && i + 1 < row.length() && row.charAt(i + 1) == '|') {
                cell.append('|');
                i++;
            } else if (c == '|') {
                cells.add(cell.toString().strip());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        return cells;
    }

    /** {@code text} split at each {@code separator} outside parentheses; blank parts dropped. */
    private static List<String> topLevel(String text, char separator) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int from = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            if (c == separator && depth == 0) {
                parts.add(text.substring(from, i));
                from = i + 1;
            }
        }
        parts.add(text.substring(from));
        return parts.stream().map(String::strip).filter(p -> !p.isEmpty()).toList();
    }

    private static String outsideParentheses(String text) {
        StringBuilder out = new StringBuilder();
        int depth = 0;
        for (char c : text.toCharArray()) {
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (depth == 0) {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static List<String> ticked(String text) {
        List<String> values = new ArrayList<>();
        Matcher m = TICKED.matcher(text);
        while (m.find()) {
            values.add(m.group(1));
        }
        return values;
    }
}
