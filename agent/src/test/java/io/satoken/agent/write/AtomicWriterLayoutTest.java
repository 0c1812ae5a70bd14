package io.satoken.agent.write;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The on-disk layout an {@link AtomicWriter} leaves behind, on an in-memory unix file system. */
class AtomicWriterLayoutTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2024-05-01T12:03:04Z"), ZoneOffset.UTC);
    private static final String TS_DIR = "\\.\\.2024_05_01_12_03_04\\.\\d+";

    private FileSystem fs;
    private Path target;
    private AtomicWriter writer;

    @BeforeEach
    void setUp() throws IOException {
        fs = Jimfs.newFileSystem(Configuration.unix().toBuilder()
                .setAttributeViews("basic", "owner", "posix", "unix")
                .setMaxSize(1024 * 1024)
                .build());
        target = Files.createDirectories(fs.getPath("/vol"));
        writer = new AtomicWriter(target, CLOCK);
    }

    @AfterEach
    void tearDown() throws IOException {
        fs.close();
    }

    @Test
    void firstWrite_createsTimestampedDirDataLinkAndTopLevelLinksOnly() throws IOException {
        boolean written = writer.write(payload("token", "t", "user/labels", "l", "k8s/annotations", "a"));

        assertThat(written).isTrue();
        Map<String, String> entries = entries(target);
        String tsDir = onlyTimestampedDir();
        assertThat(tsDir).matches(TS_DIR); // AW-1: UTC time from the clock + random digits
        assertThat(entries).containsOnly( // AW-4: one link per top-level name, none for nested files
                Map.entry(tsDir, "dir"),
                Map.entry("..data", "-> " + tsDir), // AW-2: a relative link to the base name
                Map.entry("token", "-> ..data/token"),
                Map.entry("user", "-> ..data/user"),
                Map.entry("k8s", "-> ..data/k8s"));
        assertThat(entries(target.resolve(tsDir))).containsOnly(
                Map.entry("token", "file"), Map.entry("user", "dir"), Map.entry("k8s", "dir"));
        assertThat(read("token")).isEqualTo("t");
        assertThat(read("user/labels")).isEqualTo("l");
        assertThat(read("k8s/annotations")).isEqualTo("a");
        assertThat(target.resolve("..data_tmp")).doesNotExist(); // AW-3: transient only
    }

    @Test
    void firstWrite_setsExactModesRegardlessOfUmask() throws IOException {
        writer.write(Map.of(
                "a", FileContent.of(bytes("a"), 0600),
                "b", FileContent.of(bytes("b"), 0640),
                "c", FileContent.of(bytes("c"), 0644),
                "sub/d", FileContent.of(bytes("d"), 0600)));

        assertThat(mode("a")).isEqualTo("rw-------"); // AW-6
        assertThat(mode("b")).isEqualTo("rw-r-----");
        assertThat(mode("c")).isEqualTo("rw-r--r--");
        assertThat(mode("sub/d")).isEqualTo("rw-------");
        // not AW-1's 0755: c is for anyone, so the group and others may pass through, but no one but the writer lists
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve(onlyTimestampedDir()))))
                .isEqualTo("rwx--x--x");
        assertThat(mode("sub")).isEqualTo("rwx--x--x"); // subdirectories are never world-writable
    }

    @Test
    void update_publishesNewDirAndRemovesOldOne() throws IOException {
        writer.write(payload("token", "v1", "user/labels", "l1"));
        String first = onlyTimestampedDir();

        boolean written = writer.write(payload("token", "v2", "user/labels", "l2"));

        assertThat(written).isTrue();
        String second = onlyTimestampedDir(); // AW-11 new dir; step 12 old one gone
        assertThat(second).isNotEqualTo(first);
        assertThat(link("..data")).isEqualTo(second);
        assertThat(link("token")).isEqualTo("..data/token");
        assertThat(link("user")).isEqualTo("..data/user");
        assertThat(read("token")).isEqualTo("v2");
        assertThat(read("user/labels")).isEqualTo("l2");
    }

    @Test
    void removedFile_losesItsTopLevelLink() throws IOException {
        writer.write(payload("token", "t", "ca.crt", "c", "user/labels", "l"));

        writer.write(payload("token", "t", "user/other", "o"));

        // AW-13: ca.crt dropped: link gone; user/labels dropped: gone with the old dir, user stays
        assertThat(entries(target).keySet()).containsExactlyInAnyOrder(onlyTimestampedDir(), "..data", "token", "user");
        assertThat(target.resolve("user/labels")).doesNotExist();
        assertThat(read("user/other")).isEqualTo("o");
    }

    @Test
    void emptyPayload_removesEveryLink() throws IOException {
        writer.write(payload("token", "t", "user/labels", "l"));

        boolean written = writer.write(Map.of());

        // AW-13: "delete all" publishes an empty dir and removes every old top-level link
        assertThat(written).isTrue();
        String tsDir = onlyTimestampedDir();
        assertThat(entries(target)).containsOnly(Map.entry(tsDir, "dir"), Map.entry("..data", "-> " + tsDir));
        assertThat(entries(target.resolve(tsDir))).isEmpty();
    }

    @Test
    void unchangedPayload_returnsFalseAndKeepsVersion() throws IOException {
        writer.write(payload("token", "t", "user/labels", "l"));
        String first = onlyTimestampedDir();

        boolean written = writer.write(payload("token", "t", "user/labels", "l"));

        assertThat(written).isFalse(); // AW-10
        assertThat(onlyTimestampedDir()).isEqualTo(first);
    }

    @Test
    void unchangedPayload_recreatesDeletedUserVisibleLink() throws IOException {
        writer.write(payload("token", "t", "user/labels", "l"));
        Files.delete(target.resolve("token"));

        boolean written = writer.write(payload("token", "t", "user/labels", "l"));

        // AW-10 step 10 still runs when nothing changed (#121472)
        assertThat(written).isFalse();
        assertThat(link("token")).isEqualTo("..data/token");
        assertThat(read("token")).isEqualTo("t");
    }

    @Test
    void modeOnlyChange_rewritesPromptly() throws IOException {
        writer.write(Map.of("token", FileContent.of(bytes("t"), 0644)));

        boolean written = writer.write(Map.of("token", FileContent.of(bytes("t"), 0600)));

        // Our difference to AW-10: upstream compares content only and would keep 0644
        assertThat(written).isTrue();
        assertThat(mode("token")).isEqualTo("rw-------");
    }

    @Test
    void fileToDirTransition_andBack_rewritesWithoutError() throws IOException {
        writer.write(payload("foo", "file"));

        // AW-14: upstream may fail here with ENOTDIR; a mismatch is a change
        assertThat(writer.write(payload("foo/bar", "nested"))).isTrue();
        assertThat(read("foo/bar")).isEqualTo("nested");
        assertThat(link("foo")).isEqualTo("..data/foo");

        assertThat(writer.write(payload("foo", "file again"))).isTrue(); // and EISDIR the other way
        assertThat(read("foo")).isEqualTo("file again");
        assertThat(Files.isRegularFile(target.resolve("foo"))).isTrue();
    }

    @Test
    void missingTargetDir_fails() {
        AtomicWriter missing = new AtomicWriter(fs.getPath("/nope"), CLOCK); // no I/O in the constructor

        // AW-16
        assertThatThrownBy(() -> missing.write(payload("token", "t")))
                .isInstanceOf(NoSuchFileException.class)
                .hasMessageContaining("/nope")
                .hasMessageContaining("target directory does not exist");
    }

    @Test
    void userFileBesideLinks_isLeftAlone() throws IOException {
        Files.writeString(target.resolve("jwks.json"), "{}");
        writer.write(payload("token", "t1"));

        writer.write(payload("token", "t2"));
        writer.write(Map.of());

        // AW-5: only ".." names belong to the writer
        assertThat(Files.readString(target.resolve("jwks.json"))).isEqualTo("{}");
    }

    @Test
    void droppedName_reusedByUserFile_isLeftAlone() throws IOException {
        writer.write(payload("token", "t", "ca.crt", "c"));
        Files.delete(target.resolve("ca.crt"));
        Files.writeString(target.resolve("ca.crt"), "mine");

        writer.write(payload("token", "t2"));

        // Step 11 removes a dropped name only while it is still our link (upstream removes any file)
        assertThat(Files.readString(target.resolve("ca.crt"))).isEqualTo("mine");
    }

    @Test
    void writeFailure_removesNewDirAndKeepsOldVersion() throws IOException {
        writer.write(payload("token", "old"));
        String first = onlyTimestampedDir();

        // more than the file system's 1 MiB: step 6 fails
        assertThatThrownBy(() -> writer.write(Map.of("token", FileContent.of(new byte[2 * 1024 * 1024], 0600))))
                .isInstanceOf(IOException.class);

        // Our difference to step 6: upstream leaves the half-written dir behind
        assertThat(onlyTimestampedDir()).isEqualTo(first);
        assertThat(link("..data")).isEqualTo(first);
        assertThat(read("token")).isEqualTo("old");
    }

    @Test
    void foreignDataLink_isReplacedButItsTargetKept() throws IOException {
        Path elsewhere = Files.createDirectories(target.resolve("keep-me"));
        Files.writeString(elsewhere.resolve("token"), "x");
        Files.createSymbolicLink(target.resolve("..data"), fs.getPath("keep-me"));

        assertThat(writer.write(payload("token", "t"))).isTrue();

        // a ..data that does not point at a timestamped dir is never walked or deleted
        assertThat(link("..data")).isEqualTo(onlyTimestampedDir());
        assertThat(elsewhere.resolve("token")).hasContent("x");
    }

    @Test
    void restartedWriter_unchangedPayload_returnsFalse() throws IOException {
        writer.write(payload("token", "t", "user/labels", "l"));
        String first = onlyTimestampedDir();
        restart(); // knows nothing of the published dir: walks it (AW-9, AW-10)

        assertThat(writer.write(payload("token", "t", "user/labels", "l"))).isFalse();
        assertThat(onlyTimestampedDir()).isEqualTo(first);
    }

    @Test
    void restartedWriter_droppedNestedFile_rewrites() throws IOException {
        writer.write(payload("token", "t", "user/labels", "l", "user/extra", "e"));
        restart();

        // AW-9: user/extra is a path to remove, so the version is rewritten even though nothing else changed
        assertThat(writer.write(payload("token", "t", "user/labels", "l"))).isTrue();
        assertThat(target.resolve("user/extra")).doesNotExist();
        assertThat(read("user/labels")).isEqualTo("l");
    }

    @Test
    void restartedWriter_fileToDirTransition_andBack_rewritesWithoutError() throws IOException {
        writer.write(payload("foo", "file"));
        restart();
        assertThat(writer.write(payload("foo/bar", "nested"))).isTrue(); // AW-14: ENOTDIR is a change
        restart();
        assertThat(writer.write(payload("foo", "file again"))).isTrue(); // AW-14: EISDIR is a change

        assertThat(read("foo")).isEqualTo("file again");
    }

    @Test
    void restartedWriter_modeOnlyChange_rewrites() throws IOException {
        writer.write(Map.of("token", FileContent.of(bytes("t"), 0644)));
        restart();

        // Our difference to AW-10, read from disk
        assertThat(writer.write(Map.of("token", FileContent.of(bytes("t"), 0600)))).isTrue();
        assertThat(mode("token")).isEqualTo("rw-------");
    }

    record OwnerCase(String name, FileContent file, boolean group, int id) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<OwnerCase> ownersThatCannotBeSet() {
        // A file's own owner and group are set through its descriptor by principal, which this file system takes
        // without a unix view; the node's refusal of such an id (EINVAL) is CsiVolumesTest's, through the writer.
        return Stream.of(
                new OwnerCase("the group, set on the dirs first (PV-17)", new FileContent(bytes("t"), 0640, 1000, 2000),
                        true, 2000));
    }

    /** A file system that cannot take an owner: the failure names the id, and nothing is published. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("ownersThatCannotBeSet")
    void ownerThatCannotBeSet_failsWithTheId_andPublishesNothing(OwnerCase c) throws IOException {
        try (FileSystem noOwners = Jimfs.newFileSystem(Configuration.unix().toBuilder()
                .setAttributeViews("basic", "owner", "posix").build())) {
            Path dir = Files.createDirectories(noOwners.getPath("/vol"));

            assertThatThrownBy(() -> new AtomicWriter(dir, CLOCK).write(Map.of("token", c.file())))
                    .isInstanceOfSatisfying(FileOwnerException.class, e -> {
                        assertThat(e.group()).isEqualTo(c.group());
                        assertThat(e.id()).isEqualTo(c.id());
                        assertThat(e.why()).isEqualTo("the file system has no unix attribute view");
                    })
                    .hasMessageEndingWith("cannot set " + (c.group() ? "group " : "owner ") + c.id()
                            + ": the file system has no unix attribute view");
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left).as("no version, no ..data").isEmpty();
            }
        }
    }

    private void restart() {
        writer = new AtomicWriter(target, CLOCK);
    }

    private static Map<String, FileContent> payload(String... pathsAndContents) {
        Map<String, FileContent> payload = new TreeMap<>();
        for (int i = 0; i < pathsAndContents.length; i += 2) {
            payload.put(pathsAndContents[i], FileContent.of(bytes(pathsAndContents[i + 1]), 0644));
        }
        return payload;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    private String read(String path) throws IOException {
        return Files.readString(target.resolve(path));
    }

    private String link(String name) throws IOException {
        return Files.readSymbolicLink(target.resolve(name)).toString();
    }

    private String mode(String path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(target.resolve("..data").resolve(path)));
    }

    private String onlyTimestampedDir() throws IOException {
        try (Stream<Path> list = Files.list(target)) {
            return list.map(p -> p.getFileName().toString())
                    .filter(n -> n.matches("\\.\\.\\d.*"))
                    .reduce((a, b) -> {
                        throw new AssertionError("more than one timestamped dir: " + a + ", " + b);
                    })
                    .orElseThrow(() -> new AssertionError("no timestamped dir"));
        }
    }

    /** name -> "dir", "file" or "-> link target", for the entries of one directory. */
    private static Map<String, String> entries(Path dir) throws IOException {
        Map<String, String> entries = new TreeMap<>();
        try (Stream<Path> list = Files.list(dir)) {
            for (Path p : (Iterable<Path>) list::iterator) {
                String kind = Files.isSymbolicLink(p) ? "-> " + Files.readSymbolicLink(p)
                        : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir" : "file";
                entries.put(p.getFileName().toString(), kind);
            }
        }
        return entries;
    }
}
