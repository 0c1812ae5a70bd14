package io.satoken.controlplane.runtime;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Parses {@code --controllers} the way kube-controller-manager does: a comma list where {@code *} enables
 * every controller that is on by default, {@code name} enables one (an off-by-default one too), and
 * {@code -name} disables one (which wins over both).
 *
 * <p>{@code tokens} is off by default: it signs token Secrets with the cluster's ServiceAccount key, so it is
 * the one controller that needs the key, and a cluster that no longer uses token Secrets should keep the key
 * out of this process altogether. Naming it ({@code --controllers=*,tokens}) turns it on. {@code injection-check} is
 * off by default too: it caches every pod of the cluster, which needs a read of all pods that the other controllers
 * do without.
 */
public final class ControllerSelection {

    /** Every controller, in start order. */
    public static final List<String> ALL = List.of("tokens", "serviceaccounts", "root-ca", "aggregation",
            "injection-check");

    /** The controllers {@code *} leaves out: each runs only when named. */
    public static final Set<String> OFF_BY_DEFAULT = Set.of("tokens", "injection-check");

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
                        + String.join(", ", ALL) + ", * for all on by default, -name to disable one; "
                        + String.join(" and ", ALL.stream().filter(OFF_BY_DEFAULT::contains).toList())
                        + " only when named)");
            }
        }
        Set<String> out = new LinkedHashSet<>();
        for (String name : ALL) {
            boolean byStar = star && !OFF_BY_DEFAULT.contains(name);
            if ((byStar || enabled.contains(name)) && !disabled.contains(name)) {
                out.add(name);
            }
        }
        return out;
    }
}
