package io.satoken.agent.reads;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.agent.config.AgentConfig;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.testing.FakeClock;
import io.satoken.agent.token.BoundObjectRef;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.write.AtomicWriter;
import io.satoken.agent.write.FileContent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The second report, {@code TokenExpiringUnread}: a consumer reported not re-read that still holds its old token
 * when that token is within the margin of its expiry. The clock is a fake one; nothing sleeps.
 */
class ExpiringUnreadTest {

    private static final AgentConfig.RereadCheck DEFAULT = AgentConfig.RereadCheck.DEFAULT;
    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @TempDir
    Path tmp;

    private final FakeClock clock = new FakeClock(START);
    private final ReadTrackerTest.PathWatches watches = new ReadTrackerTest.PathWatches();
    private final List<ReadTracker.Finding> notReread = new ArrayList<>();
    private final List<ReadTracker.Finding> expiring = new ArrayList<>();
    private ReadTracker tracker;
    private AtomicWriter writer;
    private TokenDirectory dir;
    private Projection projection;
    private IssuedToken current;
    private Duration ttl;
    private int serial;

    record Case(String name, long ttlSeconds, long rotateAfter, long firstReportAt, long escalationAt) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> margins() {
        // At the default 90 % threshold the margin (at least a tenth of the lifetime) is always due by the first
        // report, so both come together; a held token that would expire sooner than that is escalated at once.
        return Stream.of(
                new Case("1 h token: a tenth of the lifetime (6 min) is the margin", 3600, 2880, 3240, 3240),
                new Case("600 s token: 5 min is larger than a tenth", 600, 480, 540, 540),
                new Case("600 s token rotated late: the check a tenth after the rotation", 600, 570, 630, 630));
    }

    void setUp(long ttlSeconds, double threshold) {
        ttl = Duration.ofSeconds(ttlSeconds);
        tracker = new ReadTracker(watches, clock, clock, threshold, notReread::add, (d, p) -> { },
                new ReadTracker.Escalation(new AgentConfig.RereadCheck(true, 90)::expiringMargin, expiring::add));
        writer = new AtomicWriter(tmp, clock, tracker);
        projection = new Projection(new TokenKey("ns", "app", List.of("vault"), ttlSeconds,
                BoundObjectRef.pod("app", "uid-1")), "token", 0600, null, null);
        dir = new TokenDirectory("csi:vol-1", tmp, List.of(projection));
    }

    @ParameterizedTest
    @MethodSource("margins")
    void consumerStillHoldingTheOldToken_isEscalated_neverBeforeTheFirstReport(Case c) throws IOException {
        setUp(c.ttlSeconds(), 0.9);
        IssuedToken first = readOnceThenRotateAfter(c.rotateAfter());
        advanceTo(START.plusSeconds(c.firstReportAt()).minusMillis(1));
        assertThat(notReread).isEmpty();
        assertThat(expiring).isEmpty();
        advanceTo(START.plusSeconds(c.firstReportAt()));
        assertThat(notReread).hasSize(1);
        advanceTo(START.plusSeconds(c.escalationAt()));
        assertThat(expiring).as("TokenExpiringUnread").hasSize(1);
        assertThat(expiring.get(0).heldExpiresAt()).isEqualTo(first.expiresAt());
        assertThat(tracker.expiringUnread()).isEqualTo(1);
        assertThat(tracker.expiringReported()).isEqualTo(1);
        assertThat(tracker.reads(tmp, "token")).hasValueSatisfying(r ->
                assertThat(r.expiringUnreadSince()).isEqualTo(START.plusSeconds(c.escalationAt())));
        clock.advance(ttl);
        assertThat(expiring).as("once per rotation").hasSize(1);
    }

    @Test
    void withAnEarlierThreshold_theEscalationComesLater_atTheMarginBeforeExpiry() throws IOException {
        setUp(3600, 0.5);
        IssuedToken first = readOnceThenRotateAfter(1400);
        advanceTo(START.plusSeconds(1800));
        assertThat(notReread).hasSize(1);
        assertThat(expiring).isEmpty();
        // 6 min (a tenth of 1 h) before the held token's expiry
        advanceTo(first.expiresAt().minusSeconds(361));
        assertThat(expiring).isEmpty();
        advanceTo(first.expiresAt().minusSeconds(360));
        assertThat(expiring).hasSize(1);
    }

    @Test
    void consumerThatReadsAfterTheFirstReport_isNotEscalated_andTheGaugeClears() throws IOException {
        setUp(3600, 0.5);
        readOnceThenRotateAfter(1400);
        advanceTo(START.plusSeconds(1800));
        assertThat(notReread).hasSize(1);
        watches.open(tracker, tmp.resolve("token"));
        clock.advance(Duration.ofHours(2));
        assertThat(expiring).isEmpty();
        assertThat(tracker.expiringUnread()).isZero();
    }

    @Test
    void readAfterTheEscalation_clearsTheGauge_butNotTheTotal() throws IOException {
        setUp(600, 0.9);
        readOnceThenRotateAfter(480);
        advanceTo(START.plusSeconds(540));
        assertThat(tracker.expiringUnread()).isEqualTo(1);
        watches.open(tracker, tmp.resolve("token"));
        assertThat(tracker.expiringUnread()).isZero();
        assertThat(tracker.expiringReported()).isEqualTo(1);
    }

    @Test
    void directoryGone_clearsTheGauge() throws IOException {
        setUp(600, 0.9);
        readOnceThenRotateAfter(480);
        advanceTo(START.plusSeconds(540));
        assertThat(tracker.expiringUnread()).isEqualTo(1);
        writer.remove();
        watches.deliver(tracker);
        assertThat(tracker.expiringUnread()).isZero();
    }

    @Test
    void configuredMargin_replacesTheDefaultRule() {
        assertThat(new AgentConfig.RereadCheck(true, 90, 120L).expiringMargin(Duration.ofHours(24)))
                .isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void defaultMargin_isFiveMinutesOrATenthOfTheLifetime_whicheverIsLarger() {
        assertThat(DEFAULT.expiringMargin(Duration.ofMinutes(10))).isEqualTo(Duration.ofMinutes(5));
        assertThat(DEFAULT.expiringMargin(Duration.ofMinutes(50))).isEqualTo(Duration.ofMinutes(5));
        assertThat(DEFAULT.expiringMargin(Duration.ofHours(1))).isEqualTo(Duration.ofMinutes(6));
        assertThat(DEFAULT.expiringMargin(Duration.ofHours(24))).isEqualTo(Duration.ofMinutes(144));
    }

    /** Moves the fake clock to {@code at}, running the timers due on the way. */
    private void advanceTo(Instant at) {
        clock.advance(Duration.between(clock.instant(), at));
    }

    private IssuedToken readOnceThenRotateAfter(long seconds) throws IOException {
        IssuedToken first = rotate();
        watches.open(tracker, tmp.resolve("token"));
        clock.advance(Duration.ofSeconds(seconds));
        rotate();
        return first;
    }

    private IssuedToken rotate() throws IOException {
        IssuedToken before = current;
        Instant now = clock.instant();
        current = new IssuedToken(String.format("token-%06d", serial++), now, now.plus(ttl));
        writer.write(Map.of("token", FileContent.of(current.token().getBytes(StandardCharsets.US_ASCII), 0600)));
        watches.deliver(tracker);
        tracker.written(dir, projection, current, before != null);
        return current;
    }
}
