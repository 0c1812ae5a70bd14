package io.satoken.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * What kube-proxy does for a Service, for a test node that has none: a TCP listener that sends each new connection
 * to one of the Service's current endpoints, picked at random when the connection opens, and closes a connection
 * at once when there is none. Bytes pass through untouched (TLS ends at the endpoint). Connections already open
 * stay with their endpoint, as with kube-proxy.
 */
final class ServiceRelay implements AutoCloseable {

    private final ServerSocket listener;
    private final Supplier<List<InetSocketAddress>> endpoints;
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong relayed = new AtomicLong();
    private final Thread acceptor;

    private ServiceRelay(ServerSocket listener, Supplier<List<InetSocketAddress>> endpoints, String name) {
        this.listener = listener;
        this.endpoints = endpoints;
        this.acceptor = new Thread(this::accept, "relay-" + name);
        this.acceptor.setDaemon(true);
    }

    /** Listens on {@code address} and relays to what {@code endpoints} gives at each connection. */
    static ServiceRelay start(String name, InetSocketAddress address, Supplier<List<InetSocketAddress>> endpoints)
            throws IOException {
        ServerSocket listener = new ServerSocket();
        listener.setReuseAddress(true);
        listener.bind(address, 512);
        ServiceRelay relay = new ServiceRelay(listener, endpoints, name);
        relay.acceptor.start();
        return relay;
    }

    int port() {
        return listener.getLocalPort();
    }

    InetAddress address() {
        return listener.getInetAddress();
    }

    /** Connections closed at once because no endpoint was there. */
    long refused() {
        return refused.get();
    }

    long relayed() {
        return relayed.get();
    }

    private void accept() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            List<InetSocketAddress> now = endpoints.get();
            if (now.isEmpty()) {
                refused.incrementAndGet();
                closeQuietly(client);
                continue;
            }
            InetSocketAddress target = now.get(ThreadLocalRandom.current().nextInt(now.size()));
            daemon(() -> connect(client, target));
        }
    }

    private void connect(Socket client, InetSocketAddress target) {
        Socket upstream = new Socket();
        try {
            upstream.connect(target, 2000);
        } catch (IOException e) {
            refused.incrementAndGet();
            closeQuietly(client);
            closeQuietly(upstream);
            return;
        }
        relayed.incrementAndGet();
        daemon(() -> pump(client, upstream));
        pump(upstream, client);
    }

    /** Copies {@code from} to {@code to} until {@code from} ends, then closes both. */
    private static void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16384];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // either side closed
        } finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    private static void daemon(Runnable r) {
        Thread t = new Thread(r, "relay-connection");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
    }
}
