package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kubernetes.client.openapi.ApiClient;
import io.satoken.common.testing.Kubeconfigs;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The search order for the client configuration, and what the built client looks like. */
class KubeClientsTest {

    @TempDir
    Path tmp;

    private Path home;
    private Path saDir;
    private Path flagFile;
    private Path envFile;
    private Path homeFile;
    private final Map<String, String> env = new HashMap<>();

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectories(tmp.resolve("home"));
        saDir = Files.createDirectories(tmp.resolve("serviceaccount"));
        flagFile = Kubeconfigs.withToken(tmp.resolve("flag.yaml"), "https://flag.example:6443");
        envFile = Kubeconfigs.withToken(tmp.resolve("env.yaml"), "https://env.example:6443");
        homeFile = tmp.resolve("home/.kube/config");
    }

    private void inCluster() throws IOException {
        Files.writeString(saDir.resolve("token"), "pod-token");
        env.put("KUBERNETES_SERVICE_HOST", "10.0.0.1");
    }

    private KubeClients.Choice choose(Path flag) throws IOException {
        return KubeClients.choose(flag, env, home, saDir);
    }

    @Test
    void flag_winsOverEverythingElse() throws IOException {
        inCluster();
        env.put("KUBECONFIG", envFile.toString());
        Kubeconfigs.withToken(homeFile, "https://home.example:6443");

        assertThat(choose(flagFile).kubeconfig()).isEqualTo(flagFile);
    }

    @Test
    void flag_namingNoFileIsAnError() {
        assertThatThrownBy(() -> choose(tmp.resolve("missing.yaml")))
                .isInstanceOf(IOException.class)
                .hasMessage("--kubeconfig " + tmp.resolve("missing.yaml") + ": not found");
    }

    @Test
    void inCluster_winsOverKubeconfigEnvAndHome() throws IOException {
        inCluster();
        env.put("KUBECONFIG", envFile.toString());

        assertThat(choose(null).inCluster()).isTrue();
    }

    @Test
    void inCluster_needsBothTheTokenAndTheServiceHost() throws IOException {
        env.put("KUBERNETES_SERVICE_HOST", "10.0.0.1"); // no token file
        env.put("KUBECONFIG", envFile.toString());
        assertThat(choose(null).kubeconfig()).isEqualTo(envFile);

        env.remove("KUBERNETES_SERVICE_HOST");
        Files.writeString(saDir.resolve("token"), "pod-token");
        assertThat(choose(null).kubeconfig()).isEqualTo(envFile);
    }

    @Test
    void kubeconfigEnv_takesTheFirstExistingFileOfTheList() throws IOException {
        env.put("KUBECONFIG", tmp.resolve("absent.yaml") + ":" + envFile + ":" + flagFile);

        assertThat(choose(null).kubeconfig()).isEqualTo(envFile);
    }

    @Test
    void homeConfig_isTheLastResort() throws IOException {
        Kubeconfigs.withToken(homeFile, "https://home.example:6443");
        env.put("KUBECONFIG", tmp.resolve("absent.yaml").toString());

        assertThat(choose(null).kubeconfig()).isEqualTo(homeFile);
    }

    @Test
    void nothingFound_saysWhatWasTried() {
        env.put("KUBECONFIG", "/nonexistent/config");

        assertThatThrownBy(() -> choose(null))
                .isInstanceOf(IOException.class)
                .hasMessage("no Kubernetes client configuration found: --kubeconfig not given; "
                        + "not in a cluster ($KUBERNETES_SERVICE_HOST unset); "
                        + "$KUBECONFIG names no existing file (/nonexistent/config); " + homeFile + " missing");
    }

    @Test
    void fromFlags_buildsAClientForTheKubeconfigWithTimeouts() throws IOException {
        ApiClient client = KubeClients.fromFlags(flagFile);

        assertThat(client.getBasePath()).isEqualTo("https://flag.example:6443");
        assertThat(client.getConnectTimeout()).isEqualTo(10_000);
        assertThat(client.getReadTimeout()).isEqualTo(30_000);
    }

    @Test
    void checkIntoErrors_addsTheErrorCheckWouldThrow() throws IOException {
        Path broken = Files.writeString(tmp.resolve("broken.yaml"), "users: [{name: u, user: {token: s3cret\n");
        Path absent = tmp.resolve("absent.yaml");
        List<String> errors = new ArrayList<>(List.of("an earlier error"));

        KubeClients.check(broken, errors);
        KubeClients.check(absent, errors);

        assertThat(errors).hasSize(3);
        assertThat(errors.get(0)).isEqualTo("an earlier error");
        assertThatThrownBy(() -> KubeClients.check(broken)).hasMessage(errors.get(1));
        assertThat(errors.get(1)).startsWith("kubeconfig " + broken + ": not a valid kubeconfig")
                .doesNotContain("s3cret");
        assertThat(errors.get(2)).isEqualTo("--kubeconfig " + absent + ": not found");
    }

    @Test
    void checkIntoErrors_addsNothingForAGoodFileOrNoFlag() {
        List<String> errors = new ArrayList<>();

        KubeClients.check(flagFile, errors);
        KubeClients.check(null, errors);

        assertThat(errors).isEmpty();
    }

    @Test
    void fromKubeconfig_invalidFileIsAnErrorNamingIt() throws IOException {
        Path bad = Files.writeString(tmp.resolve("bad.yaml"), "{ not: [ yaml");

        assertThatThrownBy(() -> KubeClients.fromKubeconfig(bad))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("kubeconfig " + bad + ": not a valid kubeconfig");
    }

    /** A credential-shaped string next to each kind of mistake; it must not reach any message. */
    private static final String SECRET = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw.sig";

    record Broken(String name, String yaml, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Broken> brokenKubeconfigs() {
        String head = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://k:6443\n";
        String context = "contexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
        return Stream.of(
                // SnakeYAML's message would quote the whole line, token and all
                new Broken("unclosed quote after the token", head + "users:\n- name: u\n  user:\n    token: \"" + SECRET
                        + "\n", "line 11, column 1: not valid YAML (a character or quoted string that cannot be read)"),
                new Broken("a tab before the token", head + "users:\n- name: u\n  user:\n\ttoken: " + SECRET + "\n",
                        "line 10, column 1: not valid YAML (a character or quoted string that cannot be read)"),
                new Broken("token then an unclosed flow list", head + "users:\n- name: u\n  user: {token: " + SECRET
                        + ", x: [\n", "line 10, column 1: not valid YAML (the structure is broken, e.g. an unclosed"
                        + " bracket or a misplaced indentation)"),
                new Broken("bad indentation after the token", head + "users:\n- name: u\n  user:\n    token: " + SECRET
                        + "\n   bad: indentation\n", "line 11, column 4: not valid YAML (the structure is broken, e.g."
                        + " an unclosed bracket or a misplaced indentation)"),
                // an alias never defined: SnakeYAML's composer fails, a kind of YAML error named in words, not by class
                new Broken("an undefined alias after the token", head + "users:\n- name: u\n  user:\n    token: " + SECRET
                        + "\n    x: *nowhere\n", "line 11, column 8: not valid YAML (a construct that cannot be read)"),
                // client-java casts: the message names classes, but what it quotes is not ours to vouch for
                new Broken("users a map", head + "users: {token: " + SECRET + "}\n" + context,
                        "not shaped like a kubeconfig (a field has the wrong type)"),
                // the base64 decoder names the offending character
                new Broken("certificate data not base64", head.replace("server: https://k:6443",
                        "server: https://k:6443\n    certificate-authority-data: \"" + SECRET + "!\"")
                        + "users:\n- name: u\n  user:\n    token: " + SECRET + "\n" + context,
                        "its current context cannot be used (a server URL, certificate, key or credential in it is"
                                + " missing or malformed)"));
    }

    // finding 5: a kubeconfig that fails to parse must not echo a credential
    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenKubeconfigs")
    void fromKubeconfig_broken_namesFileAndPlace_butNeverItsContent(Broken c) throws IOException {
        Path file = Files.writeString(tmp.resolve("kubeconfig"), c.yaml());

        assertThatThrownBy(() -> KubeClients.fromKubeconfig(file))
                .isInstanceOf(IOException.class)
                .hasMessage("kubeconfig " + file + ": not a valid kubeconfig: " + c.message())
                .hasNoCause()
                .satisfies(e -> assertThat(stackTrace(e)).doesNotContain(SECRET).doesNotContain("c2VjcmV0"));
    }

    private static String stackTrace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
