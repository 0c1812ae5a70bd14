package io.satoken.agent.token;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenAdoptionTest {
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
    private static final BoundObjectRef POD = BoundObjectRef.pod("web-0", "0b7c6a2e-1111-2222-3333-444455556666");
    private static final TokenKey VAULT = new TokenKey("ns", "app", List.of("vault"), 3600, POD);

    @TempDir
    Path dir;

    private final FakeClock clock = new FakeClock(START);
    private final LocalIssuer issuer = LocalIssuer.generate("https://issuer.test", List.of("https://api"), clock);
    private final TokenCache cache = new TokenCache(
            key -> { throw new TokenSourceException("no calls expected"); },
            new RefreshPolicy(Duration.ZERO, new Random()), clock);
    private final TokenAdoption adoption = new TokenAdoption(cache, Optional.of(List.of("https://api")));

    @Test
    void matchingTokenNotYetDue_isAdopted_andServedWithoutACall() throws Exception {
        IssuedToken issued = issueAndWrite(VAULT, "vault-token");
        clock.advance(Duration.ofMinutes(20));

        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isEqualTo(1);
        CachedToken cached = cache.get(VAULT);
        assertThat(cached.token().token()).isEqualTo(issued.token());
        assertThat(cached.refreshAt()).isEqualTo(START.plus(Duration.ofMinutes(48)));
    }

    @Test
    void tokenPastItsRefreshPoint_isNotAdopted() throws Exception {
        issueAndWrite(VAULT, "vault-token");
        clock.advance(Duration.ofMinutes(48).plusSeconds(1));
        assertThat(adoption.adopt(dir(VAULT, "vault-token"))).isZero();
    }

    @Test
    void mismatchedSubjectAudiencesOrPod_isNotAdopted() throws Exception {
        issueAndWrite(VAULT, "vault-token");
        TokenKey otherSa = new TokenKey("ns", "other", List.of("vault"), 3600, POD);
        TokenKey otherAudience = new TokenKey("ns", "app", List.of("sts"), 3600, POD);
        TokenKey otherPod = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.pod("web-0", "another-uid"));
        TokenKey unbound = new TokenKey("ns", "app", List.of("vault"), 3600, BoundObjectRef.NONE);
        for (TokenKey key : List.of(otherSa, otherAudience, otherPod, unbound)) {
            assertThat(adoption.adopt(dir(key, "vault-token"))).as(key.toString()).isZero();
        }
        assertThat(cache.size()).isZero();
    }

    @Test
    void noAudiences_adoptedOnlyWhenTheServersDefaultsAreKnownAndMatch() throws Exception {
        TokenKey defaults = new TokenKey("ns", "app", null, 3600, POD);
        issueAndWrite(defaults, "token");
        TokenAdoption unknownDefaults = new TokenAdoption(cache, Optional.empty());
        assertThat(unknownDefaults.adopt(dir(defaults, "token"))).isZero();
        assertThat(new TokenAdoption(cache, Optional.of(List.of("https://other"))).adopt(dir(defaults, "token"))).isZero();
        assertThat(adoption.adopt(dir(defaults, "token"))).isEqualTo(1);
    }

    @Test
    void extendedToken_isRefreshedOnTheRequestedSchedule() throws Exception {
        // PV-23: a JWT valid for a year that was requested for 3607 s counts as a 3607 s token.
        TokenKey key = new TokenKey("ns", "app", List.of("vault"), 3607, POD);
        LocalIssuer longLived = LocalIssuer.generate("https://issuer.test", List.of("https://api"), clock);
        IssuedToken year = longLived.issue(new TokenKey("ns", "app", List.of("vault"), 365L * 24 * 3600, POD));
        write("token", year.token());
        assertThat(adoption.adopt(dir(key, "token"))).isEqualTo(1);
        assertThat(cache.peek(key)).hasValueSatisfying(
                c -> assertThat(c.token().expiresAt()).isEqualTo(START.plusSeconds(3607)));
    }

    @Test
    void junkMissingOrHugeFiles_areIgnored() throws Exception {
        write("junk", "not a jwt");
        write("huge", "x".repeat(70_000));
        assertThat(adoption.adopt(new TokenDirectory("d", dir, List.of(
                new Projection(VAULT, "junk", 0600, null, null),
                new Projection(VAULT, "huge", 0600, null, null),
                new Projection(VAULT, "missing", 0600, null, null))))).isZero();
    }

    private IssuedToken issueAndWrite(TokenKey key, String path) throws Exception {
        IssuedToken token = issuer.issue(key);
        write(path, token.token());
        return token;
    }

    /** Adoption reads whatever file the path resolves to; the writer's layout is not needed here. */
    private void write(String path, String content) throws Exception {
        Files.writeString(dir.resolve(path), content, StandardCharsets.US_ASCII);
    }

    private TokenDirectory dir(TokenKey key, String path) {
        return new TokenDirectory("d", dir, List.of(new Projection(key, path, 0600, null, null)));
    }
}
