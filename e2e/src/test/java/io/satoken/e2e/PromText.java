package io.satoken.e2e;

import java.util.Arrays;

/** Reads samples out of Prometheus text exposition. */
final class PromText {

    private PromText() {
    }

    /**
     * The sum of the samples of {@code family} whose labels contain every one of {@code labels}
     * ({@code result="failure"}); 0 when there are none, as for a counter never incremented.
     */
    static double value(String text, String family, String... labels) {
        double sum = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("#") || !line.startsWith(family)) {
                continue;
            }
            String rest = line.substring(family.length());
            if (!rest.startsWith("{") && !rest.startsWith(" ")) {
                continue; // another family with this one as prefix
            }
            String labelPart = rest.startsWith("{") ? rest.substring(0, rest.indexOf('}') + 1) : "";
            if (Arrays.stream(labels).allMatch(labelPart::contains)) {
                sum += Double.parseDouble(rest.substring(rest.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }
}
