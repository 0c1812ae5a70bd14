package io.satoken.agent.pods;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.reads.ReadTracker;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each Warning Event goes to the pod the directory it is told of carries, whatever the directory is named: nothing
 * is looked up. A directory of no pod (static mode) gets none.
 */
class PodEventsTest {

    private static final PodIdentity POD = new PodIdentity("shop", "web-0", "uid-1", "app");
    private static final TokenKey VAULT = new TokenKey("shop", "app", List.of("vault"), 3600,
            BoundObjectRef.pod("web-0", "uid-1"));
    private static final Projection TOKEN = new Projection(VAULT, "vault/token", 0600, null, null);
    /** The kubelet's target of the pod's volume "tokens"; the directory's name has no {@code csi:} form. */
    private static final Path TARGET = Path.of("/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/tokens/mount");
    private static final Instant ROTATED = Instant.parse("2026-01-01T10:48:00Z");
    private static final Instant EXPIRES = Instant.parse("2026-01-01T11:00:00Z");

    private final List<String> events = new ArrayList<>();
    private final PodEvents observer = new PodEvents((pod, reason, message) -> events.add(pod.getMetadata()
            .getNamespace() + "/" + pod.getMetadata().getName() + " (" + pod.getMetadata().getUid() + ") " + reason
            + ": " + message), null);

    /** One report the observer is told of, about {@code dir}, and the Event it makes. */
    record Case(String name, BiConsumer<PodEvents, TokenDirectory> report, String reason, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case("refresh failing", (events, dir) -> events.refreshFailed(dir, VAULT,
                        new TokenSourceException("HTTP 503: unavailable"), true),
                        PodEventSink.TOKEN_REQUEST_FAILED, "token for [vault/token]: HTTP 503: unavailable (the current"
                                + " token stays in place until it expires)"),
                new Case("clock skew", (events, dir) -> events.clockSkew(dir, TOKEN, new TokenInfo(null, null, null,
                        List.of("vault"), ROTATED, null, EXPIRES, "uid-1")),
                        PodEventSink.TOKEN_CLOCK_SKEW, "token for vault/token was issued at " + ROTATED + ", ahead of"
                                + " this node's clock; check time synchronisation on node and API server"),
                new Case("not re-read", (events, dir) -> events.notReread(new ReadTracker.Finding(dir, TOKEN, ROTATED,
                        EXPIRES, null)),
                        PodEventSink.TOKEN_NOT_REREAD, "token file \"vault/token\" of volume \"tokens\" was rotated at "
                                + ROTATED + " and not opened since; the pod read it before and still holds a token"
                                + " that expires at " + EXPIRES + ". Clients must re-read the file when it changes, as"
                                + " with kubelet's projected tokens"),
                new Case("expiring unread", (events, dir) -> events.expiringUnread(new ReadTracker.Finding(dir, TOKEN,
                        ROTATED, EXPIRES, null)),
                        PodEventSink.TOKEN_EXPIRING_UNREAD, "token file \"vault/token\" of volume \"tokens\" was"
                                + " rotated at " + ROTATED + " and is still not opened; the token the pod holds expires"
                                + " at " + EXPIRES + ", after which its requests with it fail. Restart the pod or make"
                                + " it re-read the file"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void event_goesToThePodTheDirectoryCarries_whateverItsName(Case c) {
        c.report().accept(observer, new TokenDirectory("volume-without-a-csi-name", TARGET, List.of(TOKEN),
                new TokenDirectory.Owner("csi-4f1c0e9d7a3b", POD)));

        assertThat(events).containsExactly("shop/web-0 (uid-1) " + c.reason() + ": " + c.message());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void directoryOfNoPod_getsNoEvent(Case c) {
        c.report().accept(observer, new TokenDirectory("csi:csi-4f1c0e9d7a3b", TARGET, List.of(TOKEN)));

        assertThat(events).isEmpty();
    }
}
