package io.satoken.common.health;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/** What differs between serving {@link NonBlockingHttpServer} over TCP and over a Unix domain socket. */
enum Transport {
    TCP {
        @Override
        ServerSocketChannel open() throws IOException {
            return ServerSocketChannel.open(); // the JDK's choice of family, so "0.0.0.0" and "::" both bind
        }

        @Override
        void configure(SocketChannel accepted) throws IOException {
            // an answer is one write followed by a half-close; nothing is gained by waiting to coalesce it
            accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
    },
    UNIX {
        @Override
        ServerSocketChannel open() throws IOException {
            return ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        }

        @Override
        void configure(SocketChannel accepted) {
            // no options apply to a Unix domain socket
        }
    };

    /** The transport an address is served on. */
    static Transport of(SocketAddress address) {
        if (address instanceof InetSocketAddress) {
            return TCP;
        }
        if (address instanceof UnixDomainSocketAddress) {
            return UNIX;
        }
        throw new IllegalArgumentException("cannot serve HTTP on " + address
                + ": neither a host and port nor a Unix socket");
    }

    /** An unbound listening channel of this transport. */
    abstract ServerSocketChannel open() throws IOException;

    /** Sets this transport's options on an accepted connection. */
    abstract void configure(SocketChannel accepted) throws IOException;
}
