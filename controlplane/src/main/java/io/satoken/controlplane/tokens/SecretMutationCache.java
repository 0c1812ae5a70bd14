package io.satoken.controlplane.tokens;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.kubernetes.client.informer.cache.Indexer;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.models.V1Secret;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The informer's token Secrets overlaid with the controller's own recent writes (TC-6), so a Secret it
 * just created or filled is seen before the watch delivers it, and not filled or created twice. A write
 * is remembered for 60 s, or until the informer shows an object at least as new (resourceVersions compared
 * as integers; one that does not parse loses to the informer's copy).
 *
 * <p>Unlike upstream, a delete seen by the informer also forgets the write, so a Secret deleted right after
 * it was filled is not treated as present for the rest of the minute.
 */
final class SecretMutationCache {

    static final Duration TTL = Duration.ofSeconds(60);

    private final Lister<V1Secret> backing;
    private final Cache<String, V1Secret> mutations;

    SecretMutationCache(Indexer<V1Secret> backing, Ticker ticker) {
        this.backing = new Lister<>(backing);
        this.mutations = Caffeine.newBuilder().expireAfterWrite(TTL).ticker(ticker).build();
    }

    /** The newest known copy of the Secret, or null. */
    V1Secret get(String namespace, String name) {
        return newer(backing.namespace(namespace).get(name), mutations.getIfPresent(namespace + "/" + name));
    }

    /** Every known token Secret in the namespace, writes not yet seen by the informer included. */
    List<V1Secret> inNamespace(String namespace) {
        Map<String, V1Secret> byName = new LinkedHashMap<>();
        for (V1Secret s : backing.namespace(namespace).list()) {
            byName.put(s.getMetadata().getName(), s);
        }
        String prefix = namespace + "/";
        mutations.asMap().forEach((key, written) -> {
            if (key.startsWith(prefix)) {
                byName.merge(written.getMetadata().getName(), written, SecretMutationCache::newer);
            }
        });
        return new ArrayList<>(byName.values());
    }

    /** Remembers the object the API server returned for a create or update. */
    void mutated(V1Secret written) {
        mutations.put(written.getMetadata().getNamespace() + "/" + written.getMetadata().getName(), written);
    }

    /** The informer saw the Secret deleted. */
    void deleted(String namespace, String name) {
        mutations.invalidate(namespace + "/" + name);
    }

    private static V1Secret newer(V1Secret cached, V1Secret written) {
        if (written == null) {
            return cached;
        }
        if (cached == null) {
            return written;
        }
        try {
            long cachedVersion = Long.parseLong(cached.getMetadata().getResourceVersion());
            long writtenVersion = Long.parseLong(written.getMetadata().getResourceVersion());
            return writtenVersion > cachedVersion ? written : cached;
        } catch (NumberFormatException | NullPointerException e) {
            return cached;
        }
    }
}
