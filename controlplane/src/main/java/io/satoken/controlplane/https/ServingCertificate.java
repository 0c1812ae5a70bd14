package io.satoken.controlplane.https;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.satoken.common.paths.FileErrors;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.openssl.PEMException;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The webhook's TLS identity, read from {@code --tls-cert-file} and {@code --tls-private-key-file} and
 * re-read whenever either file's content changes, so a rotated certificate (cert-manager, a Secret
 * update) is served to new connections without a restart.
 *
 * <p>A change is taken only when the pair is whole and consistent: both files parse and the key signs
 * what the certificate's public key verifies. A half-written rotation (the certificate updated, the key
 * not yet) is therefore skipped, logged, and picked up on a later check; the old pair keeps serving.
 *
 * <p>With {@code --client-ca-file}, the handshake also requires a client certificate that chains to one of
 * that file's certificates (the API server presents one when its AdmissionConfiguration's kubeconfig names
 * it); without one the handshake fails before any request is read. That file is re-read with the pair.
 */
public final class ServingCertificate {

    /** TLS 1.2 and 1.3 only. */
    static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");

    private static final Logger log = LoggerFactory.getLogger(ServingCertificate.class);

    /** A loaded pair: what was read and what it gives. */
    private record Loaded(byte[] certBytes, byte[] keyBytes, byte[] clientCaBytes, SslContext context,
            X509Certificate leaf) {
    }

    private final Path certFile;
    private final Path keyFile;
    private final Path clientCaFile;
    private volatile Loaded loaded;

    private ServingCertificate(Path certFile, Path keyFile, Path clientCaFile, Loaded loaded) {
        this.certFile = certFile;
        this.keyFile = keyFile;
        this.clientCaFile = clientCaFile;
        this.loaded = loaded;
    }

    /**
     * Reads the pair; clients are not asked for certificates.
     *
     * @throws IllegalArgumentException naming the flag, the file and what is wrong with it
     */
    public static ServingCertificate load(Path certFile, Path keyFile) {
        return load(certFile, keyFile, null);
    }

    /**
     * Reads the pair and, unless {@code clientCaFile} is null, the CA certificates a client's certificate must
     * chain to.
     *
     * @throws IllegalArgumentException naming the flag, the file and what is wrong with it
     */
    public static ServingCertificate load(Path certFile, Path keyFile, Path clientCaFile) {
        return new ServingCertificate(certFile, keyFile, clientCaFile, read(certFile, keyFile, clientCaFile));
    }

    /** The context new connections use. */
    SslContext context() {
        return loaded.context();
    }

    /** Whether the handshake requires a client certificate ({@code --client-ca-file} was given). */
    public boolean requiresClientCertificates() {
        return clientCaFile != null;
    }

    /** The leaf certificate being served. */
    public X509Certificate certificate() {
        return loaded.leaf();
    }

    /**
     * Re-reads both files; takes them if their content changed and they form a valid pair.
     *
     * @return true if a new certificate is now served
     */
    public synchronized boolean reload() {
        byte[] certBytes;
        byte[] keyBytes;
        byte[] clientCaBytes;
        try {
            certBytes = Files.readAllBytes(certFile);
            keyBytes = Files.readAllBytes(keyFile);
            clientCaBytes = clientCaFile == null ? null : Files.readAllBytes(clientCaFile);
        } catch (IOException e) {
            log.warn("serving certificate not reloaded: {}", FileErrors.describe(e));
            return false;
        }
        Loaded current = loaded;
        if (Arrays.equals(certBytes, current.certBytes()) && Arrays.equals(keyBytes, current.keyBytes())
                && Arrays.equals(clientCaBytes, current.clientCaBytes())) {
            return false;
        }
        try {
            loaded = build(certBytes, keyBytes, clientCaBytes);
        } catch (IllegalArgumentException e) {
            log.warn("serving certificate not reloaded, still serving the previous one: {}", e.getMessage());
            return false;
        }
        log.info("serving certificate reloaded: {}", describe(loaded.leaf()));
        return true;
    }

    /** Subject, expiry and SHA-256 fingerprint: enough to tell certificates apart in a log, and nothing secret. */
    static String describe(X509Certificate certificate) {
        String fingerprint;
        try {
            fingerprint = HexFormat.of().formatHex(
                    MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded()));
        } catch (GeneralSecurityException e) {
            fingerprint = "unknown";
        }
        return "subject \"" + certificate.getSubjectX500Principal().getName() + "\", not after "
                + certificate.getNotAfter().toInstant() + ", sha256 " + fingerprint;
    }

    /** The leaf's expiry, for the expiry metric. */
    Instant notAfter() {
        return loaded.leaf().getNotAfter().toInstant();
    }

    private static Loaded read(Path certFile, Path keyFile, Path clientCaFile) {
        byte[] certBytes;
        byte[] keyBytes;
        try {
            certBytes = Files.readAllBytes(certFile);
        } catch (IOException e) {
            throw new IllegalArgumentException("--tls-cert-file " + certFile + ": " + FileErrors.reason(e), e);
        }
        try {
            keyBytes = Files.readAllBytes(keyFile);
        } catch (IOException e) {
            throw new IllegalArgumentException("--tls-private-key-file " + keyFile + ": " + FileErrors.reason(e), e);
        }
        byte[] clientCaBytes = null;
        if (clientCaFile != null) {
            try {
                clientCaBytes = Files.readAllBytes(clientCaFile);
            } catch (IOException e) {
                throw new IllegalArgumentException("--client-ca-file " + clientCaFile + ": " + FileErrors.reason(e),
                        e);
            }
        }
        return build(certBytes, keyBytes, clientCaBytes);
    }

    private static Loaded build(byte[] certBytes, byte[] keyBytes, byte[] clientCaBytes) {
        X509Certificate[] chain = certificates("--tls-cert-file", certBytes);
        PrivateKey key = privateKey(keyBytes);
        checkPair(key, chain[0]);
        X509Certificate[] clientCas = clientCaBytes == null ? null : certificates("--client-ca-file", clientCaBytes);
        try {
            SslContextBuilder builder = SslContextBuilder.forServer(key, chain)
                    .sslProvider(SslProvider.JDK)
                    .protocols(PROTOCOLS);
            if (clientCas != null) {
                builder.trustManager(clientCas).clientAuth(ClientAuth.REQUIRE);
            }
            return new Loaded(certBytes, keyBytes, clientCaBytes, builder.build(), chain[0]);
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--tls-cert-file: cannot serve this certificate and key: " + e, e);
        }
    }

    private static X509Certificate[] certificates(String flag, byte[] pem) {
        try {
            var found = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem));
            if (found.isEmpty()) {
                throw new IllegalArgumentException(flag + ": no PEM CERTIFICATE block found");
            }
            return found.stream().map(X509Certificate.class::cast).toArray(X509Certificate[]::new);
        } catch (CertificateException e) {
            throw new IllegalArgumentException(flag + ": not a PEM X.509 certificate: " + e.getMessage(), e);
        }
    }

    /** PKCS#1 ({@code RSA PRIVATE KEY}), SEC1 ({@code EC PRIVATE KEY}) or PKCS#8 ({@code PRIVATE KEY}). */
    private static PrivateKey privateKey(byte[] pem) {
        try (PEMParser parser = new PEMParser(new StringReader(new String(pem, StandardCharsets.US_ASCII)))) {
            for (Object block = parser.readObject(); block != null; block = parser.readObject()) {
                JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
                if (block instanceof PEMKeyPair pair) {
                    return converter.getPrivateKey(pair.getPrivateKeyInfo());
                }
                if (block instanceof PrivateKeyInfo info) {
                    return converter.getPrivateKey(info);
                }
            }
        } catch (PEMException e) {
            throw new IllegalArgumentException("--tls-private-key-file: unsupported or malformed private key: "
                    + e.getMessage(), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("--tls-private-key-file: not PEM: " + e.getMessage(), e);
        }
        throw new IllegalArgumentException("--tls-private-key-file: no unencrypted PEM private key found "
                + "(expected RSA PRIVATE KEY, EC PRIVATE KEY or PRIVATE KEY)");
    }

    /** The key must be the certificate's: sign with one, verify with the other. */
    private static void checkPair(PrivateKey key, X509Certificate leaf) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC", "ECDSA" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> throw new IllegalArgumentException("--tls-private-key-file: unsupported key type "
                    + key.getAlgorithm());
        };
        byte[] probe = "satoken serving certificate check".getBytes(StandardCharsets.US_ASCII);
        boolean matches;
        try {
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(leaf.getPublicKey());
            verifier.update(probe);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false;
        }
        if (!matches) {
            throw new IllegalArgumentException("--tls-private-key-file: the key does not belong to the first "
                    + "certificate in --tls-cert-file (" + describe(leaf) + ")");
        }
    }
}
