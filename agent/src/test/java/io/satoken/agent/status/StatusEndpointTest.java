package io.satoken.agent.status;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.StatusFixture;
import io.satoken.common.health.UnixSocketClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The status endpoint over its Unix socket, with a real scheduler that has written a pod's and a static token. */
class StatusEndpointTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    @TempDir
    Path tmp;

    private StatusFixture fixture;
    private Path socket;

    @BeforeEach
    void start() throws Exception {
        fixture = StatusFixture.start(tmp);
        socket = fixture.socket();
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    @Test
    void directories_listsEveryFileWithItsTokensTimes_neverTheToken() throws Exception {
        UnixSocketClient.Reply reply = UnixSocketClient.get(socket, StatusEndpoint.DIRECTORIES, WAIT);

        assertThat(reply.status()).isEqualTo(200);
        JsonObject report = JsonParser.parseString(reply.body()).getAsJsonObject();
        assertThat(report.get("node").getAsString()).isEqualTo("node-1");
        assertThat(report.getAsJsonArray("directories")).hasSize(2);
        JsonObject file = report.getAsJsonArray("directories").get(0).getAsJsonObject().getAsJsonArray("files").get(0)
                .getAsJsonObject();
        assertThat(file.get("serviceAccount").getAsString()).isEqualTo("shop/cart");
        assertThat(file.get("state").getAsString()).isEqualTo("ready");
        assertThat(file.get("issuedAt").getAsString()).isEqualTo(RefreshHarness.START.toString());
        assertThat(file.get("expiresAt").getAsString()).isEqualTo(RefreshHarness.START.plus(RefreshHarness.TTL)
                .toString());
        assertThat(file.get("nextRefresh").getAsString()).as("80 %% of the hour, no jitter")
                .isEqualTo(RefreshHarness.START.plus(Duration.ofMinutes(48)).toString());
        assertThat(file.get("boundObject").getAsJsonObject().get("uid").getAsString()).isEqualTo("uid-1");
        for (Path dir : List.of(fixture.volume(), fixture.staticDir())) {
            String token = Files.readString(dir.resolve("token"));
            assertThat(token).isNotBlank();
            assertThat(reply.body()).doesNotContain(token);
        }
    }

    @Test
    void pod_answersOnlyThatPodsDirectories_andAnUnknownPodIs404NamingIt() throws Exception {
        UnixSocketClient.Reply cart = UnixSocketClient.get(socket, StatusEndpoint.PODS + "shop/cart", WAIT);
        UnixSocketClient.Reply other = UnixSocketClient.get(socket, StatusEndpoint.PODS + "shop/other", WAIT);
        UnixSocketClient.Reply bad = UnixSocketClient.get(socket, "/v2/anything", WAIT);

        assertThat(cart.status()).isEqualTo(200);
        JsonObject report = JsonParser.parseString(cart.body()).getAsJsonObject();
        assertThat(report.getAsJsonArray("directories")).singleElement().satisfies(d ->
                assertThat(d.getAsJsonObject().getAsJsonObject("pod").get("name").getAsString()).isEqualTo("cart"));
        assertThat(other.status()).isEqualTo(404);
        assertThat(other.body()).contains("shop/other", "node-1");
        assertThat(bad.status()).isEqualTo(404);
    }

    @Test
    void unknownPod_onAnAgentWithoutANodeName_saysSoWithoutNull() throws Exception {
        fixture.close();
        Path other = Files.createDirectory(tmp.resolve("nodeless"));
        fixture = StatusFixture.start(other, null);

        UnixSocketClient.Reply reply = UnixSocketClient.get(fixture.socket(), StatusEndpoint.PODS + "shop/other", WAIT);
        UnixSocketClient.Reply all = UnixSocketClient.get(fixture.socket(), StatusEndpoint.DIRECTORIES, WAIT);

        assertThat(reply.status()).isEqualTo(404);
        assertThat(reply.body()).contains("shop/other has no satoken volume on this agent's node")
                .doesNotContain("null");
        assertThat(StatusView.parse(all.body()).text()).doesNotContain("null").contains("Pod shop/cart (uid uid-1)\n");
    }
}
