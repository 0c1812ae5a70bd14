package io.satoken.e2e.node;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.util.io.pem.PemObject;

/**
 * The node's client-certificate authority: one CA that the API server trusts for client certificates
 * ({@code --client-ca-file}) and the kubelet trusts likewise ({@code authentication.x509.clientCAFile}),
 * and the client certificates it signs: the kubelet's ({@code CN=system:node:<name>, O=system:nodes}) and
 * the API server's for talking to the kubelet. EC P-256 keys, PEM files, keys mode 0600.
 */
final class NodeCertificates {

    /** A certificate and its key, as PEM files. */
    record Pair(Path cert, Path key) {
    }

    private static final Duration LIFETIME = Duration.ofDays(1);
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());
    private static final X500Name CA_NAME = new X500Name("CN=satoken-test-node-ca");

    private final Path dir;
    private final KeyPair caKeys;
    private final Pair ca;

    private NodeCertificates(Path dir, KeyPair caKeys, Pair ca) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.ca = ca;
    }

    /** Creates the CA in {@code dir} ({@code ca.crt}, {@code ca.key}). */
    static NodeCertificates createCa(Path dir) throws IOException {
        Files.createDirectories(dir);
        KeyPair keys = newKeys();
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(CA_NAME, serial(),
                Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(LIFETIME)), CA_NAME, keys.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        } catch (CertIOException e) {
            throw new IOException(e);
        }
        Pair ca = write(dir, "ca", sign(builder, keys), keys);
        return new NodeCertificates(dir, keys, ca);
    }

    /** The CA certificate, for {@code --client-ca-file} and {@code clientCAFile}. */
    Path caCertificate() {
        return ca.cert();
    }

    /** A client certificate {@code CN=commonName, O=organization} signed by the CA, as {@code <file>.crt/.key}. */
    Pair client(String file, String commonName, String organization) throws IOException {
        KeyPair keys = newKeys();
        X500NameBuilder subject = new X500NameBuilder(BCStyle.INSTANCE);
        if (organization != null) {
            subject.addRDN(BCStyle.O, organization);
        }
        subject.addRDN(BCStyle.CN, commonName);
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(CA_NAME, serial(),
                Date.from(now.minus(Duration.ofMinutes(5))), Date.from(now.plus(LIFETIME)), subject.build(),
                keys.getPublic());
        try {
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true,
                    new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            builder.addExtension(Extension.extendedKeyUsage, false,
                    new ExtendedKeyUsage(KeyPurposeId.id_kp_clientAuth));
        } catch (CertIOException e) {
            throw new IOException(e);
        }
        return write(dir, file, sign(builder, caKeys), keys);
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder builder, KeyPair signer) throws IOException {
        try {
            return new JcaX509CertificateConverter().getCertificate(
                    builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
        } catch (OperatorCreationException | GeneralSecurityException e) {
            throw new IOException("could not sign a test certificate", e);
        }
    }

    private static Pair write(Path dir, String file, X509Certificate certificate, KeyPair keys) throws IOException {
        Path cert = dir.resolve(file + ".crt");
        Path key = dir.resolve(file + ".key");
        Files.writeString(cert, pem(certificate));
        Files.deleteIfExists(key);
        Files.createFile(key, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(key, pem(new PemObject("PRIVATE KEY", keys.getPrivate().getEncoded())));
        return new Pair(cert, key);
    }

    private static KeyPair newKeys() throws IOException {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            return generator.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IOException(e);
        }
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static String pem(Object object) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter writer = new JcaPEMWriter(out)) {
            writer.writeObject(object);
        }
        return out.toString();
    }
}
