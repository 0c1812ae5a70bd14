package io.satoken.controlplane.jwt;

/** Mints the JWT stored in a token Secret; the tokens controller's seam for signing. */
@FunctionalInterface
public interface LegacyTokenGenerator {

    /**
     * @return a signed compact JWT carrying exactly the legacy claims of spec 4b
     * @throws TokenGenerationException when signing fails (the message never contains a token)
     */
    String generate(LegacyClaims claims) throws TokenGenerationException;
}
