package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonParser;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.StatusFixture;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code explain} against a status endpoint serving a real scheduler's pod volume and static projection. */
class ExplainCommandTest {

    private record Result(int exit, String out, String err) {}

    @TempDir
    Path tmp;

    private StatusFixture fixture;
    private Path config;
    private Path staticDir;

    @BeforeEach
    void start() throws Exception {
        fixture = StatusFixture.start(tmp);
        staticDir = fixture.staticDir();
        config = Files.writeString(tmp.resolve("agent.yaml"), "mode: csi\nkubeletDir: " + tmp + "\nstatusSocket: "
                + fixture.socket() + "\n");
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    @Test
    void pod_isExplainedInText_fileByFile() {
        Result r = run("explain", "--config", config.toString(), "shop/cart");

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out()).contains("Pod shop/cart (uid uid-1), node node-1", "  token\n",
                "ServiceAccount: shop/cart", "audiences:      vault", "lifetime asked: 10m0s (expirationSeconds 600)",
                "bound to:       Pod cart (uid uid-1)", "state:          ready",
                "issued at:      " + RefreshHarness.START + " (now)", "last error:     none",
                "last read:      not watched");
    }

    @Test
    void staticProjection_byItsFilesPath_andJsonOnRequest() {
        Result r = run("explain", "--config", config.toString(), "-o", "json", staticDir.resolve("token").toString());

        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(JsonParser.parseString(r.out()).getAsJsonObject().getAsJsonArray("directories")).singleElement()
                .satisfies(d -> assertThat(d.getAsJsonObject().get("dir").getAsString()).isEqualTo(staticDir.toString()));
    }

    @Test
    void unknownTargets_exit1SayingWhy_badOnesExit2NamingTheRule() {
        Result pod = run("explain", "--config", config.toString(), "shop/gone");
        Result path = run("explain", "--config", config.toString(), "/nowhere");
        Result bad = run("explain", "--config", config.toString(), "Shop/cart");
        Result shape = run("explain", "--config", config.toString(), "cart");

        assertThat(pod.exit()).isEqualTo(1);
        assertThat(pod.err()).contains("pod shop/gone has no satoken volume on node node-1");
        assertThat(path.exit()).isEqualTo(1);
        assertThat(path.err()).contains("no static projection at /nowhere");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains("namespace", "RFC 1123");
        assertThat(shape.exit()).isEqualTo(2);
        assertThat(shape.err()).contains("must be NAMESPACE/NAME or an absolute path");
    }

    @Test
    void noAgent_onTheSocket_exits1NamingIt() throws Exception {
        fixture.stopServing();
        Result r = run("explain", "--config", config.toString(), "shop/cart");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("cannot ask the agent at " + tmp.resolve("status.sock"));
    }

    @Test
    void staticConfig_withoutStatusSocket_saysHowToGetOne() throws Exception {
        Path statics = Files.writeString(tmp.resolve("static.yaml"), "mode: static\nprojections:\n"
                + "  - {namespace: ns, serviceAccount: sa, dir: /run/t}\n");
        Result r = run("explain", "--config", statics.toString(), "/run/t");

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err()).contains("sets no statusSocket");
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
