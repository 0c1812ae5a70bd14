package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenKey;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Volume records: which files of a volume have a reader, kept for the next start. */
class VolumeStoreTest {

    private static final PodIdentity POD = new PodIdentity("shop", "cart", "uid-1", "cart");

    @TempDir
    Path tmp;

    private VolumeStore store;
    private PublishedVolume volume;

    @BeforeEach
    void setUp() throws IOException {
        store = new VolumeStore(tmp.resolve("volumes"));
        store.create();
        volume = new PublishedVolume("csi-1", tmp.resolve("pods/uid-1/volumes/kubernetes.io~csi/agent/mount"), POD,
                List.of(new Projection(new TokenKey("shop", "cart", List.of("vault"), 600,
                        BoundObjectRef.pod("cart", "uid-1")), "vault/token", 0640, null, 2000)));
    }

    @Test
    void markRead_recordsTheFileOnce_andTheRestOfTheRecordStays() throws IOException {
        store.save(volume);
        store.markRead("csi-1", "vault/token");
        store.markRead("csi-1", "vault/token");

        assertThat(store.loadAll()).containsExactly(new PublishedVolume(volume.volumeId(), volume.targetPath(), POD,
                volume.files(), Set.of("vault/token")));
    }

    @Test
    void markRead_ofAVolumeWithNoRecord_makesNone() throws IOException {
        store.markRead("csi-1", "vault/token"); // unpublished meanwhile

        assertThat(store.loadAll()).isEmpty();
    }

    @Test
    void recordFromBeforeReadFiles_loadsWithNoneRead() throws IOException {
        store.save(volume);
        Path file = tmp.resolve("volumes/csi-1.json");
        Files.writeString(file, Files.readString(file).replace(",\"readFiles\":[]", ""));
        assertThat(Files.readString(file)).doesNotContain("readFiles");

        assertThat(store.loadAll()).singleElement().satisfies(v -> assertThat(v.readFiles()).isEmpty());
    }
}
