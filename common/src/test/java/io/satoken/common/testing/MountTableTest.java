package io.satoken.common.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.MountTable.Mount;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class MountTableTest {

    private static final List<String> MOUNTINFO = List.of(
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw",
            "40 22 0:45 / /tmp/k/pods/a rw,nosuid - tmpfs tokens.satoken.io rw,size=4k",
            "41 40 0:46 / /tmp/k/pods/a/vol\\040one rw shared:7 master:3 - tmpfs tokens.satoken.io rw",
            "42 22 0:47 / /tmp/kelsewhere rw - tmpfs other rw",
            "malformed line");

    @Test
    void under_pointsAtOrBelow_deepestFirst_unescaped() {
        List<Mount> mounts = MountTable.under(MOUNTINFO, Path.of("/tmp/k"));

        assertThat(mounts).containsExactly(
                new Mount(Path.of("/tmp/k/pods/a/vol one"), "tmpfs", "tokens.satoken.io"),
                new Mount(Path.of("/tmp/k/pods/a"), "tmpfs", "tokens.satoken.io"));
    }
}
