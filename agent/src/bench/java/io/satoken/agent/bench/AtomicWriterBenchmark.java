package io.satoken.agent.bench;

import static java.nio.file.StandardCopyOption.ATOMIC_MOVE;
import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.WRITE;

import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.Directories;
import io.satoken.agent.write.FileContent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The writer's cost on a real file system against the bare syscalls one rotation needs. Run with
 * {@code mvn -q -B -o -pl agent -Pbench test-compile exec:exec -Djmh.args="AtomicWriterBenchmark ..."};
 * the goal is writeChanged at no less than half of rawSyscalls.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AtomicWriterBenchmark {

    private static final int TOKEN_SIZE = 1024;

    /** A ~1 KB token whose first bytes change on every call. */
    static byte[] nextToken(byte[] token, long n) {
        ByteBuffer.wrap(token).putLong(0, n);
        return token;
    }

    @State(Scope.Thread)
    public static class WriterState {
        Path dir;
        AtomicWriter writer;
        byte[] token = new byte[TOKEN_SIZE];
        Map<String, FileContent> unchanged;
        long n;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "satoken-bench-writer");
            writer = new AtomicWriter(dir, Clock.systemUTC());
            Arrays.fill(token, (byte) 'x');
            unchanged = Map.of("token", FileContent.of(token, 0600));
            writer.write(unchanged);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            Directories.delete(dir);
        }
    }

    @State(Scope.Thread)
    public static class RawState {
        static final Set<PosixFilePermission> MODE = PosixFilePermissions.fromString("rw-------");
        Path dir;
        Path oldDir;
        Path dataLink;
        Path tmpLink;
        byte[] token = new byte[TOKEN_SIZE];
        long n;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = Files.createTempDirectory(Path.of(System.getProperty("java.io.tmpdir")), "satoken-bench-raw");
            dataLink = dir.resolve("..data");
            tmpLink = dir.resolve("..data_tmp");
            oldDir = Files.createDirectory(dir.resolve("..v0"));
            Files.write(oldDir.resolve("token"), token);
            Files.createSymbolicLink(dataLink, oldDir.getFileName());
            Files.createSymbolicLink(dir.resolve("token"), Path.of("..data", "token"));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            Directories.delete(dir);
        }
    }

    @Benchmark
    public boolean writeChanged(WriterState s) throws IOException {
        return s.writer.write(Map.of("token", FileContent.of(nextToken(s.token, ++s.n), 0600)));
    }

    @Benchmark
    public boolean writeUnchanged(WriterState s) throws IOException {
        return s.writer.write(s.unchanged);
    }

    /** One rotation as plainly as java.nio allows: what writeChanged is measured against. */
    @Benchmark
    public Path rawSyscalls(RawState s) throws IOException {
        Path newDir = Files.createDirectory(s.dir.resolve("..v" + ++s.n));
        Path file = newDir.resolve("token");
        Files.write(file, nextToken(s.token, s.n), CREATE_NEW, WRITE);
        Files.setPosixFilePermissions(file, RawState.MODE);
        Files.createSymbolicLink(s.tmpLink, newDir.getFileName());
        Files.move(s.tmpLink, s.dataLink, ATOMIC_MOVE);
        Files.delete(s.oldDir.resolve("token"));
        Files.delete(s.oldDir);
        s.oldDir = newDir;
        return newDir;
    }
}
