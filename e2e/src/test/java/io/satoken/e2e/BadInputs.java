package io.satoken.e2e;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The malformed inputs {@link BadInputE2E} feeds the built processes, each with the parts of the answer
 * the product documents for it: the field and the rule, as the agent's and the webhook's messages state
 * them ({@code satoken.io/projections[0].path: must be a relative path, got "/etc/token"}). The expected
 * texts are written out here from the rules in {@code common/.../projection}, {@code VolumeAttributes},
 * {@code AgentConfigParser} and {@code AdmissionReviews}, not computed by calling them.
 */
final class BadInputs {

    private BadInputs() {
    }

    /** One bad input and the texts its answer must contain. */
    record Case(String name, String input, List<String> expected) {
        Case(String name, String input, String... expected) {
            this(name, input, List.of(expected));
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private static final String A = "satoken.io/projections";
    private static final String V = "volumeAttributes.";

    /** Invalid values of the {@code satoken.io/projections} annotation. */
    static List<Case> annotations() {
        return projections(A);
    }

    /**
     * Invalid {@code volumeAttributes} of a CSI volume of tokens.satoken.io, as a {@code Case} whose input is
     * the attributes: the annotation's bad values given as the {@code projections} attribute (which the
     * webhook copies from the annotation), then bad one-file attributes.
     */
    static List<AttributeCase> attributes() {
        List<AttributeCase> c = new ArrayList<>();
        for (Case p : projections(V + "projections")) {
            c.add(new AttributeCase("projections: " + p.name(), Map.of("projections", p.input()), p.expected()));
        }
        c.add(new AttributeCase("unknown attribute", Map.of("audiences", "vault"), List.of(V + "audiences: unknown"
                + " attribute; the attributes are audience, expirationSeconds, path, projections, reloadContainer, reloadSignal")));
        c.add(new AttributeCase("pod info from the pod, replaced by the kubelet's; other keys unknown",
                Map.of("csi.storage.k8s.io/pod.uid", "other", "podUID", "x"),
                List.of(V + "podUID: unknown attribute")));
        c.add(new AttributeCase("lifetime a word", Map.of("expirationSeconds", "an hour"),
                List.of(V + "expirationSeconds: must be a whole number, got \"an hour\"")));
        c.add(new AttributeCase("lifetime 599 s", Map.of("expirationSeconds", "599"),
                List.of(V + "expirationSeconds: may not specify a duration less than 10 minutes, got \"599\"")));
        c.add(new AttributeCase("lifetime 2^32+1 s", Map.of("expirationSeconds", "4294967297"),
                List.of(V + "expirationSeconds: may not specify a duration larger than 2^32 seconds, got \"4294967297\"")));
        c.add(new AttributeCase("path absolute", Map.of("path", "/etc/token"),
                List.of(V + "path: must be a relative path, got \"/etc/token\"")));
        c.add(new AttributeCase("path with ..", Map.of("path", "../token"),
                List.of(V + "path: must not contain '..', got \"../token\"")));
        c.add(new AttributeCase("path in ..data", Map.of("path", "..data/token"),
                List.of(V + "path: must not start with '..', got \"..data/token\"")));
        c.add(new AttributeCase("path empty", Map.of("path", ""), List.of(V + "path: Required value")));
        c.add(new AttributeCase("audience with projections", Map.of("audience", "vault", "projections", "- path: t\n"),
                List.of(V + "audience: may not be given with " + V + "projections; give it in the list's entries")));
        c.add(new AttributeCase("projections empty", Map.of("projections", ""),
                List.of(V + "projections: must be a non-empty list of maps")));
        c.add(new AttributeCase("two errors", Map.of("path", "/x", "expirationSeconds", "5"),
                List.of(V + "path: must be a relative path, got \"/x\"",
                        V + "expirationSeconds: may not specify a duration less than 10 minutes, got \"5\"")));
        return c;
    }

    /** Bad attributes of a CSI volume and the texts the publish's InvalidArgument status must contain. */
    record AttributeCase(String name, Map<String, String> attributes, List<String> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** Invalid lists in the {@code satoken.io/projections} format, their errors named after {@code field}. */
    private static List<Case> projections(String field) {
        List<Case> c = new ArrayList<>();
        c.add(new Case("not YAML", "- path: [t", field + ": could not be parsed as YAML or JSON"));
        c.add(new Case("unterminated JSON", "[{\"path\": \"t\"", field + ": could not be parsed as YAML or JSON"));
        c.add(new Case("a map", "{\"path\": \"t\"}", field + ": must be a non-empty list of maps, got a map"));
        c.add(new Case("a string", "token", field + ": must be a non-empty list of maps, got \"token\""));
        c.add(new Case("a number", "42", field + ": must be a non-empty list of maps, got 42"));
        c.add(new Case("an empty list", "[]", field + ": must be a non-empty list of maps, got an empty list"));
        c.add(new Case("65 entries", entries(65), field + ": must have at most 64 entries, got 65"));
        c.add(new Case("entry a number", "- 42", field + "[0]: must be a map, got 42"));
        c.add(new Case("entry a list", "- [a]", field + "[0]: must be a map, got a list"));
        c.add(new Case("entry null", "- path: t\n- ~", field + "[1]: must be a map, got null"));
        c.add(new Case("no path", "- audience: vault", field + "[0].path: Required value"));
        c.add(new Case("empty path", "- path: \"\"", field + "[0].path: Required value"));
        c.add(new Case("absolute path", "- path: /etc/token", field + "[0].path: must be a relative path, got \"/etc/token\""));
        c.add(new Case("path with ..", "- path: ../x", field + "[0].path: must not contain '..', got \"../x\""));
        c.add(new Case("path with inner ..", "- path: a/../../x", field + "[0].path: must not contain '..', got \"a/../../x\""));
        c.add(new Case("path in ..data", "- path: ..data/token", field + "[0].path: must not start with '..', got \"..data/token\""));
        c.add(new Case("path a number", "- path: 42", field + "[0].path: must be a string, got 42"));
        c.add(new Case("path a list", "- path: [a]", field + "[0].path: must be a string, got a list"));
        c.add(new Case("path element of 256", "- path: " + "a".repeat(256),
                field + "[0].path: filenames must be less than or equal to 255 characters"));
        c.add(new Case("same path twice", "- path: t\n- path: t",
                field + "[1].path: must not name the same file as " + field + "[0].path, got \"t\""));
        c.add(new Case("file inside a file", "- path: t\n- path: t/x",
                field + "[1].path: must not lie inside the file of " + field + "[0].path, got \"t/x\""));
        c.add(new Case("a file's directory", "- path: a/b\n- path: a",
                field + "[1].path: must not name a directory of the file of " + field + "[0].path, got \"a\""));
        c.add(new Case("duplicate key", "- path: t\n  path: u", field + ": could not be parsed as YAML or JSON", "duplicate key"));
        c.add(new Case("explicit tag", "- path: !!str t",
                field + ": could not be parsed as YAML or JSON: explicit tags are not allowed"));
        c.add(new Case("nested 12 deep", "- path: " + "[".repeat(12) + "]".repeat(12),
                field + ": could not be parsed as YAML or JSON: nested deeper than 10 levels"));
        c.add(new Case("alias bomb", "- path: t\n  audience: [&a [x, x], " + "*a, ".repeat(11) + "*a]",
                field + ": could not be parsed as YAML or JSON"));
        c.add(new Case("unknown key", "- path: t\n  audiences: [a]",
                field + "[0]: unknown key \"audiences\" (known keys: path, audience, expirationSeconds, mode, uid, gid)"));
        c.add(new Case("audience a number", "- path: t\n  audience: 42", field + "[0].audience: must be a string, got 42"));
        c.add(new Case("audience a list", "- path: t\n  audience: [a, b]", field + "[0].audience: must be a string, got a list"));
        c.add(new Case("lifetime 60 s", "- path: t\n  expirationSeconds: 60",
                field + "[0].expirationSeconds: may not specify a duration less than 10 minutes, got 60"));
        c.add(new Case("lifetime 599 s", "- path: t\n  expirationSeconds: 599",
                field + "[0].expirationSeconds: may not specify a duration less than 10 minutes, got 599"));
        c.add(new Case("lifetime 2^32+1 s", "- path: t\n  expirationSeconds: 4294967297",
                field + "[0].expirationSeconds: may not specify a duration larger than 2^32 seconds, got 4294967297"));
        c.add(new Case("lifetime a string", "- path: t\n  expirationSeconds: \"3600\"",
                field + "[0].expirationSeconds: must be an integer, got \"3600\""));
        c.add(new Case("lifetime a float", "- path: t\n  expirationSeconds: 3600.5",
                field + "[0].expirationSeconds: must be an integer, got 3600.5"));
        c.add(new Case("lifetime past 64 bits", "- path: t\n  expirationSeconds: 99999999999999999999",
                field + "[0].expirationSeconds: must be an integer that fits in 64 bits"));
        c.add(new Case("lifetime a date", "- path: t\n  expirationSeconds: 2024-01-01",
                field + "[0].expirationSeconds: must be an integer, got a timestamp"));
        c.add(new Case("mode 01000", "- path: t\n  mode: 01000",
                field + "[0].mode: must be between 0 and 0777 (octal), got 512 (octal 01000)"));
        c.add(new Case("mode decimal 640", "- path: t\n  mode: 640",
                field + "[0].mode: must be between 0 and 0777 (octal), got 640 (octal 01200)"));
        c.add(new Case("mode -1", "- path: t\n  mode: -1", field + "[0].mode: must be between 0 and 0777 (octal), got -1"));
        c.add(new Case("mode a word", "- path: t\n  mode: rw",
                field + "[0].mode: must be between 0 and 0777 (octal), as an integer or a string of octal digits"));
        c.add(new Case("mode string \"1777\"", "- path: t\n  mode: \"1777\"",
                field + "[0].mode: must be between 0 and 0777 (octal), got \"1777\""));
        c.add(new Case("uid -5", "- path: t\n  uid: -5", field + "[0].uid: must be between 0 and 2147483647, got -5"));
        c.add(new Case("gid 3000000000", "- path: t\n  gid: 3000000000",
                field + "[0].gid: must be between 0 and 2147483647, got 3000000000"));
        c.add(new Case("uid a word", "- path: t\n  uid: root", field + "[0].uid: must be an integer, got \"root\""));
        c.add(new Case("two errors in one entry", "- path: /x\n  expirationSeconds: 5",
                field + "[0].path: must be a relative path, got \"/x\"",
                field + "[0].expirationSeconds: may not specify a duration less than 10 minutes, got 5"));
        c.add(new Case("error in the second entry", "- path: good\n- path: /bad",
                field + "[1].path: must be a relative path, got \"/bad\""));
        c.add(new Case("JSON with an absolute path", "[{\"path\": \"/abs\", \"audience\": \"vault\"}]",
                field + "[0].path: must be a relative path, got \"/abs\""));
        return c;
    }

    private static String entries(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append("- path: t").append(i).append('\n');
        }
        return b.toString();
    }

    /**
     * Invalid agent configs for a running static-mode agent; {@code good} is one valid entry (a list item,
     * indented two spaces), {@code dir} its directory. Each config differs from every other, since the
     * agent reports the same bad bytes only once.
     */
    static List<Case> configs(String namespace, String dir) {
        String entry = "  - namespace: " + namespace + "\n    serviceAccount: exporter\n    audiences: [bad-input]\n"
                + "    dir: " + dir + "\n";
        String head = "mode: static\nprojections:\n";
        List<Case> c = new ArrayList<>();
        c.add(new Case("no projections", "mode: static\n",
                "projections: Required value: mode \"static\" needs at least one projection"));
        c.add(new Case("unknown mode", "mode: bogus\nprojections:\n" + entry,
                "mode: must be one of \"csi\", \"static\", \"both\", got \"bogus\""));
        c.add(new Case("no mode", "projections:\n" + entry, "mode: Required value"));
        c.add(new Case("unknown top-level key", head + entry + "modes: static\n",
                "top level: unknown key \"modes\" (known keys: mode, kubeletDir, projections"));
        c.add(new Case("projections a map", "mode: static\nprojections: {a: b}\n",
                "projections: must be a list of maps, got a map"));
        c.add(new Case("entry a number", head + "  - 42\n", "projections[0]: must be a map, got 42"));
        c.add(new Case("no namespace", head + entry.replace("  - namespace: " + namespace + "\n    ", "  - "),
                "projections[0].namespace: Required value"));
        c.add(new Case("namespace not a label", head + entry.replace("namespace: " + namespace, "namespace: Bad_NS"),
                "projections[0].namespace: a lowercase RFC 1123 label must consist of lower case alphanumeric"
                        + " characters or '-', and must start and end with an alphanumeric character, got \"Bad_NS\""));
        c.add(new Case("namespace of 64", head + entry.replace("namespace: " + namespace, "namespace: " + "n".repeat(64)),
                "projections[0].namespace: must be no more than 63 characters"));
        c.add(new Case("serviceAccount not a subdomain", head + entry.replace("serviceAccount: exporter",
                "serviceAccount: Exporter"), "projections[0].serviceAccount: a lowercase RFC 1123 subdomain must consist"));
        c.add(new Case("no serviceAccount", head + entry.replace("serviceAccount: exporter\n    ", ""),
                "projections[0].serviceAccount: Required value"));
        c.add(new Case("audiences empty", head + entry.replace("[bad-input]", "[]"),
                "projections[0].audiences: must not be an empty list; leave it out for the API server's own audiences"));
        c.add(new Case("audiences a string", head + entry.replace("[bad-input]", "vault"),
                "projections[0].audiences: must be a list of strings, got \"vault\""));
        c.add(new Case("audience empty", head + entry.replace("[bad-input]", "[\"\"]"),
                "projections[0].audiences[0]: must be a non-empty string, got \"\""));
        c.add(new Case("lifetime 60 s", head + entry + "    expirationSeconds: 60\n",
                "projections[0].expirationSeconds: may not specify a duration less than 10 minutes, got 60"));
        c.add(new Case("lifetime 2^32+1 s", head + entry + "    expirationSeconds: 4294967297\n",
                "projections[0].expirationSeconds: may not specify a duration larger than 2^32 seconds, got 4294967297"));
        c.add(new Case("lifetime a string", head + entry + "    expirationSeconds: an hour\n",
                "projections[0].expirationSeconds: must be an integer, got \"an hour\""));
        c.add(new Case("dir relative", head + entry.replace("dir: " + dir, "dir: relative/dir"),
                "projections[0].dir: must be an absolute path, got \"relative/dir\""));
        c.add(new Case("dir not normalized", head + entry.replace("dir: " + dir, "dir: " + dir + "/../x"),
                "projections[0].dir: must be normalized (no '.' or '..' elements)"));
        c.add(new Case("no dir", head + entry.replace("    dir: " + dir + "\n", ""), "projections[0].dir: Required value"));
        c.add(new Case("dir inside kubeletDir", head + entry.replace("dir: " + dir, "dir: /var/lib/kubelet/x"),
                "projections[0].dir: must not be inside \"/var/lib/kubelet\", the kubelet's directory, got"
                        + " \"/var/lib/kubelet/x\""));
        c.add(new Case("dir inside another", head + entry + entry.replace("dir: " + dir, "dir: " + dir + "/inner"),
                "projections[1].dir: must not be inside or contain projections[0].dir"));
        c.add(new Case("file absolute", head + entry + "    file: /etc/token\n",
                "projections[0].file: must be a relative path, got \"/etc/token\""));
        c.add(new Case("file with ..", head + entry + "    file: ../token\n",
                "projections[0].file: must not contain '..', got \"../token\""));
        c.add(new Case("same file twice", head + entry + entry, "projections[1].file: must not name the same file as projections[0].file"));
        c.add(new Case("mode 01000", head + entry + "    mode: 01000\n",
                "projections[0].mode: must be between 0 and 0777 (octal), got 512 (octal 01000)"));
        c.add(new Case("uid -1", head + entry + "    uid: -1\n", "projections[0].uid: must be between 0 and 2147483647, got -1"));
        c.add(new Case("gid a word", head + entry + "    gid: wheel\n", "projections[0].gid: must be an integer, got \"wheel\""));
        c.add(new Case("unknown entry key", head + entry + "    audience: x\n", "projections[0]: unknown key \"audience\""));
        c.add(new Case("not YAML", "mode: [static\n", "config: could not be parsed as YAML or JSON"));
        c.add(new Case("a list", "- mode: static\n", "config: must be a map, got a list"));
        c.add(new Case("explicit tag", "mode: !!str static\nprojections:\n" + entry,
                "config: could not be parsed as YAML or JSON: explicit tags are not allowed"));
        c.add(new Case("duplicate key", head + entry + "mode: static\n", "config: could not be parsed as YAML or JSON",
                "duplicate key"));
        c.add(new Case("kubeletDir relative", "kubeletDir: var/lib\n" + head + entry,
                "kubeletDir: must be an absolute path, got \"var/lib\""));
        c.add(new Case("csi mode with projections", "mode: csi\nprojections:\n" + entry,
                "projections: must be empty when mode is \"csi\", got 1 entry"));
        c.add(new Case("pod mode, removed", "mode: pods\nprojections:\n" + entry,
                "mode: \"pods\" (hostPath delivery) was removed: use \"csi\""));
        c.add(new Case("rootDir, removed", "rootDir: /var/lib/satoken\n" + head + entry,
                "rootDir: no longer exists: pods get their tokens through CSI volumes (mode: csi)"));
        c.add(new Case("mode changed while running", "mode: csi\n", "mode and kubeletDir cannot change while running"));
        c.add(new Case("kubeletDir changed while running", "kubeletDir: /tmp/elsewhere\n" + head + entry,
                "mode and kubeletDir cannot change while running"));
        return c;
    }

    /** Configs an agent is started with: exit status 2 and one line naming the field. */
    static List<Case> startupConfigs(String namespace, String dir) {
        String entry = "  - namespace: " + namespace + "\n    serviceAccount: exporter\n    dir: " + dir + "\n";
        List<Case> c = new ArrayList<>();
        c.add(new Case("no mode", "projections:\n" + entry, "mode: Required value"));
        c.add(new Case("lifetime 60 s", "mode: static\nprojections:\n" + entry + "    expirationSeconds: 60\n",
                "projections[0].expirationSeconds: may not specify a duration less than 10 minutes, got 60"));
        c.add(new Case("dir relative", "mode: static\nprojections:\n" + entry.replace("dir: " + dir, "dir: rel"),
                "projections[0].dir: must be an absolute path, got \"rel\""));
        c.add(new Case("not YAML", "mode: static\nprojections: [\n", "config: could not be parsed as YAML or JSON"));
        c.add(new Case("unknown key", "mode: static\nprojection:\n" + entry, "top level: unknown key \"projection\""));
        c.add(new Case("empty file", "", "mode: Required value"));
        c.add(new Case("pod mode, removed", "mode: pods\nrootDir: /var/lib/satoken\n",
                "mode: \"pods\" (hostPath delivery) was removed: use \"csi\", and give pods a CSI volume of"
                        + " driver tokens.satoken.io", "rootDir: no longer exists"));
        return c;
    }
}
