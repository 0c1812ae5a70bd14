package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** Failures in words: what an operator reads in a log line instead of a Java class name or "null". */
class FailuresTest {

    @Test
    void anApiServerAnswer_isItsCodeReasonAndStatusMessage() {
        ApiException e = new ApiException(403, Map.of(), """
                {"kind":"Status","apiVersion":"v1","status":"Failure","message":"serviceaccounts \\"app\\" is forbidden",\
                "reason":"Forbidden","code":403}""");

        assertThat(Failures.inWords(e)).isEqualTo("403 Forbidden: serviceaccounts \"app\" is forbidden");
    }

    @Test
    void noAnswer_saysSo_andWhy_withoutAClassName() {
        ApiException refused = new ApiException(new ConnectException("Failed to connect to /10.0.0.1:443"));
        ApiException slow = new ApiException(new SocketTimeoutException("timeout"));
        ApiException bare = new ApiException(0, "HTTP 0");

        assertThat(Failures.inWords(refused))
                .isEqualTo("no response from the API server: Failed to connect to /10.0.0.1:443");
        assertThat(Failures.inWords(slow)).isEqualTo("no response from the API server: timed out (timeout)");
        assertThat(Failures.inWords(bare)).isEqualTo("no response from the API server: no answer");
        assertThat(List.of(Failures.inWords(refused), Failures.inWords(slow)))
                .noneMatch(s -> s.contains("Exception") || s.contains("null"));
    }

    @Test
    void networkAndFileFailures_areNamedInWords() {
        assertThat(Failures.inWords(new UnknownHostException("api.example"))).isEqualTo("unknown host api.example");
        assertThat(Failures.inWords(new SSLHandshakeException("PKIX path building failed")))
                .isEqualTo("TLS failed: PKIX path building failed");
        assertThat(Failures.inWords(new NoSuchFileException("/var/lib/x"))).isEqualTo("/var/lib/x: not found");
        assertThat(Failures.inWords(new IOException())).isEqualTo("input/output error");
        assertThat(Failures.inWords(new IllegalStateException())).isEqualTo("failed without saying why");
        assertThat(Failures.inWords(new RuntimeException(new ConnectException()))).isEqualTo("connection refused");
    }

    @Test
    void aMultiLineMessage_givesItsFirstLine() {
        assertThat(Failures.inWords(new IOException("first\nsecond"))).isEqualTo("first");
    }
}
