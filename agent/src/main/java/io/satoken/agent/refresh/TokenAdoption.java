package io.satoken.agent.refresh;

import com.nimbusds.jwt.SignedJWT;
import io.satoken.agent.projection.Projection;
import io.satoken.agent.projection.TokenDirectory;
import io.satoken.agent.token.IssuedToken;
import io.satoken.agent.token.IssuerKeys;
import io.satoken.agent.token.SignatureCheck;
import io.satoken.agent.token.TokenCache;
import io.satoken.agent.token.TokenInfo;
import io.satoken.agent.token.TokenKey;
import io.satoken.agent.write.PublishedFile;
import io.satoken.common.kube.Failures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Restart without a token storm: before a directory is registered, the tokens its files already hold
 * go into the cache when they still match their projection, so only missing, mismatched or due tokens
 * are requested (kubelet re-mints every token on restart, TM-12; we do not).
 *
 * <p>A file's token is adopted when all of these hold:
 * <ol>
 *   <li>it is a readable regular file of at most 64 KiB in the version {@code ..data} names, reached without
 *       following any link but {@code ..data} itself ({@link PublishedFile}), that parses as a JWT with
 *       {@code iat} and {@code exp};</li>
 *   <li>its signature verifies against the API server's ServiceAccount public keys ({@link IssuerKeys}, read
 *       once per start). The claims below are only worth checking once the token is known to be the API
 *       server's: a file on disk is not proof of anything, since whoever could write it could have written
 *       any claims. Without the keys (the API server unreachable at start, or its JWKS not readable to the
 *       agent) nothing is adopted;</li>
 *   <li>its subject is the key's ServiceAccount ({@code system:serviceaccount:<ns>:<name>});</li>
 *   <li>its audiences equal the key's; for a key without audiences (the API server's defaults) they
 *       must equal the known default audiences, and without those the token is not adopted;</li>
 *   <li>its bound pod uid equals the key's bound pod uid (none for an unbound key);</li>
 *   <li>the cache accepts it: not expired, not yet due for refresh ({@link TokenCache#adopt}).</li>
 * </ol>
 * The expiry used is the earlier of the JWT's {@code exp} and {@code iat + expirationSeconds}: a token
 * the API server extended (PV-23, a JWT valid for a year) is refreshed on the requested schedule.
 *
 * <p>A token that is not adopted is requested anew when its directory is registered. Its file stays
 * where it is until the new token replaces it (the writer swaps {@code ..data} only once the new token
 * is in hand), so a reader keeps what it had through the restart even when the request fails. Why a
 * token was not adopted is logged, one line per file and start, naming the file, never the token.
 *
 * <p>Checking the signature, rather than re-requesting every token at start, keeps the restart without a
 * token storm: the keys cost one GET per start however many tokens there are.
 */
public final class TokenAdoption {

    private static final Logger log = LoggerFactory.getLogger(TokenAdoption.class);
    private static final int MAX_TOKEN_BYTES = 64 * 1024;

    private final TokenCache cache;
    private final Optional<List<String>> defaultAudiences;
    private final SignatureCheck signatures;

    /**
     * @param defaultAudiences the API server's default audiences, when known (an in-cluster agent reads
     *     them from its own ServiceAccount token); without them, tokens requested without audiences are
     *     re-requested at start
     * @param signatures checks that a token is the API server's, usually {@link IssuerKeys#fetch}
     */
    public TokenAdoption(TokenCache cache, Optional<List<String>> defaultAudiences, SignatureCheck signatures) {
        this.cache = Objects.requireNonNull(cache, "cache");
        this.defaultAudiences = defaultAudiences.map(List::copyOf);
        this.signatures = Objects.requireNonNull(signatures, "signatures");
    }

    /** Adopts what it can of the directory's files; returns how many tokens went into the cache. */
    public int adopt(TokenDirectory dir) {
        int adopted = 0;
        for (Projection p : dir.projections()) {
            Optional<IssuedToken> token = read(dir.dir(), p.path(), p.key());
            if (token.isPresent() && cache.adopt(p.key(), token.get())) {
                adopted++;
            }
        }
        return adopted;
    }

    private Optional<IssuedToken> read(Path dir, String path, TokenKey key) {
        Path file = dir.resolve(path);
        String jwt;
        try {
            Optional<byte[]> content = PublishedFile.read(dir, path, MAX_TOKEN_BYTES);
            if (content.isEmpty()) {
                return Optional.empty();
            }
            jwt = new String(content.get(), StandardCharsets.US_ASCII).strip();
        } catch (IOException | RuntimeException e) {
            log.debug("not adopting {}: {}", file, Failures.inWords(e));
            return Optional.empty();
        }
        TokenInfo info;
        SignedJWT signed;
        try {
            info = TokenInfo.parse(jwt);
            signed = SignedJWT.parse(jwt);
        } catch (IllegalArgumentException | ParseException e) {
            log.info("not adopting {}: {}", file, e instanceof ParseException ? "not a JWT" : e.getMessage());
            return Optional.empty();
        }
        String unsigned = signatures.whyNot(signed);
        if (unsigned != null) {
            log.info("not adopting {} for {}, requesting it anew: {}", file, key, unsigned);
            return Optional.empty();
        }
        String mismatch = mismatch(info, key);
        if (mismatch != null) {
            log.info("not adopting {} for {}: {}", file, key, mismatch);
            return Optional.empty();
        }
        Instant expiresAt = info.expiresAt();
        if (key.expirationSeconds() > 0) {
            Instant requested = info.issuedAt().plusSeconds(key.expirationSeconds());
            expiresAt = requested.isBefore(expiresAt) ? requested : expiresAt;
        }
        if (!expiresAt.isAfter(info.issuedAt())) {
            return Optional.empty();
        }
        return Optional.of(new IssuedToken(jwt, info.issuedAt(), expiresAt));
    }

    /** Why the token does not belong to the key, or null when it does. */
    private String mismatch(TokenInfo info, TokenKey key) {
        if (info.issuedAt() == null || info.expiresAt() == null) {
            return "no iat or exp";
        }
        if (!key.subject().equals(info.subject())) {
            return "subject is " + info.subject();
        }
        String audiences = key.ask().audienceMismatch(info.audiences(), defaultAudiences);
        if (audiences != null) {
            return audiences;
        }
        String boundUid = key.boundObject().isPod() ? key.boundObject().uid() : null;
        if (!Objects.equals(boundUid, info.podUid())) {
            return "bound to pod " + info.podUid();
        }
        return null;
    }
}
