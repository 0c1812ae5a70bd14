/**
 * The agent as the node plugin of the CSI driver {@code tokens.satoken.io}: each inline volume a pod declares
 * becomes a small tmpfs at the kubelet's target path, holding that pod's token files. {@link CsiServer} serves the
 * Identity, Node and plugin-registration gRPC services on unix sockets under the kubelet's directory;
 * {@link CsiVolumes} publishes and unpublishes volumes, and resumes them after a restart from the records
 * {@link VolumeStore} keeps (one JSON file per volume, never a token), with {@code VolumeTarget} checking the
 * request's target and {@code CurrentPod} the pod's uid. Each volume's directory carries its pod
 * ({@link PublishedVolume#directory}); the pod's Warning Events are {@code pods.PodEvents}'s, an observer of the refresh.
 * {@link VolumeAttributes} reads what a volume
 * asks for, through {@code io.satoken.common.projection}; the tokens are then kept fresh by the {@code refresh}
 * package. The protobuf messages ({@code csi.wire}) are generated from {@code agent/src/main/proto/}. Built by
 * {@code runtime.AgentRuntime} in CSI mode.
 */
package io.satoken.agent.csi;
