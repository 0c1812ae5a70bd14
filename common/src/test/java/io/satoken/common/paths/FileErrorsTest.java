package io.satoken.common.paths;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reasons given for files that cannot be read, from real reads where this machine can make them. */
class FileErrorsTest {

    @Test
    void aMissingFile_isNotFound(@TempDir Path dir) {
        IOException e = catchThrowableOfType(IOException.class, () -> Files.readAllBytes(dir.resolve("absent")));

        assertThat(FileErrors.reason(e)).isEqualTo("not found");
        assertThat(FileErrors.describe(e)).isEqualTo(dir.resolve("absent") + ": not found");
    }

    @Test
    void aDirectory_isNotAFile(@TempDir Path dir) {
        IOException e = catchThrowableOfType(IOException.class, () -> Files.readAllBytes(dir));

        assertThat(FileErrors.reason(e)).isEqualTo("not a file (a directory)");
    }

    @Test
    void aPathThroughAFile_isNotFound(@TempDir Path dir) throws IOException {
        Path file = Files.writeString(dir.resolve("file"), "x");
        IOException e = catchThrowableOfType(IOException.class, () -> Files.readAllBytes(file.resolve("below")));

        assertThat(FileErrors.reason(e)).isEqualTo("not found (a part of the path is not a directory)");
    }

    @Test
    void aSymbolicLinkLoop_isSaid(@TempDir Path dir) throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("loop"), dir.resolve("loop"));
        IOException e = catchThrowableOfType(IOException.class, () -> Files.readAllBytes(link));

        assertThat(FileErrors.reason(e)).isEqualTo("a loop of symbolic links");
    }

    /** Root reads any file here, so the exception is the one the JDK throws for EACCES. */
    @Test
    void accessDenied_isPermissionDenied() {
        IOException e = new AccessDeniedException("/etc/satoken/key.pem");

        assertThat(FileErrors.describe(e)).isEqualTo("/etc/satoken/key.pem: permission denied");
    }

    @Test
    void noReasonAtAll_isStillAReason_withoutAClassName() {
        assertThat(FileErrors.reason(new IOException())).isEqualTo("cannot be read (input/output error)");
        assertThat(FileErrors.describe(new IOException((String) null))).doesNotContain("IOException");
    }
}
