package io.satoken.agent.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The status report as a person reads it: the last-read line in each case the tracker can be in. */
class StatusViewTest {

    private static final String NOW = "2026-01-01T00:09:00Z";

    @Test
    void lastRead_notReReadAfterARotation_saysWhenAndThatItWasReported() {
        String text = view(true, "\"lastRead\": \"2026-01-01T00:00:05.123Z\", \"readCurrentToken\": false,"
                + " \"rotatedAt\": \"2026-01-01T00:08:00Z\", \"notRereadSince\": \"2026-01-01T00:09:00Z\"").text();

        assertThat(text).contains("last read:      2026-01-01T00:00:05Z (8m54s ago), before the rotation at "
                + "2026-01-01T00:08:00Z; the new token was not opened (reported TokenNotReread at 2026-01-01T00:09:00Z)");
    }

    @Test
    void lastRead_notYetReportedButPending_namesTheThreshold() {
        String text = view(true, "\"lastRead\": \"2026-01-01T00:00:05Z\", \"readCurrentToken\": false,"
                + " \"rotatedAt\": \"2026-01-01T00:08:00Z\", \"notRereadSince\": null").text();

        assertThat(text).contains("the new token was not opened (reported if not opened by 90 % of the old token's "
                + "lifetime)");
    }

    @Test
    void lastRead_onlyBeforeTheAgentStarted_andTheRotationMissed_saysSoFromTheRecord() {
        String text = view(true, "\"lastRead\": null, \"hasReader\": true, \"readCurrentToken\": false,"
                + " \"rotatedAt\": \"2026-01-01T00:08:00Z\", \"notRereadSince\": \"2026-01-01T00:09:00Z\"").text();

        assertThat(text).contains("last read:      before the agent started (its volume's record says so); the new "
                + "token was not opened (written at 2026-01-01T00:08:00Z) (reported TokenNotReread at "
                + "2026-01-01T00:09:00Z)");
    }

    @Test
    void lastRead_ofTheCurrentToken_noneSeen_orNotWatched() {
        assertThat(view(true, "\"lastRead\": \"2026-01-01T00:08:30Z\", \"readCurrentToken\": true,"
                + " \"rotatedAt\": null, \"notRereadSince\": null").text())
                .contains("last read:      2026-01-01T00:08:30Z (30s ago), of the token now in the file");
        assertThat(view(true, "\"lastRead\": null, \"hasReader\": false, \"readCurrentToken\": false, \"rotatedAt\": null,"
                + " \"notRereadSince\": null").text()).contains("last read:      none seen since the agent started");
        assertThat(view(false, "").text()).contains("last read:      not watched");
    }

    @Test
    void durations_areWrittenAsKubernetesWritesThem() {
        String text = view(true, "").text();

        assertThat(text).contains("lifetime asked: 1h0m0s (expirationSeconds 3600)",
                "issued at:      2026-01-01T00:00:00Z (9m0s ago)", "expires at:     2026-01-01T01:00:00Z (in 51m0s)",
                "next refresh:   2026-01-01T00:48:00Z (in 39m0s)").doesNotContain("PT", " s)");
    }

    @Test
    void fieldsTheReportLacks_readUnknown_neverNull() {
        String text = StatusView.parse("{\"node\": null, \"time\": \"" + NOW + "\", \"rereadCheck\": {\"enabled\": false,"
                + " \"thresholdPercent\": 90}, \"directories\": [{\"name\": \"csi:v\", \"dir\": \"/v\", \"pod\":"
                + " {\"namespace\": \"shop\", \"name\": \"cart\", \"uid\": null}, \"files\": [{\"path\": \"token\","
                + " \"serviceAccount\": null, \"audiences\": null, \"expirationSeconds\": 600, \"state\": null,"
                + " \"issuedAt\": null, \"expiresAt\": null, \"nextRefresh\": null, \"lastError\": null}]}]}").text();

        assertThat(text).startsWith("Pod shop/cart (uid unknown)\n").contains("ServiceAccount: unknown",
                "state:          unknown", "lifetime asked: 10m0s (expirationSeconds 600)").doesNotContain("null");
    }

    @Test
    void staticAt_keepsTheProjectionByItsDirOrFile_neverAPodsVolume() {
        StatusView view = view(true, "");

        assertThat(view.staticAt(Path.of("/run/t")).isEmpty()).isFalse();
        assertThat(view.staticAt(Path.of("/run/t/token")).isEmpty()).isFalse();
        assertThat(view.staticAt(Path.of("/run/other")).isEmpty()).isTrue();
    }

    @Test
    void parse_notAReport_isRefusedSayingSo() {
        assertThatThrownBy(() -> StatusView.parse("{\"directories\": [")).hasMessageContaining("not JSON");
        assertThatThrownBy(() -> StatusView.parse("{}")).hasMessageContaining("no \"directories\"");
    }

    @Test
    void reloadSignal_reReadAfterIt_saysWhenAndHowLongAfter() {
        String text = withReload("\"signalledAt\": \"2026-01-01T00:08:00Z\", \"delivered\": true, \"problem\": null",
                "\"lastRead\": \"2026-01-01T00:08:00.250Z\", \"hasReader\": true, \"readCurrentToken\": true,"
                        + " \"rotatedAt\": \"2026-01-01T00:07:59.900Z\", \"notRereadSince\": null");
        assertThat(text).contains("reload signal:  SIGHUP to container app: signalled at 2026-01-01T00:08:00Z, re-read at"
                + " 2026-01-01T00:08:00.250Z (+250 ms)");
    }

    @Test
    void reloadSignal_notReadSinceIt_saysSignalledNotReread() {
        String text = withReload("\"signalledAt\": \"2026-01-01T00:08:00Z\", \"delivered\": true, \"problem\": null",
                "\"lastRead\": \"2026-01-01T00:01:00Z\", \"hasReader\": true, \"readCurrentToken\": false,"
                        + " \"rotatedAt\": \"2026-01-01T00:07:59.900Z\", \"notRereadSince\": null");
        assertThat(text).contains("SIGHUP to container app: signalled at 2026-01-01T00:08:00Z, not re-read");
    }

    @Test
    void reloadSignal_notDelivered_saysWhy_andNoneYet_saysSo() {
        String text = withReload("\"signalledAt\": \"2026-01-01T00:08:00Z\", \"delivered\": false, \"problem\":"
                + " \"container app is not running (waiting: CrashLoopBackOff)\"", "\"lastRead\": null");
        assertThat(text).contains("SIGHUP to container app at 2026-01-01T00:08:00Z not delivered: container app is not"
                + " running (waiting: CrashLoopBackOff)");
        assertThat(withReload("\"signalledAt\": null", "\"lastRead\": null"))
                .contains("SIGHUP to container app after each rotation; none sent yet");
    }

    /** A pod's volume asking for SIGHUP to container app, its last signal {@code reload}, its file's reads. */
    private static String withReload(String reload, String reads) {
        return StatusView.parse("{\"node\": \"node-1\", \"time\": \"" + NOW + "\", \"rereadCheck\": {\"enabled\": "
                + "true, \"thresholdPercent\": 90}, \"directories\": [{\"name\": \"csi:v\", \"dir\": \"/p\","
                + " \"pod\": {\"namespace\": \"ns\", \"name\": \"web\", \"uid\": \"u\", \"serviceAccount\": \"sa\"},"
                + " \"reload\": {\"signal\": \"SIGHUP\", \"container\": \"app\", " + reload + "}, \"files\": [{\"path\":"
                + " \"token\", \"serviceAccount\": \"ns/sa\", \"audiences\": null, \"expirationSeconds\": 600,"
                + " \"state\": \"ready\", \"issuedAt\": null, \"expiresAt\": null, \"nextRefresh\": null,"
                + " \"lastError\": null, \"lastErrorAt\": null, \"hasReader\": true, \"readCurrentToken\": false, "
                + reads + "}]}]}").text();
    }

    /** A report with one static file; {@code reads} holds the file's read members, if any. */
    /** A pod chooses its audiences and paths; what it chose must not drive the operator's terminal. */
    @Test
    void podChosenValues_withTerminalControls_arePrintedEscaped() {
        String hostile = "{\"node\": \"node-1\", \"time\": \"" + NOW + "\", \"rereadCheck\": {\"enabled\": false,"
                + " \"thresholdPercent\": 90}, \"directories\": [{\"name\": \"csi:v\", \"dir\": \"/d\", \"files\": [{"
                + "\"path\": \"tok\\u001b[2Jen\", \"serviceAccount\": \"ns/sa\","
                + " \"audiences\": [\"vault\\u001b]0;owned\\u0007\", \"a\\nfake line\", \"\\u202eevil\", \"\\u009b31m\"],"
                + " \"expirationSeconds\": 3600, \"state\": \"ready\", \"lastError\": null}]}]}";

        String text = StatusView.parse(hostile).text();

        assertThat(text).doesNotContain("\u001b", "\u0007", "\u202e", "\u009b", "a\nfake line");
        assertThat(text).contains("tok\\u001b[2Jen", "vault\\u001b]0;owned\\u0007", "a\\u000afake line", "\\u202eevil",
                "\\u009b31m");
    }

    private static StatusView view(boolean watching, String reads) {
        return StatusView.parse("{\"node\": \"node-1\", \"time\": \"" + NOW + "\", \"rereadCheck\": {\"enabled\": "
                + watching + ", \"thresholdPercent\": 90}, \"directories\": [{\"name\": \"static:/run/t\", \"dir\": "
                + "\"/run/t\", \"files\": [{\"path\": \"token\", \"serviceAccount\": \"ns/sa\", \"audiences\": null,"
                + " \"expirationSeconds\": 3600, \"state\": \"ready\", \"issuedAt\": \"2026-01-01T00:00:00Z\","
                + " \"expiresAt\": \"2026-01-01T01:00:00Z\", \"nextRefresh\": \"2026-01-01T00:48:00Z\","
                + " \"lastError\": null, \"lastErrorAt\": null" + (reads.isEmpty() ? "" : ", " + reads) + "}]}]}");
    }
}
