package io.satoken.agent.write;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    void create_makesEveryMissingLevel0755_andLeavesExistingOnesAlone() throws Exception {
        Path existing = Files.createDirectory(tmp.resolve("existing"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path dir = Directories.create(existing.resolve("pods/uid-1"));

        assertThat(mode(dir)).isEqualTo("rwxr-xr-x");
        assertThat(mode(dir.getParent())).isEqualTo("rwxr-xr-x");
        assertThat(mode(existing)).isEqualTo("rwx------");
        assertThat(Directories.create(dir)).isEqualTo(dir); // already there: fine
    }

    @Test
    void create_failsWhenAFileIsInTheWay() throws Exception {
        Files.writeString(tmp.resolve("file"), "x");
        assertThatThrownBy(() -> Directories.create(tmp.resolve("file/sub")))
                .isInstanceOf(java.io.IOException.class);
        assertThatThrownBy(() -> Directories.create(tmp.resolve("file")))
                .isInstanceOf(FileAlreadyExistsException.class);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }
}
