package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import io.satoken.common.projection.TokenAsk;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * NT-6's input: the requests a pod's tokens.satoken.io volumes let the agent make, defaulted as the agent's
 * VolumeAttributes and PodProjections default them (PV-2, PV-3, PV-4, PV-5, PV-14).
 */
class CsiTokenRequestsTest {

    record Case(String name, String volumes, List<TokenAsk> expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static TokenAsk shape(String audience, long seconds) {
        return new TokenAsk(audience == null ? null : List.of(audience), seconds);
    }

    static String csi(String attributes) {
        return "{'name':'t','csi':{'driver':'tokens.satoken.io','readOnly':true,'volumeAttributes':" + attributes + "}}";
    }

    static Stream<Case> of_agentVolumes_requestsTheAgentWouldMake() {
        return Stream.of(
                new Case("one file with audience and lifetime", csi("{'audience':'vault','expirationSeconds':'1800'}"),
                        List.of(shape("vault", 1800))),
                new Case("one file with nothing given: the API server's audiences, 3600 s", csi("{}"),
                        List.of(shape(null, 3600))),
                new Case("no attributes at all", "{'name':'t','csi':{'driver':'tokens.satoken.io'}}",
                        List.of(shape(null, 3600))),
                new Case("an empty audience is none (PV-3)", csi("{'audience':'','path':'a'}"), List.of(shape(null, 3600))),
                new Case("a lifetime with spaces, as the agent trims it", csi("{'expirationSeconds':' 900 '}"),
                        List.of(shape(null, 900))),
                new Case("a projections list, parsed by common",
                        csi("{'projections':'- path: a\\n  audience: vault\\n- path: b\\n  expirationSeconds: 600\\n'}"),
                        List.of(shape("vault", 3600), shape(null, 600))),
                new Case("every agent volume counts",
                        csi("{'audience':'a'}") + "," + csi("{'audience':'b','expirationSeconds':'7200'}"),
                        List.of(shape("a", 3600), shape("b", 7200))),
                new Case("other drivers and volume types ask for nothing",
                        "{'name':'x','csi':{'driver':'secrets-store.csi.k8s.io','volumeAttributes':{'audience':'a'}}},"
                                + "{'name':'y','emptyDir':{}}", List.of()),
                new Case("a lifetime under 600 s is refused by the agent (PV-4)", csi("{'expirationSeconds':'599'}"),
                        List.of()),
                new Case("a lifetime over 2^32 s is refused by the agent (PV-5)",
                        csi("{'expirationSeconds':'4294967297'}"), List.of()),
                new Case("a lifetime that is not a number", csi("{'expirationSeconds':'1h'}"), List.of()),
                new Case("both forms at once are refused by the agent",
                        csi("{'audience':'a','projections':'- path: a\\n'}"), List.of()),
                new Case("an invalid projections list", csi("{'projections':'- path: /etc/passwd\\n'}"), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void of_agentVolumes_requestsTheAgentWouldMake(Case c) throws Exception {
        JsonObject spec = json("{'containers':[{'name':'app'}],'volumes':[" + c.volumes() + "]}");

        assertThat(CsiTokenRequests.of(spec)).isEqualTo(c.expected());
    }
}
