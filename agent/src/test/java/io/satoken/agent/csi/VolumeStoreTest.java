package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.PodOwners;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.PodInfo;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import io.satoken.common.projection.TokenFileFields;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Volume records: what a restarted agent reads a volume from, and which of its files have a reader. */
class VolumeStoreTest {

    private static final PodIdentity POD = new PodIdentity("shop", "cart", "uid-1", "cart");
    private static final PodOwners OWNERS = new PodOwners(null,
            new PodOwners.Id(2000, "spec.securityContext.fsGroup"));

    @TempDir
    Path tmp;

    private VolumeStore store;
    private PublishedVolume volume;

    @BeforeEach
    void setUp() throws Exception {
        store = new VolumeStore(tmp.resolve("volumes"));
        store.create();
        volume = PublishedVolume.of("csi-1", tmp.resolve("pods/uid-1/volumes/kubernetes.io~csi/agent/mount"),
                PodInfo.attributes(POD, "projections", "- {path: vault/token, audience: vault, expirationSeconds: 600,"
                        + " mode: 0640}\n"), OWNERS, null, Set.of());
    }

    @Test
    void aVolume_readsBackAsPublished_itsFilesFromItsAttributesAndTheResolvedOwners() throws IOException {
        store.save(volume);

        assertThat(store.loadAll()).containsExactly(volume);
        assertThat(volume.files()).containsExactly(new Projection(new TokenKey("shop", "cart", List.of("vault"), 600,
                BoundObjectRef.pod("cart", "uid-1")), "vault/token", 0640, null, 2000));
    }

    @Test
    void aVolumesDirectory_carriesTheVolumeAndItsPod_forWhoeverReportsOnIt() {
        // the record of which files have a reader and the pod's Events find them here, never in the directory's name
        assertThat(volume.directory().owner()).isEqualTo(new TokenDirectory.Owner("csi-1", POD));
        assertThat(volume.directory().pod()).isEqualTo(POD);
    }

    @Test
    void theRecord_keepsTheAttributesVerbatim_soEveryPerFileFieldSurvivesARestart_withoutTheStoreNamingIt()
            throws Exception {
        // uid and gid of each file are fields of the projections list the store never names
        PublishedVolume owned = PublishedVolume.of("csi-1", volume.targetPath(), PodInfo.attributes(POD,
                "projections", "- {path: a, audience: vault, uid: 1001, gid: 3000, }\n"
                        + "- {path: b, expirationSeconds: 7200}\n",
                "reloadSignal", "SIGHUP"), OWNERS, "app", Set.of());

        store.save(owned);

        assertThat(store.loadAll()).singleElement().satisfies(v -> {
            assertThat(v).isEqualTo(owned);
            assertThat(v.files()).extracting(Projection::path, Projection::uid, Projection::gid)
                    .containsExactly(tuple("a", 1001, 3000), tuple("b", null, 2000));
            assertThat(v.reload().container()).isEqualTo("app");
        });
    }

    /** A value other than the default for every field a file has; a field added to a file must be added here. */
    private static final Map<String, String> EVERY_FIELD = Map.of(
            TokenFileFields.PATH, "vault/token",
            TokenFileFields.AUDIENCE, "vault",
            TokenFileFields.EXPIRATION_SECONDS, "7200",
            TokenFileFields.MODE, "0400",
            TokenFileFields.UID, "1001",
            TokenFileFields.GID, "3000");

    @Test
    void everyFieldOfAFile_survivesARestart() throws Exception {
        assertThat(EVERY_FIELD.keySet()).as("a sample value for every field of TokenFileFields.KEYS")
                .containsExactlyInAnyOrderElementsOf(TokenFileFields.KEYS);
        String entry = TokenFileFields.KEYS.stream().map(k -> k + ": " + EVERY_FIELD.get(k))
                .collect(Collectors.joining(", ", "- {", "}\n"));
        PublishedVolume published = PublishedVolume.of("csi-1", volume.targetPath(),
                PodInfo.attributes(POD, "projections", entry), OWNERS, null, Set.of());
        Projection defaults = PublishedVolume.of("csi-1", volume.targetPath(),
                PodInfo.attributes(POD, "projections", "- {path: vault/token}\n"), OWNERS, null, Set.of())
                .files().get(0);
        assertThat(published.files().get(0)).as("every sample differs from the default").isNotEqualTo(defaults);

        store.save(published);

        assertThat(store.loadAll()).singleElement().satisfies(v -> {
            assertThat(v).isEqualTo(published);
            assertThat(v.files()).containsExactlyElementsOf(published.files());
        });
    }

    @Test
    void markRead_recordsTheFileOnce_andTheRestOfTheRecordStays() throws IOException {
        store.save(volume);
        store.markRead("csi-1", "vault/token");
        store.markRead("csi-1", "vault/token");

        assertThat(store.loadAll()).containsExactly(volume.withRead("vault/token"));
    }

    @Test
    void markRead_ofAVolumeWithNoRecord_makesNone() throws IOException {
        store.markRead("csi-1", "vault/token"); // unpublished meanwhile

        assertThat(store.loadAll()).isEmpty();
    }

    @Test
    void recordWithoutReadFiles_loadsWithNoneRead() throws IOException {
        store.save(volume);
        Path file = tmp.resolve("volumes/csi-1.json");
        Files.writeString(file, Files.readString(file).replace(",\"readFiles\":[]", ""));
        assertThat(Files.readString(file)).doesNotContain("readFiles");

        assertThat(store.loadAll()).singleElement().satisfies(v -> assertThat(v.readFiles()).isEmpty());
    }

    @Test
    void aRecordOfTheEarlierFieldByFieldFormat_isLeftAlone_andTheOthersLoad() throws IOException {
        store.save(volume);
        Files.writeString(tmp.resolve("volumes/csi-0.json"), "{\"volumeId\":\"csi-0\",\"targetPath\":\"/x\","
                + "\"namespace\":\"shop\",\"podName\":\"cart\",\"podUid\":\"uid-0\",\"serviceAccount\":\"cart\","
                + "\"files\":[{\"path\":\"token\",\"expirationSeconds\":600,\"mode\":420}]}");

        assertThat(store.loadAll()).containsExactly(volume);
    }

    @Test
    void theRecord_neverHoldsTheKubeletsTokens() throws Exception {
        Map<String, String> attributes = new HashMap<>(volume.attributes());
        attributes.put("csi.storage.k8s.io/serviceAccount.tokens", "{\"vault\":{\"token\":\"secret-jwt\"}}");
        PublishedVolume fromKubelet = PublishedVolume.of("csi-1", volume.targetPath(),
                KubeletTokens.withoutTokens(attributes), OWNERS, null, Set.of());

        store.save(fromKubelet);

        assertThat(Files.readString(tmp.resolve("volumes/csi-1.json"))).doesNotContain("secret-jwt")
                .doesNotContain("serviceAccount.tokens");
    }
}
