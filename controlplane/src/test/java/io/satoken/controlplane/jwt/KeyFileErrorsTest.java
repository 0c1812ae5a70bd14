package io.satoken.controlplane.jwt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.satoken.controlplane.testing.TestKeys;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.stream.Stream;
import org.bouncycastle.asn1.sec.ECPrivateKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Key files the signer refuses, each with the one-line message an operator sees at start-up. The
 * message names the flag, the file and the problem, and never quotes the file.
 */
class KeyFileErrorsTest {

    private static final String WANT_TYPE = " (want RSA or EC P-256/P-384/P-521)";
    private static final String WANT_CURVE = " is not supported (want P-256, P-384 or P-521)";
    private static final String ENCRYPTED =
            "encrypted private keys are not supported; decrypt it first (openssl pkey -in FILE -out NEWFILE)";

    @TempDir
    Path tmp;

    /** A checked-in test key file ({@code resource}) or a file the case writes ({@code content}). */
    record Rejected(String name, String resource, String content, String problem) {
        static Rejected file(String name, String resource, String problem) {
            return new Rejected(name, resource, null, problem);
        }

        static Rejected text(String name, String content, String problem) {
            return new Rejected(name, null, content, problem);
        }

        Path in(Path dir) throws IOException {
            return resource != null ? TestKeys.path(resource) : Files.writeString(dir.resolve("sa.key"), content);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Rejected> rejected() {
        String ec = TestKeys.text("ec-p256-sec1.pem");
        return Stream.of(
                Rejected.file("empty file", "empty.pem", "empty file"),
                Rejected.text("only blank lines", "\n\n  \n", "empty file"),
                Rejected.file("garbage", "garbage.txt", "not PEM"),
                Rejected.text("DER, not PEM", "0\u0082\u0001!0\u0013\u0006\u0007*", "not PEM"),
                Rejected.file("certificate only", "certificate.pem", "no private key in PEM (found CERTIFICATE)"),
                Rejected.file("public key only", "public-key.pem", "no private key in PEM (found PUBLIC KEY)"),
                Rejected.text("EC PARAMETERS and a certificate, no key",
                        ecParameters() + TestKeys.text("certificate.pem"),
                        "no private key in PEM (found EC PARAMETERS, CERTIFICATE)"),
                Rejected.file("DSA in PKCS#8", "dsa-pkcs8.pem", "unsupported key type DSA" + WANT_TYPE),
                Rejected.text("DSA in its traditional form", block("DSA PRIVATE KEY", "MAMCAQA="),
                        "unsupported key type DSA" + WANT_TYPE),
                Rejected.file("Ed25519", "ed25519-pkcs8.pem", "unsupported key type Ed25519" + WANT_TYPE),
                Rejected.file("EC secp256k1", "ec-secp256k1-sec1.pem", "EC curve secp256k1" + WANT_CURVE),
                Rejected.file("EC P-256 with explicit curve parameters", "ec-p256-explicit-params.pem",
                        "EC keys must name their curve, not spell out its parameters (want P-256, P-384 or P-521)"),
                Rejected.text("SEC1 key whose curve is only in the EC PARAMETERS block",
                        ecParameters() + block("EC PRIVATE KEY", sec1WithoutCurve()),
                        "EC key does not name its curve (want P-256, P-384 or P-521)"),
                Rejected.file("encrypted PKCS#8", "encrypted-pkcs8.pem", ENCRYPTED),
                Rejected.file("encrypted PKCS#1 (Proc-Type: 4,ENCRYPTED)", "encrypted-rsa-proc-type.pem", ENCRYPTED),
                // the first private key decides; a usable key after it is not a fallback
                Rejected.text("encrypted key before a plain one", TestKeys.text("encrypted-pkcs8.pem") + ec, ENCRYPTED),
                Rejected.text("OpenSSH key", block("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA"),
                        "unsupported key format OPENSSH PRIVATE KEY (want PEM in PKCS#1, PKCS#8 or SEC1 form)"),
                Rejected.text("PKCS#8 block that is not PKCS#8", block("PRIVATE KEY", "BAA="),
                        "malformed PRIVATE KEY block (not a valid PKCS#8 key)"),
                Rejected.text("SEC1 block that is not SEC1", block("EC PRIVATE KEY", "BAA="),
                        "malformed EC PRIVATE KEY block (not a valid SEC1 key)"),
                Rejected.text("PKCS#1 block that is not PKCS#1", block("RSA PRIVATE KEY", "BAA="),
                        "malformed RSA PRIVATE KEY block (not a valid PKCS#1 key)"),
                Rejected.text("no END line", ec.substring(0, ec.indexOf("-----END")),
                        "malformed PEM (-----END EC PRIVATE KEY----- not found)"),
                Rejected.text("body not base64", block("EC PRIVATE KEY", "!!!!not*base64"),
                        "malformed PEM (a block is not valid base64)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rejected")
    void keyFile_isRejectedWithAOneLineMessage(Rejected c) throws IOException {
        Path file = c.in(tmp);
        KeyFileException e = catchThrowableOfType(KeyFileException.class, () -> ServiceAccountSigner.load(file));

        assertThat(e).as("rejected").isNotNull();
        assertThat(e.problem()).isEqualTo(c.problem());
        assertThat(e.getMessage()).isEqualTo("--service-account-private-key-file " + file + ": " + c.problem());
        assertThat(e.file()).isEqualTo(file);
        // the parser's exception might quote key bytes: it is not kept
        assertThat(e.getCause()).isNull();
        for (String line : Files.readAllLines(file, StandardCharsets.ISO_8859_1)) {
            if (line.length() >= 16 && !line.startsWith("-----")) {
                assertThat(e.getMessage().contains(line)).as("message quotes a line of the file").isFalse();
            }
        }
    }

    @Test
    void missingFile_isNotFound() {
        Path file = tmp.resolve("no-such.key");
        KeyFileException e = catchThrowableOfType(KeyFileException.class, () -> ServiceAccountSigner.load(file));
        assertThat(e.getMessage()).isEqualTo("--service-account-private-key-file " + file + ": not found");
    }

    @Test
    void directory_isNotAKeyFile() {
        KeyFileException e = catchThrowableOfType(KeyFileException.class, () -> ServiceAccountSigner.load(tmp));
        assertThat(e.getMessage()).isEqualTo("--service-account-private-key-file " + tmp + ": is a directory");
    }

    /** The EC PARAMETERS block that {@code openssl ecparam -genkey} writes before the key. */
    private static String ecParameters() {
        String file = TestKeys.text("ec-p256-sec1-params.pem");
        return file.substring(0, file.indexOf("-----BEGIN EC PRIVATE KEY"));
    }

    /** SEC1 lets the key leave its curve out; openssl never does, so this one is made here. */
    private static String sec1WithoutCurve() {
        try {
            byte[] der = new ECPrivateKey(256, BigInteger.valueOf(12345), null).getEncoded();
            return Base64.getEncoder().encodeToString(der);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String block(String type, String base64) {
        return "-----BEGIN " + type + "-----\n" + base64 + "\n-----END " + type + "-----\n";
    }
}
