package io.satoken.common.health;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Whom {@link OpenConnections} counts a connection against for the per-client limit: its IP address over TCP.
 * A Unix domain socket's peer has no address, so every client of one counts as the same client, {@link #LOCAL};
 * who may connect at all is decided by the socket file's mode, not by this limit.
 *
 * @param address the client's IP address; null for {@link #LOCAL}
 */
record ClientKey(InetAddress address) {

    /** Every client of a Unix domain socket. */
    static final ClientKey LOCAL = new ClientKey(null);

    /** The key of a connection whose peer is {@code remote}. */
    static ClientKey of(SocketAddress remote) {
        return remote instanceof InetSocketAddress inet ? new ClientKey(inet.getAddress()) : LOCAL;
    }

    @Override
    public String toString() {
        return address == null ? "a local client" : address.getHostAddress();
    }
}
