package io.satoken.controlplane.runtime;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Parses {@code --controllers} the way kube-controller-manager does: a comma list where {@code *} enables
 * every controller, {@code name} enables one, and {@code -name} disables one (which wins over {@code *}).
 */
public final class ControllerSelection {

    /** Every controller, in start order. */
    public static final List<String> ALL = List.of("tokens", "serviceaccounts", "root-ca", "aggregation");

    private ControllerSelection() {
    }

    /**
     * @return the enabled controllers, in {@link #ALL}'s order
     * @throws IllegalArgumentException naming an unknown controller or an empty list
     */
    public static Set<String> parse(String flag) {
        Set<String> enabled = new LinkedHashSet<>();
        Set<String> disabled = new LinkedHashSet<>();
        boolean star = false;
        for (String raw : flag.split(",", -1)) {
            String item = raw.trim();
            if (item.equals("*")) {
                star = true;
            } else if (item.equals("-*")) {
                disabled.addAll(ALL);
            } else if (item.startsWith("-") && ALL.contains(item.substring(1))) {
                disabled.add(item.substring(1));
            } else if (ALL.contains(item)) {
                enabled.add(item);
            } else {
                throw new IllegalArgumentException("--controllers: unknown controller \"" + item + "\" (known: "
                        + String.join(", ", ALL) + ", * for all, -name to disable one)");
            }
        }
        Set<String> out = new LinkedHashSet<>();
        for (String name : ALL) {
            if ((star || enabled.contains(name)) && !disabled.contains(name)) {
                out.add(name);
            }
        }
        return out;
    }
}
