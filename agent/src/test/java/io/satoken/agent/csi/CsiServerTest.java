package io.satoken.agent.csi;

import io.satoken.agent.csi.wire.IdentityGrpc;
import io.satoken.agent.csi.wire.NodeGrpc;
import io.satoken.agent.csi.wire.RegistrationGrpc;
import io.satoken.agent.refresh.Backoff;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.refresh.RefreshScheduler;
import io.satoken.agent.testing.FixedRandom;
import io.satoken.agent.testing.KubeletTokenJson;
import io.satoken.agent.token.DeliveredTokens;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.RefreshPolicy;
import io.satoken.agent.token.TokenCache;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1Volume;
import io.satoken.agent.csi.wire.GetPluginCapabilitiesRequest;
import io.satoken.agent.csi.wire.GetPluginInfoRequest;
import io.satoken.agent.csi.wire.GetPluginInfoResponse;
import io.satoken.agent.csi.wire.InfoRequest;
import io.satoken.agent.csi.wire.NodeGetCapabilitiesRequest;
import io.satoken.agent.csi.wire.NodeGetInfoRequest;
import io.satoken.agent.csi.wire.NodeGetInfoResponse;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.NodePublishVolumeResponse;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.ProbeRequest;
import io.satoken.agent.csi.wire.ProbeResponse;
import io.satoken.agent.csi.wire.RegistrationStatus;
import io.satoken.agent.csi.wire.VolumeCapability;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.refresh.ExecutorTaskScheduler;
import io.satoken.agent.refresh.RefreshListener;
import io.satoken.agent.testing.CsiClient;
import io.satoken.agent.testing.FakeMounter;
import io.satoken.agent.testing.MapPodReader;
import io.satoken.agent.testing.PodInfo;
import io.satoken.agent.testing.RefreshHarness;
import io.satoken.agent.testing.ScriptedTokenSource;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.token.TokenSourceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CSI and registration services on real unix sockets, called as the kubelet calls them. Behind the
 * server: real volumes and refresh on the system clock, a fake mounter and a map of pods.
 */
class CsiServerTest {
    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", UID, "app");

    @TempDir
    Path kubeletDir;

    private final InstantSource clock = InstantSource.system();
    private final ScriptedTokenSource source = new ScriptedTokenSource(clock, Duration.ofHours(1));
    private final FakeMounter mounter = new FakeMounter();
    private final MapPodReader pods = new MapPodReader();
    private final ExecutorTaskScheduler timers = new ExecutorTaskScheduler(clock, 2);
    private RefreshHarness refresh;
    private CsiVolumes volumes;
    private CsiServer server;
    private CsiClient csi;
    private CsiClient registration;
    /** How each NodePublishVolume ended, as the server reports it for the metrics. */
    private final List<String> publishResults = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        refresh = RefreshHarness.builder().time(clock, timers).source(source).build();
        VolumeStore store = new VolumeStore(kubeletDir.resolve("satoken-volumes"));
        store.create();
        volumes = new CsiVolumes(kubeletDir.resolve("pods"), "node-a", store, mounter, pods, refresh.scheduler(), null);
        pods.put(new V1Pod().metadata(new V1ObjectMeta().namespace("shop").name("web-0").uid(UID))
                .spec(new V1PodSpec().nodeName("node-a").serviceAccountName("app").addVolumesItem(new V1Volume()
                        .name("tokens").csi(new V1CSIVolumeSource().driver("tokens.satoken.io").readOnly(true)))));
        server = new CsiServer(kubeletDir, "node-a", "1.2.3", volumes, (took, result) -> publishResults.add(result), null);
        server.start();
        csi = new CsiClient(server.csiSocket());
        registration = new CsiClient(server.registrationSocket());
    }

    @AfterEach
    void stop() throws Exception {
        csi.close();
        registration.close();
        server.close();
        refresh.close();
        timers.close();
    }

    private Path target() {
        return kubeletDir.resolve("pods").resolve(UID).resolve("volumes/kubernetes.io~csi/tokens/mount");
    }

    private static void assertStatus(ThrowingCallable call, Status.Code code, String description) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
            assertThat(e.getStatus().getCode()).isEqualTo(code);
            assertThat(e.getStatus().getDescription()).isEqualTo(description);
        });
    }

    @Test
    void publish_withTokenSourceKubelet_writesTheTokenTheKubeletSentInTheRequestsSecrets() throws Exception {
        // the agent as tokenSource: kubelet wires it, behind the same sockets
        server.close();
        DeliveredTokens delivered = new DeliveredTokens(clock);
        TokenCache cache = new TokenCache(delivered, RefreshPolicy.untilExpiry(), clock);
        try (RefreshScheduler scheduler = new RefreshScheduler(cache, timers,
                new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30), FixedRandom.highest()), clock,
                RefreshListener.NONE)) {
            VolumeStore store = new VolumeStore(kubeletDir.resolve("satoken-volumes-kubelet"));
            store.create();
            CsiVolumes kubeletMinted = new CsiVolumes(kubeletDir.resolve("pods"), "node-a", store, mounter, pods,
                    scheduler, null, delivered, clock);
            server = new CsiServer(kubeletDir, "node-a", "1.2.3", kubeletMinted, (took, result) -> { }, null);
            server.start();
            csi.close();
            csi = new CsiClient(server.csiSocket());
            KubeletTokenJson kubelet = new KubeletTokenJson();
            IssuedToken token = kubelet.token(WEB, "vault", clock.instant().truncatedTo(ChronoUnit.SECONDS), 600);

            csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-1", target(),
                    PodInfo.attributes(WEB, "audience", "vault")).toBuilder()
                    .putSecrets(KubeletTokenJson.KEY, KubeletTokenJson.json(Map.of("vault", token))).build());

            assertThat(target().resolve("token")).hasContent(token.token());
            assertThat(source.calls()).as("TokenRequests").isZero();
        }
    }

    @Test
    void sockets_areWhereTheKubeletLooks() {
        assertThat(server.csiSocket()).isEqualTo(kubeletDir.resolve("plugins/tokens.satoken.io/csi.sock"));
        assertThat(server.registrationSocket())
                .isEqualTo(kubeletDir.resolve("plugins_registry/tokens.satoken.io-reg.sock"));
        assertThat(server.csiSocket().toString().length()).as("a unix socket path has at most 107 bytes").isLessThan(100);
    }

    @Test
    void getPluginInfo_namesTheDriverAndTheAgentsVersion() {
        GetPluginInfoResponse info = csi.call(IdentityGrpc.getGetPluginInfoMethod(), GetPluginInfoRequest.getDefaultInstance());

        assertThat(info.getName()).isEqualTo("tokens.satoken.io");
        assertThat(info.getVendorVersion()).isEqualTo("1.2.3");
    }

    @Test
    void probe_isReady() {
        ProbeResponse probe = csi.call(IdentityGrpc.getProbeMethod(), ProbeRequest.getDefaultInstance());

        assertThat(probe.hasReady()).isTrue();
        assertThat(probe.getReady().getValue()).isTrue();
    }

    @Test
    void capabilities_areNone_noControllerAndNoStaging() {
        // no bytes on the wire is what the kubelet decodes as an empty capabilities list
        assertThat(csi.call(IdentityGrpc.getGetPluginCapabilitiesMethod(), GetPluginCapabilitiesRequest.getDefaultInstance())
                .toByteString()).isEmpty();
        assertThat(csi.call(NodeGrpc.getNodeGetCapabilitiesMethod(), NodeGetCapabilitiesRequest.getDefaultInstance())
                .toByteString()).isEmpty();
    }

    @Test
    void nodeGetInfo_isTheNodeName() {
        NodeGetInfoResponse info = csi.call(NodeGrpc.getNodeGetInfoMethod(), NodeGetInfoRequest.getDefaultInstance());

        assertThat(info.getNodeId()).isEqualTo("node-a");
        assertThat(info.getMaxVolumesPerNode()).as("no limit").isZero();
    }

    @Test
    void registrationGetInfo_pointsTheKubeletAtTheCsiSocket() {
        PluginInfo info = registration.call(RegistrationGrpc.getGetInfoMethod(), InfoRequest.getDefaultInstance());

        assertThat(info.getType()).isEqualTo("CSIPlugin");
        assertThat(info.getName()).isEqualTo("tokens.satoken.io");
        assertThat(info.getEndpoint()).isEqualTo(server.csiSocket().toString());
        assertThat(info.getSupportedVersionsList()).containsExactly("1.0.0");
    }

    @Test
    void notifyRegistrationStatus_setsRegistered() {
        assertThat(server.registered()).isFalse();

        registration.call(RegistrationGrpc.getNotifyRegistrationStatusMethod(),
                RegistrationStatus.newBuilder().setPluginRegistered(true).build());
        assertThat(server.registered()).isTrue();

        registration.call(RegistrationGrpc.getNotifyRegistrationStatusMethod(), RegistrationStatus.newBuilder()
                .setPluginRegistered(false).setError("driver name tokens.satoken.io already registered").build());
        assertThat(server.registered()).isFalse();
    }

    @Test
    void publishAndUnpublish_overTheSocket() throws Exception {
        csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-1", target(),
                PodInfo.attributes(WEB, "audience", "vault")));

        // the answer comes once the file is written
        assertThat(target().resolve("token")).hasContent("token-1");
        assertThat(mounter.mounted()).containsExactly(target());

        csi.call(NodeGrpc.getNodeUnpublishVolumeMethod(), CsiClient.unpublishRequest("csi-1", target()));
        assertThat(mounter.mounted()).isEmpty();
        assertThat(target()).doesNotExist();
        // the kubelet retries an unpublish it did not see answered
        csi.call(NodeGrpc.getNodeUnpublishVolumeMethod(), CsiClient.unpublishRequest("csi-1", target()));
        assertThat(publishResults).containsExactly("success");
    }

    @Test
    void publish_blockVolume_isInvalidArgument() {
        NodePublishVolumeRequest block = CsiClient.publishRequest("csi-1", target(), PodInfo.attributes(WEB)).toBuilder()
                .setVolumeCapability(VolumeCapability.newBuilder()
                        .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())).build();
        NodePublishVolumeRequest none = block.toBuilder().clearVolumeCapability().build();
        String description = "volume_capability: must be a mount volume; tokens.satoken.io has no block volumes";

        assertStatus(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), block), Status.Code.INVALID_ARGUMENT, description);
        assertStatus(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), none), Status.Code.INVALID_ARGUMENT, description);
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(publishResults).containsExactly("invalid_argument", "invalid_argument");
    }

    @Test
    void publish_writableVolume_isInvalidArgumentNamingReadOnly_andMountsNothing() {
        // A pod that sets neither csi.readOnly nor volumeMounts[].readOnly would get the tmpfs writable, and could
        // plant links where the agent writes as root: refused before anything is mounted or requested.
        NodePublishVolumeRequest writable = CsiClient.publishRequest("csi-1", target(), PodInfo.attributes(WEB))
                .toBuilder().setReadonly(false).build();

        assertStatus(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), writable), Status.Code.INVALID_ARGUMENT,
                "csi.readOnly: must be true: tokens.satoken.io volumes are read-only for the pod; set readOnly: true"
                        + " on the pod's csi volume");
        assertThat(mounter.mountCalls()).isEmpty();
        assertThat(target()).doesNotExist();
        assertThat(publishResults).containsExactly("invalid_argument");
    }

    @Test
    void publish_badAttributes_isInvalidArgumentNamingTheAttribute() {
        // PV-4: what the kubelet puts in the pod's FailedMount Event
        assertStatus(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-1", target(),
                        PodInfo.attributes(WEB, "expirationSeconds", "60", "audiences", "vault"))),
                Status.Code.INVALID_ARGUMENT, "volumeAttributes.audiences: unknown attribute; the attributes are"
                        + " audience, expirationSeconds, path, projections, reloadContainer, reloadSignal;"
                        + " volumeAttributes.expirationSeconds: may not"
                        + " specify a duration less than 10 minutes, got \"60\"");
        assertThat(mounter.mountCalls()).isEmpty();
    }

    @Test
    void publish_firstTokenRequestFailing_answersTheReason() {
        source.failNext(TokenSourceException.permanent("HTTP 403: serviceaccounts \"app\" is forbidden", null));

        assertThatThrownBy(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-1", target(),
                PodInfo.attributes(WEB)))).isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
                    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
                    assertThat(e.getStatus().getDescription()).startsWith("first token of the volume: ").contains("shop/app")
                            .endsWith("HTTP 403: serviceaccounts \"app\" is forbidden");
                });
        assertThat(mounter.mounted()).isEmpty();
        assertThat(publishResults).containsExactly("failed_precondition");
    }

    @Test
    void publish_podMissing_isNotFound() {
        pods.remove("shop", "web-0");

        assertStatus(() -> csi.call(NodeGrpc.getNodePublishVolumeMethod(), CsiClient.publishRequest("csi-1", target(),
                PodInfo.attributes(WEB))), Status.Code.NOT_FOUND, "pod shop/web-0 (uid \"" + UID + "\") does not exist");
    }

    @Test
    void unservedMethods_areUnimplemented() {
        for (String method : List.of("csi.v1.Node/NodeStageVolume", "csi.v1.Node/NodeGetVolumeStats",
                "csi.v1.Controller/CreateVolume")) {
            MethodDescriptor<NodePublishVolumeRequest, NodePublishVolumeResponse> adHoc =
                    MethodDescriptor.<NodePublishVolumeRequest, NodePublishVolumeResponse>newBuilder()
                            .setType(MethodDescriptor.MethodType.UNARY)
                            .setFullMethodName(method)
                            .setRequestMarshaller(ProtoUtils.marshaller(NodePublishVolumeRequest.getDefaultInstance()))
                            .setResponseMarshaller(ProtoUtils.marshaller(NodePublishVolumeResponse.getDefaultInstance()))
                            .build();

            assertThatThrownBy(() -> csi.call(adHoc, NodePublishVolumeRequest.getDefaultInstance())).as(method)
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
        }
    }

    @Test
    void registrationSocket_servesOnlyRegistration() {
        assertThatThrownBy(() -> registration.call(NodeGrpc.getNodeGetInfoMethod(), NodeGetInfoRequest.getDefaultInstance()))
                .isInstanceOfSatisfying(StatusRuntimeException.class,
                        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
    }

    @Test
    void sockets_areForTheirOwnerOnly() throws Exception {
        for (Path socket : List.of(server.csiSocket(), server.registrationSocket())) {
            assertThat(Files.readAttributes(socket, BasicFileAttributes.class).isOther()).as("%s is a socket", socket)
                    .isTrue();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).as(socket.toString())
                    .isEqualTo("rw-------");
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())))
                    .as(socket.getParent().toString()).isEqualTo("rwxr-x---");
        }
    }

    @Test
    void close_removesTheSockets_soTheKubeletUnregistersTheDriver() throws Exception {
        server.close();

        assertThat(server.registrationSocket()).doesNotExist();
        assertThat(server.csiSocket()).doesNotExist();
    }

    @Test
    void start_replacesASocketLeftByAKilledAgent() throws Exception {
        server.close();
        Files.writeString(server.csiSocket(), "left behind");
        Files.writeString(server.registrationSocket(), "left behind");

        server = new CsiServer(kubeletDir, "node-a", "1.2.3", volumes, (took, result) -> { }, null);
        server.start();

        try (CsiClient again = new CsiClient(server.registrationSocket())) {
            assertThat(again.call(RegistrationGrpc.getGetInfoMethod(), InfoRequest.getDefaultInstance()).getName())
                    .isEqualTo("tokens.satoken.io");
        }
    }
}
