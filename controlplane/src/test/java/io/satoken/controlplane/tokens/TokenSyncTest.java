package io.satoken.controlplane.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.kube.Informers;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec 4a's TestTokenCreation table (TC-1..TC-5), one case per row, against {@link TokenSync}. */
class TokenSyncTest {

    static final String CA = "CA Data";
    static final String CANONICAL = "type=kubernetes.io/service-account-token annotations={"
            + "kubernetes.io/service-account.name=default, kubernetes.io/service-account.uid=12345}"
            + " data={ca.crt=CA Data, namespace=default, token=ABC}";

    /** What happened to the caches before the sync ran. */
    enum Event { ADDED_SA, UPDATED_SA, DELETED_SA, ADDED_SECRET, ADDED_SECRET_LOCAL, UPDATED_SECRET, DELETED_SECRET }

    record Case(String name, V1ServiceAccount existingServiceAccount, List<V1Secret> existingSecrets, Event event,
            Object object, List<String> expectedActions) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> tokenCreation() {
        V1ServiceAccount sa = serviceAccount(List.of());
        V1ServiceAccount saMissing = serviceAccount(List.of("missing-secret-1"));
        V1ServiceAccount saOpaque = serviceAccount(List.of("regular-secret-1"));
        V1ServiceAccount saToken = serviceAccount(List.of("token-secret-1"));
        V1Secret opaque = new V1Secret().metadata(meta("regular-secret-1", "23456")).type("Opaque")
                .data(Map.of("mykey", bytes("mydata")));
        V1Secret token = tokenSecret(s -> s);
        List<String> deleteToken = List.of("delete secrets default/token-secret-1 uid=23456");
        List<String> getSaDeleteToken = List.of("get serviceaccounts default/default",
                "delete secrets default/token-secret-1 uid=23456");
        // TC-5: upstream UPDATEs the whole Secret; ours is a patch of the same data and annotations, nothing else
        List<String> fill = List.of("get secrets default/token-secret-1",
                "patch secrets default/token-secret-1 " + CANONICAL);
        List<Case> cases = new ArrayList<>(List.of(
                new Case("new serviceaccount with no secrets", null, List.of(), Event.ADDED_SA, sa, List.of()),
                new Case("new serviceaccount with missing secrets", null, List.of(), Event.ADDED_SA, saMissing, List.of()),
                new Case("new serviceaccount with missing secrets and a local secret in the cache", null, List.of(),
                        Event.ADDED_SA, saMissing, List.of()),
                new Case("new serviceaccount with non-token secrets", null, List.of(opaque), Event.ADDED_SA, saOpaque,
                        List.of()),
                new Case("new serviceaccount with token secrets", null, List.of(token), Event.ADDED_SA, saToken, List.of()),
                new Case("updated serviceaccount with no secrets", null, List.of(), Event.UPDATED_SA, sa, List.of()),
                new Case("updated serviceaccount with missing secrets", null, List.of(), Event.UPDATED_SA, saMissing,
                        List.of()),
                new Case("updated serviceaccount with non-token secrets", null, List.of(opaque), Event.UPDATED_SA,
                        saOpaque, List.of()),
                new Case("updated serviceaccount with token secrets", null, List.of(token), Event.UPDATED_SA, saToken,
                        List.of()),
                new Case("updated serviceaccount with no secrets with resource conflict",
                        withVersion(sa, "2"), List.of(), Event.UPDATED_SA, sa, List.of()),
                new Case("deleted serviceaccount with no secrets", null, List.of(), Event.DELETED_SA, sa, List.of()),
                new Case("deleted serviceaccount with missing secrets", null, List.of(), Event.DELETED_SA, saMissing,
                        List.of()),
                new Case("deleted serviceaccount with non-token secrets", null, List.of(opaque), Event.DELETED_SA,
                        saOpaque, List.of()),
                // TC-3
                new Case("deleted serviceaccount with token secrets", null, List.of(token), Event.DELETED_SA, saToken,
                        deleteToken),
                // TC-4: the account is neither cached nor on the server
                new Case("added secret without serviceaccount", null, List.of(), Event.ADDED_SECRET, token,
                        getSaDeleteToken),
                new Case("added secret with serviceaccount", sa, List.of(), Event.ADDED_SECRET, token, List.of()),
                // TC-5
                new Case("added token secret without token data", sa, List.of(), Event.ADDED_SECRET,
                        tokenSecret(s -> without(s, "token")), fill),
                new Case("added token secret without ca data", sa, List.of(), Event.ADDED_SECRET,
                        tokenSecret(s -> without(s, "ca.crt")), fill),
                new Case("added token secret with mismatched ca data", sa, List.of(), Event.ADDED_SECRET,
                        tokenSecret(s -> with(s, "ca.crt", "mismatched")), fill),
                new Case("added token secret without namespace data", sa, List.of(), Event.ADDED_SECRET,
                        tokenSecret(s -> without(s, "namespace")), fill),
                new Case("added token secret with custom namespace data", sa, List.of(), Event.ADDED_SECRET,
                        tokenSecret(s -> with(s, "namespace", "custom")), List.of()),
                new Case("updated secret without serviceaccount", null, List.of(), Event.UPDATED_SECRET, token,
                        getSaDeleteToken),
                new Case("updated secret with serviceaccount", sa, List.of(), Event.UPDATED_SECRET, token, List.of()),
                new Case("updated token secret without token data", sa, List.of(), Event.UPDATED_SECRET,
                        tokenSecret(s -> without(s, "token")), fill),
                new Case("updated token secret without ca data", sa, List.of(), Event.UPDATED_SECRET,
                        tokenSecret(s -> without(s, "ca.crt")), fill),
                new Case("updated token secret with mismatched ca data", sa, List.of(), Event.UPDATED_SECRET,
                        tokenSecret(s -> with(s, "ca.crt", "mismatched")), fill),
                new Case("updated token secret without namespace data", sa, List.of(), Event.UPDATED_SECRET,
                        tokenSecret(s -> without(s, "namespace")), fill),
                new Case("updated token secret with custom namespace data", sa, List.of(), Event.UPDATED_SECRET,
                        tokenSecret(s -> with(s, "namespace", "custom")), List.of()),
                new Case("deleted secret without serviceaccount", null, List.of(), Event.DELETED_SECRET, token, List.of()),
                // TC-4: reference removal reads the account live
                new Case("deleted secret with serviceaccount with reference", saToken, List.of(), Event.DELETED_SECRET,
                        token, List.of("get serviceaccounts default/default",
                                "patch serviceaccounts default/default secrets=[]")),
                new Case("deleted secret with serviceaccount without reference", sa, List.of(), Event.DELETED_SECRET,
                        token, List.of("get serviceaccounts default/default"))));
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void tokenCreation(Case c) throws Exception {
        Fixture f = new Fixture(false);
        if (c.existingServiceAccount() != null) {
            f.api.put(c.existingServiceAccount());
            if (c.event() == Event.ADDED_SECRET || c.event() == Event.UPDATED_SECRET
                    || c.event() == Event.DELETED_SECRET) {
                f.serviceAccounts.add(c.existingServiceAccount());
            }
        }
        c.existingSecrets().forEach(s -> {
            f.api.put(s);
            f.secretCache.add(s);
        });
        switch (c.event()) {
            case ADDED_SA, UPDATED_SA -> {
                V1ServiceAccount sa = (V1ServiceAccount) c.object();
                f.serviceAccounts.add(sa);
                if (c.name().contains("local secret")) {
                    f.mutations.mutated(tokenSecret(s -> s));
                }
                f.sync.syncServiceAccount(ServiceAccountKey.of(sa).orElseThrow());
            }
            case DELETED_SA -> f.sync.syncServiceAccount(ServiceAccountKey.of((V1ServiceAccount) c.object()).orElseThrow());
            case ADDED_SECRET, UPDATED_SECRET -> {
                V1Secret s = (V1Secret) c.object();
                f.api.put(s);
                f.secretCache.add(s);
                f.sync.syncSecret(SecretKey.of(s).orElseThrow());
            }
            case ADDED_SECRET_LOCAL -> throw new IllegalStateException("not used by this table");
            case DELETED_SECRET -> f.sync.syncSecret(SecretKey.of((V1Secret) c.object()).orElseThrow());
            default -> throw new IllegalStateException();
        }
        assertThat(f.api.actions).as(c.name()).containsExactlyElementsOf(c.expectedActions());
    }

    @Test
    void fill_skipsWhenTheLiveSecretIsNewerThanTheCache() throws Exception { // TC-5
        Fixture f = new Fixture(false);
        V1ServiceAccount sa = serviceAccount(List.of());
        f.serviceAccounts.add(sa);
        V1Secret cached = tokenSecret(s -> without(s, "token"));
        f.secretCache.add(cached);
        V1Secret live = tokenSecret(s -> without(s, "token"));
        live.getMetadata().resourceVersion("7");
        f.api.put(live);

        assertThat(f.sync.syncSecret(SecretKey.of(cached).orElseThrow())).isEqualTo(Result.DONE);
        assertThat(f.api.actions).containsExactly("get secrets default/token-secret-1");
    }

    @Test
    void fill_keepsACustomNamespaceAndRewritesTheAccountAnnotations() throws Exception { // TC-5
        Fixture f = new Fixture(false);
        f.serviceAccounts.add(serviceAccount(List.of()));
        V1Secret secret = tokenSecret(s -> with(without(s, "token"), "namespace", "custom"));
        secret.getMetadata().getAnnotations().remove(SecretKey.SA_UID_ANNOTATION);
        f.secretCache.add(secret);
        f.api.put(secret);

        f.sync.syncSecret(SecretKey.of(secret).orElseThrow());

        assertThat(f.api.actions).containsExactly("get secrets default/token-secret-1",
                "patch secrets default/token-secret-1 " + CANONICAL.replace("namespace=default", "namespace=custom"));
        assertThat(f.generated).containsExactly("default/default uid=12345 secret=token-secret-1");
    }

    @Test
    void fill_afterTheWriteTheMutationCacheServesTheFilledSecret() throws Exception { // TC-6
        Fixture f = new Fixture(false);
        f.serviceAccounts.add(serviceAccount(List.of()));
        V1Secret secret = tokenSecret(s -> without(s, "token"));
        f.secretCache.add(secret);
        f.api.put(secret);

        f.sync.syncSecret(SecretKey.of(secret).orElseThrow());
        f.api.actions.clear();
        f.sync.syncSecret(SecretKey.of(secret).orElseThrow()); // the informer has not caught up

        assertThat(f.api.actions).isEmpty();
        f.ticker.addAndGet(SecretMutationCache.TTL.toNanos() + 1);
        assertThat(f.mutations.get("default", "token-secret-1").getData()).doesNotContainKey("token");
    }

    @Test
    void deletedSecret_referenceRemovalRetriesConflicts() throws Exception { // TC-4, spec 9: 10 tries
        Fixture f = new Fixture(false);
        V1ServiceAccount saToken = serviceAccount(List.of("token-secret-1"));
        f.serviceAccounts.add(saToken);
        f.api.put(saToken);
        f.api.serviceAccountUpdateConflicts = 3;

        f.sync.syncSecret(SecretKey.of(tokenSecret(s -> s)).orElseThrow());

        assertThat(f.api.actions).hasSize(8).last().isEqualTo("patch serviceaccounts default/default secrets=[]");
        assertThat(f.api.serviceAccounts.get("default/default").getSecrets()).isEmpty();
    }

    @Test
    void deletedServiceAccount_keepsTokensOfAnotherUidAndDeletesThoseWithoutUid() throws Exception { // TC-3
        Fixture f = new Fixture(false);
        V1Secret other = tokenSecret(s -> s);
        other.getMetadata().name("other-uid").uid("1").putAnnotationsItem(SecretKey.SA_UID_ANNOTATION, "99999");
        V1Secret noUid = tokenSecret(s -> s);
        noUid.getMetadata().name("no-uid").uid("2").getAnnotations().remove(SecretKey.SA_UID_ANNOTATION);
        for (V1Secret s : List.of(other, noUid)) {
            f.secretCache.add(s);
            f.api.put(s);
        }

        f.sync.syncServiceAccount(new ServiceAccountKey("default", "default", "12345"));

        assertThat(f.api.actions).containsExactly("delete secrets default/no-uid uid=2");
    }

    @Test
    void serviceAccountKey_dropsObjectsWithoutUid() { // TC-1
        V1ServiceAccount sa = serviceAccount(List.of());
        sa.getMetadata().uid(null);
        assertThat(ServiceAccountKey.of(sa)).isEmpty();
        V1Secret s = tokenSecret(x -> x);
        s.getMetadata().getAnnotations().remove(SecretKey.SA_NAME_ANNOTATION);
        assertThat(SecretKey.of(s)).isEmpty();
    }

    // fixtures as in upstream's test: SA default/default uid 12345 RV 1; token-secret-1 uid 23456

    static V1ServiceAccount serviceAccount(List<String> secrets) {
        return new V1ServiceAccount().metadata(meta("default", "12345"))
                .secrets(secrets.stream().map(n -> new V1ObjectReference().name(n)).toList());
    }

    static V1ServiceAccount withVersion(V1ServiceAccount sa, String rv) {
        V1ServiceAccount copy = io.satoken.controlplane.controller.DeepCopy.of(sa);
        copy.getMetadata().resourceVersion(rv);
        return copy;
    }

    static V1Secret tokenSecret(UnaryOperator<V1Secret> edit) {
        Map<String, byte[]> data = new LinkedHashMap<>();
        data.put("token", bytes("ABC"));
        data.put("ca.crt", bytes(CA));
        data.put("namespace", bytes("default"));
        V1Secret s = new V1Secret().metadata(meta("token-secret-1", "23456")
                        .putAnnotationsItem(SecretKey.SA_NAME_ANNOTATION, "default")
                        .putAnnotationsItem(SecretKey.SA_UID_ANNOTATION, "12345"))
                .type(Informers.TOKEN_SECRET_TYPE).data(data);
        return edit.apply(s);
    }

    static V1Secret without(V1Secret s, String key) {
        s.getData().remove(key);
        return s;
    }

    static V1Secret with(V1Secret s, String key, String value) {
        s.getData().put(key, bytes(value));
        return s;
    }

    static V1ObjectMeta meta(String name, String uid) {
        return new V1ObjectMeta().name(name).namespace("default").uid(uid).resourceVersion("1");
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Caches, API and sync wired as the controller wires them; the generator returns "ABC". */
    static final class Fixture {
        final Cache<V1ServiceAccount> serviceAccounts = new Cache<>();
        final Cache<V1Secret> secretCache = new Cache<>();
        final AtomicLong ticker = new AtomicLong();
        final SecretMutationCache mutations = new SecretMutationCache(secretCache, ticker::get);
        final RecordingTokensApi api = new RecordingTokensApi();
        final List<String> generated = new ArrayList<>();
        final TokenSync sync;

        Fixture(boolean autoCreate) {
            ConflictRetry noWait = new ConflictRetry(10, Duration.ofMillis(100), 1.0, d -> { });
            TokenSecretCreation creation = autoCreate ? new TokenSecretCreation(mutations, api, this::generate,
                    bytes(CA), new ConflictRetry(5, Duration.ZERO, 0, d -> { }), bound -> 0) : null;
            sync = new TokenSync(new Lister<>(serviceAccounts), mutations, api, this::generate, bytes(CA), creation,
                    noWait);
        }

        String generate(io.satoken.controlplane.jwt.LegacyClaims claims) {
            generated.add(claims.namespace() + "/" + claims.serviceAccountName() + " uid="
                    + claims.serviceAccountUid() + " secret=" + claims.secretName());
            return "ABC";
        }
    }
}
