package io.satoken.controlplane.admission;

import io.satoken.common.projection.ProjectionAnnotation;
import io.satoken.controlplane.admission.view.ContainerView;
import io.satoken.controlplane.admission.view.PodView;
import io.satoken.controlplane.admission.view.TokenRequestView;
import io.satoken.controlplane.admission.view.VolumeView;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the admission rules read of an AdmissionReview, as the shape {@code webhook.ReviewReader} keeps: every member a
 * rule reads (through {@code webhook.AdmissionReviews}, {@link PodView}, {@link ContainerView}, {@link VolumeView},
 * {@link TokenRequestView} and {@link PodMutation}) is named here, and nothing else is kept. The object is read
 * before the review says what it is, so {@code request.object} has the pod's members and the TokenRequest's.
 *
 * <p>A rule that starts reading another member must name it here, or it reads as absent; the rule tests run every
 * case through the reader too ({@code AdmissionFixtures.throughReader}) and fail when a member is missing.
 */
public sealed interface ReviewShape {

    /** An object: the members {@code named} are kept in their shapes; the others in {@code others}, or skipped if null. */
    record Members(Map<String, ReviewShape> named, ReviewShape others) implements ReviewShape {
        Members(Map<String, ReviewShape> named) {
            this(named, null);
        }

        /** The shape of member {@code name}, or null when it is skipped. */
        public ReviewShape member(String name) {
            ReviewShape shape = named.get(name);
            return shape != null ? shape : others;
        }
    }

    /** A list whose items are kept in {@code item}'s shape. */
    record Items(ReviewShape item) implements ReviewShape {
    }

    /** A string, number, boolean or null, kept as it is. */
    record Scalar() implements ReviewShape {
    }

    /** A value kept whole, whatever it holds: one a rule compares as a whole. */
    record Whole() implements ReviewShape {
    }

    ReviewShape SCALAR = new Scalar();
    ReviewShape WHOLE = new Whole();
    /** An object only tested for: its members are never read. */
    ReviewShape PRESENT = new Members(Map.of());

    /** {@code spec.containers[]}, {@code initContainers[]}, {@code ephemeralContainers[]}: {@link ContainerView}. */
    ReviewShape CONTAINER = new Members(Map.of(
            "name", SCALAR,
            // subPath and subPathExpr: SubPathWarnings
            "volumeMounts", new Items(new Members(Map.of("name", SCALAR, "mountPath", SCALAR, "subPath", SCALAR,
                    "subPathExpr", SCALAR))),
            "env", new Items(new Members(Map.of("name", SCALAR,
                    "valueFrom", new Members(Map.of("secretKeyRef", new Members(Map.of("name", SCALAR))))))),
            "envFrom", new Items(new Members(Map.of("secretRef", new Members(Map.of("name", SCALAR)))))));

    /** {@code spec.volumes[]}: {@link VolumeView}; {@code csi} is compared whole with the agent's volume. */
    ReviewShape VOLUME = volume();

    /** {@code request.object}: a pod ({@link PodView}) or a TokenRequest ({@link TokenRequestView}). */
    ReviewShape OBJECT = new Members(Map.of(
            "kind", SCALAR,
            "metadata", new Members(Map.of("name", SCALAR, "generateName", SCALAR,
                    "annotations", new Members(Map.of(
                            ServiceAccountAdmission.MIRROR_POD_ANNOTATION, SCALAR,
                            ProjectionAnnotation.NAME, SCALAR,
                            AgentTokenInjection.MOUNT_PATH_ANNOTATION, SCALAR,
                            AgentTokenInjection.RELOAD_SIGNAL_ANNOTATION, SCALAR,
                            AgentTokenInjection.RELOAD_CONTAINER_ANNOTATION, SCALAR)))),
            "spec", spec()));

    /** The review, as {@code webhook.AdmissionReviews.read} reads it. */
    ReviewShape REVIEW = new Members(Map.of(
            "apiVersion", SCALAR,
            "kind", SCALAR,
            "request", new Members(Map.ofEntries(
                    Map.entry("uid", SCALAR),
                    Map.entry("resource", new Members(Map.of("group", SCALAR, "version", SCALAR, "resource", SCALAR))),
                    Map.entry("subResource", SCALAR),
                    Map.entry("operation", SCALAR),
                    Map.entry("namespace", SCALAR),
                    Map.entry("name", SCALAR),
                    Map.entry("userInfo", new Members(Map.of("username", SCALAR, "uid", SCALAR,
                            "groups", new Items(SCALAR), "extra", new Members(Map.of(), new Items(SCALAR))))),
                    Map.entry("object", OBJECT),
                    Map.entry("dryRun", SCALAR)))));

    private static ReviewShape spec() {
        Map<String, ReviewShape> spec = new HashMap<>();
        // the pod's
        spec.put("serviceAccountName", SCALAR);
        spec.put("serviceAccount", SCALAR);
        spec.put("automountServiceAccountToken", SCALAR);
        spec.put("volumes", new Items(VOLUME));
        spec.put("imagePullSecrets", new Items(new Members(Map.of("name", SCALAR))));
        for (String list : List.of("initContainers", "containers", "ephemeralContainers")) {
            spec.put(list, new Items(CONTAINER));
        }
        // the TokenRequest's
        spec.put("boundObjectRef", new Members(Map.of("kind", SCALAR, "name", SCALAR, "uid", SCALAR)));
        spec.put("audiences", new Items(SCALAR));
        spec.put("expirationSeconds", SCALAR);
        return new Members(Map.copyOf(spec));
    }

    private static ReviewShape volume() {
        Map<String, ReviewShape> volume = new HashMap<>();
        volume.put("name", SCALAR);
        volume.put("secret", new Members(Map.of("secretName", SCALAR)));
        volume.put("projected", new Members(Map.of("sources", new Items(new Members(Map.of(
                "serviceAccountToken", PRESENT, "secret", PRESENT))))));
        volume.put("azureFile", new Members(Map.of("secretName", SCALAR)));
        for (String kind : VolumeView.SECRET_REF_KINDS) {
            volume.put(kind, new Members(Map.of("secretRef", PRESENT)));
        }
        volume.put("csi", WHOLE);
        return new Members(Map.copyOf(volume));
    }
}
