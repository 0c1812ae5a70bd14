package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** NT-6's view of the API server's own audiences (PV-3): the aud claim of the webhook's in-cluster token. */
class ApiAudiencesTest {

    @TempDir
    Path dir;

    @Test
    void fromToken_inClusterTokensAudClaim_readOnceFound() throws Exception {
        Path token = dir.resolve("token");
        ApiAudiences audiences = ApiAudiences.fromToken(token);
        assertThat(audiences.get()).as("no token yet").isEmpty();

        Files.writeString(token, new PlainJWT(new JWTClaimsSet.Builder()
                .audience(List.of("https://kubernetes.default.svc", "api")).build()).serialize());
        assertThat(audiences.get()).contains(List.of("https://kubernetes.default.svc", "api"));

        Files.writeString(token, new PlainJWT(new JWTClaimsSet.Builder().audience("rotated").build()).serialize());
        assertThat(audiences.get()).contains(List.of("https://kubernetes.default.svc", "api"));
    }

    @Test
    void fromToken_notAJwtOrNoAudience_givesNone() throws Exception {
        Path garbage = Files.writeString(dir.resolve("garbage"), "not-a-jwt");
        Path noAud = Files.writeString(dir.resolve("no-aud"),
                new PlainJWT(new JWTClaimsSet.Builder().subject("x").build()).serialize());

        assertThat(ApiAudiences.fromToken(garbage).get()).isEmpty();
        assertThat(ApiAudiences.fromToken(noAud).get()).isEmpty();
    }
}
