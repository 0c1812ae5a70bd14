package io.satoken.controlplane.https;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.satoken.controlplane.webhook.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Loading the serving pair: every PEM key form kube-apiserver's own flags take, and clear errors. */
class ServingCertificateTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(TestCertificates.KeyForm.class)
    void load_eachKeyForm_accepted(TestCertificates.KeyForm form) throws Exception {
        TestCertificates.Pair pair = TestCertificates.write(dir, "web", form);

        ServingCertificate certificate = ServingCertificate.load(pair.cert(), pair.key());

        assertThat(certificate.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=web");
    }

    @Test
    void load_keyOfAnotherCertificate_refused() throws Exception {
        TestCertificates.Pair one = TestCertificates.write(dir.resolve("one"), "one");
        TestCertificates.Pair two = TestCertificates.write(dir.resolve("two"), "two");

        assertThatThrownBy(() -> ServingCertificate.load(one.cert(), two.key()))
                .hasMessageStartingWith("--tls-private-key-file: the key does not belong to the first certificate in "
                        + "--tls-cert-file (subject \"CN=one\"");
    }

    @Test
    void load_missingOrGarbageFiles_namesTheFlag() throws Exception {
        TestCertificates.Pair pair = TestCertificates.write(dir, "web");
        Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not pem");

        assertThatThrownBy(() -> ServingCertificate.load(dir.resolve("absent.pem"), pair.key()))
                .hasMessage("--tls-cert-file " + dir.resolve("absent.pem") + ": not found");
        assertThatThrownBy(() -> ServingCertificate.load(garbage, pair.key()))
                .hasMessageStartingWith("--tls-cert-file: ");
        assertThatThrownBy(() -> ServingCertificate.load(pair.cert(), garbage))
                .hasMessage("--tls-private-key-file: no unencrypted PEM private key found (expected RSA PRIVATE KEY, "
                        + "EC PRIVATE KEY or PRIVATE KEY)");
    }

    @Test
    void context_enabledProtocols_tlsV12AndV13Only() throws Exception {
        TestCertificates.Pair pair = TestCertificates.write(dir, "web");

        var engine = ServingCertificate.load(pair.cert(), pair.key()).context()
                .newEngine(io.netty.buffer.ByteBufAllocator.DEFAULT);

        assertThat(engine.getEnabledProtocols()).containsExactlyInAnyOrder("TLSv1.3", "TLSv1.2");
    }
}
