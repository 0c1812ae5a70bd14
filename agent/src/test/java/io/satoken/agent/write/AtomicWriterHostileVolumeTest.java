package io.satoken.agent.write;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pod that can write to its own token volume (one published read-write, or a static projection's directory
 * another user can write) plants links and swaps entries between the writer's steps. The writer, root on the node,
 * must never walk, delete, chmod, chown or read anything outside the volume through them. Each test is an attack
 * of the security review, on the real kernel, against a victim directory beside the volume.
 */
class AtomicWriterHostileVolumeTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2024-05-01T12:00:00Z"), ZoneOffset.UTC);

    @TempDir
    Path tmp;

    private Path volume;
    private Path victim;

    @BeforeEach
    void setUp() throws IOException {
        volume = Files.createDirectories(tmp.resolve("volume"));
        victim = Files.createDirectories(tmp.resolve("victim"));
        Files.writeString(victim.resolve("token"), "another pod's token", US_ASCII);
        Files.writeString(victim.resolve("notes"), "someone else's file", US_ASCII);
        Files.setPosixFilePermissions(victim.resolve("token"), PosixFilePermissions.fromString("rw-------"));
    }

    @Test
    void plantedVersionLink_namedLikeAVersion_isNeverWalkedOrEmptied_byARestartedWriter() throws IOException {
        new AtomicWriter(volume, CLOCK).write(payload("token", "one"));
        // the pod points ..data at a link named as the writer names its versions
        Path planted = volume.resolve("..2000_01_01_00_00_00.1");
        Files.createSymbolicLink(planted, victim);
        replaceLink(volume.resolve("..data"), planted.getFileName());

        assertThat(new AtomicWriter(volume, CLOCK).write(payload("token", "two"))).isTrue();

        assertVictimIntact();
        assertThat(planted).doesNotExist(); // the link is removed as a stray version, its target untouched
        assertThat(Files.readString(volume.resolve("token"), US_ASCII)).isEqualTo("two");
    }

    @Test
    void plantedVersionLink_isNeverFollowed_byTheWriterThatPublishedTheVersion() throws IOException {
        AtomicWriter writer = new AtomicWriter(volume, CLOCK);
        writer.write(payload("token", "one", "notes", "n"));
        Path planted = volume.resolve("..2000_01_01_00_00_00.1");
        Files.createSymbolicLink(planted, victim);
        replaceLink(volume.resolve("..data"), planted.getFileName());

        assertThat(writer.write(payload("token", "two"))).isTrue();

        assertVictimIntact();
    }

    @Test
    void swappedIntermediateDir_inThePublishedVersion_isNotFollowed_whenComparingOrDeleting() throws IOException {
        AtomicWriter writer = new AtomicWriter(volume, CLOCK);
        writer.write(payload("sub/token", "one", "sub/notes", "n"));
        Path version = volume.resolve("..data").toRealPath();
        // the pod moves the version's subdirectory away and puts a link to the victim in its place
        Files.move(version.resolve("sub"), volume.resolve("moved"));
        Files.createSymbolicLink(version.resolve("sub"), victim);

        assertThat(writer.write(payload("sub/token", "two"))).isTrue(); // the writer knows its paths: no listing
        assertVictimIntact();
        assertThat(new AtomicWriter(volume, CLOCK).write(payload("sub/token", "three"))).isTrue(); // a walk
        assertVictimIntact();
        assertThat(Files.readString(volume.resolve("sub/token"), US_ASCII)).isEqualTo("three");
    }

    @Test
    void swappedFile_inThePublishedVersion_isAChange_neverReadThroughTheLink() throws IOException {
        AtomicWriter writer = new AtomicWriter(volume, CLOCK);
        writer.write(payload("token", "another pod's token"));
        Path version = volume.resolve("..data").toRealPath();
        Files.delete(version.resolve("token"));
        Files.createSymbolicLink(version.resolve("token"), victim.resolve("token"));

        // the same content behind the link: still a change, so the pod's link is replaced by the writer's file
        assertThat(new AtomicWriter(volume, CLOCK).write(payload("token", "another pod's token"))).isTrue();

        assertThat(Files.isSymbolicLink(volume.resolve("..data").toRealPath().resolve("token"))).isFalse();
        assertVictimIntact();
    }

    @Test
    void swappedNewFile_betweenCreateAndChmod_neverChangesTheLinksTarget() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "the writer chowns as root");
        Path target = victim.resolve("token");
        Instant before = Files.getLastModifiedTime(target).toInstant();
        AtomicWriter writer = new AtomicWriter(volume, CLOCK);
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger swaps = new AtomicInteger();
        // The pod races the writer: in every new version it replaces the just-created token with a link to the
        // victim, hoping the writer's chmod and chown land on the victim.
        Thread pod = new Thread(() -> {
            while (!done.get()) {
                try (Stream<Path> entries = Files.list(volume)) {
                    for (Path dir : (Iterable<Path>) entries::iterator) {
                        String name = dir.getFileName().toString();
                        if (!name.startsWith("..2") || Files.isSymbolicLink(dir)) {
                            continue;
                        }
                        Path token = dir.resolve("token");
                        try {
                            Files.delete(token);
                            Files.createSymbolicLink(token, target);
                            swaps.incrementAndGet();
                        } catch (IOException raced) {
                            // not created yet, or already removed: try the next one
                        }
                    }
                } catch (IOException | RuntimeException raced) {
                    // the listing raced a rename: list again
                }
            }
        });
        pod.start();
        try {
            for (int i = 0; i < 3000; i++) {
                try {
                    writer.write(Map.of("token", new FileContent(("v" + i).getBytes(US_ASCII), 0644, 65534, 65534)));
                } catch (IOException refused) {
                    // the writer found a link where it made a file: that version fails, which is the point
                }
            }
        } finally {
            done.set(true);
            pod.join();
        }

        assertThat(swaps.get()).as("the pod won some races").isPositive();
        assertThat(Files.getAttribute(target, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0);
        assertThat(Files.getAttribute(target, "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0100600);
        assertThat(Files.getLastModifiedTime(target).toInstant()).isEqualTo(before);
        assertVictimIntact();
    }

    @Test
    void dataLinkToARealDirectoryOfThePods_isReplaced_itsContentLeftAsTheVolumesOwn() throws IOException {
        new AtomicWriter(volume, CLOCK).write(payload("token", "one"));
        Path podDir = Files.createDirectories(volume.resolve("..2000_01_01_00_00_00.2"));
        Files.createSymbolicLink(podDir.resolve("escape"), victim);
        replaceLink(volume.resolve("..data"), podDir.getFileName());

        new AtomicWriter(volume, CLOCK).write(payload("token", "two"));

        assertVictimIntact(); // the pod's dir was deleted level by level: its link went, never what it names
        assertThat(podDir).doesNotExist();
    }

    @Test
    void publishedFileReader_followsOnlyDataLink_notALinkPlantedInTheVersion() throws IOException {
        new AtomicWriter(volume, CLOCK).write(payload("token", "mine"));
        assertThat(PublishedFile.read(volume, "token", 1024)).hasValueSatisfying(
                b -> assertThat(new String(b, US_ASCII)).isEqualTo("mine"));
        Path version = volume.resolve("..data").toRealPath();
        Files.delete(version.resolve("token"));
        Files.createSymbolicLink(version.resolve("token"), victim.resolve("token"));

        assertThat(PublishedFile.read(volume, "token", 1024)).isEmpty();
        assertThatThrownBy(() -> PublishedFile.read(volume, "../victim/token", 1024))
                .hasMessageContaining("..");
    }

    private void assertVictimIntact() throws IOException {
        assertThat(Files.readString(victim.resolve("token"), US_ASCII)).isEqualTo("another pod's token");
        assertThat(Files.readString(victim.resolve("notes"), US_ASCII)).isEqualTo("someone else's file");
        try (Stream<Path> list = Files.list(victim)) {
            assertThat(list.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("token", "notes");
        }
    }

    /** Points {@code link} at {@code target} in one rename, as the pod would. */
    private static void replaceLink(Path link, Path target) throws IOException {
        Path tmp = link.resolveSibling("pod-tmp");
        Files.createSymbolicLink(tmp, target);
        Files.move(tmp, link, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static Map<String, FileContent> payload(String... pathsAndContents) {
        Map<String, FileContent> payload = new java.util.TreeMap<>();
        for (int i = 0; i < pathsAndContents.length; i += 2) {
            payload.put(pathsAndContents[i], FileContent.of(pathsAndContents[i + 1].getBytes(US_ASCII), 0600));
        }
        return payload;
    }
}
