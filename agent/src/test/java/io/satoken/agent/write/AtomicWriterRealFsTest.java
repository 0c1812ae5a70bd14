package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What only a real kernel can show: rename(2) atomicity, crash leftovers, chown. */
class AtomicWriterRealFsTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2024-05-01T12:00:00Z"), ZoneOffset.UTC);
    private static final byte[] ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".getBytes();
    private static final int SIZE = 4096;
    private static final int ROTATIONS = 10_000;

    @TempDir
    Path target;

    @Test
    void rotation_readerNeverSeesEmptyPartialOrMixedContent() throws Exception {
        AtomicWriter writer = new AtomicWriter(target, CLOCK);
        writer.write(Map.of("token", FileContent.of(version(0), 0644)));
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger reads = new AtomicInteger();
        AtomicInteger vanished = new AtomicInteger();
        AtomicInteger distinct = new AtomicInteger();
        AtomicReference<String> bad = new AtomicReference<>();
        Path token = target.resolve("token");

        Thread reader = new Thread(() -> {
            byte last = 0;
            while (!done.get() && bad.get() == null) {
                byte[] seen;
                try {
                    seen = Files.readAllBytes(token);
                } catch (NoSuchFileException e) {
                    // The path walk can resolve ..data to the old dir just before step 12 deletes it;
                    // upstream readers see the same, and it is an absence, never a wrong value.
                    vanished.incrementAndGet();
                    continue;
                } catch (IOException e) {
                    bad.set(e.toString());
                    return;
                }
                if (seen.length != SIZE) {
                    bad.set("read " + seen.length + " bytes, expected " + SIZE);
                } else if (!allSame(seen)) {
                    bad.set("mixed content starting with '" + (char) seen[0] + "'");
                }
                if (seen.length > 0 && seen[0] != last) {
                    distinct.incrementAndGet();
                    last = seen[0];
                }
                reads.incrementAndGet();
            }
        }, "token-reader");
        reader.start();
        try {
            for (int i = 1; i <= ROTATIONS && bad.get() == null; i++) {
                writer.write(Map.of("token", FileContent.of(version(i), 0644)));
            }
        } finally {
            done.set(true);
            reader.join();
        }

        // AW-12: readers go through ..data, swapped by one rename(2)
        assertThat(bad.get()).isNull();
        assertThat(reads.get()).as("reads (%d vanished)", vanished.get()).isGreaterThan(1_000);
        assertThat(distinct.get()).as("versions seen by the reader").isGreaterThan(1);
        assertThat(Files.readAllBytes(token)).isEqualTo(version(ROTATIONS));
    }

    @Test
    void crashLeftovers_areCleanedByTheNextWrite() throws IOException {
        new AtomicWriter(target, CLOCK).write(Map.of("token", FileContent.of(version(1), 0600)));
        crashLeavingStrayDirAndDataTmp();
        Files.writeString(target.resolve("jwks.json"), "{}");
        AtomicWriter restarted = new AtomicWriter(target, CLOCK);

        assertThat(restarted.write(Map.of("token", FileContent.of(version(2), 0600)))).isTrue();

        // Our difference to step 8 (upstream fails on a stale ..data_tmp) and step 12 (strays stay)
        assertThat(names()).containsExactlyInAnyOrder(
                Files.readSymbolicLink(target.resolve("..data")).toString(), "..data", "token", "jwks.json");
        assertThat(Files.readAllBytes(target.resolve("token"))).isEqualTo(version(2));
    }

    @Test
    void crashLeftovers_areCleanedByAnUnchangedWrite() throws IOException {
        new AtomicWriter(target, CLOCK).write(Map.of("token", FileContent.of(version(1), 0600)));
        String published = Files.readSymbolicLink(target.resolve("..data")).toString();
        crashLeavingStrayDirAndDataTmp();
        AtomicWriter restarted = new AtomicWriter(target, CLOCK);

        assertThat(restarted.write(Map.of("token", FileContent.of(version(1), 0600)))).isFalse();

        assertThat(names()).containsExactlyInAnyOrder(published, "..data", "token");
    }

    @Test
    void crashLeftovers_staleDataTmp_doesNotBlockALaterWrite() throws IOException {
        AtomicWriter writer = new AtomicWriter(target, CLOCK);
        writer.write(Map.of("token", FileContent.of(version(1), 0600)));
        Files.createSymbolicLink(target.resolve("..data_tmp"), Path.of("..2020_01_01_00_00_00.123"));

        // the same writer, past its first write: step 8 replaces the stale link (upstream fails here)
        assertThat(writer.write(Map.of("token", FileContent.of(version(2), 0600)))).isTrue();

        assertThat(Files.readAllBytes(target.resolve("token"))).isEqualTo(version(2));
        assertThat(target.resolve("..data_tmp")).doesNotExist();
    }

    @Test
    void remove_deletesOnlyWhatTheLayoutPutThere_andTheDirOnceEmpty() throws IOException {
        Path dir = Files.createDirectories(target.resolve("static"));
        AtomicWriter writer = new AtomicWriter(dir, CLOCK);
        writer.write(Map.of("token", FileContent.of(version(1), 0600), "sub/other", FileContent.of(version(2), 0600)));
        Files.writeString(dir.resolve("operator-notes"), "keep me");

        new AtomicWriter(dir, CLOCK).remove(); // a fresh writer, as after a restart

        assertThat(Files.list(dir).map(p -> p.getFileName().toString())).containsExactly("operator-notes");
        Files.delete(dir.resolve("operator-notes"));
        writer.write(Map.of("token", FileContent.of(version(3), 0600)));
        writer.remove();
        assertThat(dir).doesNotExist();
        writer.remove(); // already gone: nothing to do
    }

    @Test
    void owner_isAppliedWhenSet() throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "chown needs root");
        AtomicWriter writer = new AtomicWriter(target, CLOCK);

        writer.write(Map.of("token", new FileContent(version(1), 0640, 65534, 65534)));

        // AW-6 (upstream sets the uid only; we set the gid too when asked)
        Path token = target.resolve("token");
        assertThat(Files.getAttribute(token, "unix:uid")).isEqualTo(65534);
        assertThat(Files.getAttribute(token, "unix:gid")).isEqualTo(65534);
        assertThat(writer.write(Map.of("token", new FileContent(version(1), 0640, 65534, 65534)))).isFalse();
        // an owner change alone is a change (our difference to AW-10)
        assertThat(writer.write(Map.of("token", new FileContent(version(1), 0640, 0, 65534)))).isTrue();
        assertThat(Files.getAttribute(token, "unix:uid")).isEqualTo(0);
    }

    // finding 5: the dirs were 0755; now the token's readers pass, as a pod's non-root container must, and
    // no one else lists or reads
    @Test
    void podWithFsGroup_dirsAre0751InTheGroup_aNonRootMemberReadsTheToken_othersCannotListOrRead() throws Exception {
        assumeTrue(canSwitchUsers(), "reading as other users needs root and setpriv");
        AtomicWriter writer = new AtomicWriter(target, CLOCK);

        // PV-16, PV-17: runAsUser 1000, fsGroup 2000
        writer.write(Map.of("vault/token", new FileContent(version(1), 0640, 1000, 2000)));

        Path dataDir = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        for (Path dir : List.of(target, dataDir, dataDir.resolve("vault"))) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).as("%s", dir)
                    .isEqualTo("rwxr-x--x");
            assertThat(Files.getAttribute(dir, "unix:gid")).as("%s", dir).isEqualTo(2000);
        }
        // the container: uid 1000, primary group 3000, fsGroup 2000 as a supplementary group
        assertThat(runAs("--reuid=1000", "--regid=3000", "--groups=2000", "cat", target + "/vault/token"))
                .isEqualTo("0:" + new String(version(1)));
        assertThat(runAs("--reuid=1001", "--regid=1001", "--clear-groups", "ls", target.toString()))
                .startsWith("2:");
        assertThat(runAs("--reuid=1001", "--regid=1001", "--clear-groups", "cat", target + "/vault/token"))
                .startsWith("1:");
    }

    @Test
    void podWithoutFsUserOrFsGroup_anyUserReadsItsKnownPath_inGroup0OrNot_butNoOneLists() throws Exception {
        assumeTrue(canSwitchUsers(), "reading as other users needs root and setpriv");
        AtomicWriter writer = new AtomicWriter(target, CLOCK);

        writer.write(Map.of("token", FileContent.of(version(2), 0644))); // PV-1: 0644, owned by the agent

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rwx--x--x");
        assertThat(runAs("--reuid=1234", "--regid=1234", "--clear-groups", "cat", target + "/token"))
                .isEqualTo("0:" + new String(version(2)));
        // runAsUser without runAsGroup: primary group 0, so the group's bits apply, never the others' (was 0701)
        assertThat(runAs("--reuid=1234", "--regid=0", "--clear-groups", "cat", target + "/token"))
                .isEqualTo("0:" + new String(version(2)));
        assertThat(runAs("--reuid=1234", "--regid=1234", "--clear-groups", "ls", target.toString())).startsWith("2:");
        assertThat(runAs("--reuid=1234", "--regid=0", "--clear-groups", "ls", target.toString())).startsWith("2:");
    }

    @Test
    void podWithFsUserOnly_theUserInGroup0ReadsItsToken_noOtherUserDoes() throws Exception {
        assumeTrue(canSwitchUsers(), "reading as other users needs root and setpriv");
        AtomicWriter writer = new AtomicWriter(target, CLOCK);

        // PV-16, PV-18: every container runs as 1000, no fsGroup: 0600 owned by 1000, group left as root's
        writer.write(Map.of("vault/token", new FileContent(version(3), 0600, 1000, null)));

        Path dataDir = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        for (Path dir : List.of(target, dataDir, dataDir.resolve("vault"))) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).as("%s", dir)
                    .isEqualTo("rwx--x--x");
        }
        assertThat(runAs("--reuid=1000", "--regid=0", "--clear-groups", "cat", target + "/vault/token"))
                .isEqualTo("0:" + new String(version(3)));
        assertThat(runAs("--reuid=1001", "--regid=0", "--clear-groups", "cat", target + "/vault/token"))
                .startsWith("1:");
    }

    @Test
    void unchangedPayload_inAnOlderAgents0755Dirs_isRewrittenWithTheReadersAccess() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "chgrp to any group needs root");
        Map<String, FileContent> payload = Map.of("token", new FileContent(version(1), 0640, 1000, 2000));
        new AtomicWriter(target, CLOCK).write(payload);
        Path old = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        Set<PosixFilePermission> wide = PosixFilePermissions.fromString("rwxr-xr-x");
        Files.setPosixFilePermissions(target, wide);
        Files.setPosixFilePermissions(old, wide);

        boolean written = new AtomicWriter(target, CLOCK).write(payload); // a restarted agent, same token

        assertThat(written).isTrue();
        Path now = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        assertThat(now).isNotEqualTo(old);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rwxr-x--x");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(now))).isEqualTo("rwxr-x--x");
        assertThat(new AtomicWriter(target, CLOCK).write(payload)).as("and then it is left alone").isFalse();
    }

    @Test
    void targetDirOfAnotherUser_keepsItsOwnModeAndGroup() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "chown needs root");
        Files.setAttribute(target, "unix:uid", 4242);
        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));

        new AtomicWriter(target, CLOCK).write(Map.of("token", new FileContent(version(1), 0640, 1000, 2000)));

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo("rwxr-xr-x");
        Path data = target.resolve(Files.readSymbolicLink(target.resolve("..data")));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data))).isEqualTo("rwxr-x--x");
    }

    private static boolean canSwitchUsers() {
        return "root".equals(System.getProperty("user.name")) && Files.isExecutable(Path.of("/usr/bin/setpriv"));
    }

    /** Runs a command as another user through setpriv: {@code "<exit status>:<stdout>"}. */
    private static String runAs(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("/usr/bin/setpriv"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes());
        return p.waitFor() + ":" + out;
    }

    /** What a process killed between steps 5 and 9 leaves behind. */
    private void crashLeavingStrayDirAndDataTmp() throws IOException {
        Path stray = Files.createDirectories(target.resolve("..2020_01_01_00_00_00.123/sub"));
        Files.writeString(stray.resolve("half-written"), "x");
        Files.createSymbolicLink(target.resolve("..data_tmp"), Path.of("..2020_01_01_00_00_00.123"));
    }

    private static byte[] version(int i) {
        byte[] data = new byte[SIZE];
        Arrays.fill(data, ALPHABET[i % ALPHABET.length]);
        return data;
    }

    private static boolean allSame(byte[] data) {
        for (byte b : data) {
            if (b != data[0]) {
                return false;
            }
        }
        return true;
    }

    private String[] names() throws IOException {
        try (Stream<Path> list = Files.list(target)) {
            return list.map(p -> p.getFileName().toString()).toArray(String[]::new);
        }
    }
}
