package io.satoken.common.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import org.junit.jupiter.api.Test;

class ClientKeyTest {

    @Test
    void of_tcpPeers_areKeyedByAddress_notPort() throws Exception {
        InetAddress address = InetAddress.getByName("127.0.0.2");

        assertThat(ClientKey.of(new InetSocketAddress(address, 40000)))
                .isEqualTo(ClientKey.of(new InetSocketAddress(address, 40001)))
                .isNotEqualTo(ClientKey.of(new InetSocketAddress(InetAddress.getByName("127.0.0.3"), 40000)))
                .hasToString("127.0.0.2");
    }

    @Test
    void of_unixPeers_areAllOneClient() {
        // a connected Unix socket's peer is usually unnamed: the JDK reports an empty path
        assertThat(ClientKey.of(UnixDomainSocketAddress.of(""))).isSameAs(ClientKey.LOCAL)
                .isEqualTo(ClientKey.of(UnixDomainSocketAddress.of("/run/other.sock")))
                .isNotEqualTo(ClientKey.of(new InetSocketAddress(InetAddress.getLoopbackAddress(), 1)));
    }
}
