package io.satoken.controlplane.https;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.time.Duration;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/** A webhook connection that fails (a reset, a TLS handshake) is closed with one debug line, in words. */
class ConnectionFailureLogTest {

    @Test
    void reset_isClosedWithOneDebugLine_withoutTheExceptionsClass() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            EmbeddedChannel channel = new EmbeddedChannel(RequestDeadline.starting(Duration.ofSeconds(10), null, null));

            channel.pipeline().fireExceptionCaught(new IOException("Connection reset by peer"));

            assertThat(channel.isOpen()).isFalse();
            assertThat(logs.text()).contains("closed: Connection reset by peer").doesNotContain("IOException");
        }
    }

    @Test
    void tlsHandshakeFailure_isSaidAsATlsFailure() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            EmbeddedChannel channel = new EmbeddedChannel(RequestDeadline.starting(Duration.ofSeconds(10), null, null));

            channel.pipeline().fireExceptionCaught(new SSLHandshakeException("no cipher suites in common"));

            assertThat(logs.text()).contains("closed: TLS failed: no cipher suites in common")
                    .doesNotContain("SSLHandshakeException");
        }
    }
}
