package io.satoken.agent.reads;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * Against the real kernel. An event that must come is waited for; that one must not come is shown by a marker:
 * after the action, a watched file is opened, and the next event must be the marker's.
 */
class InotifyTest {

    private static final long WAIT_SECONDS = 5;

    @TempDir
    Path root;

    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private String threadName;
    private Inotify inotify;
    private Path watched;
    private int wd;

    @BeforeEach
    void open(TestInfo test) throws IOException {
        assumeTrue(System.getProperty("os.name", "").startsWith("Linux"), "inotify is Linux's");
        threadName = "inotify-test-" + test.getDisplayName();
        inotify = Inotify.open(new Recorder(events), threadName);
        watched = Files.createDirectory(root.resolve("watched"));
        Files.writeString(watched.resolve("token"), "x");
        Files.writeString(watched.resolve("marker"), "x");
        wd = inotify.watchOpens(watched);
    }

    @AfterEach
    void close() {
        if (inotify != null) {
            inotify.close();
        }
    }

    @Test
    void opening_aFileInAWatchedDir_isReportedWithItsWdAndName() throws Exception {
        read(watched.resolve("token"));

        assertThat(next()).isEqualTo("opened " + wd + " token");
    }

    @Test
    void listing_theWatchedDirItself_isNotReported() throws Exception {
        try (Stream<Path> files = Files.list(watched)) {
            assertThat(files).hasSize(2);
        }

        assertNextIsTheMarker();
    }

    @Test
    void opening_aSubdirectoryOfAWatchedDir_isNotReported() throws Exception {
        Path sub = Files.createDirectory(watched.resolve("sub"));
        try (Stream<Path> files = Files.list(sub)) {
            assertThat(files).isEmpty();
        }

        assertNextIsTheMarker();
    }

    @Test
    void opening_aFileInAnUnwatchedDir_isNotReported() throws Exception {
        Path other = Files.createDirectory(root.resolve("other"));
        Files.writeString(other.resolve("token"), "x");

        read(other.resolve("token"));

        assertNextIsTheMarker();
    }

    @Test
    void watchOpens_theSameDirAgain_returnsTheSameWd() throws Exception {
        assertThat(inotify.watchOpens(watched)).isEqualTo(wd);
    }

    @Test
    void unwatch_reportsIgnored() throws Exception {
        inotify.unwatch(wd);

        assertThat(next()).isEqualTo("ignored " + wd);
        inotify.unwatch(wd); // already gone: not an error
    }

    @Test
    void deleting_theWatchedDir_reportsIgnored() throws Exception {
        Files.delete(watched.resolve("token"));
        Files.delete(watched.resolve("marker"));
        Files.delete(watched);

        assertThat(next()).isEqualTo("ignored " + wd);
    }

    @Test
    void watchOpens_aMissingDir_throwsNamingThePath() {
        Path missing = root.resolve("missing");

        assertThatThrownBy(() -> inotify.watchOpens(missing))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("No such file or directory");
    }

    @Test
    void watchOpens_aFile_throwsNamingThePath() {
        Path file = watched.resolve("token");

        assertThatThrownBy(() -> inotify.watchOpens(file))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("Not a directory");
    }

    @Test
    void listener_thatThrows_doesNotStopTheReader_andIsLoggedInWords() throws Exception {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.DEBUG, LogFormat.TEXT)) {
            listenerThatThrows();

            assertThat(logs.text()).contains("inotify listener failed (listener bug); the reader goes on")
                    .doesNotContain("IllegalStateException");
        }
    }

    private void listenerThatThrows() throws Exception {
        inotify.close();
        BlockingQueue<String> after = new LinkedBlockingQueue<>();
        inotify = Inotify.open(new Recorder(after) {
            @Override
            public void opened(int wd, String name) {
                super.opened(wd, name);
                throw new IllegalStateException("listener bug");
            }
        }, threadName);
        wd = inotify.watchOpens(watched);

        read(watched.resolve("token"));
        read(watched.resolve("marker"));

        assertThat(after.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("opened " + wd + " token");
        assertThat(after.poll(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("opened " + wd + " marker");
    }

    @Test
    void close_whileTheReaderIsBlocked_stopsItPromptly() {
        assertThat(readerThreads()).singleElement().satisfies(thread -> assertThat(thread.isDaemon()).isTrue());

        assertTimeoutPreemptively(Duration.ofSeconds(WAIT_SECONDS), inotify::close);

        assertThat(readerThreads()).isEmpty();
        inotify.close(); // idempotent
    }

    // a pod reads its token through a read-only bind mount, where atime does not change: inotify still sees it
    @Test
    void opening_throughAReadOnlyBindMount_isReported() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mount needs root");
        Path readOnly = Files.createDirectory(root.resolve("read-only"));
        assumeTrue(run("mount", "--bind", watched.toString(), readOnly.toString()), "mount --bind failed");
        try {
            assumeTrue(run("mount", "-o", "remount,bind,ro", readOnly.toString()), "remount read-only failed");
            assertThatThrownBy(() -> Files.writeString(readOnly.resolve("token"), "y")).isInstanceOf(IOException.class);

            read(readOnly.resolve("token"));

            assertThat(next()).isEqualTo("opened " + wd + " token");
        } finally {
            run("umount", readOnly.toString());
        }
    }

    private List<Thread> readerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(thread -> thread.getName().equals(threadName) && thread.isAlive())
                .toList();
    }

    private void assertNextIsTheMarker() throws Exception {
        read(watched.resolve("marker"));

        assertThat(next()).isEqualTo("opened " + wd + " marker");
    }

    private String next() throws InterruptedException {
        return events.poll(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    private static void read(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            in.readAllBytes();
        }
    }

    private static boolean run(String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        process.getInputStream().readAllBytes();
        return process.waitFor() == 0;
    }

    /** Each call as one line: "opened WD NAME", "ignored WD", "overflow". */
    private static class Recorder implements Inotify.Listener {
        private final BlockingQueue<String> events;

        Recorder(BlockingQueue<String> events) {
            this.events = events;
        }

        @Override
        public void opened(int wd, String name) {
            events.add("opened " + wd + " " + name);
        }

        @Override
        public void ignored(int wd) {
            events.add("ignored " + wd);
        }

        @Override
        public void overflow() {
            events.add("overflow");
        }
    }
}
