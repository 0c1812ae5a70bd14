package io.satoken.controlplane.tokens;

import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.controlplane.controller.DeepCopy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * The API server as the tokens controller's tests see it: objects in maps, every call recorded as one
 * line ({@code "patch secrets default/token-secret-1 ..."}), answers like the real server's (404 for a
 * missing object, 409 for a failed UID precondition or a stale resourceVersion).
 */
final class RecordingTokensApi implements TokensApi {

    final Map<String, V1Secret> secrets = new HashMap<>();
    final Map<String, V1ServiceAccount> serviceAccounts = new HashMap<>();
    final List<String> actions = new ArrayList<>();
    /** How many of the next ServiceAccount updates answer 409 regardless of the object. */
    int serviceAccountUpdateConflicts;
    private int nextUid = 90000;
    private int nextVersion = 100;

    void put(V1Secret s) {
        secrets.put(key(s.getMetadata().getNamespace(), s.getMetadata().getName()), DeepCopy.of(s));
    }

    void put(V1ServiceAccount sa) {
        serviceAccounts.put(key(sa.getMetadata().getNamespace(), sa.getMetadata().getName()), DeepCopy.of(sa));
    }

    @Override
    public V1Secret getSecret(String namespace, String name) throws ApiException {
        actions.add("get secrets " + namespace + "/" + name);
        V1Secret s = secrets.get(key(namespace, name));
        if (s == null) {
            throw notFound();
        }
        return DeepCopy.of(s);
    }

    @Override
    public V1Secret createSecret(V1Secret secret) throws ApiException {
        actions.add("create secrets " + secret.getMetadata().getNamespace() + "/" + secret.getMetadata().getName()
                + " " + render(secret));
        String key = key(secret.getMetadata().getNamespace(), secret.getMetadata().getName());
        if (secrets.containsKey(key)) {
            throw new ApiException(409, Map.of(), "{\"reason\":\"AlreadyExists\"}");
        }
        V1Secret stored = DeepCopy.of(secret);
        stored.getMetadata().uid(String.valueOf(nextUid++)).resourceVersion(String.valueOf(nextVersion++));
        secrets.put(key, stored);
        return DeepCopy.of(stored);
    }

    /** As the server applies the merge patch: the named entries and annotations are set, the rest kept. */
    @Override
    public V1Secret writeTokenData(V1Secret secret) throws ApiException {
        actions.add("patch secrets " + secret.getMetadata().getNamespace() + "/" + secret.getMetadata().getName()
                + " " + render(secret));
        String key = key(secret.getMetadata().getNamespace(), secret.getMetadata().getName());
        V1Secret stored = secrets.get(key);
        if (stored == null) {
            throw notFound();
        }
        if (!stored.getMetadata().getResourceVersion().equals(secret.getMetadata().getResourceVersion())) {
            throw conflict();
        }
        V1Secret updated = DeepCopy.of(stored);
        Map<String, byte[]> data = new HashMap<>(updated.getData() == null ? Map.of() : updated.getData());
        data.putAll(secret.getData() == null ? Map.of() : secret.getData());
        updated.setData(data);
        Map<String, String> annotations = new HashMap<>(
                updated.getMetadata().getAnnotations() == null ? Map.of() : updated.getMetadata().getAnnotations());
        annotations.putAll(secret.getMetadata().getAnnotations() == null ? Map.of()
                : secret.getMetadata().getAnnotations());
        updated.getMetadata().setAnnotations(annotations);
        updated.getMetadata().resourceVersion(String.valueOf(nextVersion++));
        secrets.put(key, updated);
        return DeepCopy.of(updated);
    }

    @Override
    public void deleteSecret(String namespace, String name, String uid) throws ApiException {
        actions.add("delete secrets " + namespace + "/" + name + " uid=" + uid);
        V1Secret stored = secrets.get(key(namespace, name));
        if (stored == null) {
            throw notFound();
        }
        if (!stored.getMetadata().getUid().equals(uid)) {
            throw conflict();
        }
        secrets.remove(key(namespace, name));
    }

    @Override
    public V1ServiceAccount getServiceAccount(String namespace, String name) throws ApiException {
        actions.add("get serviceaccounts " + namespace + "/" + name);
        V1ServiceAccount sa = serviceAccounts.get(key(namespace, name));
        if (sa == null) {
            throw notFound();
        }
        return DeepCopy.of(sa);
    }

    /** As the server applies the strategic merge patch: the name is appended unless listed. */
    @Override
    public void addSecretReference(V1ServiceAccount sa, String secretName) throws ApiException {
        patchReferences(sa, refs -> {
            if (refs.stream().noneMatch(r -> secretName.equals(r.getName()))) {
                refs.add(new V1ObjectReference().name(secretName));
            }
        });
    }

    /** As the server applies the {@code $patch: delete} item: every reference of that name goes. */
    @Override
    public void removeSecretReference(V1ServiceAccount sa, String secretName) throws ApiException {
        patchReferences(sa, refs -> refs.removeIf(r -> secretName.equals(r.getName())));
    }

    private void patchReferences(V1ServiceAccount sa, Consumer<List<V1ObjectReference>> change) throws ApiException {
        String key = key(sa.getMetadata().getNamespace(), sa.getMetadata().getName());
        V1ServiceAccount stored = serviceAccounts.get(key);
        List<V1ObjectReference> refs = new ArrayList<>(
                stored == null || stored.getSecrets() == null ? List.of() : stored.getSecrets());
        change.accept(refs);
        actions.add("patch serviceaccounts " + sa.getMetadata().getNamespace() + "/" + sa.getMetadata().getName()
                + " secrets=" + refs.stream().map(V1ObjectReference::getName).toList());
        if (stored == null) {
            throw notFound();
        }
        if (serviceAccountUpdateConflicts > 0) {
            serviceAccountUpdateConflicts--;
            throw conflict();
        }
        if (!stored.getMetadata().getResourceVersion().equals(sa.getMetadata().getResourceVersion())) {
            throw conflict();
        }
        V1ServiceAccount updated = DeepCopy.of(stored);
        updated.setSecrets(refs);
        updated.getMetadata().resourceVersion(String.valueOf(nextVersion++));
        serviceAccounts.put(key, updated);
    }

    /** The parts of a Secret the controller decides: type, annotations and data (as text). */
    static String render(V1Secret s) {
        Map<String, String> data = new TreeMap<>();
        if (s.getData() != null) {
            s.getData().forEach((k, v) -> data.put(k, new String(v, StandardCharsets.UTF_8)));
        }
        Map<String, String> annotations = new TreeMap<>(
                s.getMetadata().getAnnotations() == null ? Map.of() : s.getMetadata().getAnnotations());
        return "type=" + s.getType() + " annotations=" + annotations + " data=" + data.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", ", "{", "}"));
    }

    private static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    private static ApiException notFound() {
        return new ApiException(404, Map.of(), "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}");
    }

    private static ApiException conflict() {
        return new ApiException(409, Map.of(), "{\"kind\":\"Status\",\"reason\":\"Conflict\",\"code\":409}");
    }
}
