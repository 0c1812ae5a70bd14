package io.satoken.e2e;

import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The malformed requests {@link BadInputE2E} sends the admission webhook, each with the answer README
 * ("Admission webhook", "Limits") and {@code AdmissionReviews} document: a review that cannot be read is
 * HTTP 200 with a denial, status 400, naming the field; an invalid {@code satoken.io/projections} is a 422
 * with the agent's own message; a ServiceAccount that does not exist is a 403; a wrong method is 405, a
 * wrong path 404, a wrong content type 415, a body over 7 MiB 413, headers that do not arrive within 10 s
 * 408, a body that falls behind the minimum pace 408, JSON nested deeper than 64 levels 400; plain HTTP gets no
 * HTTP answer.
 */
final class BadReviews {

    static final String MUTATE = "/mutate/pods";
    static final String VALIDATE = "/validate/serviceaccount-token";
    private static final int MAX_BODY = 7 * 1024 * 1024;

    private final String namespace;

    BadReviews(String namespace) {
        this.namespace = namespace;
    }

    /** A pod CREATE review with {@code object} as the pod's JSON. */
    static String review(String uid, String namespace, String object) {
        return "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"" + uid
                + "\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
                + "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},\"operation\":\"CREATE\","
                + "\"namespace\":\"" + namespace + "\",\"name\":\"p\",\"userInfo\":{\"username\":\"alice\","
                + "\"groups\":[\"system:authenticated\"],\"extra\":{\"x\":[\"y\"]}},\"object\":" + object + "}}";
    }

    /** A pod with one container, and the annotation when {@code projections} is not null. */
    static String pod(String projections) {
        JsonObject pod = BadInputE2E.object("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"
                + "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"busybox\"}]}}");
        if (projections != null) {
            JsonObject annotations = new JsonObject();
            annotations.addProperty("satoken.io/projections", projections);
            pod.getAsJsonObject("metadata").add("annotations", annotations);
        }
        return pod.toString();
    }

    private String valid(String uid) {
        return review(uid, namespace, pod(null));
    }

    List<BadInputE2E.WebhookCase> cases(WebhookClient client) {
        List<BadInputE2E.WebhookCase> c = new ArrayList<>();
        String v = valid("u-1");

        // Reviews that cannot be read: 200, denied, 400, the message names the problem.
        review(c, client, "empty body", "", "AdmissionReview: the request body is empty");
        review(c, client, "XML", "<xml/>", "AdmissionReview: not JSON: ");
        review(c, client, "lenient JSON", "{apiVersion: 'x'}", "AdmissionReview: not JSON: ");
        review(c, client, "cut short", v.substring(0, v.length() / 2), "AdmissionReview: not JSON: ");
        review(c, client, "data after the document", v + "{}", "AdmissionReview: not JSON: data after the end of the document");
        review(c, client, "a list", "[]", "AdmissionReview: must be a JSON object");
        review(c, client, "a string", "\"review\"", "AdmissionReview: must be a JSON object");
        review(c, client, "nested 5000 deep", "{\"a\":" + "[".repeat(5000) + "]".repeat(5000) + "}",
                "AdmissionReview: nested more than 64 levels deep");
        review(c, client, "apiVersion v1beta1", v.replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1"),
                "AdmissionReview: expected apiVersion admission.k8s.io/v1 and kind AdmissionReview, got apiVersion"
                        + " \"admission.k8s.io/v1beta1\" and kind \"AdmissionReview\"");
        review(c, client, "kind ConversionReview", v.replace("\"AdmissionReview\"", "\"ConversionReview\""),
                "got apiVersion \"admission.k8s.io/v1\" and kind \"ConversionReview\"");
        review(c, client, "no apiVersion nor kind", "{\"request\":{\"uid\":\"u\"}}",
                "got apiVersion none and kind none");
        review(c, client, "apiVersion a number", v.replace("\"admission.k8s.io/v1\"", "1"),
                "AdmissionReview.apiVersion: must be a string, got a number");
        review(c, client, "no request", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                "AdmissionReview.request: required");
        review(c, client, "request a string", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                + "\"request\":\"x\"}", "AdmissionReview.request: must be an object, got a string");
        review(c, client, "no uid", v.replace("\"uid\":\"u-1\",", ""), "request.uid: required");
        review(c, client, "empty uid", v.replace("\"uid\":\"u-1\"", "\"uid\":\"\""), "request.uid: required");
        review(c, client, "uid a number", v.replace("\"uid\":\"u-1\"", "\"uid\":7"), "request.uid: must be a string, got a number");
        review(c, client, "no resource", v.replace("\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},", ""),
                "request.resource: required");
        review(c, client, "resource a list", v.replace("\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"}",
                "\"resource\":[]"), "request.resource: must be an object, got a list");
        review(c, client, "resource name a number", v.replace("\"resource\":\"pods\"", "\"resource\":1"),
                "request.resource.resource: must be a string, got a number");
        review(c, client, "no operation", v.replace("\"operation\":\"CREATE\",", ""), "request.operation: required");
        review(c, client, "namespace a boolean", v.replace("\"namespace\":\"" + namespace + "\"", "\"namespace\":true"),
                "request.namespace: must be a string, got a boolean");
        review(c, client, "userInfo a string", v.replace("\"userInfo\":{", "\"userInfo\":\"alice\",\"x\":{"),
                "request.userInfo: must be an object, got a string");
        review(c, client, "groups a string", v.replace("[\"system:authenticated\"]", "\"system:authenticated\""),
                "request.userInfo.groups: must be a list, got a string");
        review(c, client, "group a number", v.replace("[\"system:authenticated\"]", "[1]"),
                "request.userInfo.groups[0]: must be a string, got a number");
        review(c, client, "extra value a string", v.replace("\"x\":[\"y\"]", "\"x\":\"y\""),
                "request.userInfo.extra.x: must be a list, got a string");
        review(c, client, "dryRun a string", v.replace("\"operation\":\"CREATE\"", "\"operation\":\"CREATE\",\"dryRun\":\"yes\""),
                "request.dryRun: must be a boolean, got a string");
        review(c, client, "object a number", review("u-1", namespace, "7"), "request.object: must be an object, got a number");
        reviewAt(c, client, VALIDATE, "token review not JSON", "{", "AdmissionReview: not JSON: ");
        reviewAt(c, client, VALIDATE, "token review without uid", v.replace("\"uid\":\"u-1\",", ""), "request.uid: required");

        // Pods the webhook cannot read: 400 naming the field, the request's uid echoed.
        badPod(c, client, "object kind a number", "{\"kind\":7}", 400, "request.object.kind: must be a string, got a number");
        badPod(c, client, "spec a string", "{\"kind\":\"Pod\",\"spec\":\"x\"}", 400,
                "request.object.spec: must be an object, got a string");
        badPod(c, client, "containers a string", "{\"kind\":\"Pod\",\"spec\":{\"containers\":\"app\"}}", 400,
                "spec.containers: must be a list, got a string");
        badPod(c, client, "container a number", "{\"kind\":\"Pod\",\"spec\":{\"containers\":[7]}}", 400,
                "spec.containers[0]: must be an object, got a number");
        badPod(c, client, "annotations a list", "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":[]},"
                + "\"spec\":{\"containers\":[]}}", 400, "metadata.annotations: must be an object, got a list");
        badPod(c, client, "serviceAccountName a number", "{\"kind\":\"Pod\",\"spec\":{\"serviceAccountName\":5,"
                + "\"containers\":[]}}", 400, "spec.serviceAccountName: must be a string, got a number");
        badPod(c, client, "automount a string", "{\"kind\":\"Pod\",\"spec\":{\"automountServiceAccountToken\":\"yes\","
                + "\"containers\":[]}}", 400, "spec.automountServiceAccountToken: must be a boolean, got a string");
        badPod(c, client, "volumes an object", "{\"kind\":\"Pod\",\"spec\":{\"volumes\":{},\"containers\":[]}}", 400,
                "spec.volumes: must be a list, got an object");
        badPod(c, client, "volumeMounts a string", "{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":\"a\","
                + "\"volumeMounts\":\"x\"}]}}", 400, "spec.containers[0].volumeMounts: must be a list, got a string");
        badPod(c, client, "missing ServiceAccount", "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":"
                + "{\"serviceAccountName\":\"ghost\",\"containers\":[]}}", 403,
                "pods \"p\" is forbidden: error looking up service account " + namespace + "/ghost: serviceaccount"
                        + " \"ghost\" not found");

        // Invalid agent-token requests: 422 with the agent's own message.
        List<BadInputs.Case> annotations = BadInputs.annotations();
        for (int i = 0; i < annotations.size(); i += 3) {
            BadInputs.Case a = annotations.get(i);
            badPod(c, client, "annotation: " + a.name(), pod(a.input()), 422, a.expected().toArray(String[]::new));
        }
        badPod(c, client, "mount path relative", withAnnotation("satoken.io/mount-path", "rel"), 422,
                "satoken.io/mount-path: must be an absolute path, got \"rel\"");
        badPod(c, client, "mount path /", withAnnotation("satoken.io/mount-path", "/"), 422,
                "satoken.io/mount-path: must not be /");
        badPod(c, client, "mount path with ..", withAnnotation("satoken.io/mount-path", "/var/../etc"), 422,
                "satoken.io/mount-path: must not contain '..', got \"/var/../etc\"");
        badPod(c, client, "reserved volume name", podWithSpec("\"volumes\":[{\"name\":\"satoken-agent-tokens\","
                + "\"emptyDir\":{}}],\"containers\":[{\"name\":\"a\"}]"), 422,
                "spec.volumes[satoken-agent-tokens]: the name is reserved for the agent's token volume (csi driver"
                        + " tokens.satoken.io)");
        badPod(c, client, "reserved volume, other attributes", podWithSpec("\"volumes\":[{\"name\":"
                + "\"satoken-agent-tokens\",\"csi\":{\"driver\":\"tokens.satoken.io\",\"readOnly\":true,"
                + "\"volumeAttributes\":{\"projections\":\"- path: other\\n\"}}}],\"containers\":[{\"name\":\"a\"}]"),
                422, "spec.volumes[satoken-agent-tokens].csi: must be {driver: tokens.satoken.io, readOnly: true,"
                        + " volumeAttributes: {projections: <the satoken.io/projections annotation>, and the reload"
                        + " annotations' attributes}}");
        badPod(c, client, "mount path taken", podWithSpec("\"volumes\":[{\"name\":\"x\",\"emptyDir\":{}}],"
                + "\"containers\":[{\"name\":\"a\",\"volumeMounts\":[{\"name\":\"x\",\"mountPath\":"
                + "\"/var/run/secrets/satoken\"}]}]"), 422,
                "spec.containers[0].volumeMounts: /var/run/secrets/satoken is already the mount path of volume x");

        // HTTP: method, path, content type, size, time, TLS.
        c.add(new BadInputE2E.WebhookCase("http", "GET", () -> expectPlain(client.send(MUTATE, "GET", null, null), 405, "use POST")));
        c.add(new BadInputE2E.WebhookCase("http", "PUT", () -> expectPlain(client.send(MUTATE, "PUT", v, "application/json"),
                405, "use POST")));
        c.add(new BadInputE2E.WebhookCase("http", "unknown path", () -> expectPlain(client.post("/mutate/secrets", v), 404,
                "no webhook at /mutate/secrets")));
        c.add(new BadInputE2E.WebhookCase("http", "root path", () -> expectPlain(client.post("/", v), 404, "no webhook at /")));
        c.add(new BadInputE2E.WebhookCase("http", "text/plain", () -> expect(client.send(MUTATE, "POST", v, "text/plain"),
                415, 400, null, "Content-Type must be application/json, got \"text/plain\"")));
        c.add(new BadInputE2E.WebhookCase("http", "application/yaml", () -> expect(client.send(MUTATE, "POST",
                "a: b", "application/yaml"), 415, 400, null, "Content-Type must be application/json, got \"application/yaml\"")));
        c.add(new BadInputE2E.WebhookCase("http", "no content type", () -> expect(client.send(MUTATE, "POST", v, null),
                415, 400, null, "Content-Type must be application/json, got \"\"")));
        c.add(new BadInputE2E.WebhookCase("http", "body over 7 MiB", () -> expect(client.post(MUTATE, review("big", namespace,
                "{\"kind\":\"Pod\",\"metadata\":{\"annotations\":{\"x\":\"" + "a".repeat(MAX_BODY) + "\"}}}")),
                413, 400, null, "the request body exceeds " + MAX_BODY + " bytes")));
        c.add(new BadInputE2E.WebhookCase("http", "headers stalled 10 s", () -> {
            String answer = client.stall("POST " + MUTATE + " HTTP/1.1\r\nHost: x\r\n");
            return answer.startsWith("HTTP/1.1 408") && answer.contains("did not arrive within 10s") ? null
                    : "got " + firstLine(answer);
        }));
        c.add(new BadInputE2E.WebhookCase("http", "body stalled", () -> {
            // cut once it falls behind the minimum body pace, after a 1 s grace, not at the 10 s deadline
            String answer = client.stall("POST " + MUTATE + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100\r\n\r\n{");
            return answer.startsWith("HTTP/1.1 408") && answer.contains("the request body arrived too slowly") ? null
                    : "got " + firstLine(answer) + " " + answer.substring(answer.indexOf("\r\n\r\n") + 4).strip();
        }));
        c.add(new BadInputE2E.WebhookCase("http", "plain HTTP on the TLS port", () -> {
            String answer = client.plainHttp("POST " + MUTATE + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: " + v.length() + "\r\n\r\n" + v);
            return answer.startsWith("HTTP/") ? "got an HTTP answer: " + firstLine(answer) : null;
        }));
        return c;
    }

    private void review(List<BadInputE2E.WebhookCase> c, WebhookClient client, String name, String body, String message) {
        reviewAt(c, client, MUTATE, name, body, message);
    }

    private void reviewAt(List<BadInputE2E.WebhookCase> c, WebhookClient client, String path, String name, String body,
            String message) {
        c.add(new BadInputE2E.WebhookCase("review", name, () -> expect(client.post(path, body), 200, 400, null, message)));
    }

    private void badPod(List<BadInputE2E.WebhookCase> c, WebhookClient client, String name, String pod, int code,
            String... messages) {
        String category = code == 422 ? "injection" : "pod";
        c.add(new BadInputE2E.WebhookCase(category, name, () -> expect(client.post(MUTATE,
                review("uid-" + name.hashCode(), namespace, pod)), 200, code, "uid-" + name.hashCode(), messages)));
    }

    private static String withAnnotation(String key, String value) {
        JsonObject pod = BadInputE2E.object(pod("- path: token\n"));
        pod.getAsJsonObject("metadata").getAsJsonObject("annotations").addProperty(key, value);
        return pod.toString();
    }

    private static String podWithSpec(String spec) {
        JsonObject pod = BadInputE2E.object(pod("- path: token\n"));
        pod.add("spec", BadInputE2E.object("{" + spec + "}"));
        return pod.toString();
    }

    /** Null when the answer has the HTTP status, a denial with {@code code}, the uid (if given) and every message part. */
    private static String expect(WebhookClient.Answer a, int status, int code, String uid, String... messages) {
        boolean ok = a.status() == status && a.response() != null && !a.allowed() && a.code() == code
                && (uid == null || uid.equals(a.uid()));
        for (String m : messages) {
            ok &= a.message().contains(m);
        }
        return ok ? null : "HTTP " + a.status() + ", allowed " + (a.response() != null && a.allowed()) + ", code "
                + a.code() + ", uid " + a.uid() + ", message " + a.message();
    }

    private static String expectPlain(WebhookClient.Answer a, int status, String text) {
        return a.status() == status && a.body().contains(text) ? null : "HTTP " + a.status() + ": " + firstLine(a.body());
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        String line = nl < 0 ? s : s.substring(0, nl);
        return line.length() > 200 ? line.substring(0, 200) : line;
    }
}
