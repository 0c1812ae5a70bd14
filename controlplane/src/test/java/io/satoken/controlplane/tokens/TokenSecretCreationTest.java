package io.satoken.controlplane.tokens;

import static io.satoken.controlplane.tokens.TokenSyncTest.serviceAccount;
import static io.satoken.controlplane.tokens.TokenSyncTest.tokenSecret;
import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --legacy-token-auto-create}: v1.17's token Secret per ServiceAccount (TC-7). */
class TokenSecretCreationTest {

    static final String CREATED = "create secrets default/default-token-bbbbb " + TokenSyncTest.CANONICAL;

    private final TokenSyncTest.Fixture f = new TokenSyncTest.Fixture(true);

    private Result sync(V1ServiceAccount sa) throws InterruptedException {
        f.serviceAccounts.add(sa);
        return f.sync.syncServiceAccount(ServiceAccountKey.of(sa).orElseThrow());
    }

    @Test
    void accountWithoutToken_getsAFilledSecretAndAReference() throws Exception {
        V1ServiceAccount sa = serviceAccount(List.of());
        f.api.put(sa);

        assertThat(sync(sa)).isEqualTo(Result.DONE);

        assertThat(f.api.actions).containsExactly("get serviceaccounts default/default", CREATED,
                "get serviceaccounts default/default", "patch serviceaccounts default/default secrets=[default-token-bbbbb]");
        assertThat(f.generated).containsExactly("default/default uid=12345 secret=default-token-bbbbb");
    }

    @Test
    void accountListingItsToken_needsNothing() throws Exception {
        V1ServiceAccount sa = serviceAccount(List.of("token-secret-1"));
        f.secretCache.add(tokenSecret(s -> s));

        assertThat(sync(sa)).isEqualTo(Result.DONE);
        assertThat(f.api.actions).isEmpty();
    }

    @Test
    void accountListingAMissingSecret_getsANewOne() throws Exception {
        V1ServiceAccount sa = serviceAccount(List.of("missing-secret-1"));
        f.api.put(sa);

        sync(sa);

        assertThat(f.api.actions).contains(CREATED,
                "patch serviceaccounts default/default secrets=[missing-secret-1, default-token-bbbbb]");
    }

    @Test
    void staleCache_retriesWithoutCreating() throws Exception {
        V1ServiceAccount sa = serviceAccount(List.of());
        f.api.put(TokenSyncTest.withVersion(sa, "2"));

        assertThat(sync(sa)).isEqualTo(Result.RETRY);
        assertThat(f.api.actions).containsExactly("get serviceaccounts default/default");
    }

    @Test
    void referenceNeverAdded_deletesTheNewSecret() throws Exception {
        V1ServiceAccount sa = serviceAccount(List.of());
        f.api.put(sa);
        f.api.serviceAccountUpdateConflicts = 5;

        assertThat(sync(sa)).isEqualTo(Result.DONE); // a conflict means an update event follows

        List<String> expected = new ArrayList<>(List.of("get serviceaccounts default/default", CREATED));
        expected.addAll(Collections.nCopies(5, List.of("get serviceaccounts default/default",
                "patch serviceaccounts default/default secrets=[default-token-bbbbb]")).stream().flatMap(List::stream)
                .toList());
        expected.add("delete secrets default/default-token-bbbbb uid=90000");
        assertThat(f.api.actions).containsExactlyElementsOf(expected);
        assertThat(f.api.secrets).isEmpty();
    }

    @Test
    void secondSyncBeforeTheInformerCatchesUp_createsNothingMore() throws Exception { // TC-6
        V1ServiceAccount sa = serviceAccount(List.of());
        f.api.put(sa);
        sync(sa);
        f.api.actions.clear();

        V1ServiceAccount updated = f.api.getServiceAccount("default", "default");
        f.api.actions.clear();
        assertThat(sync(updated)).isEqualTo(Result.DONE);
        assertThat(f.api.actions).isEmpty();
    }

    @Test
    void generatedName_truncatesLongPrefixesTo58Characters() {
        TokenSecretCreation creation = new TokenSecretCreation(f.mutations, f.api, c -> "ABC", new byte[0],
                ConflictRetry.defaultRetry(), bound -> bound - 1);
        String prefix = "a".repeat(60) + "-token-";

        String name = creation.generatedName(prefix);

        assertThat(name).hasSize(63).startsWith("a".repeat(58)).endsWith("99999");
    }
}
