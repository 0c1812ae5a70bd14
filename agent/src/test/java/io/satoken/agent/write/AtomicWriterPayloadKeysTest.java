package io.satoken.agent.write;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.jimfs.Configuration;
import com.google.common.jimfs.Jimfs;
import io.satoken.common.paths.PayloadPathException;
import java.io.IOException;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** AW-7: an {@link AtomicWriter} rejects a payload with an invalid or clashing key before touching the disk. */
class AtomicWriterPayloadKeysTest {

    @Test
    void write_invalidKey_writesNothing() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path target = Files.createDirectories(fs.getPath("/vol"));
            AtomicWriter writer = new AtomicWriter(target, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));
            Map<String, FileContent> payload = new LinkedHashMap<>();
            payload.put("token", FileContent.of("t".getBytes(UTF_8), 0600));
            payload.put("../escape", FileContent.of("x".getBytes(UTF_8), 0600));

            // AW-7: any invalid key fails the whole write before the disk is touched
            assertThatThrownBy(() -> writer.write(payload))
                    .isInstanceOf(PayloadPathException.class)
                    .hasMessage("invalid path \"../escape\": must not contain '..'");
            try (Stream<Path> list = Files.list(target)) {
                assertThat(list).isEmpty();
            }
        }
    }

    @Test
    void write_keysEqualAfterCleaning_areRejected() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path target = Files.createDirectories(fs.getPath("/vol"));
            AtomicWriter writer = new AtomicWriter(target, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));
            Map<String, FileContent> payload = new LinkedHashMap<>();
            payload.put("foo/bar", FileContent.of(new byte[] {1}, 0600));
            payload.put("foo//bar", FileContent.of(new byte[] {2}, 0600));

            // upstream keeps one of them, whichever Go's map order gives last
            assertThatThrownBy(() -> writer.write(payload))
                    .isInstanceOf(PayloadPathException.class)
                    .hasMessage("invalid path \"foo//bar\": names the same file as \"foo/bar\" after cleaning");
        }
    }

    @Test
    void write_fileInsideAnotherFile_isRejected() throws IOException {
        try (FileSystem fs = Jimfs.newFileSystem(Configuration.unix())) {
            Path target = Files.createDirectories(fs.getPath("/vol"));
            AtomicWriter writer = new AtomicWriter(target, Clock.fixed(Instant.EPOCH, ZoneOffset.UTC));

            // upstream fails later, half-way through writing the new dir
            assertThatThrownBy(() -> writer.write(Map.of(
                    "foo", FileContent.of(new byte[] {1}, 0600),
                    "foo/bar", FileContent.of(new byte[] {2}, 0600))))
                    .isInstanceOf(PayloadPathException.class)
                    .hasMessage("invalid path \"foo/bar\": lies inside \"foo\", which is a file of the same payload");
        }
    }
}
