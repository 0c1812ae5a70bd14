package io.satoken.agent.csi;

import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.satoken.agent.csi.wire.GetPluginCapabilitiesRequest;
import io.satoken.agent.csi.wire.GetPluginCapabilitiesResponse;
import io.satoken.agent.csi.wire.GetPluginInfoRequest;
import io.satoken.agent.csi.wire.GetPluginInfoResponse;
import io.satoken.agent.csi.wire.InfoRequest;
import io.satoken.agent.csi.wire.NodeGetCapabilitiesRequest;
import io.satoken.agent.csi.wire.NodeGetCapabilitiesResponse;
import io.satoken.agent.csi.wire.NodeGetInfoRequest;
import io.satoken.agent.csi.wire.NodeGetInfoResponse;
import io.satoken.agent.csi.wire.NodePublishVolumeRequest;
import io.satoken.agent.csi.wire.NodePublishVolumeResponse;
import io.satoken.agent.csi.wire.NodeUnpublishVolumeRequest;
import io.satoken.agent.csi.wire.NodeUnpublishVolumeResponse;
import io.satoken.agent.csi.wire.PluginInfo;
import io.satoken.agent.csi.wire.ProbeRequest;
import io.satoken.agent.csi.wire.ProbeResponse;
import io.satoken.agent.csi.wire.RegistrationStatus;
import io.satoken.agent.csi.wire.RegistrationStatusResponse;

/**
 * The gRPC methods the agent serves, by their wire names. The server binds them to handlers and tests call
 * them as the kubelet does; only protoc's messages are generated, the method table is this file.
 */
public final class CsiMethods {

    public static final String IDENTITY = "csi.v1.Identity";
    public static final String NODE = "csi.v1.Node";
    public static final String REGISTRATION = "pluginregistration.Registration";

    public static final MethodDescriptor<GetPluginInfoRequest, GetPluginInfoResponse> GET_PLUGIN_INFO =
            unary(IDENTITY, "GetPluginInfo", GetPluginInfoRequest.getDefaultInstance(),
                    GetPluginInfoResponse.getDefaultInstance());
    public static final MethodDescriptor<GetPluginCapabilitiesRequest, GetPluginCapabilitiesResponse>
            GET_PLUGIN_CAPABILITIES = unary(IDENTITY, "GetPluginCapabilities",
                    GetPluginCapabilitiesRequest.getDefaultInstance(), GetPluginCapabilitiesResponse.getDefaultInstance());
    public static final MethodDescriptor<ProbeRequest, ProbeResponse> PROBE =
            unary(IDENTITY, "Probe", ProbeRequest.getDefaultInstance(), ProbeResponse.getDefaultInstance());

    public static final MethodDescriptor<NodeGetCapabilitiesRequest, NodeGetCapabilitiesResponse>
            NODE_GET_CAPABILITIES = unary(NODE, "NodeGetCapabilities",
                    NodeGetCapabilitiesRequest.getDefaultInstance(), NodeGetCapabilitiesResponse.getDefaultInstance());
    public static final MethodDescriptor<NodeGetInfoRequest, NodeGetInfoResponse> NODE_GET_INFO =
            unary(NODE, "NodeGetInfo", NodeGetInfoRequest.getDefaultInstance(), NodeGetInfoResponse.getDefaultInstance());
    public static final MethodDescriptor<NodePublishVolumeRequest, NodePublishVolumeResponse> NODE_PUBLISH_VOLUME =
            unary(NODE, "NodePublishVolume", NodePublishVolumeRequest.getDefaultInstance(),
                    NodePublishVolumeResponse.getDefaultInstance());
    public static final MethodDescriptor<NodeUnpublishVolumeRequest, NodeUnpublishVolumeResponse>
            NODE_UNPUBLISH_VOLUME = unary(NODE, "NodeUnpublishVolume",
                    NodeUnpublishVolumeRequest.getDefaultInstance(), NodeUnpublishVolumeResponse.getDefaultInstance());

    public static final MethodDescriptor<InfoRequest, PluginInfo> GET_INFO =
            unary(REGISTRATION, "GetInfo", InfoRequest.getDefaultInstance(), PluginInfo.getDefaultInstance());
    public static final MethodDescriptor<RegistrationStatus, RegistrationStatusResponse> NOTIFY_REGISTRATION_STATUS =
            unary(REGISTRATION, "NotifyRegistrationStatus", RegistrationStatus.getDefaultInstance(),
                    RegistrationStatusResponse.getDefaultInstance());

    private CsiMethods() {
    }

    private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> unary(String service, String method,
            Q request, R response) {
        return MethodDescriptor.<Q, R>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(service, method))
                .setRequestMarshaller(ProtoUtils.marshaller(request))
                .setResponseMarshaller(ProtoUtils.marshaller(response))
                .build();
    }
}
