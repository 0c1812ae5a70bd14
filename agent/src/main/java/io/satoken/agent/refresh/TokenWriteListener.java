package io.satoken.agent.refresh;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.IssuedToken;

/** Told about every token file whose content changed on disk. Must not log the token itself. */
@FunctionalInterface
public interface TokenWriteListener {

    /**
     * @param rotation false for the first token written at this path, true when it replaced one
     */
    void written(TokenDirectory dir, Projection projection, IssuedToken token, boolean rotation);

    TokenWriteListener NONE = (dir, projection, token, rotation) -> { };
}
