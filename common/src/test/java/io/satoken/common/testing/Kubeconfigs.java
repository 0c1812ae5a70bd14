package io.satoken.common.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Kubeconfig files for tests that need one to parse and name a server, not to reach it. */
public final class Kubeconfigs {

    private Kubeconfigs() {
    }

    /**
     * Writes a kubeconfig whose current context names {@code server} and a user with a static token that no API
     * server accepts; creates the file's directory.
     */
    public static Path withToken(Path file, String server) throws IOException {
        Files.createDirectories(file.toAbsolutePath().getParent());
        return Files.writeString(file, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "%s"}}]
                users: [{name: u, user: {token: not-a-real-token}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                """.formatted(server));
    }
}
