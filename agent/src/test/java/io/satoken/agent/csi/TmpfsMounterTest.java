package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Which mounts are the agent's: read from /proc/self/mountinfo lines; and the root's mode of a real mount. */
class TmpfsMounterTest {

    private static final String OURS = "/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/tokens/mount";

    @Test
    void mountPoints_areOurTmpfsMountsOnly() {
        List<String> mountinfo = List.of(
                "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro",
                "100 22 0:50 / " + OURS + " rw,nosuid,nodev,noexec,relatime shared:60 - tmpfs tokens.satoken.io"
                        + " rw,size=1024k,mode=755",
                // kubelet's own projected volume: a tmpfs, but not ours
                "101 22 0:51 / /var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~projected/kube-api-access-x"
                        + " rw,relatime shared:61 - tmpfs tmpfs rw,size=65536k",
                // our source name, but not a tmpfs
                "102 22 0:52 / /srv/fake rw,relatime - ext4 tokens.satoken.io rw",
                // no optional fields; several optional fields
                "103 22 0:53 / /run/a rw - tmpfs tokens.satoken.io rw",
                "104 22 0:54 / /run/b rw shared:7 master:3 propagate_from:2 - tmpfs tokens.satoken.io rw");

        assertThat(TmpfsMounter.mountPoints(mountinfo)).containsExactly(OURS, "/run/a", "/run/b");
    }

    // finding 5: the root was 0755 from the mount on; it is the agent's alone until the first write opens it
    @Test
    void mountTmpfs_rootIsTheAgentsAlone(@TempDir Path dir) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mount needs root");
        TmpfsMounter mounter = new TmpfsMounter();
        mounter.mountTmpfs(dir);
        try {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir))).isEqualTo("rwx------");
        } finally {
            mounter.unmount(dir);
        }
        assertThat(TmpfsMounter.OPTIONS).contains("mode=0700").doesNotContain("0755");
    }

    @Test
    void mountPoints_decodeOctalEscapes() {
        // mountinfo writes space, tab, newline and backslash as \ooo
        List<String> mountinfo = List.of(
                "100 22 0:50 / /run/with\\040space rw - tmpfs tokens.satoken.io rw",
                "101 22 0:51 / /run/a\\011tab\\012newline\\134backslash rw - tmpfs tokens.satoken.io rw");

        assertThat(TmpfsMounter.mountPoints(mountinfo))
                .containsExactly("/run/with space", "/run/a\ttab\nnewline\\backslash");
    }

    @Test
    void mountPoints_skipMalformedLines() {
        List<String> mountinfo = List.of("", "not a mountinfo line", "1 2 3 4 5 6 - tmpfs",
                "1 2 - tmpfs tokens.satoken.io", "100 22 0:50 / /run/ok rw - tmpfs tokens.satoken.io rw");

        assertThat(TmpfsMounter.mountPoints(mountinfo)).containsExactly("/run/ok");
    }

    record Escape(String field, String decoded) {
        @Override
        public String toString() {
            return field;
        }
    }

    static Stream<Escape> escapes() {
        return Stream.of(
                new Escape("/plain/path", "/plain/path"),
                new Escape("\\040", " "),
                new Escape("/a\\040b\\040c", "/a b c"),
                new Escape("/end\\134", "/end\\"),
                // not three octal digits: left as written
                new Escape("/a\\04", "/a\\04"),
                new Escape("/a\\089", "/a\\089"),
                new Escape("/a\\", "/a\\"),
                new Escape("/a\\x41", "/a\\x41"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("escapes")
    void unescape_decodesOnlyThreeOctalDigits(Escape c) {
        assertThat(TmpfsMounter.unescape(c.field())).isEqualTo(c.decoded());
    }

    @Test
    void isMounted_aPlainDirectory_isNot(@TempDir Path dir) throws IOException {
        assertThat(new TmpfsMounter().isMounted(dir)).isFalse();
    }

    @Test
    void unmount_nothingMounted_doesNothing(@TempDir Path dir) throws IOException {
        new TmpfsMounter().unmount(dir);

        assertThat(dir).isDirectory();
    }
}
