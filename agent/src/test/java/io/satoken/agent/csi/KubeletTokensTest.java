package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.testing.KubeletTokenJson;
import io.satoken.agent.token.IssuedToken;
import io.satoken.common.projection.ProjectionSpec;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reading the kubelet's tokens from a NodePublishVolume ({@code tokenSource: kubelet}): where they are looked for,
 * what is refused, and that no refusal quotes a token.
 */
class KubeletTokensTest {

    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", "0b7e6f0a-1111-2222-3333-444455556666",
            "app");
    private static final KubeletTokenJson KUBELET = new KubeletTokenJson();
    private static final IssuedToken VAULT = KUBELET.token(WEB, "vault", NOW.minusSeconds(60), 600);

    private static Map<String, String> tokens(Map<String, IssuedToken> byAudience) {
        return Map.of(KubeletTokens.KEY, KubeletTokenJson.json(byAudience));
    }

    @Test
    void read_takesTheSecretsFirst_thenTheVolumeContext() throws Exception {
        IssuedToken other = KUBELET.token(WEB, "vault", NOW.minusSeconds(30), 600);

        KubeletTokens.Delivery both = KubeletTokens.read(tokens(Map.of("vault", VAULT)),
                tokens(Map.of("vault", other)), WEB, NOW);
        KubeletTokens.Delivery context = KubeletTokens.read(Map.of(), tokens(Map.of("vault", other)), WEB, NOW);

        assertThat(both.via()).isEqualTo(KubeletTokens.Via.SECRETS);
        assertThat(both.tokens().get("vault").token()).isEqualTo(VAULT.token());
        assertThat(context.via()).isEqualTo(KubeletTokens.Via.VOLUME_CONTEXT);
        assertThat(context.tokens().get("vault").token()).isEqualTo(other.token());
        assertThat(context.tokens().get("vault").expiresAt()).isEqualTo(other.expiresAt());
        assertThat(both.toString()).isEqualTo("Delivery[via=secrets, audiences=[vault]]");
    }

    @Test
    void read_withoutTokens_isAFailedPreconditionNamingTheCsiDriversFields() {
        assertThatThrownBy(() -> KubeletTokens.read(Map.of(), Map.of("audience", "vault"), WEB, NOW))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).contains(KubeletTokens.KEY).contains("spec.tokenRequests")
                            .contains("requiresRepublish: true");
                });
    }

    record Malformed(String name, String json) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Malformed> malformed() {
        String jwt = VAULT.token();
        return Stream.of(
                new Malformed("not JSON, the token inside", "{\"vault\": {\"token\": \"" + jwt + "\""),
                new Malformed("an array", "[\"" + jwt + "\"]"),
                new Malformed("no token", "{}"),
                new Malformed("status not an object", "{\"vault\": \"" + jwt + "\"}"),
                new Malformed("token not a string", "{\"vault\": {\"token\": 5}}"),
                new Malformed("token not a JWT", "{\"vault\": {\"token\": \"" + jwt.replace('.', '-') + "\"}}"),
                new Malformed("bad expirationTimestamp", "{\"vault\": {\"token\": \"" + jwt
                        + "\", \"expirationTimestamp\": \"" + jwt + "\"}}"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void read_malformed_isInvalidArgumentNamingTheField_withoutTheTokenText(Malformed c) {
        assertThatThrownBy(() -> KubeletTokens.read(Map.of(), Map.of(KubeletTokens.KEY, c.json()), WEB, NOW))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).startsWith(KubeletTokens.KEY + " (volume_context)")
                            .doesNotContain(VAULT.token().substring(VAULT.token().lastIndexOf('.') + 1))
                            .doesNotContain(VAULT.token().substring(0, 20));
                    assertThat(e.getCause()).isNull();
                });
    }

    record Mismatch(String name, String audience, Consumer<java.util.Map<String, Object>> bend, String error) {
        @Override
        public String toString() {
            return name;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> kubernetes(Map<String, Object> claims) {
        return (Map<String, Object>) claims.get("kubernetes.io");
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> member(Map<String, Object> claims, String name) {
        return (Map<String, Object>) kubernetes(claims).get(name);
    }

    static Stream<Mismatch> mismatches() {
        return Stream.of(
                new Mismatch("another ServiceAccount's subject", "vault",
                        c -> c.put("sub", "system:serviceaccount:shop:admin"),
                        "its subject is \"system:serviceaccount:shop:admin\", not the pod's ServiceAccount"),
                new Mismatch("another audience", "vault", c -> c.put("aud", List.of("sts")),
                        "its audiences are [sts], not [vault]"),
                new Mismatch("two audiences", "vault", c -> c.put("aud", List.of("vault", "sts")),
                        "its audiences are [vault, sts], not [vault]"),
                new Mismatch("another namespace", "vault", c -> kubernetes(c).put("namespace", "other"),
                        "its kubernetes.io.namespace is \"other\", not the pod's \"shop\""),
                new Mismatch("another ServiceAccount name", "vault",
                        c -> member(c, "serviceaccount").put("name", "admin"),
                        "its kubernetes.io.serviceaccount.name is \"admin\", not the pod's \"app\""),
                new Mismatch("another pod's name", "vault", c -> member(c, "pod").put("name", "web-1"),
                        "its kubernetes.io.pod.name is \"web-1\", not the pod's \"web-0\""),
                new Mismatch("another pod's uid", "vault", c -> member(c, "pod").put("uid", "9999"),
                        "its kubernetes.io.pod.uid is \"9999\", not the pod's \"" + WEB.uid() + "\""),
                new Mismatch("not bound to a pod", "vault", c -> kubernetes(c).remove("pod"),
                        "its kubernetes.io.pod.name is absent"),
                new Mismatch("expired", "vault", c -> {
                    c.put("iat", NOW.minusSeconds(700).getEpochSecond());
                    c.put("exp", NOW.minusSeconds(100).getEpochSecond());
                }, "expired at 2025-12-31T23:58:20Z (now 2026-01-01T00:00:00Z)"),
                new Mismatch("the empty audience without audiences", "", c -> c.put("aud", List.of()),
                        "it has no audience, and a token for the API server's own audiences (\"\") must have some"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("mismatches")
    void read_tokenThatIsNotThePods_isRefusedNamingTheClaim_withoutTheTokenText(Mismatch c) {
        IssuedToken bent = KUBELET.token(WEB, c.audience(), NOW.minusSeconds(60), 600, c.bend());
        // the JSON's expirationTimestamp is the token's own exp
        String json = KubeletTokenJson.json(Map.of(c.audience(), bent)).replace(bent.expiresAt().toString(),
                java.time.Instant.ofEpochSecond(exp(bent)).toString());

        assertThatThrownBy(() -> KubeletTokens.read(Map.of(KubeletTokens.KEY, json), Map.of(), WEB, NOW))
                .isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                    assertThat(e.getMessage()).startsWith(KubeletTokens.KEY + " (secrets)[\"" + c.audience()
                            + "\"].token: ").contains(c.error()).doesNotContain(bent.token());
                });
    }

    private static long exp(IssuedToken token) {
        try {
            return com.nimbusds.jwt.SignedJWT.parse(token.token()).getJWTClaimsSet().getExpirationTime().toInstant()
                    .getEpochSecond();
        } catch (java.text.ParseException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void checkFiles_unlistedAudience_namesTheFieldTheAudienceAndTheListedOnes() throws Exception {
        KubeletTokens.Delivery delivery = KubeletTokens.read(Map.of(), tokens(Map.of("vault", VAULT,
                "sts", KUBELET.token(WEB, "sts", NOW, 600))), WEB, NOW);

        assertThatThrownBy(() -> KubeletTokens.checkFiles(List.of(new ProjectionSpec("token", "gcp", 3600, null,
                null, null)), false, delivery)).isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).isEqualTo("volumeAttributes.audience: \"gcp\" is not an audience the"
                            + " kubelet mints for this driver; the CSIDriver tokens.satoken.io lists"
                            + " spec.tokenRequests audiences [\"sts\", \"vault\"]: ask for one of those, or add it to"
                            + " the CSIDriver's tokenRequests");
                });
        assertThatThrownBy(() -> KubeletTokens.checkFiles(List.of(ProjectionSpec.of("a"),
                new ProjectionSpec("b", null, 3600, null, null, null)), true, delivery))
                .hasMessageStartingWith("volumeAttributes.projections[0].audience: \"\" is not an audience")
                .hasMessageContaining("; volumeAttributes.projections[1].audience: \"\"")
                .hasMessageContaining("(a file without an audience asks for \"\")");
    }

    @Test
    void checkFiles_expirationSeconds_mayNotBeShorterThanTheKubeletsToken() throws Exception {
        KubeletTokens.Delivery delivery = KubeletTokens.read(Map.of(), tokens(Map.of("vault", VAULT)), WEB, NOW);

        KubeletTokens.checkFiles(List.of(new ProjectionSpec("token", "vault", 600, null, null, null),
                new ProjectionSpec("longer", "vault", 3600, null, null, null)), false, delivery);
        assertThatThrownBy(() -> KubeletTokens.checkFiles(List.of(new ProjectionSpec("token", "vault", 599, null,
                null, null)), false, delivery)).isInstanceOfSatisfying(CsiException.class, e -> {
                    assertThat(e.code()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getMessage()).startsWith("volumeAttributes.expirationSeconds: 599, but the kubelet's"
                            + " token for audience \"vault\" lives 600 s").contains("at least 600");
                });
    }

    @Test
    void withoutTokens_dropsOnlyTheTokensKey() {
        Map<String, String> context = Map.of(KubeletTokens.KEY, "{}", "audience", "vault",
                "csi.storage.k8s.io/pod.name", "web-0");

        assertThat(KubeletTokens.withoutTokens(context)).containsOnlyKeys("audience", "csi.storage.k8s.io/pod.name");
        Map<String, String> none = Map.of("audience", "vault");
        assertThat(KubeletTokens.withoutTokens(none)).isSameAs(none);
    }
}
