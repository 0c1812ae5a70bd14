package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.denied;
import static io.satoken.controlplane.admission.AdmissionFixtures.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.gson.JsonObject;
import io.kubernetes.client.openapi.ApiException;
import io.satoken.common.projection.TokenAsk;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * NT-1..NT-6: the agent's token requests are confined to pods on its own node, bound to one live pod by
 * uid, as that pod's ServiceAccount, with an audience and lifetime its agent volume asks for.
 */
class NodeTokenRestrictionTest {

    static final String AGENT = "system:serviceaccount:satoken-agent:satoken-agent";
    static final List<String> API_AUDIENCES = List.of("https://kubernetes.default.svc");
    static final TokenAsk VAULT = new TokenAsk(List.of("vault"), 3600);

    /** The API server's pods by "namespace/name": what a live GET sees now. */
    final Map<String, PodFacts> pods = new HashMap<>();
    int gets;
    final PodFactsLookup lookup = new PodFactsLookup((namespace, name) -> {
        gets++;
        return Optional.ofNullable(pods.get(namespace + "/" + name));
    });
    final NodeTokenRestriction restriction = new NodeTokenRestriction(
            new NodeTokenRestriction.AgentAccount("satoken-agent", "satoken-agent"), lookup,
            ApiAudiences.of(API_AUDIENCES));

    NodeTokenRestrictionTest() {
        pods.put("satoken-agent/agent-a", pod("satoken-agent", "agent-a", "uid-agent-a", "node-a", "satoken-agent"));
        pods.put("ns/web", pod("ns", "web", "uid-web", "node-a", "web", VAULT));
        pods.put("ns/far", pod("ns", "far", "uid-far", "node-b", "web", VAULT));
        pods.put("ns/pending", pod("ns", "pending", "uid-pending", "", "web", VAULT));
    }

    static PodFacts pod(String namespace, String name, String uid, String node, String account,
            TokenAsk... asks) {
        return new PodFacts(namespace, name, uid, node, account, List.of(asks));
    }

    /** A TokenRequest for {@code account} as the API server passes it to validating admission. */
    static AdmissionRequest tokenRequest(String user, Map<String, List<String>> extra, String account, String ref,
            String spec) {
        JsonObject object = json("{'apiVersion':'authentication.k8s.io/v1','kind':'TokenRequest','spec':{"
                + spec + (ref == null ? "" : ",'boundObjectRef':" + ref) + "}}");
        return new AdmissionRequest("uid-1", new AdmissionRequest.GroupVersionResource("", "v1", "serviceaccounts"),
                "token", "CREATE", "ns", account, new AdmissionRequest.UserInfo(user, "", List.of(), extra), object,
                false);
    }

    static AdmissionRequest tokenRequest(String user, Map<String, List<String>> extra, String account, String ref) {
        return tokenRequest(user, extra, account, ref, "'audiences':['vault'],'expirationSeconds':3600");
    }

    /** From the agent pod agent-a, which runs on node-a. */
    static AdmissionRequest fromAgent(String account, String ref) {
        return tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), account, ref);
    }

    static Map<String, List<String>> agentPod(String name, String uid) {
        return Map.of(NodeTokenRestriction.POD_NAME_EXTRA, List.of(name), NodeTokenRestriction.POD_UID_EXTRA, List.of(uid));
    }

    static String podRef(String name, String uid) {
        return "{'kind':'Pod','apiVersion':'v1','name':'" + name + "'" + (uid == null ? "" : ",'uid':'" + uid + "'") + "}";
    }

    static String denial(String reason) {
        return "node-scoped token request by " + AGENT + " denied: " + reason;
    }

    @Test
    void agent_tokenAPodOnItsNodeAsksFor_allowed() throws Exception {
        Verdict verdict = restriction.review(fromAgent("web", podRef("web", "uid-web")));

        assertThat(verdict).isInstanceOf(Verdict.Allowed.class);
    }

    @Test
    void requesterPod_rememberedByUid_targetPodReadLiveEveryTime() throws Exception {
        AdmissionRequest request = fromAgent("web", podRef("web", "uid-web"));
        restriction.review(request);

        assertThat(restriction.review(request).allowed()).isTrue();
        assertThat(gets).as("agent pod once, target pod twice").isEqualTo(3);
    }

    @Test
    void nt1_requesterWithoutPodBoundToken_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, Map.of(), "web", podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).code()).isEqualTo(403);
        assertThat(denied(verdict).message()).contains("NT-1").contains("not bound to a pod");
    }

    @Test
    void nt1_requesterPodWithAnotherUid_denied() throws Exception {
        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-old-agent"), "web",
                podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).contains("NT-1").contains("satoken-agent/agent-a (uid uid-old-agent) does not exist");
    }

    @Test
    void nt2_tokenNotBoundToPod_denied() throws Exception {
        Verdict unbound = restriction.review(fromAgent("web", null));
        Verdict secret = restriction.review(fromAgent("web", "{'kind':'Secret','apiVersion':'v1','name':'s'}"));

        assertThat(denied(unbound).message()).isEqualTo(denial("NT-2: spec.boundObjectRef must name a Pod, got none"));
        assertThat(denied(secret).message()).isEqualTo(denial("NT-2: spec.boundObjectRef must name a Pod, got kind \"Secret\""));
        assertThat(gets).as("only the agent's own pod was read").isEqualTo(1);
    }

    @Test
    void nt2_podReferenceWithoutUid_denied() throws Exception {
        // a uid-less reference would bind to whichever pod holds the name when the API server looks
        Verdict noUid = restriction.review(fromAgent("web", podRef("web", null)));
        Verdict emptyUid = restriction.review(fromAgent("web", podRef("web", "")));

        for (Verdict verdict : List.of(noUid, emptyUid)) {
            assertThat(verdict.allowed()).isFalse();
            assertThat(denied(verdict).code()).isEqualTo(403);
            assertThat(denied(verdict).message()).isEqualTo(denial("NT-2: spec.boundObjectRef.uid: Required value: the token "
                    + "must be bound to one pod by name and uid"));
        }
    }

    @Test
    void nt2_podReferenceWithoutName_denied() throws Exception {
        Verdict verdict = restriction.review(fromAgent("web", "{'kind':'Pod','apiVersion':'v1','uid':'uid-web'}"));

        assertThat(denied(verdict).message()).isEqualTo(denial("NT-2: spec.boundObjectRef.name: Required value: the token "
                + "must be bound to one pod by name and uid"));
    }

    @Test
    void nt3_missingPodOrStaleUid_denied() throws Exception {
        Verdict missing = restriction.review(fromAgent("web", podRef("nope", "uid-nope")));
        Verdict stale = restriction.review(fromAgent("web", podRef("web", "uid-previous-web")));

        assertThat(denied(missing).message()).isEqualTo(denial("NT-3: spec.boundObjectRef: pod ns/nope with uid uid-nope "
                + "does not exist"));
        assertThat(denied(stale).message()).isEqualTo(denial("NT-3: spec.boundObjectRef: pod ns/web with uid "
                + "uid-previous-web does not exist"));
    }

    @Test
    void nt3_podDeletedAfterATokenWasAllowed_getsNoMoreTokens() throws Exception {
        AdmissionRequest request = fromAgent("web", podRef("web", "uid-web"));
        assertThat(restriction.review(request).allowed()).isTrue();

        pods.remove("ns/web");

        assertThat(denied(restriction.review(request)).message()).isEqualTo(denial("NT-3: spec.boundObjectRef: pod ns/web "
                + "with uid uid-web does not exist"));
    }

    @Test
    void nt3_podRecreatedUnderSameNameOnAnotherNode_deniedForEitherUid() throws Exception {
        // the race of the security review: web is deleted and created again on node-b between two requests
        assertThat(restriction.review(fromAgent("web", podRef("web", "uid-web"))).allowed()).isTrue();

        pods.put("ns/web", pod("ns", "web", "uid-web-2", "node-b", "web", VAULT));

        assertThat(denied(restriction.review(fromAgent("web", podRef("web", "uid-web")))).message())
                .isEqualTo(denial("NT-3: spec.boundObjectRef: pod ns/web with uid uid-web does not exist"));
        assertThat(denied(restriction.review(fromAgent("web", podRef("web", "uid-web-2")))).message())
                .isEqualTo(denial("NT-4: pod ns/web is on node node-b, but the agent pod satoken-agent/agent-a is "
                        + "on node node-a (read from the pod)"));
    }

    @Test
    void nt4_podOnAnotherNode_denied() throws Exception {
        Verdict verdict = restriction.review(fromAgent("web", podRef("far", "uid-far")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).message()).isEqualTo(denial("NT-4: pod ns/far is on node node-b, but the agent pod "
                + "satoken-agent/agent-a is on node node-a (read from the pod)"));
    }

    /** From agent-a with a 1.30+ token: its node named in the user's extra. */
    static AdmissionRequest fromAgentNamingNode(String node, String account, String ref) {
        Map<String, List<String>> extra = new HashMap<>(agentPod("agent-a", "uid-agent-a"));
        extra.put(NodeTokenRestriction.NODE_NAME_EXTRA, List.of(node));
        extra.put("authentication.kubernetes.io/node-uid", List.of("uid-" + node));
        return tokenRequest(AGENT, extra, account, ref);
    }

    @Test
    void nt1_tokenNamingItsNode_agentPodNotRead_onlyTheTargetPod() throws Exception {
        Verdict verdict = restriction.review(fromAgentNamingNode("node-a", "web", podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isTrue();
        assertThat(gets).as("the target pod only: the node came with the token").isEqualTo(1);
    }

    @Test
    void nt1_tokenNamingItsNode_agentPodNeedNotBeReadable() throws Exception {
        // the authenticator vouched for the pod; the webhook neither reads it nor caches it
        pods.remove("satoken-agent/agent-a");

        assertThat(restriction.review(fromAgentNamingNode("node-a", "web", podRef("web", "uid-web"))).allowed()).isTrue();
    }

    @Test
    void nt4_tokenNamingItsNode_podOnAnotherNode_denied() throws Exception {
        Verdict verdict = restriction.review(fromAgentNamingNode("node-a", "web", podRef("far", "uid-far")));

        assertThat(denied(verdict).message()).isEqualTo(denial("NT-4: pod ns/far is on node node-b, but the agent pod "
                + "satoken-agent/agent-a is on node node-a (named by its token)"));
        assertThat(gets).isEqualTo(1);
    }

    @Test
    void nt4_theTokensNodeWins_overWhereTheNamedPodIsRead() throws Exception {
        // agent-a's record says node-a, but a token naming node-b is the API server's word for this request
        Verdict verdict = restriction.review(fromAgentNamingNode("node-b", "web", podRef("web", "uid-web")));

        assertThat(denied(verdict).message()).contains("NT-4: pod ns/web is on node node-a").contains("on node node-b");
    }

    @Test
    void nt1_tokenNamingANodeButNoPod_denied() throws Exception {
        // a token bound to a Node object (1.31+) names a node and no pod: not an agent pod's token
        Verdict verdict = restriction.review(tokenRequest(AGENT, Map.of(NodeTokenRestriction.NODE_NAME_EXTRA,
                List.of("node-a")), "web", podRef("web", "uid-web")));

        assertThat(denied(verdict).message()).contains("NT-1").contains("not bound to a pod");
        assertThat(gets).isZero();
    }

    @Test
    void nt1_emptyOrRepeatedNodeExtra_fallsBackToReadingTheAgentPod() throws Exception {
        Map<String, List<String>> empty = new HashMap<>(agentPod("agent-a", "uid-agent-a"));
        empty.put(NodeTokenRestriction.NODE_NAME_EXTRA, List.of(""));
        Map<String, List<String>> twice = new HashMap<>(agentPod("agent-a", "uid-agent-old"));
        twice.put(NodeTokenRestriction.NODE_NAME_EXTRA, List.of("node-a", "node-b"));

        assertThat(restriction.review(tokenRequest(AGENT, empty, "web", podRef("web", "uid-web"))).allowed()).isTrue();
        assertThat(denied(restriction.review(tokenRequest(AGENT, twice, "web", podRef("web", "uid-web")))).message())
                .contains("NT-1: the requester's pod satoken-agent/agent-a (uid uid-agent-old) does not exist");
    }

    @Test
    void nt4_unscheduledPod_denied() throws Exception {
        Verdict verdict = restriction.review(fromAgent("web", podRef("pending", "uid-pending")));

        assertThat(denied(verdict).message()).contains("NT-4: pod ns/pending is not bound to a node");
    }

    @Test
    void nt5_tokenForAnotherServiceAccount_denied() throws Exception {
        Verdict verdict = restriction.review(fromAgent("admin", podRef("web", "uid-web")));

        assertThat(denied(verdict).message()).isEqualTo(denial("NT-5: pod ns/web runs as ServiceAccount web, not admin"));
    }

    record Case(String name, List<TokenAsk> asks, ApiAudiences known, String spec, String denied) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final TokenAsk API_DEFAULT = new TokenAsk(null, 3600);
    static final ApiAudiences UNKNOWN = Optional::empty;

    static Stream<Case> nt6_request_mustBeOneThePodsVolumesAskFor() {
        String vault = "'audiences':['vault'],'expirationSeconds':3600";
        return Stream.of(
                new Case("the asked audience and lifetime", List.of(VAULT), ApiAudiences.of(API_AUDIENCES), vault, null),
                new Case("one of several asks", List.of(new TokenAsk(List.of("a"), 600), VAULT),
                        ApiAudiences.of(API_AUDIENCES), vault, null),
                new Case("no lifetime given: the API server's 3600 (PV-2)", List.of(VAULT), ApiAudiences.of(API_AUDIENCES),
                        "'audiences':['vault']", null),
                new Case("no audience asked: the API server's own, filled in (PV-3)", List.of(API_DEFAULT),
                        ApiAudiences.of(API_AUDIENCES), "'audiences':['https://kubernetes.default.svc'],"
                                + "'expirationSeconds':3600", null),
                new Case("another audience", List.of(VAULT), ApiAudiences.of(API_AUDIENCES),
                        "'audiences':['cluster-admin'],'expirationSeconds':3600",
                        "NT-6: spec.audiences [cluster-admin] and spec.expirationSeconds 3600 are not what pod ns/web's "
                                + "tokens.satoken.io volumes ask for: [{audiences: [vault], expirationSeconds: 3600}]"),
                new Case("an extra audience", List.of(VAULT), ApiAudiences.of(API_AUDIENCES),
                        "'audiences':['vault','other'],'expirationSeconds':3600", "NT-6: spec.audiences [vault, other]"),
                new Case("a longer lifetime", List.of(VAULT), ApiAudiences.of(API_AUDIENCES),
                        "'audiences':['vault'],'expirationSeconds':4294967296",
                        "NT-6: spec.audiences [vault] and spec.expirationSeconds 4294967296 are not what"),
                new Case("the API server's audiences where the volume names one", List.of(VAULT),
                        ApiAudiences.of(API_AUDIENCES), "'audiences':['https://kubernetes.default.svc'],"
                                + "'expirationSeconds':3600", "NT-6: spec.audiences [https://kubernetes.default.svc]"),
                new Case("another audience where the volume names none", List.of(API_DEFAULT),
                        ApiAudiences.of(API_AUDIENCES), vault, "NT-6: spec.audiences [vault] and spec.expirationSeconds "
                                + "3600 are not what pod ns/web's tokens.satoken.io volumes ask for: [{audiences: "
                                + "the API server's own, expirationSeconds: 3600}]"),
                new Case("no audience asked, the API server's audiences unknown", List.of(API_DEFAULT), UNKNOWN,
                        "'audiences':['https://kubernetes.default.svc'],'expirationSeconds':3600",
                        "(the API server's own audiences are not known to the webhook: --api-audiences)"),
                new Case("a pod without an agent volume", List.of(), ApiAudiences.of(API_AUDIENCES), vault,
                        "NT-6: spec.audiences [vault] and spec.expirationSeconds 3600: pod ns/web has no "
                                + "tokens.satoken.io volume, so it asks the agent for no token"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void nt6_request_mustBeOneThePodsVolumesAskFor(Case c) throws Exception {
        pods.put("ns/web", new PodFacts("ns", "web", "uid-web", "node-a", "web", c.asks()));
        NodeTokenRestriction restriction = new NodeTokenRestriction(
                new NodeTokenRestriction.AgentAccount("satoken-agent", "satoken-agent"), lookup, c.known());

        Verdict verdict = restriction.review(tokenRequest(AGENT, agentPod("agent-a", "uid-agent-a"), "web",
                podRef("web", "uid-web"), c.spec()));

        if (c.denied() == null) {
            assertThat(verdict).isNotInstanceOf(Verdict.Denied.class);
        } else {
            assertThat(verdict.allowed()).isFalse();
            assertThat(denied(verdict).code()).isEqualTo(403);
            assertThat(denied(verdict).message()).startsWith(denial("NT-6: ")).contains(c.denied());
        }
    }

    @Test
    void otherRequesters_allowed_withoutALookupOrAReadOfTheObject() throws Exception {
        Verdict kubelet = restriction.review(tokenRequest("system:node:node-a", Map.of(), "admin", podRef("far", null)));
        // an object this check could not read: only userInfo is looked at for anyone but the agent
        AdmissionRequest unreadable = new AdmissionRequest("u", new AdmissionRequest.GroupVersionResource("", "v1",
                "serviceaccounts"), "token", "CREATE", "ns", "web", new AdmissionRequest.UserInfo("alice", "",
                List.of(), Map.of()), json("{'spec':'not an object'}"), false);
        AdmissionRequest update = new AdmissionRequest("u", new AdmissionRequest.GroupVersionResource("", "v1",
                "serviceaccounts"), "", "UPDATE", "ns", "web", new AdmissionRequest.UserInfo(AGENT, "", List.of(),
                Map.of()), json("{}"), false);

        assertThat(kubelet.allowed()).isTrue();
        assertThat(restriction.review(unreadable).allowed()).isTrue();
        assertThat(restriction.review(update).allowed()).isTrue();
        assertThat(gets).isZero();
    }

    @Test
    void restriction_withoutAnAgentAccount_cannotBeBuiltToAllowAll() {
        // no fail-open: the old "no --agent-service-account, allow all" cannot be built
        assertThatThrownBy(() -> new NodeTokenRestriction(null, lookup, ApiAudiences.of(API_AUDIENCES)))
                .isInstanceOf(NullPointerException.class).hasMessage("agent");
    }

    @Test
    void review_unreadablePod_deniedAsUnavailable() throws Exception {
        NodeTokenRestriction failing = new NodeTokenRestriction(
                new NodeTokenRestriction.AgentAccount("satoken-agent", "satoken-agent"),
                new PodFactsLookup((namespace, name) -> {
                    throw new ApiException(503, Map.of(), "{\"kind\":\"Status\",\"message\":\"injected\"}");
                }), ApiAudiences.of(API_AUDIENCES));

        Verdict verdict = failing.review(fromAgent("web", podRef("web", "uid-web")));

        assertThat(verdict.allowed()).isFalse();
        assertThat(denied(verdict).code()).isEqualTo(503);
        assertThat(denied(verdict).message()).endsWith("could not read a pod: 503 Service Unavailable: injected");
    }

    @Test
    void agentAccountFlag_notNamespaceSlashName_rejected() {
        for (String bad : new String[] {"agent", "/agent", "ns/", "a/b/c"}) {
            assertThatThrownBy(() -> NodeTokenRestriction.AgentAccount.parse("--agent-service-account", bad))
                    .hasMessage("--agent-service-account: expected NAMESPACE/NAME, got \"" + bad + "\"");
        }
    }
}
