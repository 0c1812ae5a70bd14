package io.satoken.controlplane.webhook;

import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.sec.ECPrivateKey;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/**
 * Self-signed serving certificates for 127.0.0.1 and localhost, and a CA with client certificates it signs,
 * written as PEM files.
 */
public final class TestCertificates {

    /** A written pair. */
    public record Pair(Path cert, Path key, X509Certificate certificate) {
        /** The certificate as PEM, for a caBundle or a trust store. */
        public String pem() throws IOException {
            return Files.readString(cert);
        }

        /** A client's TLS context that trusts this certificate alone, as the API server trusts a caBundle. */
        public SSLContext trustingIt() throws Exception {
            return trustingIt(null);
        }

        /** As {@link #trustingIt()}, presenting {@code keys} (may be null) as the client's certificate. */
        public SSLContext trustingIt(KeyManager[] keys) throws Exception {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            try (InputStream in = Files.newInputStream(cert)) {
                store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
            }
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keys, trust.getTrustManagers(), null);
            return context;
        }
    }

    /** A certificate authority: its certificate, written to {@code cert}, and its key, kept in memory. */
    public record Authority(Path cert, X509Certificate certificate, java.security.PrivateKey key) {
    }

    private TestCertificates() {
    }

    /** Writes a self-signed CA certificate (EC P-256) to {@code dir/ca.pem}. */
    public static Authority authority(Path dir, String commonName) throws Exception {
        KeyPair keys = ecKeys();
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(new X500Name("CN=" + commonName),
                BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + commonName), keys.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        Files.createDirectories(dir);
        Path cert = dir.resolve("ca.pem");
        Files.writeString(cert, pem(certificate));
        return new Authority(cert, certificate, keys.getPrivate());
    }

    /**
     * Writes a client certificate for {@code commonName} signed by {@code issuer} (extended key usage
     * clientAuth, as kube-apiserver's client certificates have) to {@code dir/client.pem}, and its PKCS#8 EC
     * key to {@code dir/client-key.pem}.
     */
    public static Pair client(Path dir, String commonName, Authority issuer) throws Exception {
        KeyPair keys = ecKeys();
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(issuer.certificate(),
                BigInteger.valueOf(System.nanoTime()), Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + commonName), keys.getPublic());
        builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
        builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
        X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(issuer.key())));
        Files.createDirectories(dir);
        Path cert = dir.resolve("client.pem");
        Path key = dir.resolve("client-key.pem");
        Files.writeString(cert, pem(certificate));
        Files.writeString(key, pem(new PemObject("PRIVATE KEY", keys.getPrivate().getEncoded())));
        return new Pair(cert, key, certificate);
    }

    private static KeyPair ecKeys() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    /** How the private key is written. */
    public enum KeyForm {
        /** {@code PRIVATE KEY}, EC P-256. */
        PKCS8_EC,
        /** {@code EC PRIVATE KEY} with the curve named inside, as openssl writes it. */
        SEC1_EC,
        /** {@code RSA PRIVATE KEY}, 2048 bits. */
        PKCS1_RSA
    }

    /** Writes {@code cert.pem} and {@code key.pem} (PKCS#8 EC P-256) into {@code dir}, replacing what is there. */
    public static Pair write(Path dir, String commonName) throws Exception {
        return write(dir, commonName, KeyForm.PKCS8_EC);
    }

    public static Pair write(Path dir, String commonName, KeyForm form) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance(form == KeyForm.PKCS1_RSA ? "RSA" : "EC");
        if (form == KeyForm.PKCS1_RSA) {
            generator.initialize(2048);
        } else {
            generator.initialize(new ECGenParameterSpec("secp256r1"));
        }
        KeyPair keys = generator.generateKeyPair();
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(new X500Name("CN=" + commonName),
                BigInteger.valueOf(now.toEpochMilli()), Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(Duration.ofDays(1))), new X500Name("CN=" + commonName), keys.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(new GeneralName[] {
                new GeneralName(GeneralName.iPAddress, "127.0.0.1"), new GeneralName(GeneralName.dNSName, "localhost")}));
        X509Certificate certificate = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder(form == KeyForm.PKCS1_RSA ? "SHA256withRSA" : "SHA256withECDSA")
                        .build(keys.getPrivate())));
        Files.createDirectories(dir);
        Path cert = dir.resolve("cert.pem");
        Path key = dir.resolve("key.pem");
        Files.writeString(cert, pem(certificate));
        Files.writeString(key, switch (form) {
            case PKCS8_EC -> pem(new PemObject("PRIVATE KEY", keys.getPrivate().getEncoded()));
            case SEC1_EC -> pem(new PemObject("EC PRIVATE KEY", sec1(keys)));
            case PKCS1_RSA -> pem(keys.getPrivate()); // BouncyCastle writes RSA keys as PKCS#1
        });
        return new Pair(cert, key, certificate);
    }

    /** SEC1 with the named curve in its parameters field, as {@code openssl ecparam -genkey} writes it. */
    private static byte[] sec1(KeyPair keys) throws IOException {
        PrivateKeyInfo info = PrivateKeyInfo.getInstance(keys.getPrivate().getEncoded());
        ECPrivateKey inner = ECPrivateKey.getInstance(info.parsePrivateKey());
        return new ECPrivateKey(256, ((java.security.interfaces.ECPrivateKey) keys.getPrivate()).getS(),
                inner.getPublicKey(), info.getPrivateKeyAlgorithm().getParameters()).getEncoded();
    }

    private static String pem(Object object) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object);
        }
        return out.toString();
    }
}
