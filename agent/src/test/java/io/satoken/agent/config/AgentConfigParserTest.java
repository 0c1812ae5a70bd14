package io.satoken.agent.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.config.AgentConfig.Mode;
import io.satoken.agent.config.AgentConfig.TokenSourceKind;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.projection.TokenAsk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The agent's config file: static projections (systemd mode) and the mode switch. */
class AgentConfigParserTest {

    private static final String FULL = """
            mode: static              # csi | static | both
            kubeletDir: /var/lib/k8s/kubelet
            projections:
              - namespace: monitoring
                serviceAccount: node-exporter
                audiences: [https://vault.example.com]
                expirationSeconds: 3600
                dir: /var/run/satoken/node-exporter
                file: token
                mode: 0600
                uid: 65534
                gid: 65534
            """;

    record Rejected(String name, String yaml, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** A static config with one entry: namespace, serviceAccount and dir set, then {@code fields}. */
    private static String entry(String fields) {
        return "mode: static\nprojections:\n  - namespace: ns\n    serviceAccount: sa\n    dir: /run/t\n    "
                + fields + "\n";
    }

    /** A static config with one entry made only of {@code fields}. */
    private static String bare(String fields) {
        return "mode: static\nprojections:\n  - " + fields.replace("\n", "\n    ") + "\n";
    }

    @Test
    void parse_fullExample() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse(FULL);

        assertThat(config.mode()).isEqualTo(Mode.STATIC);
        assertThat(config.kubeletDir()).isEqualTo(Path.of("/var/lib/k8s/kubelet"));
        assertThat(config.projections()).containsExactly(new StaticProjection("monitoring", "node-exporter",
                new TokenAsk(List.of("https://vault.example.com"), 3600), Path.of("/var/run/satoken/node-exporter"), "token",
                0600, 65534, 65534));
    }

    @Test
    void parse_defaults() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse(bare("namespace: ns\nserviceAccount: sa\ndir: /run/t"));

        assertThat(config.kubeletDir()).isEqualTo(Path.of("/var/lib/kubelet"));
        // audiences absent: the API server's own (null, not empty); PV-2 lifetime; host files 0600
        assertThat(config.projections()).containsExactly(
                new StaticProjection("ns", "sa", new TokenAsk(null, 3600), Path.of("/run/t"), "token", 0600, null, null));
    }

    @Test
    void parse_csiMode_needsNoProjections() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse("mode: csi\nkubeletDir: /srv/kubelet/\nprojections: []\n");

        assertThat(config.mode()).isEqualTo(Mode.CSI);
        assertThat(config.kubeletDir()).isEqualTo(Path.of("/srv/kubelet"));
        assertThat(config.podsDir()).isEqualTo(Path.of("/srv/kubelet/pods"));
        assertThat(config.projections()).isEmpty();
        assertThat(config.staticDirectories()).isEmpty();
    }

    @Test
    void tokenSource_defaultsToRequest_andNamesEachKind() throws InvalidConfigException {
        assertThat(AgentConfigParser.parse("mode: csi\n").tokenSource()).isEqualTo(TokenSourceKind.REQUEST);
        assertThat(AgentConfigParser.parse("mode: csi\ntokenSource: node-impersonation\n").tokenSource())
                .isEqualTo(TokenSourceKind.NODE_IMPERSONATION);
        assertThat(AgentConfigParser.parse("mode: csi\ntokenSource: kubelet\n").tokenSource())
                .isEqualTo(TokenSourceKind.KUBELET);
    }

    @Test
    void tokenSource_unknownValue_isRefusedNamingTheChoices() {
        assertThatThrownBy(() -> AgentConfigParser.parse("mode: csi\ntokenSource: impersonate\n"))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("tokenSource: must be one of")
                .hasMessageContaining("got \"impersonate\"")
                .hasMessageContaining("\"request\", \"node-impersonation\", \"kubelet\"");
    }

    @Test
    void tokenSource_otherThanRequest_isRefusedWithStaticProjections() {
        assertThatThrownBy(() -> AgentConfigParser.parse(bare("namespace: ns\nserviceAccount: sa\ndir: /run/t")
                + "tokenSource: kubelet\n"))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("tokenSource")
                .hasMessageContaining("must be \"request\" when mode is \"static\"");
    }

    @Test
    void parse_csiMode_defaultsToTheKubeletsUsualDir() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse("mode: csi\n");

        assertThat(config.kubeletDir()).isEqualTo(Path.of("/var/lib/kubelet"));
        assertThat(config.podsDir()).isEqualTo(Path.of("/var/lib/kubelet/pods"));
    }

    @Test
    void statusSocketAndRereadCheck_defaults_socketBesideTheCsiSocket_noneInStaticMode_checkOnAt90()
            throws InvalidConfigException {
        AgentConfig csi = AgentConfigParser.parse("mode: csi\nkubeletDir: /srv/kubelet\n");
        AgentConfig statics = AgentConfigParser.parse(bare("namespace: ns\nserviceAccount: sa\ndir: /run/t"));

        assertThat(csi.statusSocket()).contains(Path.of("/srv/kubelet/plugins/tokens.satoken.io/status.sock"));
        assertThat(statics.statusSocket()).isEmpty();
        assertThat(csi.rereadCheck()).isEqualTo(new AgentConfig.RereadCheck(true, 90));
    }

    @Test
    void statusSocketAndRereadCheck_given_areTaken() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse("mode: csi\nstatusSocket: /run/satoken/s.sock\n"
                + "rereadCheck: false\nrereadThresholdPercent: 75\nexpiringUnreadMarginSeconds: 900\n");

        assertThat(config.statusSocket()).contains(Path.of("/run/satoken/s.sock"));
        assertThat(config.rereadCheck()).isEqualTo(new AgentConfig.RereadCheck(false, 75, 900L));
    }

    @Test
    void parse_json_isYamlToo() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse("{\"mode\": \"both\", \"projections\": [{\"namespace\": \"ns\","
                + " \"serviceAccount\": \"sa\", \"dir\": \"/run/t\", \"mode\": \"0640\", \"file\": \"./a//t\"}]}");

        assertThat(config.mode()).isEqualTo(Mode.BOTH);
        assertThat(config.projections()).extracting(StaticProjection::mode, StaticProjection::file)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(0640, "a/t"));
    }

    @Test
    void mode_says_whichSourcesRun() {
        assertThat(Stream.of(Mode.values()).map(m -> m + ":" + m.csi() + "," + m.statics()))
                .containsExactly("CSI:true,false", "STATIC:false,true", "BOTH:true,true");
    }

    static Stream<Rejected> rules() {
        String p0 = "projections[0].";
        String label = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',"
                + " and must start and end with an alphanumeric character";
        String subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters,"
                + " '-' or '.', and must start and end with an alphanumeric character";
        String label63 = "a".repeat(63);
        return Stream.of(
                // the document
                new Rejected("empty", "", "mode: Required value"),
                new Rejected("a list", "- mode: static\n", "config: must be a map, got a list"),
                new Rejected("a scalar", "static", "config: must be a map, got \"static\""),
                new Rejected("not YAML", "mode: [static\n", "config: could not be parsed as YAML or JSON: "
                        + "expected ',' or ']', but got <stream end> (line 2, column 1)"),
                new Rejected("duplicate key", "mode: static\nmode: csi\n",
                        "config: could not be parsed as YAML or JSON: found duplicate key mode (line 2, column 1)"),
                new Rejected("unknown top-level key", "mode: csi\nkubeletdir: /x\n",
                        "top level: unknown key \"kubeletdir\" (known keys: mode, kubeletDir, projections, maxUnboundExpirationSeconds, statusSocket, rereadCheck, rereadThresholdPercent, expiringUnreadMarginSeconds, tokenSource)"),
                // mode
                new Rejected("mode missing", "kubeletDir: /x\n", "mode: Required value"),
                new Rejected("relative status socket", "mode: csi\nstatusSocket: run/s.sock\n",
                        "statusSocket: must be an absolute path, got \"run/s.sock\""),
                new Rejected("rereadCheck not a boolean", "mode: csi\nrereadCheck: yes please\n",
                        "rereadCheck: must be true or false, got \"yes please\""),
                new Rejected("reread threshold too low", "mode: csi\nrereadThresholdPercent: 10\n",
                        "rereadThresholdPercent: must be between 50 and 99 (percent of the old token's lifetime),"
                                + " got 10"),
                new Rejected("expiring margin too short", "mode: csi\nexpiringUnreadMarginSeconds: 10\n",
                        "expiringUnreadMarginSeconds: must be between 60 and 86400 (seconds before the held token"
                                + " expires), got 10"),
                new Rejected("reread threshold of 100", "mode: csi\nrereadThresholdPercent: 100\n",
                        "rereadThresholdPercent: must be between 50 and 99 (percent of the old token's lifetime),"
                                + " got 100"),
                new Rejected("mode unknown", "mode: daemonset\n",
                        "mode: must be one of \"csi\", \"static\", \"both\", got \"daemonset\""),
                new Rejected("mode is case-sensitive", "mode: Static\n",
                        "mode: must be one of \"csi\", \"static\", \"both\", got \"Static\""),
                // the hostPath delivery is gone: the messages say what replaced it
                new Rejected("mode pods was removed", "mode: pods\n", "mode: \"pods\" (hostPath delivery) was removed:"
                        + " use \"csi\", and give pods a CSI volume of driver tokens.satoken.io, got \"pods\""),
                new Rejected("rootDir was removed", "mode: csi\nrootDir: /var/lib/satoken\n", "rootDir: no longer exists:"
                        + " pods get their tokens through CSI volumes (mode: csi) under kubeletDir, and static projections"
                        + " name their own dir"),
                new Rejected("an old pods-mode config names both", "mode: pods\nrootDir: /var/lib/satoken\n",
                        "mode: \"pods\" (hostPath delivery) was removed: use \"csi\", and give pods a CSI volume of"
                                + " driver tokens.satoken.io, got \"pods\"; rootDir: no longer exists: pods get their"
                                + " tokens through CSI volumes (mode: csi) under kubeletDir, and static projections name"
                                + " their own dir"),
                new Rejected("mode not a string", "mode: 1\n", "mode: must be a string, got 1"),
                // kubeletDir
                new Rejected("kubeletDir relative", "mode: csi\nkubeletDir: var/lib\n",
                        "kubeletDir: must be an absolute path, got \"var/lib\""),
                new Rejected("kubeletDir empty", "mode: csi\nkubeletDir: ''\n",
                        "kubeletDir: must be an absolute path, got \"\""),
                new Rejected("kubeletDir not normalized", "mode: csi\nkubeletDir: /var/lib/../tmp\n",
                        "kubeletDir: must be normalized (no '.' or '..' elements), got \"/var/lib/../tmp\""),
                new Rejected("kubeletDir a list", "mode: csi\nkubeletDir: [/a]\n", "kubeletDir: must be a string, got a list"),
                // projections and mode
                new Rejected("static without projections", "mode: static\n",
                        "projections: Required value: mode \"static\" needs at least one projection"),
                new Rejected("both with no projections", "mode: both\nprojections: []\n",
                        "projections: Required value: mode \"both\" needs at least one projection"),
                new Rejected("csi with projections", "mode: csi\nprojections:\n  - {namespace: ns, serviceAccount: sa,"
                        + " dir: /run/t}\n", "projections: must be empty when mode is \"csi\", got 1 entry"),
                new Rejected("projections a map", "mode: static\nprojections: {namespace: ns}\n",
                        "projections: must be a list of maps, got a map"),
                new Rejected("projection a string", "mode: static\nprojections: [x]\n",
                        "projections[0]: must be a map, got \"x\""),
                new Rejected("unknown projection key", entry("audience: x"),
                        "projections[0]: unknown key \"audience\" (known keys: namespace, serviceAccount, audiences,"
                                + " expirationSeconds, dir, file, mode, uid, gid)"),
                // namespace: DNS-1123 label
                new Rejected("namespace missing", bare("serviceAccount: sa\ndir: /run/t"), p0 + "namespace: Required value"),
                new Rejected("namespace uppercase", bare("namespace: Prod\nserviceAccount: sa\ndir: /run/t"),
                        p0 + "namespace: " + label + ", got \"Prod\""),
                new Rejected("namespace with a dot", bare("namespace: a.b\nserviceAccount: sa\ndir: /run/t"),
                        p0 + "namespace: " + label + ", got \"a.b\""),
                new Rejected("namespace ends with a dash", bare("namespace: a-\nserviceAccount: sa\ndir: /run/t"),
                        p0 + "namespace: " + label + ", got \"a-\""),
                new Rejected("namespace of 64", bare("namespace: " + "a".repeat(64) + "\nserviceAccount: sa\ndir: /run/t"),
                        p0 + "namespace: must be no more than 63 characters, got \"" + "a".repeat(64) + "\""),
                // serviceAccount: DNS-1123 subdomain
                new Rejected("serviceAccount missing", bare("namespace: ns\ndir: /run/t"), p0 + "serviceAccount: Required value"),
                new Rejected("serviceAccount empty", bare("namespace: ns\nserviceAccount: ''\ndir: /run/t"),
                        p0 + "serviceAccount: Required value"),
                new Rejected("serviceAccount double dot", bare("namespace: ns\nserviceAccount: a..b\ndir: /run/t"),
                        p0 + "serviceAccount: " + subdomain + ", got \"a..b\""),
                new Rejected("serviceAccount underscore", bare("namespace: ns\nserviceAccount: a_b\ndir: /run/t"),
                        p0 + "serviceAccount: " + subdomain + ", got \"a_b\""),
                new Rejected("serviceAccount of 254", bare("namespace: ns\nserviceAccount: "
                        + String.join(".", label63, label63, label63, "a".repeat(62)) + "\ndir: /run/t"),
                        p0 + "serviceAccount: must be no more than 253 characters, got \"" + label63 + "....\" (254 characters)"),
                // audiences
                new Rejected("audiences empty list", entry("audiences: []"),
                        p0 + "audiences: must not be an empty list; leave it out for the API server's own audiences"),
                new Rejected("audiences a string", entry("audiences: https://vault"),
                        p0 + "audiences: must be a list of strings, got \"https://vault\""),
                new Rejected("audience empty", entry("audiences: [a, '']"), p0 + "audiences[1]: must be a non-empty string, got \"\""),
                new Rejected("audience a number", entry("audiences: [1]"), p0 + "audiences[0]: must be a non-empty string, got 1"),
                // PV-4, PV-5
                new Rejected("expiration 599", entry("expirationSeconds: 599"),
                        p0 + "expirationSeconds: may not specify a duration less than 10 minutes, got 599"),
                new Rejected("expiration 2^32+1", entry("expirationSeconds: 4294967297"),
                        p0 + "expirationSeconds: may not specify a duration larger than 2^32 seconds, got 4294967297"),
                // an unbound token may live a day, unless maxUnboundExpirationSeconds says otherwise (finding 5)
                new Rejected("unbound expiration a second over a day", entry("expirationSeconds: 86401"),
                        p0 + "expirationSeconds: an unbound token (no boundObjectRef) may live at most"
                                + " maxUnboundExpirationSeconds = 86400 seconds, got 86401"),
                new Rejected("unbound expiration of 2^32", entry("expirationSeconds: 4294967296"),
                        p0 + "expirationSeconds: an unbound token (no boundObjectRef) may live at most"
                                + " maxUnboundExpirationSeconds = 86400 seconds, got 4294967296"),
                new Rejected("unbound expiration over a raised cap", "maxUnboundExpirationSeconds: 172800\n"
                        + entry("expirationSeconds: 172801"), p0 + "expirationSeconds: an unbound token (no"
                        + " boundObjectRef) may live at most maxUnboundExpirationSeconds = 172800 seconds, got 172801"),
                new Rejected("default expiration over a lowered cap", "maxUnboundExpirationSeconds: 1800\n"
                        + entry("file: token"), p0 + "expirationSeconds: an unbound token (no boundObjectRef) may"
                        + " live at most maxUnboundExpirationSeconds = 1800 seconds, got 3600 (the default)"),
                new Rejected("cap over a week", "maxUnboundExpirationSeconds: 604801\n" + entry("file: token"),
                        "maxUnboundExpirationSeconds: must be between 600 (10 minutes) and 604800 (a week), got 604801"),
                new Rejected("cap under ten minutes", "maxUnboundExpirationSeconds: 599\n" + entry("file: token"),
                        "maxUnboundExpirationSeconds: must be between 600 (10 minutes) and 604800 (a week), got 599"),
                new Rejected("cap a string", "mode: csi\nmaxUnboundExpirationSeconds: 1d\n",
                        "maxUnboundExpirationSeconds: must be an integer, got \"1d\""),
                new Rejected("expiration a duration string", entry("expirationSeconds: 1h"),
                        p0 + "expirationSeconds: must be an integer, got \"1h\""),
                // dir
                new Rejected("dir missing", bare("namespace: ns\nserviceAccount: sa"), p0 + "dir: Required value"),
                new Rejected("dir relative", bare("namespace: ns\nserviceAccount: sa\ndir: run/t"),
                        p0 + "dir: must be an absolute path, got \"run/t\""),
                new Rejected("dir with dot", bare("namespace: ns\nserviceAccount: sa\ndir: /run/./t"),
                        p0 + "dir: must be normalized (no '.' or '..' elements), got \"/run/./t\""),
                new Rejected("dir with dot-dot", bare("namespace: ns\nserviceAccount: sa\ndir: /run/t/.."),
                        p0 + "dir: must be normalized (no '.' or '..' elements), got \"/run/t/..\""),
                new Rejected("dir with NUL", bare("namespace: ns\nserviceAccount: sa\ndir: \"/run/\\0t\""),
                        p0 + "dir: must be a valid path (Nul character not allowed), got \"/run/\\u0000t\""),
                new Rejected("dir inside the kubelet's dir", bare("namespace: ns\nserviceAccount: sa\ndir: /var/lib/kubelet/x"),
                        p0 + "dir: must not be inside \"/var/lib/kubelet\", the kubelet's directory,"
                                + " got \"/var/lib/kubelet/x\""),
                new Rejected("dir is the configured kubelet dir", "kubeletDir: /srv\n"
                        + bare("namespace: ns\nserviceAccount: sa\ndir: /srv/"),
                        p0 + "dir: must not be inside \"/srv\", the kubelet's directory, got \"/srv/\""),
                new Rejected("dir inside another", "mode: static\nprojections:\n"
                        + "  - {namespace: ns, serviceAccount: sa, dir: /run/a}\n"
                        + "  - {namespace: ns, serviceAccount: sa, dir: /run/a/b}\n",
                        "projections[1].dir: must not be inside or contain projections[0].dir (\"/run/a\"), got \"/run/a/b\""),
                new Rejected("dir around another", "mode: static\nprojections:\n"
                        + "  - {namespace: ns, serviceAccount: sa, dir: /run/a/b}\n"
                        + "  - {namespace: ns, serviceAccount: sa, dir: /run/a}\n",
                        "projections[1].dir: must not be inside or contain projections[0].dir (\"/run/a/b\"), got \"/run/a\""),
                // file: the annotation's path rules (PV-7, AW-15)
                new Rejected("file absolute", entry("file: /etc/t"), p0 + "file: must be a relative path, got \"/etc/t\""),
                new Rejected("file empty", entry("file: ''"), p0 + "file: Required value"),
                new Rejected("file dot-dot", entry("file: a/../b"), p0 + "file: must not contain '..', got \"a/../b\""),
                new Rejected("file reserved", entry("file: ..data"), p0 + "file: must not start with '..', got \"..data\""),
                new Rejected("file a number", entry("file: 5"), p0 + "file: must be a string, got 5"),
                new Rejected("file of a bad dir is still checked", bare("namespace: ns\nserviceAccount: sa\ndir: x\nfile: /t"),
                        p0 + "dir: must be an absolute path, got \"x\"; " + p0 + "file: must be a relative path, got \"/t\""),
                new Rejected("same dir and file twice", "mode: static\nprojections:\n"
                        + "  - {namespace: ns, serviceAccount: a, dir: /run/t}\n"
                        + "  - {namespace: ns, serviceAccount: b, dir: /run/t/, file: ./token}\n",
                        "projections[1].file: must not name the same file as projections[0].file, got \"./token\""),
                // mode, uid, gid
                new Rejected("mode 01000", entry("mode: 01000"), p0 + "mode: must be between 0 and 0777 (octal), got 512 (octal 01000)"),
                new Rejected("uid negative", entry("uid: -1"), p0 + "uid: must be between 0 and 2147483647, got -1"),
                new Rejected("gid a string", entry("gid: nobody"), p0 + "gid: must be an integer, got \"nobody\""),
                // all at once
                new Rejected("several errors", "mode: static\nextra: 1\nprojections:\n  - {namespace: NS, dir: rel}\n",
                        "top level: unknown key \"extra\" (known keys: mode, kubeletDir, projections, maxUnboundExpirationSeconds, statusSocket, rereadCheck, rereadThresholdPercent, expiringUnreadMarginSeconds, tokenSource); "
                                + p0 + "namespace: " + label + ", got \"NS\"; "
                                + p0 + "serviceAccount: Required value; "
                                + p0 + "dir: must be an absolute path, got \"rel\""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rules")
    void parse_rule_rejected(Rejected c) {
        assertThatThrownBy(() -> AgentConfigParser.parse(c.yaml()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessage(c.message());
    }

    @Test
    void parse_boundariesAccepted() throws InvalidConfigException {
        String sa253 = String.join(".", "a".repeat(63), "a".repeat(63), "a".repeat(63), "a".repeat(61));
        AgentConfig config = AgentConfigParser.parse(bare("namespace: " + "a".repeat(63) + "\nserviceAccount: " + sa253
                + "\ndir: /run/t\nexpirationSeconds: 600\nmode: 0777\nuid: 0\ngid: 2147483647")
                + "  - {namespace: ns, serviceAccount: sa, dir: /run/u, expirationSeconds: 86400, mode: 0}\n");

        assertThat(config.projections()).extracting(p -> p.ask().expirationSeconds()).containsExactly(600L, 86400L);
        assertThat(config.projections()).extracting(StaticProjection::mode).containsExactly(0777, 0);
        assertThat(config.projections().get(0).serviceAccount()).hasSize(253);
    }

    @Test
    void maxUnboundExpirationSeconds_defaultsToADay_andMayBeRaisedToAWeek() throws InvalidConfigException {
        assertThat(AgentConfigParser.parse(entry("expirationSeconds: 86400")).maxUnboundExpirationSeconds())
                .isEqualTo(86400);

        AgentConfig raised = AgentConfigParser.parse("maxUnboundExpirationSeconds: 604800\n"
                + entry("expirationSeconds: 604800"));

        assertThat(raised.maxUnboundExpirationSeconds()).isEqualTo(604800);
        assertThat(raised.projections()).extracting(p -> p.ask().expirationSeconds()).containsExactly(604800L);
    }

    @Test
    void maxUnboundExpirationSeconds_lowered_holdsEveryProjectionToIt() throws InvalidConfigException {
        AgentConfig lowered = AgentConfigParser.parse("maxUnboundExpirationSeconds: 600\n"
                + entry("expirationSeconds: 600"));

        assertThat(lowered.maxUnboundExpirationSeconds()).isEqualTo(600);
        assertThat(lowered.staticDirectories().get(0).keys()).allSatisfy(k -> assertThat(k.expirationSeconds())
                .isLessThanOrEqualTo(600));
    }

    @Test
    void staticDirectories_groupByDir() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse("""
                mode: both
                projections:
                  - {namespace: mon, serviceAccount: exporter, dir: /run/a}
                  - {namespace: mon, serviceAccount: vault, dir: /run/b, audiences: [vault], mode: 0640, gid: 5}
                  - {namespace: mon, serviceAccount: exporter, dir: /run/a, file: vault/token, audiences: [x, y],
                     expirationSeconds: 600, uid: 7}
                """);

        List<TokenDirectory> dirs = config.staticDirectories();

        assertThat(dirs).extracting(TokenDirectory::name).containsExactly("static:/run/a", "static:/run/b");
        assertThat(dirs).extracting(TokenDirectory::dir).containsExactly(Path.of("/run/a"), Path.of("/run/b"));
        assertThat(dirs.get(0).projections()).containsExactly(
                new Projection(new TokenKey("mon", "exporter", null, 3600, BoundObjectRef.NONE), "token", 0600, null, null),
                new Projection(new TokenKey("mon", "exporter", List.of("x", "y"), 600, BoundObjectRef.NONE),
                        "vault/token", 0600, 7, null));
        assertThat(dirs.get(1).projections()).containsExactly(
                new Projection(new TokenKey("mon", "vault", List.of("vault"), 3600, BoundObjectRef.NONE), "token", 0640, null, 5));
    }

    @Test
    void parse_sameFileInTwoDirs_accepted() throws InvalidConfigException {
        AgentConfig config = AgentConfigParser.parse(bare("{namespace: ns, serviceAccount: a, dir: /run/a}")
                + "  - {namespace: ns, serviceAccount: a, dir: /run/b}\n");

        assertThat(config.staticDirectories()).hasSize(2);
    }

    @Test
    void parse_file_namesTheFileInErrors(@TempDir Path tmp) throws IOException {
        Path file = Files.writeString(tmp.resolve("agent.yaml"), "mode: static\n");

        assertThatThrownBy(() -> AgentConfigParser.parse(file))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> assertThat(e.errors()).containsExactly(
                        "projections: Required value: mode \"static\" needs at least one projection"))
                .hasMessage(file + ": projections: Required value: mode \"static\" needs at least one projection");
    }

    @Test
    void parse_file_valid(@TempDir Path tmp) throws IOException, InvalidConfigException {
        Path file = Files.writeString(tmp.resolve("agent.yaml"), FULL);

        assertThat(AgentConfigParser.parse(file)).isEqualTo(AgentConfigParser.parse(FULL));
    }

    @Test
    void parse_file_notUtf8(@TempDir Path tmp) throws IOException {
        Path file = Files.write(tmp.resolve("agent.yaml"), new byte[] {'m', 'o', (byte) 0xff});

        assertThatThrownBy(() -> AgentConfigParser.parse(file)).hasMessage(file + ": must be UTF-8 text");
    }

    @Test
    void parse_file_tooLarge(@TempDir Path tmp) throws IOException {
        Path file = Files.write(tmp.resolve("agent.yaml"), ("#".repeat(AgentConfigParser.MAX_LENGTH) + "\n").getBytes(UTF_8));

        assertThatThrownBy(() -> AgentConfigParser.parse(file))
                .hasMessage(file + ": must be at most 1048576 bytes, got 1048577");
    }

    @Test
    void parse_file_missing(@TempDir Path tmp) {
        assertThatThrownBy(() -> AgentConfigParser.parse(tmp.resolve("absent.yaml"))).isInstanceOf(IOException.class);
    }
}
