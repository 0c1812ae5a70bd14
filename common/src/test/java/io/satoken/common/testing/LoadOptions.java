package io.satoken.common.testing;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/** The load drivers' {@code --name value} options; names in {@code flags} take no value and map to "true". */
public final class LoadOptions {

    private LoadOptions() {
    }

    public static Map<String, String> parse(String[] args, Set<String> flags) {
        Map<String, String> opts = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + a);
            }
            String name = a.substring(2);
            if (flags.contains(name)) {
                opts.put(name, "true");
            } else if (i + 1 < args.length) {
                opts.put(name, args[++i]);
            } else {
                throw new IllegalArgumentException(a + " needs a value");
            }
        }
        return opts;
    }
}
