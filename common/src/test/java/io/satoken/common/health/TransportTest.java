package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import org.junit.jupiter.api.Test;

class TransportTest {

    @Test
    void of_hostAndPortIsTcp_socketFileIsUnix() {
        assertThat(Transport.of(new InetSocketAddress("127.0.0.1", 0))).isEqualTo(Transport.TCP);
        assertThat(Transport.of(UnixDomainSocketAddress.of("/run/x.sock"))).isEqualTo(Transport.UNIX);
    }

    @Test
    void of_anyOtherAddress_isRefusedInWords_neverByItsClass() {
        SocketAddress other = new SocketAddress() {
            @Override
            public String toString() {
                return "elsewhere";
            }
        };

        assertThatThrownBy(() -> Transport.of(other)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot serve HTTP on elsewhere: neither a host and port nor a Unix socket");
    }
}
