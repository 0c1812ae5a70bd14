package io.satoken.agent.testing;

import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.status.StatusEndpoint;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A status endpoint on a Unix socket ({@code tmp/status.sock}) serving a {@link RefreshHarness#standard()} that has
 * written two directories: the volume {@code tmp/volume} of pod {@link #POD} (its token for {@code vault}, 600 s,
 * bound to the pod) and the static projection {@code tmp/static} (monitoring/exporter, the API server's audiences,
 * 3600 s, unbound). Reads are not watched.
 */
public final class StatusFixture implements AutoCloseable {

    public static final PodIdentity POD = new PodIdentity("shop", "cart", "uid-1", "cart");

    private final RefreshHarness harness = RefreshHarness.standard();
    private final StatusEndpoint endpoint;
    private final Path volume;
    private final Path staticDir;

    private StatusFixture(Path tmp, String node) throws IOException {
        volume = Files.createDirectory(tmp.resolve("volume"));
        staticDir = Files.createDirectory(tmp.resolve("static"));
        TokenDirectory pod = new TokenDirectory("csi:vol-1", volume, List.of(new Projection(new TokenKey("shop",
                "cart", List.of("vault"), 600, BoundObjectRef.pod("cart", "uid-1")), "token", 0640, null, 2000)), new TokenDirectory.Owner("vol-1", POD));
        harness.scheduler().put(pod);
        harness.scheduler().put(new TokenDirectory("static:" + staticDir, staticDir, List.of(new Projection(
                new TokenKey("monitoring", "exporter", null, 3600, null), "token", 0600, null, null))));
        harness.clock().runDue();
        endpoint = new StatusEndpoint(tmp.resolve("status.sock"), node, harness.scheduler(), null,
                AgentConfig.RereadCheck.DEFAULT_THRESHOLD, harness.clock());
    }

    /** Writes both directories and starts the endpoint of an agent on node {@code node-1}. */
    public static StatusFixture start(Path tmp) throws IOException {
        return start(tmp, "node-1");
    }

    /** As {@link #start(Path)}, for an agent on {@code node}: null for one that knows no node (static mode). */
    public static StatusFixture start(Path tmp, String node) throws IOException {
        StatusFixture fixture = new StatusFixture(tmp, node);
        fixture.endpoint.start();
        return fixture;
    }

    public Path socket() {
        return endpoint.socket();
    }

    public Path volume() {
        return volume;
    }

    public Path staticDir() {
        return staticDir;
    }

    /** Stops serving; the directories stay. */
    public void stopServing() {
        endpoint.close();
    }

    @Override
    public void close() {
        endpoint.close();
        harness.close();
    }
}
