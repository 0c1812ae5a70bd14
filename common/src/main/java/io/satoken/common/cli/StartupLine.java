package io.satoken.common.cli;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * The first line a long-running command logs: what runs ({@link BuildVersion}) and which API server it talks
 * to, so an operator reading a log knows both without asking. The server's URL is shown without user info,
 * query or fragment: a kubeconfig's {@code server:} is not meant to carry credentials, but one could.
 */
public final class StartupLine {

    private StartupLine() {
    }

    /** {@code satoken-agent 0.1.0-SNAPSHOT (commit 08346ee) starting; API server https://10.0.0.1:443}. */
    public static String of(String program, BuildVersion version, String apiServer) {
        return version.describe(program) + " starting; API server " + withoutCredentials(apiServer);
    }

    static String withoutCredentials(String url) {
        if (url == null || url.isBlank()) {
            return "(none)";
        }
        try {
            URI u = new URI(url);
            if (u.getHost() == null) {
                return "(not a URL)";
            }
            return new URI(u.getScheme(), null, u.getHost(), u.getPort(), u.getPath(), null, null).toString();
        } catch (URISyntaxException e) {
            return "(not a URL)";
        }
    }
}
