package io.satoken.controlplane.https;

import java.util.Set;

/**
 * What a {@link WebhookServer} serves. The server owns connections, limits and deadlines; the endpoint owns the
 * format of every body the server answers with, including the server's own refusals, so the server never reads or
 * writes one itself.
 */
public interface Endpoint {

    /** The paths served; a request to any other is answered 404. */
    Set<String> paths();

    /**
     * One request to answer: {@code body}, POSTed as JSON to one of {@link #paths}.
     *
     * @param memory claims what answering it keeps in memory, beside the body and in the name of the same client
     */
    Exchange exchange(String path, byte[] body, Memory memory);

    /**
     * The body of an answer the server gives on its own with {@code status} (408, 413, 415, 503), saying
     * {@code message}.
     */
    byte[] refusal(int status, String message);

    /** One request, from its body to its answer. */
    interface Exchange {

        /**
         * Decides the answer (sent with 200); runs on a worker thread.
         *
         * @throws InterruptedException when the server stopped waiting for it: its deadline answered already
         */
        Answer answer() throws InterruptedException;

        /** The body of the answer (sent with 200) when {@link #answer} missed its deadline, saying {@code message}. */
        byte[] late(String message);
    }

    /**
     * A decided answer.
     *
     * @param result what it counts as in {@code satoken_webhook_requests_total}'s {@code result} label
     */
    record Answer(String result, byte[] body) {
    }

    /** Claims memory from the server's body budget. */
    @FunctionalInterface
    interface Memory {

        /** Claims {@code bytes} more; false when they do not fit. */
        boolean claim(long bytes);
    }
}
