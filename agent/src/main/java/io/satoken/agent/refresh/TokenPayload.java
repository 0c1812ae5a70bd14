package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.write.FileContent;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Turns a directory's tokens into the files its writer publishes: each token's text at its projection's path. */
final class TokenPayload {

    private TokenPayload() {
    }

    /** One file per projection, in the projections' order, with the projection's mode and owner. */
    static Map<String, FileContent> of(Map<Projection, IssuedToken> tokens) {
        Map<String, FileContent> payload = new LinkedHashMap<>();
        tokens.forEach((p, token) -> payload.put(p.path(),
                new FileContent(token.token().getBytes(StandardCharsets.UTF_8), p.mode(), p.uid(), p.gid())));
        return payload;
    }
}
