package io.satoken.controlplane.jwt;

import com.nimbusds.jose.jwk.Curve;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPublicKeySpec;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.math.ec.FixedPointCombMultiplier;

/**
 * The public half of a signing key, computed from the private half as Go's x509 package does when it
 * parses a private key: the public key embedded in a PEM file (SEC1 and PKCS#8 may carry one) is ignored,
 * so a file whose two halves disagree still yields the key that actually signs, and the right kid.
 */
final class PublicKeyDerivation {

    private PublicKeyDerivation() {
    }

    /** RSA: the modulus and public exponent are part of every PKCS#1 / PKCS#8 RSA private key. */
    static PublicKey of(RSAPrivateCrtKey key) {
        try {
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new RSAPublicKeySpec(key.getModulus(), key.getPublicExponent()));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot derive the RSA public key (" + e.getMessage() + ")", e);
        }
    }

    /**
     * EC: Q = d·G on the key's named curve. The multiplier is BouncyCastle's fixed-point comb, the one it
     * uses for key generation, whose running time does not depend on the bits of d.
     */
    static PublicKey of(ECPrivateKey key, Curve curve) {
        X9ECParameters x9 = ECNamedCurveTable.getByOID(new ASN1ObjectIdentifier(curve.getOID()));
        org.bouncycastle.math.ec.ECPoint q = new FixedPointCombMultiplier().multiply(x9.getG(), key.getS()).normalize();
        ECPoint w = new ECPoint(q.getAffineXCoord().toBigInteger(), q.getAffineYCoord().toBigInteger());
        PublicKey publicKey;
        try {
            publicKey = KeyFactory.getInstance("EC").generatePublic(new ECPublicKeySpec(w, key.getParams()));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot derive the EC public key (" + e.getMessage() + ")", e);
        }
        checkNamedCurve(publicKey);
        return publicKey;
    }

    /**
     * The kid hashes the encoded public key, and Go encodes an EC key's curve by its OID. A provider that
     * spelt out the curve parameters instead would give a kid no kube-apiserver derives, and every token
     * would be rejected; fail here, at start-up, rather than then.
     */
    private static void checkNamedCurve(PublicKey publicKey) {
        SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(publicKey.getEncoded());
        if (!(spki.getAlgorithm().getParameters() instanceof ASN1ObjectIdentifier)) {
            throw new IllegalStateException("the JCA encodes EC public keys with explicit curve parameters; "
                    + "the kid would not match kube-apiserver's");
        }
    }
}
