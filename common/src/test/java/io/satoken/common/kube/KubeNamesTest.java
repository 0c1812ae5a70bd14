package io.satoken.common.kube;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class KubeNamesTest {

    @ParameterizedTest
    @ValueSource(strings = {"a", "kube-system", "a1", "0abc"})
    void dnsLabel_accepted(String value) {
        assertThat(KubeNames.dnsLabelProblem(value)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "A", "-a", "a-", "a.b", "a_b"})
    void dnsLabel_rejected_withKubernetesMessage(String value) {
        assertThat(KubeNames.dnsLabelProblem(value)).hasValueSatisfying(p -> assertThat(p).startsWith(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"default", "my.account", "a-b.c-d"})
    void dnsSubdomain_accepted(String value) {
        assertThat(KubeNames.dnsSubdomainProblem(value)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a..b", ".a", "a.", "A"})
    void dnsSubdomain_rejected_withKubernetesMessage(String value) {
        assertThat(KubeNames.dnsSubdomainProblem(value)).hasValueSatisfying(p -> assertThat(p).startsWith(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'"));
    }

    @Test
    void lengthLimits_are63ForLabels_and253ForSubdomains() {
        assertThat(KubeNames.dnsLabelProblem("a".repeat(63))).isEmpty();
        assertThat(KubeNames.dnsLabelProblem("a".repeat(64))).hasValue("must be no more than 63 characters");
        assertThat(KubeNames.dnsSubdomainProblem("a".repeat(253))).isEmpty();
        assertThat(KubeNames.dnsSubdomainProblem("a".repeat(254))).hasValue("must be no more than 253 characters");
    }

    @ParameterizedTest
    @ValueSource(strings = {"app", "rbac.authorization.k8s.io/aggregate-to-view", "A_b.c-D", "x/y"})
    void labelKey_accepted(String key) {
        assertThat(KubeNames.labelKeyProblem(key)).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "a/b/c|must be a name with at most one '/' prefix separator",
        "/b|prefix part must be non-empty",
        "Example.com/b|prefix part must be a lowercase DNS-1123 subdomain",
        "a/|name part must be non-empty",
        "''|name part must be non-empty",
        "-a|name part must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric"})
    void labelKey_rejected_naming_the_part(String key, String problem) {
        assertThat(KubeNames.labelKeyProblem(key)).hasValue(problem);
    }

    @Test
    void labelKey_partLengths() {
        assertThat(KubeNames.labelKeyProblem("a".repeat(254) + "/b"))
                .hasValue("prefix part must be no more than 253 characters");
        assertThat(KubeNames.labelKeyProblem("a".repeat(64))).hasValue("name part must be no more than 63 characters");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "v1", "a.b_c-d"})
    void labelValue_accepted(String value) {
        assertThat(KubeNames.labelValueProblem(value)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"-a", "a-", "a b", "a/b"})
    void labelValue_rejected(String value) {
        assertThat(KubeNames.labelValueProblem(value)).hasValue(
                "must be empty or consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric");
    }
}
