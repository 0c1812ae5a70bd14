package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1CSIVolumeSource;
import io.kubernetes.client.openapi.models.V1Container;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodSecurityContext;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1ProjectedVolumeSource;
import io.kubernetes.client.openapi.models.V1SecurityContext;
import io.kubernetes.client.openapi.models.V1ServiceAccountTokenProjection;
import io.kubernetes.client.openapi.models.V1Volume;
import io.kubernetes.client.openapi.models.V1VolumeMount;
import io.kubernetes.client.openapi.models.V1VolumeProjection;
import io.satoken.e2e.node.KubeletNode;
import io.satoken.e2e.node.TestImages;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Access parity with kubelet's projected token, pod shape by pod shape, on a real node: every pod has a kubelet
 * projected {@code serviceAccountToken} volume and a {@code tokens.satoken.io} CSI volume of the same audience and
 * lifetime, and each of its containers (init containers too) reports, for both token files, whether it can read
 * the file ({@code cat}) and what {@code stat -L} shows of it (mode, uid, gid). The test also stats both files from
 * the node, where root sees them whatever the directories' modes. The contract (PV-16..PV-18): a container reads
 * satoken's file if and only if it reads kubelet's, and the file's mode, uid and gid are kubelet's; where the
 * container may not read it, satoken's narrower directories may hide its stat, never its readability. Two shapes
 * ask for what kubelet cannot express (a {@code projections} entry's own {@code uid} and {@code gid}); there the file
 * is as asked, and readability still matches.
 *
 * <p>All pods start at once, side by side; nothing waits for a rotation. The table is printed and recorded for
 * RELIABILITY.md. A {@code subPath} mount is one of the shapes: like kubelet's, it is a bind mount of that version's
 * file, which never rotates (README).
 */
@Execution(ExecutionMode.CONCURRENT) // the node lock alone orders it; see junit-platform.properties
@ResourceLock(KubeletNode.RESOURCE)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessParityE2E {

    /** The name the figures are recorded under: this class's, or a variant's. */
    private static String test = "AccessParityE2E";
    static final String AUDIENCE = "vault";
    static final long LIFETIME = 600;
    static final String SA = "app";
    private static final Duration START = Duration.ofSeconds(180);
    /** Reads each file (the content goes nowhere), stats it, and says who the process is; one line each. */
    private static final String PROBE = "for v in kubelet satoken; do "
            + "if cat /$v/token >/dev/null 2>&1; then r=read; else r=denied; fi; "
            + "s=$(stat -L -c '%a %u %g' /$v/token 2>/dev/null) || s=-; "
            + "echo \"probe $v $r $s\"; done; echo \"probe id $(id -u) $(id -G | tr ' ' ,)\"";

    /** A container of a shape: its name, whether it is an init container, and its own securityContext. */
    record Box(String name, boolean init, V1SecurityContext context) {
        static Box app(V1SecurityContext context) {
            return new Box("app", false, context);
        }
    }

    /**
     * A pod shape.
     *
     * @param entry what the satoken {@code projections} entry adds to path, audience and lifetime ("" for none);
     *     a {@code mode} there is kubelet's {@code defaultMode} too
     * @param mode that mode, or null
     * @param asked satoken's file as the entry asks for it ({@code "640 1000 3000"}) where kubelet has no such
     *     setting, else null: the file must be kubelet's
     * @param subPath whether the containers mount each token file by {@code subPath} rather than its directory
     */
    record Shape(String name, V1PodSecurityContext pod, List<Box> boxes, String entry, Integer mode, String asked,
            boolean subPath) {
    }

    /** What one container reported, and both files as root sees them on the node. */
    record Row(Shape shape, String container, String process, Probe kubelet, Probe satoken, String kubeletOnNode,
            String satokenOnNode) {

        boolean same() {
            boolean readable = kubelet.read() == satoken.read();
            String expected = shape.asked() == null ? kubeletOnNode : shape.asked();
            boolean onNode = satokenOnNode.equals(expected);
            // satoken's directories may hide the stat from a container that may not read the file, nothing more
            boolean stat = satoken.stat().equals("-") ? !satoken.read()
                    : satoken.stat().equals(shape.asked() == null ? kubelet.stat() : shape.asked());
            return readable && onNode && stat;
        }
    }

    /** One file as a container saw it: read or not, and its stat ("-" when it could not stat it). */
    record Probe(boolean read, String stat) {
        @Override
        public String toString() {
            return (read ? "read" : "denied") + ", " + (stat.equals("-") ? "no stat" : stat);
        }
    }

    private static CsiDriverNode csi;
    private static KubeletNode node;
    private static String namespace;

    @BeforeAll
    void startNodeAndAgent() throws Exception {
        test = getClass().getSimpleName();
        csi = startNode(test);
        node = csi.node();
        // root and mixed users: no Pod Security level is enforced here
        namespace = csi.namespace("parity", Map.of(), SA);
    }

    /** The node and agent the shapes run on; a variant overrides it to run them with another token source. */
    CsiDriverNode startNode(String name) throws Exception {
        return CsiDriverNode.start(name, "parity-agent");
    }

    @AfterAll
    void stop() throws IOException {
        if (csi != null) {
            csi.close();
        }
    }

    static List<Shape> shapes() {
        V1PodSecurityContext none = null;
        return List.of(
                new Shape("root", none, List.of(Box.app(null)), "", null, null, false),
                // a user whose primary group is 0: most images without a passwd entry for it
                new Shape("user-no-group", user(1000L), List.of(Box.app(null)), "", null, null, false),
                new Shape("user-and-group", user(1000L).runAsGroup(3000L), List.of(Box.app(null)), "", null, null, false),
                new Shape("fsgroup-alone", new V1PodSecurityContext().fsGroup(2000L), List.of(Box.app(null)), "", null,
                        null, false),
                new Shape("user-and-fsgroup", user(1000L).fsGroup(2000L), List.of(Box.app(null)), "", null, null, false),
                new Shape("group-and-fsgroup-differ", user(1000L).runAsGroup(3000L).fsGroup(2000L),
                        List.of(Box.app(null)), "", null, null, false),
                new Shape("supplemental-groups", user(1000L).supplementalGroups(List.of(4000L)), List.of(Box.app(null)),
                        "", null, null, false),
                new Shape("container-user", none, List.of(Box.app(runAs(1000L))), "", null, null, false),
                new Shape("two-users", none, List.of(new Box("a", false, runAs(1000L)), new Box("b", false, runAs(2000L))),
                        "", null, null, false),
                new Shape("two-users-fsgroup", new V1PodSecurityContext().fsGroup(2000L),
                        List.of(new Box("a", false, runAs(1000L)), new Box("b", false, runAs(2000L))), "", null, null,
                        false),
                new Shape("init-other-user", user(1000L), List.of(new Box("init", true, runAs(2000L)), Box.app(null)),
                        "", null, null, false),
                new Shape("readonly-rootfs", user(1000L),
                        List.of(Box.app(new V1SecurityContext().readOnlyRootFilesystem(true))), "", null, null, false),
                // an explicit mode, as kubelet's defaultMode: root reads a 0400 root file, user 1000 does not
                new Shape("mode-0400", none, List.of(new Box("root", false, null), new Box("user", false, runAs(1000L))),
                        ", mode: \"0400\"", 0400, null, false),
                // 0640 root:root without fsUser or fsGroup: group 0, every container's primary group, reads it
                new Shape("mode-0640", none, List.of(new Box("a", false, runAs(1000L)), new Box("b", false, runAs(2000L))),
                        ", mode: \"0640\"", 0640, null, false),
                new Shape("uid-gid-as-the-pods", user(1000L).fsGroup(3000L), List.of(Box.app(null)),
                        ", uid: 1000, gid: 3000", null, null, false),
                // kubelet cannot give a file another group than fsGroup: satoken's file is as asked, and its owner
                // (not in group 3000) still reads it, as it reads kubelet's
                new Shape("uid-gid-own-group", user(1000L), List.of(Box.app(null)), ", uid: 1000, gid: 3000", null,
                        "640 1000 3000", false),
                new Shape("subpath", user(1000L), List.of(Box.app(null)), "", null, null, true));
    }

    @Test
    void everyContainer_readsSatokensTokenExactlyWhenItReadsKubelets_withKubeletsModeAndOwner() throws Exception {
        check(test, node, namespace);
    }

    /**
     * Runs every shape's pod in {@code namespace} (which enforces no Pod Security level and has the ServiceAccount
     * {@value #SA}) on a node whose agent serves {@value #AUDIENCE} tokens of {@value #LIFETIME} s, in whatever mode
     * (the agent's own TokenRequests, or the kubelet-minted profile's CSIDriver listing that audience and
     * lifetime), and asserts the contract of the class comment; the table goes to the figures of {@code test}.
     */
    static void check(String test, KubeletNode node, String namespace) throws Exception {
        List<Shape> shapes = shapes();
        CoreV1Api core = new CoreV1Api(node.adminClient());
        Instant created = Instant.now();
        Map<Shape, V1Pod> pods = new LinkedHashMap<>();
        for (Shape shape : shapes) {
            pods.put(shape, core.createNamespacedPod(namespace, pod(shape, node, namespace)).execute());
        }
        for (Shape shape : shapes) {
            pods.put(shape, node.awaitRunning(namespace, shape.name(), START));
        }
        Duration allRunning = Duration.between(created, Instant.now());

        List<Row> rows = new ArrayList<>();
        for (Map.Entry<Shape, V1Pod> e : pods.entrySet()) {
            Shape shape = e.getKey();
            Path volumes = node.rootDir().resolve("pods").resolve(e.getValue().getMetadata().getUid()).resolve("volumes");
            String kubeletOnNode = statOnNode(volumes.resolve("kubernetes.io~projected/kubelet/token"));
            String satokenOnNode = statOnNode(volumes.resolve("kubernetes.io~csi/satoken/mount/token"));
            for (Box box : shape.boxes()) {
                Map<String, String> report = report(node, namespace, shape.name(), box.name());
                rows.add(new Row(shape, box.name() + (box.init() ? " (init)" : ""), report.get("id"),
                        probe(report.get("kubelet")), probe(report.get("satoken")), kubeletOnNode, satokenOnNode));
            }
        }

        String table = table(rows);
        System.out.println(table);
        Figures.record(test, String.format(Locale.ROOT, "%d pods, %d containers: all Running %d ms after the first "
                + "create; kubelet 1.%d on %s", shapes.size(), rows.size(), allRunning.toMillis(),
                CsiDriverNode.apiMinor(node), node.nodeName()));
        for (String line : table.lines().toList()) {
            Figures.record(test, line);
        }
        List<String> different = rows.stream().filter(r -> !r.same())
                .map(r -> r.shape().name() + "/" + r.container()).toList();
        assertThat(different).as("containers where satoken's token file differs from kubelet's:\n%s", table).isEmpty();
        assertThat(rows).as("containers that read kubelet's token").filteredOn(r -> r.kubelet().read()).hasSizeGreaterThan(
                rows.size() / 2);
        assertThat(rows).as("a shape where a container may read neither").anyMatch(r -> !r.kubelet().read());
    }

    // --- the pieces -----------------------------------------------------------------------------

    private static V1PodSecurityContext user(long uid) {
        return new V1PodSecurityContext().runAsUser(uid);
    }

    private static V1SecurityContext runAs(long uid) {
        return new V1SecurityContext().runAsUser(uid);
    }

    /** The shape's pod: both volumes, each container running {@link #PROBE} (then sleeping, unless an init). */
    private static V1Pod pod(Shape shape, KubeletNode node, String namespace) {
        V1ServiceAccountTokenProjection token = new V1ServiceAccountTokenProjection().audience(AUDIENCE)
                .expirationSeconds(LIFETIME).path("token");
        V1ProjectedVolumeSource projected = new V1ProjectedVolumeSource()
                .addSourcesItem(new V1VolumeProjection().serviceAccountToken(token));
        if (shape.mode() != null) {
            projected.defaultMode(shape.mode());
        }
        Map<String, String> attributes = Map.of("projections", "- {path: token, audience: " + AUDIENCE
                + ", expirationSeconds: " + LIFETIME + shape.entry() + "}\n");
        V1PodSpec spec = new V1PodSpec().nodeName(node.nodeName()).serviceAccountName(SA)
                .automountServiceAccountToken(false).terminationGracePeriodSeconds(0L).securityContext(shape.pod())
                .addVolumesItem(new V1Volume().name("kubelet").projected(projected))
                .addVolumesItem(new V1Volume().name("satoken").csi(new V1CSIVolumeSource().driver(CsiDriverNode.DRIVER)
                        .readOnly(true).volumeAttributes(attributes)));
        for (Box box : shape.boxes()) {
            V1Container container = new V1Container().name(box.name()).image(TestImages.BUSYBOX)
                    .command(List.of("sh", "-c", box.init() ? PROBE : PROBE + "; exec sleep 86400"))
                    .securityContext(box.context());
            for (String volume : List.of("kubelet", "satoken")) {
                V1VolumeMount mount = new V1VolumeMount().name(volume).readOnly(true);
                container.addVolumeMountsItem(shape.subPath() ? mount.mountPath("/" + volume + "/token").subPath("token")
                        : mount.mountPath("/" + volume));
            }
            if (box.init()) {
                spec.addInitContainersItem(container);
            } else {
                spec.addContainersItem(container);
            }
        }
        spec.setOverhead(null); // client-java sends "overhead": {} otherwise, which the API server refuses
        return new V1Pod().metadata(new V1ObjectMeta().name(shape.name()).namespace(namespace)).spec(spec);
    }

    /** The container's probe lines from its log: {@code kubelet}, {@code satoken} and {@code id} to the rest. */
    private static Map<String, String> report(KubeletNode node, String namespace, String pod, String container)
            throws ApiException {
        CoreV1Api core = new CoreV1Api(node.adminClient());
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            String log = core.readNamespacedPodLog(pod, namespace).container(container).execute();
            Map<String, String> lines = new LinkedHashMap<>();
            for (String line : log == null ? List.<String>of() : log.lines().toList()) {
                String[] parts = line.split(" ", 3);
                if (parts.length == 3 && parts[0].equals("probe")) {
                    lines.put(parts[1], parts[2]);
                }
            }
            if (lines.keySet().containsAll(List.of("kubelet", "satoken", "id"))) {
                return lines;
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("no probe report from " + pod + "/" + container + " in 30 s; its log:\n" + log);
            }
            SatokenProcess.pause(Duration.ofMillis(200));
        }
    }

    /** {@code read 600 1000 0} or {@code denied -}. */
    private static Probe probe(String line) {
        String[] parts = line.split(" ", 2);
        return new Probe(parts[0].equals("read"), parts[1]);
    }

    /** Mode (octal), uid and gid of the file a path leads to, as root on the node sees it. */
    private static String statOnNode(Path file) throws IOException {
        int mode = (Integer) Files.getAttribute(file, "unix:mode") & 07777;
        return Integer.toOctalString(mode) + " " + Files.getAttribute(file, "unix:uid") + " "
                + Files.getAttribute(file, "unix:gid");
    }

    private static String table(List<Row> rows) {
        StringBuilder out = new StringBuilder("| shape | container | uid, groups | kubelet's token | satoken's token "
                + "| files on the node (kubelet / satoken) | same |\n|---|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            out.append("| ").append(r.shape().name()).append(" | ").append(r.container()).append(" | ")
                    .append(r.process().replace(" ", ", ")).append(" | ").append(r.kubelet()).append(" | ")
                    .append(r.satoken()).append(" | ").append(r.kubeletOnNode()).append(" / ").append(r.satokenOnNode())
                    .append(r.shape().asked() == null ? "" : " (asked)").append(" | ")
                    .append(r.same() ? "yes" : "**no**").append(" |\n");
        }
        return out.toString();
    }
}
