package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The README's smoke test, as written there: its pod command is one a real kube-apiserver takes (server-side dry
 * run), and the annotation it gives is one the agent's and the webhook's parser accepts, asking for vault/token.
 * The rest of the smoke test needs the whole product on a node, which ProductPodsE2E runs.
 */
@RequiresKubeApiServer
class SmokeTestE2E {

    @Test
    void readmesSmokePod_isAcceptedByTheApiServer_andAsksForATokenFile(KubeApiServer server) throws Exception {
        Assumptions.assumeTrue(Kubectl.installed(), "needs kubectl");
        Kubectl kubectl = Kubectl.forAdmin(server);
        List<List<String>> commands = smokeTestCommands();
        List<String> run = commands.stream().filter(c -> c.contains("run")).findFirst().orElseThrow();
        assertThat(commands.get(0)).containsExactly("kubectl", "create", "namespace", "satoken-smoke");
        assertThat(kubectl.run("create", "namespace", "satoken-smoke").exit()).isZero();

        List<String> args = new ArrayList<>(run.subList(1, run.size()));
        int command = args.indexOf("--command");
        args.addAll(command, List.of("--dry-run=server", "-o", "json"));
        Commands.Result r = kubectl.run(args.toArray(String[]::new));

        assertThat(r.exit()).as(r.output()).isZero();
        JsonObject pod = JsonParser.parseString(r.output().substring(r.output().indexOf('{'))).getAsJsonObject();
        String annotation = pod.getAsJsonObject("metadata").getAsJsonObject("annotations")
                .get(ProjectionAnnotation.NAME).getAsString();
        List<ProjectionSpec> files = ProjectionAnnotation.parse(annotation);
        assertThat(files).singleElement().satisfies(f -> {
            assertThat(f.path()).isEqualTo("vault/token");
            assertThat(f.audience()).isEqualTo("vault");
        });
    }

    /** The command lines of the install guide's smoke test: continuation lines joined, comments left out. */
    private static List<List<String>> smokeTestCommands() throws Exception {
        String readme = Files.readString(E2E.repo().resolve("docs/install.md"));
        int section = readme.indexOf("### Smoke test");
        int start = readme.indexOf("```sh\n", section) + "```sh\n".length();
        String block = readme.substring(start, readme.indexOf("```", start));
        List<List<String>> commands = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String raw : block.split("\n")) {
            String text = raw.replaceFirst("\\s+#.*$", "").strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            if (text.endsWith("\\")) {
                line.append(text, 0, text.length() - 1);
                continue;
            }
            line.append(text);
            commands.add(words(line.toString()));
            line.setLength(0);
        }
        return commands;
    }

    /** Splits as a shell does for these lines: on spaces, except inside single quotes, which are removed. */
    private static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : line.toCharArray()) {
            if (c == '\'') {
                quoted = !quoted;
                any = true;
            } else if (c == ' ' && !quoted) {
                if (any) {
                    words.add(word.toString());
                }
                word.setLength(0);
                any = false;
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
