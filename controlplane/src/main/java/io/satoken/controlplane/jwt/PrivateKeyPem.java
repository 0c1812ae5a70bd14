package io.satoken.controlplane.jwt;

import io.satoken.common.paths.FileErrors;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.edec.EdECObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.sec.SECObjectIdentifiers;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X962Parameters;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.util.encoders.DecoderException;
import org.bouncycastle.util.io.pem.PemHeader;
import org.bouncycastle.util.io.pem.PemObject;
import org.bouncycastle.util.io.pem.PemReader;
import org.bouncycastle.util.io.pem.PemWriter;

/**
 * Reads the signing key the way kube-controller-manager reads {@code --service-account-private-key-file}:
 * a PEM file whose first private key is used, in PKCS#1 ({@code RSA PRIVATE KEY}), PKCS#8
 * ({@code PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}) form; other blocks (an {@code EC PARAMETERS}
 * block written by {@code openssl ecparam -genkey}, a certificate) are skipped.
 *
 * <p>Upstream also skips a key block it cannot parse and goes on to the next, ending in a generic
 * "data does not contain a valid RSA or ECDSA private key". Here the first private-key block decides:
 * an encrypted key, a DSA key or an unsupported curve is reported as such, because a file that holds
 * two keys is far more often a mistake than a fallback the operator relies on.
 *
 * <p>The file is read in two passes over the PEM blocks. BouncyCastle's {@link PEMParser} throws on a
 * label it does not know, where upstream tolerates it, and does not say which labels it saw; so the
 * blocks are first listed with the plain {@link PemReader}, and only the chosen key block is handed to
 * {@link PEMParser} and {@link JcaPEMKeyConverter}.
 */
final class PrivateKeyPem {

    static final String WANT = "want RSA or EC P-256/P-384/P-521";

    /** kube-apiserver signs with these curves only (ES256, ES384, ES512). */
    private static final Set<ASN1ObjectIdentifier> CURVES = Set.of(
            SECObjectIdentifiers.secp256r1, SECObjectIdentifiers.secp384r1, SECObjectIdentifiers.secp521r1);

    /** Names for the key types an operator is likely to try, so the message need not show an OID. */
    private static final Map<ASN1ObjectIdentifier, String> OTHER_KEY_TYPES = Map.of(
            X9ObjectIdentifiers.id_dsa, "DSA",
            EdECObjectIdentifiers.id_Ed25519, "Ed25519",
            EdECObjectIdentifiers.id_Ed448, "Ed448",
            EdECObjectIdentifiers.id_X25519, "X25519",
            EdECObjectIdentifiers.id_X448, "X448",
            PKCSObjectIdentifiers.id_RSASSA_PSS, "RSASSA-PSS",
            PKCSObjectIdentifiers.dhKeyAgreement, "DH");

    private PrivateKeyPem() {
    }

    /** The first private key in {@code file}, checked to be one kube-apiserver can verify tokens of. */
    static PrivateKey read(Path file) throws KeyFileException {
        String text = readText(file);
        if (text.isBlank()) {
            throw new KeyFileException(file, "empty file");
        }
        Set<String> seen = new LinkedHashSet<>();
        try (PemReader blocks = new PemReader(new StringReader(text))) {
            for (PemObject block = blocks.readPemObject(); block != null; block = blocks.readPemObject()) {
                if (block.getType().endsWith("PRIVATE KEY")) {
                    return toPrivateKey(file, block);
                }
                seen.add(block.getType());
            }
        } catch (IOException e) {
            // PemReader's messages name the missing END line; they hold labels only, never key bytes
            throw new KeyFileException(file, "malformed PEM (" + e.getMessage() + ")");
        } catch (DecoderException e) {
            throw new KeyFileException(file, "malformed PEM (a block is not valid base64)");
        }
        if (seen.isEmpty()) {
            throw new KeyFileException(file, "not PEM");
        }
        throw new KeyFileException(file, "no private key in PEM (found " + String.join(", ", seen) + ")");
    }

    private static String readText(Path file) throws KeyFileException {
        if (Files.isDirectory(file)) {
            throw new KeyFileException(file, "is a directory");
        }
        try {
            // ISO-8859-1 maps every byte, so a binary (DER) file is "not PEM" rather than a decoding error
            return new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new KeyFileException(file, FileErrors.reason(e), e);
        }
    }

    private static PrivateKey toPrivateKey(Path file, PemObject block) throws KeyFileException {
        String type = block.getType();
        if (type.equals("ENCRYPTED PRIVATE KEY") || isProcTypeEncrypted(block)) {
            throw new KeyFileException(file,
                    "encrypted private keys are not supported; decrypt it first (openssl pkey -in FILE -out NEWFILE)");
        }
        String form = switch (type) {
            case "RSA PRIVATE KEY" -> "PKCS#1";
            case "EC PRIVATE KEY" -> "SEC1";
            case "PRIVATE KEY" -> "PKCS#8";
            case "DSA PRIVATE KEY" -> throw new KeyFileException(file, "unsupported key type DSA (" + WANT + ")");
            default -> throw new KeyFileException(file, "unsupported key format " + type
                    + " (want PEM in PKCS#1, PKCS#8 or SEC1 form)");
        };
        PrivateKeyInfo info = parse(file, block, form);
        checkAlgorithm(file, info.getPrivateKeyAlgorithm());
        try {
            return new JcaPEMKeyConverter().getPrivateKey(info);
        } catch (IOException | RuntimeException e) {
            throw new KeyFileException(file, "malformed " + type + " block (not a valid " + form + " key)");
        }
    }

    /** RFC 1421 encryption, as {@code openssl rsa -aes256} still writes: {@code Proc-Type: 4,ENCRYPTED}. */
    private static boolean isProcTypeEncrypted(PemObject block) {
        for (Object h : block.getHeaders()) {
            PemHeader header = (PemHeader) h;
            if (header.getName().equalsIgnoreCase("Proc-Type") && header.getValue().contains("ENCRYPTED")) {
                return true;
            }
        }
        return false;
    }

    /** Hands the one block to {@link PEMParser}, which knows the PKCS#1, PKCS#8 and SEC1 structures. */
    private static PrivateKeyInfo parse(Path file, PemObject block, String form) throws KeyFileException {
        Object parsed;
        try {
            StringWriter pem = new StringWriter();
            try (PemWriter writer = new PemWriter(pem)) {
                writer.writeObject(block);
            }
            try (PEMParser parser = new PEMParser(new StringReader(pem.toString()))) {
                parsed = parser.readObject();
            }
        } catch (IOException | RuntimeException e) {
            parsed = null;
        }
        if (parsed instanceof PEMKeyPair pair) {
            return pair.getPrivateKeyInfo();
        }
        if (parsed instanceof PrivateKeyInfo info) {
            return info;
        }
        throw new KeyFileException(file, "malformed " + block.getType() + " block (not a valid " + form + " key)");
    }

    /** Refuses, before any conversion, the keys kube-apiserver could not verify (jwt.go accepts RSA and 3 curves). */
    private static void checkAlgorithm(Path file, AlgorithmIdentifier algorithm) throws KeyFileException {
        ASN1ObjectIdentifier oid = algorithm.getAlgorithm();
        if (oid.equals(PKCSObjectIdentifiers.rsaEncryption)) {
            return;
        }
        if (!oid.equals(X9ObjectIdentifiers.id_ecPublicKey)) {
            String name = OTHER_KEY_TYPES.getOrDefault(oid, "OID " + oid.getId());
            throw new KeyFileException(file, "unsupported key type " + name + " (" + WANT + ")");
        }
        if (algorithm.getParameters() == null) {
            // SEC1 makes them optional, but Go's x509 (and openssl ecparam -genkey) always has them in the key
            throw new KeyFileException(file, "EC key does not name its curve (want P-256, P-384 or P-521)");
        }
        X962Parameters params = X962Parameters.getInstance(algorithm.getParameters());
        if (!params.isNamedCurve()) {
            // Go's x509 parses named curves only; a key with explicit parameters would also get another kid
            throw new KeyFileException(file,
                    "EC keys must name their curve, not spell out its parameters (want P-256, P-384 or P-521)");
        }
        ASN1ObjectIdentifier curve = ASN1ObjectIdentifier.getInstance(params.getParameters());
        if (!CURVES.contains(curve)) {
            String name = ECNamedCurveTable.getName(curve);
            throw new KeyFileException(file, "EC curve " + (name != null ? name : "OID " + curve.getId())
                    + " is not supported (want P-256, P-384 or P-521)");
        }
    }
}
