package io.satoken.e2e.node;

import io.kubernetes.client.Exec;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a command in a running container the way {@code kubectl exec} does: the API server's
 * {@code pods/exec} subresource, which the API server proxies to the kubelet (authenticated with its
 * kubelet client certificate) and the kubelet to containerd's CRI streaming server. client-java's
 * {@link Exec} speaks the WebSocket protocol ({@code v4.channel.k8s.io} with a v1.26 kubelet), so no kubectl
 * binary, and no version skew with one, is involved; output stays in memory and is never logged.
 *
 * <p>The exit code is the command's; -1 when the runtime could not start it (e.g. not found in the image),
 * since the API then answers with a failure status that carries no exit code.
 */
final class PodExec {

    /** The exit value client-java's process reports when its WebSocket failed. */
    private static final int STREAM_FAILED = -1975219;

    private final ApiClient client;

    PodExec(ApiClient client) {
        this.client = client;
    }

    ExecResult exec(String namespace, String pod, String container, Duration timeout, String... command)
            throws IOException {
        // client-java (25.0.0) reports a WebSocket failure by overwriting the exit value with STREAM_FAILED, even
        // when the failure is only its own close frame racing the server's after the command's status arrived
        // (2 to 3 execs in 100 on this machine). Its error callback runs just before that overwrite: there, a
        // process that is no longer alive already holds the real exit value, so it is kept.
        AtomicReference<Process> started = new AtomicReference<>();
        AtomicReference<Integer> exitBeforeFailure = new AtomicReference<>();
        AtomicReference<Throwable> streamError = new AtomicReference<>();
        Exec exec = new Exec(client);
        exec.setOnUnhandledError(error -> {
            streamError.set(error);
            Process p = started.get();
            if (p != null && !p.isAlive()) {
                exitBeforeFailure.compareAndSet(null, p.exitValue());
            }
        });
        Process process;
        try {
            process = exec.exec(namespace, pod, command, container, false, false);
            started.set(process);
        } catch (ApiException e) {
            throw new IOException("exec in " + namespace + "/" + pod + " (" + container + ") refused: HTTP "
                    + e.getCode() + " " + e.getResponseBody(), e);
        }
        // both streams are drained while the command runs, so neither can fill and stall it
        CompletableFuture<String> stdout = CompletableFuture.supplyAsync(() -> read(process.getInputStream()));
        CompletableFuture<String> stderr = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroy();
                throw new IOException("exec " + command[0] + " in " + namespace + "/" + pod + " still running after "
                        + timeout.toSeconds() + " s");
            }
            int exit = process.exitValue();
            if (exit == STREAM_FAILED && exitBeforeFailure.get() != null) {
                exit = exitBeforeFailure.get(); // set before the overwrite, so visible once the overwrite is
            }
            if (exit == STREAM_FAILED) {
                throw new IOException("exec " + command[0] + " in " + namespace + "/" + pod + ": the stream failed"
                        + " before the command's status arrived", streamError.get());
            }
            return new ExecResult(exit, stdout.get(10, TimeUnit.SECONDS), stderr.get(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroy();
            throw new IOException("interrupted", e);
        } catch (ExecutionException | TimeoutException e) {
            IOException failure = new IOException("exec " + command[0] + " in " + namespace + "/" + pod
                    + ": output unreadable", e);
            if (streamError.get() != null) {
                failure.addSuppressed(streamError.get());
            }
            throw failure;
        } finally {
            process.destroy();
        }
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
