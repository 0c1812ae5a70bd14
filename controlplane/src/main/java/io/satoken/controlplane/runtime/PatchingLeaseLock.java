package io.satoken.controlplane.runtime;

import com.google.gson.JsonObject;
import io.kubernetes.client.extended.leaderelection.LeaderElectionRecord;
import io.kubernetes.client.extended.leaderelection.Lock;
import io.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoordinationV1Api;
import io.kubernetes.client.openapi.models.V1Lease;
import io.kubernetes.client.openapi.models.V1LeaseSpec;
import io.satoken.controlplane.kube.OwnedPatch;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Date;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * client-java's {@link LeaseLock}, except that a renewal is a merge patch of the five Lease fields leader election
 * owns, guarded by the resourceVersion last read, where {@code LeaseLock} PUTs the whole Lease back and so erases
 * any field a newer API server keeps that this client's model lacks. The first create is its.
 */
final class PatchingLeaseLock implements Lock {

    private static final Logger log = LoggerFactory.getLogger(PatchingLeaseLock.class);
    /** MicroTime, as the API server writes Lease times. */
    private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSSX")
            .withZone(ZoneOffset.UTC);

    private final LeaseLock creator;
    private final String namespace;
    private final String name;
    private final ApiClient client;
    private final CoordinationV1Api api;
    private final AtomicReference<String> resourceVersion = new AtomicReference<>();

    PatchingLeaseLock(String namespace, String name, String identity, ApiClient client) {
        this.creator = new LeaseLock(namespace, name, identity, client);
        this.namespace = namespace;
        this.name = name;
        this.client = client;
        this.api = new CoordinationV1Api(client);
    }

    @Override
    public LeaderElectionRecord get() throws ApiException {
        V1Lease lease = api.readNamespacedLease(name, namespace).execute();
        resourceVersion.set(lease.getMetadata().getResourceVersion());
        V1LeaseSpec spec = lease.getSpec() == null ? new V1LeaseSpec() : lease.getSpec();
        LeaderElectionRecord record = new LeaderElectionRecord();
        record.setHolderIdentity(spec.getHolderIdentity());
        record.setLeaseDurationSeconds(spec.getLeaseDurationSeconds());
        record.setLeaderTransitions(spec.getLeaseTransitions());
        record.setAcquireTime(date(spec.getAcquireTime()));
        record.setRenewTime(date(spec.getRenewTime()));
        return record;
    }

    @Override
    public boolean create(LeaderElectionRecord record) {
        return creator.create(record);
    }

    @Override
    public boolean update(LeaderElectionRecord record) {
        String version = resourceVersion.get();
        if (version == null) {
            return false; // never read: the elector creator before it renews, so this is a lost race
        }
        try {
            V1Lease patched = patch(version, record).send(client, V1Lease.class,
                    body -> api.patchNamespacedLease(name, namespace, body).buildCall(null));
            resourceVersion.set(patched.getMetadata().getResourceVersion());
            return true;
        } catch (ApiException e) {
            log.debug("renewing Lease {}/{}: HTTP {}", namespace, name, e.getCode());
            return false;
        }
    }

    /** The renewal: holder, duration, transitions, acquire and renew times; nothing else of the Lease. */
    static OwnedPatch patch(String resourceVersion, LeaderElectionRecord record) {
        JsonObject spec = new JsonObject();
        spec.addProperty("holderIdentity", record.getHolderIdentity());
        spec.addProperty("leaseDurationSeconds", record.getLeaseDurationSeconds());
        spec.addProperty("leaseTransitions", record.getLeaderTransitions());
        spec.addProperty("acquireTime", microTime(record.getAcquireTime()));
        spec.addProperty("renewTime", microTime(record.getRenewTime()));
        return OwnedPatch.merge(resourceVersion).set("spec", spec);
    }

    private static Date date(OffsetDateTime time) {
        return time == null ? null : Date.from(time.toInstant());
    }

    private static String microTime(Date date) {
        return date == null ? null : MICRO_TIME.format(Instant.ofEpochMilli(date.getTime()));
    }

    @Override
    public String identity() {
        return creator.identity();
    }

    @Override
    public String describe() {
        return creator.describe();
    }
}
