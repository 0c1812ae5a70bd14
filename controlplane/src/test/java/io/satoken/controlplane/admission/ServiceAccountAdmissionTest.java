package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static io.satoken.controlplane.admission.AdmissionFixtures.enforcing;
import static io.satoken.controlplane.admission.AdmissionFixtures.jackson;
import static io.satoken.controlplane.admission.AdmissionFixtures.json;
import static io.satoken.controlplane.admission.AdmissionFixtures.patched;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static io.satoken.controlplane.admission.AdmissionFixtures.podCreate;
import static io.satoken.controlplane.admission.AdmissionFixtures.request;
import static io.satoken.controlplane.admission.AdmissionFixtures.withPullSecrets;
import static io.satoken.controlplane.admission.AdmissionFixtures.withSecrets;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spec section 5, one case per rule (AD-1..AD-10; AD-11, the v1.17 token Secret volume, is not offered): an AdmissionReview's request in, the JSONPatch applied
 * with zjsonpatch, and the resulting pod (or the denial) compared with the expected one. Every patched case
 * is admitted a second time on its own output, which must add nothing (AD-7a).
 */
public class ServiceAccountAdmissionTest {

    /** AD-6: the injected volume, written out here independently of the code that builds it. */
    static String projected(String name) {
        return "{'name':'" + name + "','projected':{'sources':["
                + "{'serviceAccountToken':{'expirationSeconds':3607,'path':'token'}},"
                + "{'configMap':{'name':'kube-root-ca.crt','items':[{'key':'ca.crt','path':'ca.crt'}]}},"
                + "{'downwardAPI':{'items':[{'path':'namespace','fieldRef':{'apiVersion':'v1',"
                + "'fieldPath':'metadata.namespace'}}]}}],'defaultMode':420}}";
    }

    static String mount(String name) {
        return "{'name':'" + name + "','readOnly':true,'mountPath':'/var/run/secrets/kubernetes.io/serviceaccount'}";
    }

    static final String GENERATED = "kube-api-access-bcdfg";

    sealed interface Expect permits Spec, Denied, Untouched {
    }

    /** Allowed; the pod's spec after the patch. */
    record Spec(String json) implements Expect {
    }

    record Denied(int code, String message) implements Expect {
    }

    /** Allowed with no patch. */
    record Untouched() implements Expect {
    }

    record Case(String rule, String name, AdmissionRequest request, Consumer<AdmissionFixtures.Accounts> accounts,
            boolean limitSecretReferences, Expect expect) {
        @Override
        public String toString() {
            return rule + " " + name;
        }
    }

    static Case create(String rule, String name, JsonObject pod, Consumer<AdmissionFixtures.Accounts> accounts,
            Expect expect) {
        return new Case(rule, name, podCreate(pod), accounts, false, expect);
    }

    static Consumer<AdmissionFixtures.Accounts> cached(V1ServiceAccount... accounts) {
        return a -> Stream.of(accounts).forEach(a::cache);
    }

    static final Consumer<AdmissionFixtures.Accounts> DEFAULT = cached(account("default"));

    static final String ONE_CONTAINER = "{'containers':[{'name':'app','image':'i'}]}";

    static Stream<Case> rules() {
        return Stream.of(
                // AD-1: scope
                new Case("AD-1", "other resources are ignored", request("CREATE", "configmaps", "",
                        json("{'kind':'ConfigMap','metadata':{'name':'p'}}")), DEFAULT, false,
                        new Untouched()),
                new Case("AD-1", "pod subresources other than ephemeralcontainers are ignored",
                        request("CREATE", "pods", "binding", pod(ONE_CONTAINER)), DEFAULT,
                        false, new Untouched()),
                new Case("AD-1", "a request without an object is ignored", request("CREATE", "pods", "", null),
                        DEFAULT, false, new Untouched()),
                new Case("AD-1", "an object that is not a Pod is ignored", request("CREATE", "pods", "",
                        json("{'kind':'Binding','metadata':{'name':'p'}}")), DEFAULT, false,
                        new Untouched()),
                // AD-2
                create("AD-2", "a mirror pod is not mutated", pod("{'kubernetes.io/config.mirror':'x'}", ONE_CONTAINER),
                        DEFAULT, new Untouched()),
                // AD-3
                create("AD-3", "an empty serviceAccountName becomes default, and its token is mounted",
                        pod(ONE_CONTAINER), DEFAULT, new Spec("{'containers':[{'name':'app','image':'i','volumeMounts':["
                                + mount(GENERATED) + "]}],'serviceAccountName':'default','volumes':["
                                + projected(GENERATED) + "]}")),
                // AD-4
                create("AD-4", "a ServiceAccount missing from the cache is found with a live GET",
                        pod("{'serviceAccountName':'fresh','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        a -> a.onlyLive(account("fresh")), new Untouched()),
                create("AD-4", "a missing ServiceAccount is Forbidden",
                        pod("{'serviceAccountName':'missing','containers':[{'name':'app','image':'i'}]}"), DEFAULT,
                        new Denied(403, "pods \"p\" is forbidden: error looking up service account ns/missing: "
                                + "serviceaccount \"missing\" not found")),
                create("AD-4", "a failed live lookup is Forbidden at once",
                        pod("{'serviceAccountName':'other','containers':[{'name':'app','image':'i'}]}"),
                        a -> a.failLiveWith = 500,
                        new Denied(403, "pods \"p\" is forbidden: error looking up service account ns/other: 500 "
                                + "Internal Server Error: injected")),
                // AD-5
                create("AD-5", "the pod's automountServiceAccountToken: false wins over the ServiceAccount",
                        pod("{'automountServiceAccountToken':false,'serviceAccountName':'default',"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        DEFAULT, new Untouched()),
                create("AD-5", "the ServiceAccount's automountServiceAccountToken: false is used when the pod is silent",
                        pod("{'serviceAccountName':'quiet','containers':[{'name':'app','image':'i'}]}"),
                        cached(account("quiet").automountServiceAccountToken(false)), new Untouched()),
                create("AD-5", "the pod's true wins over the ServiceAccount's false",
                        pod("{'automountServiceAccountToken':true,'serviceAccountName':'quiet',"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        cached(account("quiet").automountServiceAccountToken(false)),
                        new Spec("{'automountServiceAccountToken':true,'serviceAccountName':'quiet',"
                                + "'containers':[{'name':'app','image':'i','volumeMounts':[" + mount(GENERATED) + "]}],"
                                + "'volumes':[" + projected(GENERATED) + "]}")),
                // AD-6
                create("AD-6", "init and regular containers get the mount, ephemeral containers do not",
                        pod("{'serviceAccountName':'default','initContainers':[{'name':'init','image':'i'}],"
                                + "'containers':[{'name':'app','image':'i','volumeMounts':[{'name':'data',"
                                + "'mountPath':'/data'}]}],'ephemeralContainers':[{'name':'debug','image':'i'}],"
                                + "'volumes':[{'name':'data','emptyDir':{}}]}"),
                        DEFAULT, new Spec("{'serviceAccountName':'default','initContainers':[{'name':'init','image':'i',"
                                + "'volumeMounts':[" + mount(GENERATED) + "]}],'containers':[{'name':'app','image':'i',"
                                + "'volumeMounts':[{'name':'data','mountPath':'/data'}," + mount(GENERATED) + "]}],"
                                + "'ephemeralContainers':[{'name':'debug','image':'i'}],'volumes':[{'name':'data',"
                                + "'emptyDir':{}}," + projected(GENERATED) + "]}")),
                create("AD-6", "a container with any mount at the path is left alone, even a writable one",
                        pod("{'serviceAccountName':'default','containers':[{'name':'own','image':'i','volumeMounts':"
                                + "[{'name':'mine','mountPath':'/var/run/secrets/kubernetes.io/serviceaccount'}]},"
                                + "{'name':'app','image':'i'}],'volumes':[{'name':'mine','emptyDir':{}}]}"),
                        DEFAULT, new Spec("{'serviceAccountName':'default','containers':[{'name':'own','image':'i',"
                                + "'volumeMounts':[{'name':'mine','mountPath':'/var/run/secrets/kubernetes.io/"
                                + "serviceaccount'}]},{'name':'app','image':'i','volumeMounts':[" + mount(GENERATED)
                                + "]}],'volumes':[{'name':'mine','emptyDir':{}}," + projected(GENERATED) + "]}")),
                create("AD-6", "no volume is added when every container already mounts the path",
                        pod("{'serviceAccountName':'default','containers':[{'name':'own','image':'i','volumeMounts':"
                                + "[{'name':'mine','mountPath':'/var/run/secrets/kubernetes.io/serviceaccount'}]}],"
                                + "'volumes':[{'name':'mine','emptyDir':{}}]}"),
                        DEFAULT, new Untouched()),
                create("AD-6", "the first existing kube-api-access- volume is reused and not changed",
                        pod("{'serviceAccountName':'default','containers':[{'name':'app','image':'i'}],"
                                + "'volumes':[{'name':'kube-api-access-first','emptyDir':{}},"
                                + "{'name':'kube-api-access-second','emptyDir':{}}]}"),
                        DEFAULT, new Spec("{'serviceAccountName':'default','containers':[{'name':'app','image':'i',"
                                + "'volumeMounts':[" + mount("kube-api-access-first") + "]}],'volumes':["
                                + "{'name':'kube-api-access-first','emptyDir':{}},"
                                + "{'name':'kube-api-access-second','emptyDir':{}}]}")),
                // AD-7
                create("AD-7", "a pod without image pull secrets gets the ServiceAccount's, names only, in order",
                        pod("{'serviceAccountName':'puller','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        cached(withPullSecrets(account("puller"), "b-registry", "a-registry")),
                        new Spec("{'serviceAccountName':'puller','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],"
                                + "'imagePullSecrets':[{'name':'b-registry'},{'name':'a-registry'}]}")),
                create("AD-7", "a pod with image pull secrets keeps them and gets none merged",
                        pod("{'serviceAccountName':'puller','automountServiceAccountToken':false,"
                                + "'imagePullSecrets':[{'name':'own'}],'containers':[{'name':'app','image':'i'}]}"),
                        cached(withPullSecrets(account("puller"), "a-registry")), new Untouched()),
                // AD-8
                new Case("AD-8", "an ephemeral container update without a ServiceAccount is Forbidden",
                        request("UPDATE", "pods", "ephemeralcontainers", pod(ONE_CONTAINER)), DEFAULT, false,
                        new Denied(403, "pods \"p\" is forbidden: no service account specified for pod ns/p")),
                new Case("AD-8", "an ephemeral container update naming a missing ServiceAccount is Forbidden",
                        request("UPDATE", "pods", "ephemeralcontainers",
                                pod("{'serviceAccountName':'gone','containers':[{'name':'app','image':'i'}]}")),
                        DEFAULT, false,
                        new Denied(403, "pods \"p\" is forbidden: error looking up service account ns/gone: "
                                + "serviceaccount \"gone\" not found")),
                new Case("AD-8", "an ephemeral container may not use a secret the enforcing ServiceAccount lacks",
                        request("UPDATE", "pods", "ephemeralcontainers",
                                pod("{'serviceAccountName':'strict','containers':[{'name':'app','image':'i'}],"
                                        + "'ephemeralContainers':[{'name':'debug','image':'i','env':[{'name':'K',"
                                        + "'valueFrom':{'secretKeyRef':{'name':'db','key':'k'}}}]}]}")),
                        cached(enforcing(account("strict"), "true")), false,
                        new Denied(403, "pods \"p\" is forbidden: ephemeral container debug with envVar K referencing "
                                + "secret.secretName=\"db\" is not allowed because service account strict does not "
                                + "reference that secret")),
                new Case("AD-8", "ephemeral container updates check neither volumes nor pull secrets",
                        request("UPDATE", "pods", "ephemeralcontainers",
                                pod("{'serviceAccountName':'strict','imagePullSecrets':[{'name':'x'}],"
                                        + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'s',"
                                        + "'secret':{'secretName':'other'}}],'ephemeralContainers':[{'name':'debug',"
                                        + "'image':'i'}]}")),
                        cached(enforcing(account("strict"), "true")), false, new Untouched()),
                // AD-9
                new Case("AD-9", "updates are allowed unchanged", request("UPDATE", "pods", "",
                        pod("{'serviceAccountName':'gone','containers':[{'name':'app','image':'i'}]}")), DEFAULT, false, new Untouched()),
                create("AD-9", "a mirror pod may not name a ServiceAccount",
                        pod("{'kubernetes.io/config.mirror':'x'}", "{'serviceAccountName':'default',"
                                + "'containers':[{'name':'app','image':'i'}]}"), DEFAULT,
                        new Denied(403, "pods \"p\" is forbidden: a mirror pod may not reference service accounts")),
                create("AD-9", "a mirror pod may not reference a secret, here through a CSI volume",
                        pod("{'kubernetes.io/config.mirror':'x'}", "{'containers':[{'name':'app','image':'i'}],"
                                + "'volumes':[{'name':'v','csi':{'driver':'d','nodePublishSecretRef':{'name':'s'}}}]}"),
                        DEFAULT, new Denied(403, "pods \"p\" is forbidden: a mirror pod may not reference secrets")),
                create("AD-9", "a mirror pod may not reference a secret through an ephemeral container's envFrom",
                        pod("{'kubernetes.io/config.mirror':'x'}", "{'containers':[{'name':'app','image':'i'}],"
                                + "'ephemeralContainers':[{'name':'e','image':'i','envFrom':[{'secretRef':"
                                + "{'name':'s'}}]}]}"),
                        DEFAULT, new Denied(403, "pods \"p\" is forbidden: a mirror pod may not reference secrets")),
                create("AD-9", "a mirror pod may not project a ServiceAccount token",
                        pod("{'kubernetes.io/config.mirror':'x'}", "{'containers':[{'name':'app','image':'i'}],"
                                + "'volumes':[{'name':'t','projected':{'sources':[{'serviceAccountToken':"
                                + "{'path':'t'}}]}}]}"),
                        DEFAULT, new Denied(403, "pods \"p\" is forbidden: a mirror pod may not use "
                                + "ServiceAccountToken volume projections")),
                create("AD-9", "enforced: a secret volume the ServiceAccount does not reference",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'v','secret':"
                                + "{'secretName':'other'}}]}"),
                        cached(enforcing(withSecrets(account("strict"), "mine"), "true")),
                        new Denied(403, "pods \"p\" is forbidden: volume with secret.secretName=\"other\" is not "
                                + "allowed because service account strict does not reference that secret")),
                create("AD-9", "enforced: projected secret sources are not checked",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'v','projected':"
                                + "{'sources':[{'secret':{'name':'other'}}]}}]}"),
                        cached(enforcing(account("strict"), "true")), new Untouched()),
                create("AD-9", "enforced: an init container's envFrom secret",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'initContainers':[{'name':'init','image':'i','envFrom':[{'secretRef':{'name':'x'}}]}],"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        cached(enforcing(account("strict"), "true")),
                        new Denied(403, "pods \"p\" is forbidden: init container init with envFrom referencing "
                                + "secret.secretName=\"x\" is not allowed because service account strict does not "
                                + "reference that secret")),
                create("AD-9", "enforced: a container's env secret",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i','env':[{'name':'PW','valueFrom':"
                                + "{'secretKeyRef':{'name':'db','key':'pw'}}}]}]}"),
                        cached(enforcing(withSecrets(account("strict"), "mine"), "true")),
                        new Denied(403, "pods \"p\" is forbidden: container app with envVar PW referencing "
                                + "secret.secretName=\"db\" is not allowed because service account strict does not "
                                + "reference that secret")),
                create("AD-9", "enforced: an image pull secret the ServiceAccount does not list",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'imagePullSecrets':[{'name':'ok'},{'name':'nope'}],"
                                + "'containers':[{'name':'app','image':'i'}]}"),
                        cached(enforcing(withPullSecrets(account("strict"), "ok"), "true")),
                        new Denied(403, "pods \"p\" is forbidden: imagePullSecrets[1].name=\"nope\" is not allowed "
                                + "because service account strict does not reference that imagePullSecret")),
                create("AD-9", "enforced: referenced secrets are allowed",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i','env':[{'name':'PW','valueFrom':"
                                + "{'secretKeyRef':{'name':'db','key':'pw'}}}]}],'volumes':[{'name':'v','secret':"
                                + "{'secretName':'db'}}]}"),
                        cached(enforcing(withSecrets(account("strict"), "db"), "true")), new Untouched()),
                // AD-10
                create("AD-10", "an annotation that is not a Go boolean true leaves enforcement off",
                        pod("{'serviceAccountName':'lax','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'v','secret':"
                                + "{'secretName':'other'}}]}"),
                        cached(enforcing(account("lax"), "yes")), new Untouched()),
                create("AD-10", "the annotation value T is a Go boolean true",
                        pod("{'serviceAccountName':'strict','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'v','secret':"
                                + "{'secretName':'other'}}]}"),
                        cached(enforcing(account("strict"), "T")),
                        new Denied(403, "pods \"p\" is forbidden: volume with secret.secretName=\"other\" is not "
                                + "allowed because service account strict does not reference that secret")),
                new Case("AD-10", "--admission-limit-secret-references enforces for every ServiceAccount",
                        podCreate(pod("{'serviceAccountName':'default','automountServiceAccountToken':false,"
                                + "'containers':[{'name':'app','image':'i'}],'volumes':[{'name':'v','secret':"
                                + "{'secretName':'other'}}]}")), DEFAULT, true,
                        new Denied(403, "pods \"p\" is forbidden: volume with secret.secretName=\"other\" is not "
                                + "allowed because service account default does not reference that secret")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void rules(Case c) throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        c.accounts().accept(accounts);
        Admission mutation = AdmissionFixtures.checkedThroughReader(mutation(accounts, c.limitSecretReferences()));

        JsonObject original = c.request().object() == null ? null : c.request().object().deepCopy();
        Verdict verdict = mutation.review(c.request());

        if (c.expect() instanceof Denied denied) {
            assertThat(verdict.allowed()).isFalse();
            assertThat(AdmissionFixtures.denied(verdict).message()).isEqualTo(denied.message());
            assertThat(AdmissionFixtures.denied(verdict).code()).isEqualTo(denied.code());
        } else if (c.expect() instanceof Untouched) {
            assertThat(verdict).isInstanceOf(Verdict.Allowed.class);
        } else if (c.expect() instanceof Spec spec) {
            assertThat(verdict).isNotInstanceOf(Verdict.Denied.class);
            JsonNode result = patched(original, verdict);
            assertThat(result.get("spec")).isEqualTo(jackson(spec.json()));
            assertThat(result.get("metadata")).isEqualTo(jackson(original.get("metadata").toString()));
            // AD-7a: admitting the result again adds nothing
            Verdict again = mutation.review(request(c.request().operation(), "pods", c.request().subResource(),
                    AdmissionFixtures.gson(result)));
            assertThat(again.allowed()).isTrue();
            assertThat(again).isInstanceOf(Verdict.Allowed.class);
        }
    }

    public static PodMutation mutation(AdmissionFixtures.Accounts accounts, boolean limit) {
        return new PodMutation(new ServiceAccountAdmission(accounts.lookup(), limit, () -> "bcdfg"),
                new AgentTokenInjection());
    }
}
