package io.satoken.e2e;

import io.satoken.common.testing.KubeApiServer;
import java.io.IOException;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One kube-apiserver + etcd of a test class's own, for a class that needs its server's logs kept under its
 * name or other flags than {@code @RequiresKubeApiServer}'s shared server: a {@code static}
 * {@code @RegisterExtension} field. The server starts on the first {@link #server()} call, so a class whose
 * {@code @BeforeAll} skips it starts none, and is closed after the class with its logs kept
 * ({@link E2E#closeKeepingLogs}).
 */
final class ApiServerFixture implements AfterAllCallback {

    private final String name;
    private final UnaryOperator<KubeApiServer.Builder> flags;
    private KubeApiServer server;

    /** A server with the default flags whose logs are kept as {@code name}'s. */
    ApiServerFixture(String name) {
        this(name, UnaryOperator.identity());
    }

    /** A server built with {@code flags} applied to the default builder. */
    ApiServerFixture(String name, UnaryOperator<KubeApiServer.Builder> flags) {
        this.name = name;
        this.flags = flags;
    }

    /** The class's server, started on the first call. */
    synchronized KubeApiServer server() throws IOException {
        if (server == null) {
            server = flags.apply(KubeApiServer.builder()).build().start();
        }
        return server;
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) {
        E2E.closeKeepingLogs(server, name);
        server = null;
    }
}
