package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoriesTest {

    @TempDir
    Path tmp;

    @Test
    void create_givesEveryMissingLevelTheReadersAccess_andLeavesExistingOnesAlone() throws Exception {
        Path existing = Files.createDirectory(tmp.resolve("existing"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        DirectoryAccess group = new DirectoryAccess(gidOf(tmp), 0750);
        Path dir = Directories.create(existing.resolve("static/exporter"), group);

        // finding 5: not 0755, whatever the umask
        assertThat(mode(dir)).isEqualTo("rwxr-x---");
        assertThat(mode(dir.getParent())).isEqualTo("rwxr-x---");
        assertThat(Files.getAttribute(dir, "unix:gid")).isEqualTo(gidOf(tmp));
        assertThat(mode(existing)).isEqualTo("rwx------");
        assertThat(Directories.create(dir, DirectoryAccess.WRITER_ONLY)).isEqualTo(dir); // already there: fine
        assertThat(mode(dir)).isEqualTo("rwxr-x---");
    }

    @Test
    void create_forAnotherGroup_givesItTheMissingLevels() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "chgrp to any group needs root (CAP_CHOWN)");

        Path dir = Directories.create(tmp.resolve("a/b"), new DirectoryAccess(2000, 0750));

        assertThat(Files.getAttribute(dir, "unix:gid")).isEqualTo(2000);
        assertThat(Files.getAttribute(dir.getParent(), "unix:gid")).isEqualTo(2000);
        assertThat(mode(dir.getParent())).isEqualTo("rwxr-x---");
    }

    private static int gidOf(Path p) throws Exception {
        return (Integer) Files.getAttribute(p, "unix:gid");
    }

    @Test
    void create_failsWhenAFileIsInTheWay() throws Exception {
        Files.writeString(tmp.resolve("file"), "x");
        assertThatThrownBy(() -> Directories.create(tmp.resolve("file/sub"), DirectoryAccess.WRITER_ONLY))
                .isInstanceOf(java.io.IOException.class);
        assertThatThrownBy(() -> Directories.create(tmp.resolve("file"), DirectoryAccess.WRITER_ONLY))
                .isInstanceOf(FileAlreadyExistsException.class);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
