package io.satoken.agent.csi;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.grpc.Status;
import io.satoken.agent.projection.PodIdentity;
import io.satoken.agent.token.IssuedToken;
import io.satoken.common.projection.CsiVolumeAttributes;
import io.satoken.common.projection.ProjectionSpec;
import io.satoken.common.projection.TokenAsk;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The ServiceAccount tokens the kubelet hands over with a NodePublishVolume when the CSIDriver lists
 * {@code tokenRequests} ({@code tokenSource: kubelet}): where they are, and that they are the pod's.
 *
 * <p>The kubelet mints one token per listed audience, bound to the pod, and sends them as one JSON value
 * ({@value #KEY}: audience → {@code {token, expirationTimestamp}}) in the request's {@code secrets} when the
 * CSIDriver sets {@code serviceAccountTokenInSecrets: true} (1.35+), else in its {@code volume_context}. Secrets
 * are looked at first: a kubelet that puts them there puts nothing in the context.
 *
 * <p>Each token is checked against the pod information of the same request before anything is written: its
 * subject, {@code kubernetes.io} namespace, ServiceAccount, pod name and uid, its audiences (exactly the listed one;
 * for the empty audience, which asks for the API server's own, only that there are some), and that it has not
 * expired. The check catches a token routed to the wrong pod or volume; it is not a defence against a forger. The
 * signature is not checked: only root on this node can reach the CSI socket, and root can write the pod's volume
 * anyway; and the API server's keys are read once per start, so a key it adds later would fail every publish until
 * the agent restarted. (Tokens found on disk at restart are another matter: {@code TokenAdoption} checks those.)
 *
 * <p>No message of this class holds a token, and no JSON or JWT parser's message is passed on, since those may
 * quote their input.
 */
final class KubeletTokens {

    /** The key the kubelet puts the tokens under, in the volume context or the secrets. */
    static final String KEY = "csi.storage.k8s.io/serviceAccount.tokens";
    /** The kubelet's tokens are bound to the pod; only a pod-bound token is written. */
    private static final String KUBERNETES_CLAIM = "kubernetes.io";

    /** Where a request carried its tokens, as logs and metrics name it. */
    enum Via {
        SECRETS("secrets"),
        VOLUME_CONTEXT("volume_context");

        private final String field;

        Via(String field) {
            this.field = field;
        }

        /** The NodePublishVolumeRequest field. */
        String field() {
            return field;
        }
    }

    /**
     * One publish's tokens, by audience ({@code ""} for the API server's own), each already checked against the pod.
     * Its {@code toString} names the audiences only.
     */
    record Delivery(Via via, Map<String, IssuedToken> tokens) {
        Delivery {
            tokens = Map.copyOf(tokens);
        }

        @Override
        public String toString() {
            return "Delivery[via=" + via.field() + ", audiences=" + new TreeMap<>(tokens).keySet() + "]";
        }
    }

    private KubeletTokens() {
    }

    /** The volume context without the tokens, for everything that reads or keeps the pod's attributes. */
    static Map<String, String> withoutTokens(Map<String, String> context) {
        if (!context.containsKey(KEY)) {
            return context;
        }
        Map<String, String> copy = new HashMap<>(context);
        copy.remove(KEY);
        return copy;
    }

    /**
     * Reads and checks the tokens of one publish: from {@code secrets} first, then {@code context}.
     *
     * @throws CsiException FAILED_PRECONDITION when the request carries none (the CSIDriver lists no
     *     {@code tokenRequests}); INVALID_ARGUMENT naming the field and the rule when one is malformed or is not the
     *     pod's
     */
    static Delivery read(Map<String, String> secrets, Map<String, String> context, PodIdentity pod, Instant now)
            throws CsiException {
        Via via;
        String json;
        if (secrets.containsKey(KEY)) {
            via = Via.SECRETS;
            json = secrets.get(KEY);
        } else if (context.containsKey(KEY)) {
            via = Via.VOLUME_CONTEXT;
            json = context.get(KEY);
        } else {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, KEY + ": the kubelet sent no ServiceAccount token,"
                    + " in secrets or volume_context; this agent runs with tokenSource: kubelet, so the CSIDriver "
                    + CsiVolumeAttributes.DRIVER + " must list spec.tokenRequests and set requiresRepublish: true");
        }
        String field = KEY + " (" + via.field() + ")";
        JsonObject object;
        try {
            JsonElement parsed = JsonParser.parseString(json);
            if (!parsed.isJsonObject()) {
                throw new IllegalStateException();
            }
            object = parsed.getAsJsonObject();
        } catch (RuntimeException e) { // the parser's message may quote the input
            throw invalid(field, "must be a JSON object of audience to {\"token\", \"expirationTimestamp\"}");
        }
        if (object.isEmpty()) {
            throw invalid(field, "holds no token; the CSIDriver " + CsiVolumeAttributes.DRIVER
                    + " must list at least one spec.tokenRequests entry");
        }
        Map<String, IssuedToken> tokens = new HashMap<>();
        for (Map.Entry<String, JsonElement> entry : new TreeMap<>(object.asMap()).entrySet()) {
            String audience = entry.getKey();
            String at = field + "[\"" + audience + "\"]";
            tokens.put(audience, token(at, audience, entry.getValue(), pod, now));
        }
        return new Delivery(via, tokens);
    }

    /**
     * Checks the volume's files against what the kubelet delivers: each file's audience must be one the CSIDriver
     * lists, and its {@code expirationSeconds} no shorter than the token's lifetime (the CSIDriver's
     * {@code tokenRequests[].expirationSeconds}, which the file cannot change).
     *
     * @param listForm whether the files came from a {@code projections} list, to name their fields as the pod does
     * @throws CsiException FAILED_PRECONDITION naming the field, the value and the listed audiences
     */
    static void checkFiles(List<ProjectionSpec> files, boolean listForm, Delivery delivery) throws CsiException {
        List<String> errors = new ArrayList<>();
        List<String> listed = delivery.tokens().keySet().stream().sorted().map(a -> "\"" + a + "\"").toList();
        for (int i = 0; i < files.size(); i++) {
            ProjectionSpec file = files.get(i);
            String audience = file.ask().kubeletAudience();
            String prefix = listForm ? CsiVolumeAttributes.field(CsiVolumeAttributes.PROJECTIONS) + "[" + i + "]."
                    : "volumeAttributes.";
            IssuedToken token = delivery.tokens().get(audience);
            if (token == null) {
                errors.add(prefix + "audience: \"" + audience + "\" is not an audience the kubelet mints for this"
                        + " driver; the CSIDriver " + CsiVolumeAttributes.DRIVER + " lists spec.tokenRequests audiences "
                        + listed + ": ask for one of those, or add it to the CSIDriver's tokenRequests"
                        + (audience.isEmpty() ? " (a file without an audience asks for \"\")" : ""));
                continue;
            }
            long lifetime = Duration.between(token.issuedAt(), token.expiresAt()).getSeconds();
            if (lifetime > file.expirationSeconds()) {
                errors.add(prefix + "expirationSeconds: " + file.expirationSeconds() + ", but the kubelet's token for"
                        + " audience \"" + audience + "\" lives " + lifetime + " s (the CSIDriver's"
                        + " tokenRequests[].expirationSeconds sets it): a file may not ask for a shorter life than the"
                        + " CSIDriver gives; set expirationSeconds to at least " + lifetime
                        + " or lower the CSIDriver's");
            }
        }
        if (!errors.isEmpty()) {
            throw new CsiException(Status.Code.FAILED_PRECONDITION, String.join("; ", errors));
        }
    }

    private static IssuedToken token(String at, String audience, JsonElement value, PodIdentity pod, Instant now)
            throws CsiException {
        if (!value.isJsonObject()) {
            throw invalid(at, "must be an object {\"token\", \"expirationTimestamp\"}");
        }
        JsonObject status = value.getAsJsonObject();
        JsonElement text = status.get("token");
        if (text == null || !text.isJsonPrimitive() || !text.getAsJsonPrimitive().isString()
                || text.getAsString().isEmpty()) {
            throw invalid(at + ".token", "must be a non-empty string");
        }
        String jwt = text.getAsString();
        JWTClaimsSet claims;
        try {
            claims = SignedJWT.parse(jwt).getJWTClaimsSet();
        } catch (ParseException | RuntimeException e) { // the parser's message may quote the token
            throw invalid(at + ".token", "must be a signed JWT");
        }
        Instant issuedAt = instant(claims.getIssueTime());
        Instant expiresAt = instant(claims.getExpirationTime());
        if (issuedAt == null || expiresAt == null || !expiresAt.isAfter(issuedAt)) {
            throw invalid(at + ".token", "must carry iat and exp, exp after iat");
        }
        JsonElement timestamp = status.get("expirationTimestamp");
        if (timestamp != null && !timestamp.isJsonNull()) {
            try {
                Instant stated = Instant.parse(timestamp.getAsString());
                expiresAt = stated.isBefore(expiresAt) ? stated : expiresAt; // they agree; trust the earlier
            } catch (RuntimeException e) { // not a string, or not a time
                throw invalid(at + ".expirationTimestamp", "must be an RFC 3339 time");
            }
        }
        String mismatch = mismatch(claims, audience, pod);
        if (mismatch != null) {
            throw invalid(at + ".token", mismatch + "; refusing to write it to pod " + pod);
        }
        if (!expiresAt.isAfter(now) || !expiresAt.isAfter(issuedAt)) {
            throw invalid(at + ".token", "expired at " + expiresAt + " (now " + now + ")");
        }
        return new IssuedToken(jwt, issuedAt, expiresAt);
    }

    /** Why the token is not the pod's token for the audience, or null when it is. Names claims, never the token. */
    private static String mismatch(JWTClaimsSet claims, String audience, PodIdentity pod) {
        String subject = "system:serviceaccount:" + pod.namespace() + ":" + pod.serviceAccount();
        if (!subject.equals(claims.getSubject())) {
            return "its subject is \"" + claims.getSubject() + "\", not the pod's ServiceAccount \"" + subject + "\"";
        }
        List<String> aud = claims.getAudience();
        TokenAsk asked = new TokenAsk(TokenAsk.audiences(audience), 0);
        if (asked.serverOwnAudiences() && aud.isEmpty()) {
            // the agent need not know the API server's own audiences here: the kubelet asked for them
            return "it has no audience, and a token for the API server's own audiences (\"\") must have some";
        }
        if (!asked.serverOwnAudiences() && !aud.equals(asked.audiences())) {
            return "its audiences are " + aud + ", not " + asked.audiences();
        }
        Map<String, Object> kubernetes = object(claims.getClaim(KUBERNETES_CLAIM));
        Map<String, Object> podClaim = object(kubernetes.get("pod"));
        Map<String, Object> account = object(kubernetes.get("serviceaccount"));
        record Claim(String name, Object actual, String expected) {}
        for (Claim c : List.of(
                new Claim("kubernetes.io.namespace", kubernetes.get("namespace"), pod.namespace()),
                new Claim("kubernetes.io.serviceaccount.name", account.get("name"), pod.serviceAccount()),
                new Claim("kubernetes.io.pod.name", podClaim.get("name"), pod.name()),
                new Claim("kubernetes.io.pod.uid", podClaim.get("uid"), pod.uid()))) {
            if (!Objects.equals(c.expected(), c.actual())) {
                return "its " + c.name() + " is " + (c.actual() == null ? "absent" : "\"" + c.actual() + "\"")
                        + ", not the pod's \"" + c.expected() + "\"";
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object claim) {
        return claim instanceof Map<?, ?> map ? (Map<String, Object>) map : Map.of();
    }

    private static Instant instant(Date date) {
        return date == null ? null : date.toInstant();
    }

    private static CsiException invalid(String field, String rule) {
        return new CsiException(Status.Code.INVALID_ARGUMENT, field + ": " + rule);
    }
}
