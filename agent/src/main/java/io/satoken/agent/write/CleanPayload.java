package io.satoken.agent.write;

import io.satoken.common.paths.PayloadPath;
import io.satoken.common.paths.PayloadPathException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A payload whose keys passed AW-15 and were cleaned (AW-7), with the directories they imply.
 *
 * @param files cleaned relative path to content, sorted so a dir's files are written together
 * @param ancestors every proper ancestor dir of a file: {@code a} and {@code a/b} for {@code a/b/c}
 */
record CleanPayload(SortedMap<String, FileContent> files, Set<String> ancestors) {

    /**
     * Validates and cleans every key. Beyond AW-15, two keys that clean to the same path (upstream
     * keeps whichever Go's map order gives last) and a file inside another file of the payload
     * (upstream fails half-way through writing) are rejected here, before any I/O.
     *
     * @throws PayloadPathException for the first bad key
     */
    static CleanPayload of(Map<String, FileContent> payload) {
        SortedMap<String, FileContent> files = new TreeMap<>();
        Map<String, String> given = new TreeMap<>();
        for (Map.Entry<String, FileContent> e : payload.entrySet()) {
            String path = PayloadPath.validateAndClean(e.getKey());
            Objects.requireNonNull(e.getValue(), () -> "payload[" + PayloadPath.quote(e.getKey()) + "]");
            String earlier = given.put(path, e.getKey());
            if (earlier != null) {
                throw new PayloadPathException(e.getKey(),
                        "names the same file as " + PayloadPath.quote(earlier) + " after cleaning");
            }
            files.put(path, e.getValue());
        }
        Set<String> ancestors = new HashSet<>();
        for (String path : files.keySet()) {
            for (int slash = path.indexOf('/'); slash > 0; slash = path.indexOf('/', slash + 1)) {
                String ancestor = path.substring(0, slash);
                if (files.containsKey(ancestor)) {
                    throw new PayloadPathException(given.get(path),
                            "lies inside " + PayloadPath.quote(ancestor) + ", which is a file of the same payload");
                }
                ancestors.add(ancestor);
            }
        }
        return new CleanPayload(files, ancestors);
    }

    /** AW-4: the first element of each path, each once; these get the user-visible links. */
    Set<String> topLevelNames() {
        Set<String> names = new LinkedHashSet<>();
        for (String path : files.keySet()) {
            int slash = path.indexOf('/');
            names.add(slash < 0 ? path : path.substring(0, slash));
        }
        return names;
    }

    /** Files and their dirs, deepest first, so deleting them in this order empties each dir first. */
    List<String> pathsDeepestFirst() {
        List<String> paths = new ArrayList<>(files.size() + ancestors.size());
        paths.addAll(files.keySet());
        paths.addAll(ancestors);
        paths.sort(Comparator.comparingLong((String p) -> p.chars().filter(c -> c == '/').count()).reversed());
        return List.copyOf(paths);
    }
}
