package io.satoken.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Secrets hygiene, after every other test of the suite (it is ordered last): no log any process of the
 * suite wrote (agents, control planes, kube-apiserver, etcd, install.sh) holds a token the suite saw
 * issued, or anything shaped like a JWT.
 */
@Isolated // after the concurrent classes too, so their logs are complete
@Order(Integer.MAX_VALUE)
class SecretsHygieneE2E {

    @Test
    void noLogOfTheSuite_holdsAnIssuedToken_orAJwtShapedString() throws IOException {
        List<Path> logs;
        try (Stream<Path> files = Files.walk(E2E.logsDir())) {
            logs = files.filter(Files::isRegularFile).sorted().toList();
        }
        List<String> tokens = IssuedTokens.all();
        List<String> hits = new ArrayList<>();
        long bytes = 0;
        for (Path log : logs) {
            String text = new String(Files.readAllBytes(log), StandardCharsets.ISO_8859_1);
            bytes += text.length();
            for (String token : tokens) {
                if (text.contains(token)) {
                    hits.add(log.getFileName() + ": an issued token");
                }
                // a token cut in half (a truncated log line) still leaks its payload
                String signature = token.substring(token.lastIndexOf('.') + 1);
                if (signature.length() >= 16 && text.contains(signature)) {
                    hits.add(log.getFileName() + ": an issued token's signature");
                }
            }
            Matcher jwt = IssuedTokens.JWT_SHAPE.matcher(text);
            while (jwt.find()) {
                hits.add(log.getFileName() + ": a JWT-shaped string at offset " + jwt.start());
            }
        }
        Figures.record("secrets-hygiene", String.format("%d hits in %d logs (%,d bytes) checked for %d issued tokens"
                + " and for JWT shapes", hits.size(), logs.size(), bytes, tokens.size()));
        assertThat(hits).as("logs that leak a token").isEmpty();
    }
}
