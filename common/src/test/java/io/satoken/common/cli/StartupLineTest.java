package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The first line {@code run} logs: the version and the API server, never a credential. */
class StartupLineTest {

    record Case(String name, String apiServer, String shown) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> apiServer() {
        return Stream.of(
                new Case("in-cluster", "https://10.96.0.1:443", "https://10.96.0.1:443"),
                new Case("kubeconfig with a path", "https://api.example.com:6443/k8s", "https://api.example.com:6443/k8s"),
                new Case("user info dropped", "https://admin:s3cret@api.example.com:6443", "https://api.example.com:6443"),
                new Case("query dropped", "https://api.example.com?token=s3cret", "https://api.example.com"),
                new Case("none", null, "(none)"),
                new Case("garbage", "s3cret not a url", "(not a URL)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void apiServer(Case c) {
        String line = StartupLine.of("satoken-agent", new BuildVersion("0.1.0", "08346ee"), c.apiServer());
        assertThat(line).isEqualTo("satoken-agent 0.1.0 (commit 08346ee) starting; API server " + c.shown())
                .doesNotContain("s3cret");
    }
}
