package io.satoken.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Every token the suite saw, kept in memory only, so {@link SecretsHygieneE2E} can look for each one in
 * every log. A test that reads a token file or receives a token records it here.
 */
final class IssuedTokens {

    /** A JWT's shape: a base64url JSON header ({@code eyJ}), a payload, a signature. */
    static final Pattern JWT_SHAPE = Pattern.compile("eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}");

    private static final Set<String> SEEN = ConcurrentHashMap.newKeySet();

    private IssuedTokens() {
    }

    /** Records a token and returns it. */
    static String record(String token) {
        if (token != null && !token.isBlank()) {
            SEEN.add(token.strip());
        }
        return token;
    }

    /** Reads a token file, records its token and returns it. */
    static String read(Path file) {
        try {
            return record(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static List<String> all() {
        return List.copyOf(SEEN);
    }
}
