package io.satoken.controlplane.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.Base64;

/**
 * The test-only keys in {@code src/test/resources/keys} (made once with openssl; see the README there)
 * and the PEM form kube-apiserver's {@code --service-account-key-file} reads.
 */
public final class TestKeys {

    private TestKeys() {
    }

    /** The file of a checked-in test key, e.g. {@code rsa-pkcs1.pem}. */
    public static Path path(String name) {
        URL url = TestKeys.class.getResource("/keys/" + name);
        if (url == null) {
            throw new IllegalArgumentException("no test key " + name + " in src/test/resources/keys");
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The content of a checked-in test key file. */
    public static String text(String name) {
        try {
            return Files.readString(path(name), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code -----BEGIN PUBLIC KEY-----}: the X.509 SubjectPublicKeyInfo, base64 in 64-column lines. */
    public static String publicKeyPem(PublicKey key) {
        Base64.Encoder mime = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        String body = mime.encodeToString(key.getEncoded());
        return "-----BEGIN PUBLIC KEY-----\n" + body + "\n-----END PUBLIC KEY-----\n";
    }
}
