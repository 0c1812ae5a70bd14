package io.satoken.common.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which package of a program imports which, read from its sources' {@code package} and {@code import} lines: enough
 * to find package cycles and imports across a layer, with no bytecode tool. A class named in full in the code,
 * without an import, is not seen; the sources do not do that.
 */
public final class PackageGraph {

    private static final Pattern PACKAGE = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE);
    /** {@code import a.b.C;}, {@code import a.b.C.D;}, {@code import static a.b.C.m;}, {@code import a.b.*;}. */
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?([\\w.]+?)\\.(?:[A-Z][\\w.]*|\\*);",
            Pattern.MULTILINE);

    /** One import of another package of the program: the file it is in and the package it names. */
    public record Import(Path file, String to) {
    }

    /** Each package of the program, with the imports its files make of the program's other packages. */
    private final Map<String, List<Import>> imports;

    private PackageGraph(Map<String, List<Import>> imports) {
        this.imports = imports;
    }

    /** The packages under {@code basePackage} in the {@code .java} files under {@code sourceRoot}. */
    public static PackageGraph read(Path sourceRoot, String basePackage) {
        Map<String, List<Import>> imports = new TreeMap<>();
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                String text = Files.readString(file);
                Matcher pkg = PACKAGE.matcher(text);
                if (!pkg.find()) {
                    throw new IllegalArgumentException(file + ": no package line");
                }
                List<Import> from = imports.computeIfAbsent(pkg.group(1), p -> new ArrayList<>());
                Matcher imported = IMPORT.matcher(text);
                while (imported.find()) {
                    String to = imported.group(1);
                    if (!to.equals(pkg.group(1)) && (to.equals(basePackage) || to.startsWith(basePackage + "."))) {
                        from.add(new Import(sourceRoot.relativize(file), to));
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (imports.isEmpty()) {
            throw new IllegalArgumentException("no Java sources under " + sourceRoot.toAbsolutePath());
        }
        return new PackageGraph(imports);
    }

    public Set<String> packages() {
        return new TreeSet<>(imports.keySet());
    }

    /** The imports the files of {@code pkg} make of the program's other packages. */
    public List<Import> importsOf(String pkg) {
        return List.copyOf(imports.getOrDefault(pkg, List.of()));
    }

    /**
     * The packages under {@code base} that {@code layers} (from the bottom, names relative to {@code base}) leaves
     * out.
     */
    public List<String> unlayered(String base, List<List<String>> layers) {
        Map<String, Integer> layerOf = layerOf(base, layers);
        return packages().stream().filter(p -> !layerOf.containsKey(p)).toList();
    }

    /**
     * The imports that do not go to a lower layer of {@code layers} (from the bottom, names relative to
     * {@code base}): to a package of the same or a higher layer, or of none, or from a package of none.
     */
    public List<Import> notDownward(String base, List<List<String>> layers) {
        Map<String, Integer> layerOf = layerOf(base, layers);
        List<Import> found = new ArrayList<>();
        imports.forEach((pkg, from) -> from.stream()
                .filter(i -> !layerOf.containsKey(pkg) || !layerOf.containsKey(i.to())
                        || layerOf.get(i.to()) >= layerOf.get(pkg))
                .forEach(found::add));
        return found;
    }

    private static Map<String, Integer> layerOf(String base, List<List<String>> layers) {
        Map<String, Integer> layerOf = new HashMap<>();
        for (int i = 0; i < layers.size(); i++) {
            for (String pkg : layers.get(i)) {
                layerOf.put(base + "." + pkg, i);
            }
        }
        return layerOf;
    }

    /** How many imports of one package of the program by another there are in all. */
    public int importCount() {
        return imports.values().stream().mapToInt(List::size).sum();
    }

    /**
     * The package cycles: each set of two or more packages that import one another, directly or through each other
     * (Tarjan's strongly connected components), sorted; empty when the packages form a layering.
     */
    public List<Set<String>> cycles() {
        Tarjan tarjan = new Tarjan();
        for (String pkg : imports.keySet()) {
            if (!tarjan.index.containsKey(pkg)) {
                tarjan.visit(pkg);
            }
        }
        tarjan.cycles.sort(Comparator.comparing(Set::toString));
        return tarjan.cycles;
    }

    private final class Tarjan {
        final Map<String, Integer> index = new HashMap<>();
        final Map<String, Integer> low = new HashMap<>();
        final Deque<String> stack = new ArrayDeque<>();
        final Set<String> onStack = new TreeSet<>();
        final List<Set<String>> cycles = new ArrayList<>();

        void visit(String pkg) {
            index.put(pkg, index.size());
            low.put(pkg, index.get(pkg));
            stack.push(pkg);
            onStack.add(pkg);
            for (String to : importsOf(pkg).stream().map(Import::to).distinct().toList()) {
                if (!index.containsKey(to)) {
                    visit(to);
                    low.put(pkg, Math.min(low.get(pkg), low.get(to)));
                } else if (onStack.contains(to)) {
                    low.put(pkg, Math.min(low.get(pkg), index.get(to)));
                }
            }
            if (low.get(pkg).equals(index.get(pkg))) {
                Set<String> component = new TreeSet<>();
                String member;
                do {
                    member = stack.pop();
                    onStack.remove(member);
                    component.add(member);
                } while (!member.equals(pkg));
                if (component.size() > 1) {
                    cycles.add(component);
                }
            }
        }
    }
}
