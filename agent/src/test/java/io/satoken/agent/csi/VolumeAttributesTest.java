package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.agent.projection.PodIdentity;
import io.satoken.common.projection.InvalidProjectionException;
import io.satoken.common.projection.ProjectionSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A CSI volume's {@code volumeAttributes} and the kubelet's pod info: what a pod may ask for, and every refusal. */
class VolumeAttributesTest {

    private static final String UID = "0b7e6f0a-1111-2222-3333-444455556666";
    private static final PodIdentity WEB = new PodIdentity("shop", "web-0", UID, "app");
    private static final String NOT_WITH_PROJECTIONS = "may not be given with volumeAttributes.projections;"
            + " give it in the list's entries";
    private static final String PODINFO = "Required value: the kubelet gives the pod's identity only when the"
            + " CSIDriver tokens.satoken.io has podInfoOnMount: true";

    /** What the kubelet adds for a pod's inline volume (podInfoOnMount: true), then the pod's own attributes. */
    private static Map<String, String> attributes(String... keyValues) {
        Map<String, String> attributes = new HashMap<>(Map.of(
                "csi.storage.k8s.io/pod.name", "web-0",
                "csi.storage.k8s.io/pod.namespace", "shop",
                "csi.storage.k8s.io/pod.uid", UID,
                "csi.storage.k8s.io/serviceAccount.name", "app",
                "csi.storage.k8s.io/ephemeral", "true"));
        for (int i = 0; i < keyValues.length; i += 2) {
            if (keyValues[i + 1] == null) {
                attributes.remove(keyValues[i]);
            } else {
                attributes.put(keyValues[i], keyValues[i + 1]);
            }
        }
        return attributes;
    }

    private static ProjectionSpec file(String path, String audience, long expirationSeconds) {
        return new ProjectionSpec(path, audience, expirationSeconds, null, null, null);
    }

    record Valid(String name, Map<String, String> attributes, List<ProjectionSpec> files) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Valid> valid() {
        return Stream.of(
                // PV-2, PV-3: one file "token", 3600 s, no audience (the API server's own)
                new Valid("nothing asked: the defaults", attributes(), List.of(file("token", null, 3600))),
                new Valid("one file, every attribute", attributes("audience", "vault", "expirationSeconds", "7200",
                        "path", "vault/token"), List.of(file("vault/token", "vault", 7200))),
                // PV-8: any audience string
                new Valid("audience any string", attributes("audience", "https://sts.amazonaws.com/ x"),
                        List.of(file("token", "https://sts.amazonaws.com/ x", 3600))),
                // PV-14: an empty audience is none at all
                new Valid("audience empty", attributes("audience", ""), List.of(file("token", null, 3600))),
                // PV-4, PV-5: both bounds are allowed
                new Valid("expirationSeconds 600", attributes("expirationSeconds", "600"), List.of(file("token", null, 600))),
                new Valid("expirationSeconds 2^32", attributes("expirationSeconds", "4294967296"),
                        List.of(file("token", null, 1L << 32))),
                new Valid("expirationSeconds with spaces", attributes("expirationSeconds", " 900 "),
                        List.of(file("token", null, 900))),
                // AW-15: accepted paths, cleaned
                new Valid("path cleaned", attributes("path", "./a//token"), List.of(file("a/token", null, 3600))),
                new Valid("path a dotfile", attributes("path", ".token"), List.of(file(".token", null, 3600))),
                new Valid("projections, YAML", attributes("projections", """
                        - {path: vault/token, audience: vault}
                        - {path: sts/token, audience: sts.amazonaws.com, expirationSeconds: 7200}
                        """), List.of(file("vault/token", "vault", 3600), file("sts/token", "sts.amazonaws.com", 7200))),
                new Valid("projections, JSON", attributes("projections", "[{\"path\": \"t\", \"mode\": \"0440\"}]"),
                        List.of(new ProjectionSpec("t", null, 3600, 0440, null, null))),
                new Valid("other kubelet keys are the kubelet's business",
                        attributes("csi.storage.k8s.io/some.future.key", "x"), List.of(file("token", null, 3600))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valid")
    void parse_valid(Valid c) throws InvalidProjectionException {
        VolumeAttributes.Request request = VolumeAttributes.parse(c.attributes());

        assertThat(request.pod()).isEqualTo(WEB);
        assertThat(request.files()).isEqualTo(c.files());
    }

    @Test
    void parse_identity_isTheKubeletsPodInfo() throws InvalidProjectionException {
        VolumeAttributes.Request request = VolumeAttributes.parse(attributes(
                "csi.storage.k8s.io/pod.name", "api-7", "csi.storage.k8s.io/pod.namespace", "billing",
                "csi.storage.k8s.io/pod.uid", "uid-7", "csi.storage.k8s.io/serviceAccount.name", "billing-api"));

        assertThat(request.pod()).isEqualTo(new PodIdentity("billing", "api-7", "uid-7", "billing-api"));
    }

    record Invalid(String name, Map<String, String> attributes, String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Invalid> invalid() {
        String exp = "volumeAttributes.expirationSeconds: ";
        String path = "volumeAttributes.path: ";
        String list = "volumeAttributes.projections";
        return Stream.of(
                // PV-4, PV-5
                new Invalid("expirationSeconds 60", attributes("expirationSeconds", "60"),
                        exp + "may not specify a duration less than 10 minutes, got \"60\""),
                new Invalid("expirationSeconds 599", attributes("expirationSeconds", "599"),
                        exp + "may not specify a duration less than 10 minutes, got \"599\""),
                new Invalid("expirationSeconds 2^32 + 1", attributes("expirationSeconds", "4294967297"),
                        exp + "may not specify a duration larger than 2^32 seconds, got \"4294967297\""),
                new Invalid("expirationSeconds abc", attributes("expirationSeconds", "abc"),
                        exp + "must be a whole number, got \"abc\""),
                new Invalid("expirationSeconds a duration", attributes("expirationSeconds", "1h"),
                        exp + "must be a whole number, got \"1h\""),
                new Invalid("expirationSeconds beyond a long", attributes("expirationSeconds", "99999999999999999999"),
                        exp + "must be an integer that fits in 64 bits, got \"99999999999999999999\""),
                new Invalid("expirationSeconds empty", attributes("expirationSeconds", ""),
                        exp + "must be a whole number, got \"\""),
                // PV-6, PV-7, AW-15
                new Invalid("path absolute", attributes("path", "/etc/x"), path + "must be a relative path, got \"/etc/x\""),
                new Invalid("path climbs out", attributes("path", "../x"), path + "must not contain '..', got \"../x\""),
                new Invalid("path climbs out later", attributes("path", "a/../../x"),
                        path + "must not contain '..', got \"a/../../x\""),
                new Invalid("path reserved", attributes("path", "..data"), path + "must not start with '..', got \"..data\""),
                new Invalid("path empty", attributes("path", ""), path + "Required value"),
                // the attribute names
                new Invalid("unknown attribute", attributes("audiences", "vault"), "volumeAttributes.audiences: unknown"
                        + " attribute; the attributes are audience, expirationSeconds, path, projections, reloadContainer,"
                        + " reloadSignal"),
                new Invalid("attribute names are case-sensitive", attributes("Path", "t"), "volumeAttributes.Path:"
                        + " unknown attribute; the attributes are audience, expirationSeconds, path, projections,"
                        + " reloadContainer, reloadSignal"),
                // one way or the other, not both
                new Invalid("projections with audience", attributes("projections", "- {path: t}", "audience", "vault"),
                        "volumeAttributes.audience: " + NOT_WITH_PROJECTIONS),
                new Invalid("projections with path and expirationSeconds", attributes("projections", "- {path: t}",
                        "path", "t", "expirationSeconds", "600"), "volumeAttributes.expirationSeconds: "
                        + NOT_WITH_PROJECTIONS + "; volumeAttributes.path: " + NOT_WITH_PROJECTIONS),
                // the list, named after the attribute
                new Invalid("projections entry path absolute", attributes("projections", "- {path: /etc/x}"),
                        list + "[0].path: must be a relative path, got \"/etc/x\""),
                new Invalid("projections entry expiration 60", attributes("projections",
                        "- {path: a}\n- {path: b, expirationSeconds: 60}"),
                        list + "[1].expirationSeconds: may not specify a duration less than 10 minutes, got 60"),
                new Invalid("projections entry unknown key", attributes("projections", "- {path: a, audiences: [x]}"),
                        list + "[0]: unknown key \"audiences\" (known keys: path, audience, expirationSeconds, mode,"
                                + " uid, gid)"),
                new Invalid("projections same file twice", attributes("projections", "- {path: t}\n- {path: ./t}"),
                        list + "[1].path: must not name the same file as " + list + "[0].path, got \"./t\""),
                new Invalid("projections empty", attributes("projections", "[]"),
                        list + ": must be a non-empty list of maps, got an empty list"),
                new Invalid("projections a map", attributes("projections", "path: t"),
                        list + ": must be a non-empty list of maps, got a map"),
                // the kubelet's pod info
                new Invalid("no pod info", attributes("csi.storage.k8s.io/pod.name", null,
                        "csi.storage.k8s.io/pod.namespace", null, "csi.storage.k8s.io/pod.uid", null,
                        "csi.storage.k8s.io/serviceAccount.name", null),
                        "volumeAttributes.csi.storage.k8s.io/pod.namespace: " + PODINFO + " (missing"
                                + " csi.storage.k8s.io/pod.namespace, csi.storage.k8s.io/pod.name,"
                                + " csi.storage.k8s.io/pod.uid, csi.storage.k8s.io/serviceAccount.name)"),
                new Invalid("no ServiceAccount in the pod info", attributes("csi.storage.k8s.io/serviceAccount.name", ""),
                        "volumeAttributes.csi.storage.k8s.io/serviceAccount.name: " + PODINFO
                                + " (missing csi.storage.k8s.io/serviceAccount.name)"),
                new Invalid("not ephemeral", attributes("csi.storage.k8s.io/ephemeral", "false"),
                        "volumeAttributes.csi.storage.k8s.io/ephemeral: must be \"true\": tokens.satoken.io serves only"
                                + " inline (ephemeral) volumes in a pod's spec, not PersistentVolumes"),
                new Invalid("ephemeral not said", attributes("csi.storage.k8s.io/ephemeral", null),
                        "volumeAttributes.csi.storage.k8s.io/ephemeral: must be \"true\": tokens.satoken.io serves only"
                                + " inline (ephemeral) volumes in a pod's spec, not PersistentVolumes"),
                new Invalid("pod uid a path", attributes("csi.storage.k8s.io/pod.uid", "../x"),
                        "volumeAttributes.csi.storage.k8s.io/pod.uid: must be a plain name, got \"../x\""),
                // all at once, in a stable order
                new Invalid("several errors", attributes("zeta", "1", "alpha", "2", "path", "/t", "expirationSeconds", "6"),
                        "volumeAttributes.alpha: unknown attribute; the attributes are audience, expirationSeconds, path,"
                                + " projections, reloadContainer, reloadSignal; volumeAttributes.zeta: unknown attribute;"
                                + " the attributes are audience, expirationSeconds, path, projections, reloadContainer,"
                                + " reloadSignal; " + path + "must be a relative path, got \"/t\"; " + exp
                                + "may not specify a duration less than 10 minutes, got \"6\""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void parse_invalid_namesTheAttributeAndTheRule(Invalid c) {
        assertThatThrownBy(() -> VolumeAttributes.parse(c.attributes()))
                .isInstanceOf(InvalidProjectionException.class)
                .hasMessage(c.message());
    }
}
