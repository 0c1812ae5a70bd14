package io.satoken.controlplane.https;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.AttributeKey;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.security.Principal;
import javax.net.ssl.SSLPeerUnverifiedException;

/**
 * Who a connection's requests count against in the shared limits: the subject of the TLS client certificate
 * when the client presented one ({@code --client-ca-file}), else the remote IP address, without the port, so
 * that one client's many connections are one client. Worked out once per connection, when its first request's
 * headers arrive (the handshake is over by then).
 */
final class Client {

    private static final AttributeKey<String> NAME = AttributeKey.valueOf("satoken.client");

    private Client() {
    }

    /** The client of {@code channel}, e.g. {@code certificate CN=kube-apiserver} or {@code address 10.0.0.7}. */
    static String of(Channel channel) {
        String known = channel.attr(NAME).get();
        if (known != null) {
            return known;
        }
        String name = certificateSubject(channel);
        if (name == null) {
            name = address(channel.remoteAddress());
        }
        channel.attr(NAME).set(name);
        return name;
    }

    private static String certificateSubject(Channel channel) {
        SslHandler tls = channel.pipeline().get(SslHandler.class);
        if (tls == null) {
            return null;
        }
        try {
            Principal peer = tls.engine().getSession().getPeerPrincipal();
            return peer == null ? null : "certificate " + peer.getName();
        } catch (SSLPeerUnverifiedException noCertificate) {
            return null;
        }
    }

    private static String address(SocketAddress remote) {
        if (remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
            return "address " + inet.getAddress().getHostAddress();
        }
        return "address " + remote;
    }
}
