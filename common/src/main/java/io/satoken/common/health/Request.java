package io.satoken.common.health;

/** What a client of {@link NonBlockingHttpServer} asked: the method and the path without its query. */
record Request(String method, String path) {
}
