package io.satoken.controlplane.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.kubernetes.client.extended.leaderelection.LeaderElectionRecord;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.openapi.models.V1LeaseSpec;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.satoken.common.testing.KubeApiServer;
import io.satoken.common.testing.RequiresKubeApiServer;
import io.satoken.controlplane.testing.OwnedWrites;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Leader election's renewal on a real API server: a merge patch of the Lease fields the elector owns, guarded by the
 * version read, where client-java's LeaseLock PUTs the whole Lease; a renewal after someone else's write fails.
 */
@RequiresKubeApiServer
class PatchingLeaseLockIT {

    @Test
    void renewal_patchesTheElectorsFieldsOnly_andLosesToAConcurrentWrite(KubeApiServer server) throws Exception {
        String ns = server.createNamespace("lease");
        new CoordinationV1Api(server.adminClient()).createNamespacedLease(ns, new V1Lease()
                .metadata(new V1ObjectMeta().name("satoken").putLabelsItem("team", "a").putAnnotationsItem("note", "k"))
                .spec(new V1LeaseSpec().holderIdentity("old").leaseDurationSeconds(15).leaseTransitions(2)
                        .acquireTime(OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC))
                        .renewTime(OffsetDateTime.of(2026, 1, 1, 0, 0, 5, 0, ZoneOffset.UTC)))).execute();
        String path = "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases/satoken";
        OwnedWrites writes = new OwnedWrites(server.clientFor(server.adminToken()));
        PatchingLeaseLock lock = new PatchingLeaseLock(ns, "satoken", "me", writes.client());
        JsonObject before = OwnedWrites.raw(writes.client(), path);

        LeaderElectionRecord record = lock.get();
        assertThat(record.getHolderIdentity()).isEqualTo("old");
        assertThat(record.getLeaderTransitions()).isEqualTo(2);
        Date now = Date.from(Instant.parse("2026-11-28T16:00:00.123Z"));
        boolean renewed = lock.update(new LeaderElectionRecord("me", 15, now, now, 3));

        JsonObject after = OwnedWrites.raw(writes.client(), path);
        assertThat(renewed).isTrue();
        assertThat(writes.sent()).singleElement().satisfies(sent -> {
            assertThat(sent.method()).isEqualTo("PATCH");
            assertThat(OwnedWrites.members(sent.body())).containsExactlyInAnyOrder("spec", "metadata.resourceVersion");
        });
        OwnedWrites.assertUnchangedExcept(before, after, Set.of("spec"));
        assertThat(lock.get().getHolderIdentity()).isEqualTo("me");
        assertThat(after.getAsJsonObject("spec").get("renewTime").getAsString()).isEqualTo("2026-11-28T16:00:00.123000Z");

        V1Lease taken = new CoordinationV1Api(server.adminClient()).readNamespacedLease("satoken", ns).execute();
        taken.getSpec().holderIdentity("other");
        new CoordinationV1Api(server.adminClient()).replaceNamespacedLease("satoken", ns, taken).execute();
        assertThat(lock.update(new LeaderElectionRecord("me", 15, now, now, 3)))
                .as("a renewal based on a Lease someone else has written since").isFalse();
    }
}
