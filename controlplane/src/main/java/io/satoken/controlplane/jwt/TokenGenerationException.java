package io.satoken.controlplane.jwt;

/** Signing a token failed; the tokens controller does not retry such a key (TC-5). */
public final class TokenGenerationException extends Exception {

    public TokenGenerationException(String message, Throwable cause) {
        super(message, cause);
    }
}
