package io.satoken.controlplane.rootca;

import io.satoken.common.paths.FileErrors;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;

/** Reads {@code --root-ca-file}: a PEM bundle of one or more certificates, published as is. */
public final class RootCaBundle {

    private static final String BEGIN = "-----BEGIN CERTIFICATE-----";

    private RootCaBundle() {
    }

    /**
     * @return the file's bytes, unchanged, once every certificate in it parses
     * @throws IllegalArgumentException a one-line reason naming the flag and file
     */
    public static byte[] load(Path file) {
        String where = "--root-ca-file " + file + ": ";
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException(where + FileErrors.reason(e));
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        if (!text.contains(BEGIN)) {
            throw new IllegalArgumentException(where + "not a PEM certificate bundle (no " + BEGIN + " block)");
        }
        try {
            var certificates = CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(bytes));
            if (certificates.isEmpty()) {
                throw new IllegalArgumentException(where + "no certificate found");
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(where + "a certificate does not parse: " + e.getMessage());
        }
        return bytes;
    }
}
