package io.satoken.controlplane.serviceaccounts;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.informer.cache.Lister;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.satoken.common.logging.LogFormat;
import io.satoken.common.logging.LogLevel;
import io.satoken.common.testing.CapturedLogs;
import io.satoken.controlplane.controller.Reconciler.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Spec 6's TestServiceAccountCreation table (SC-1..SC-4); required accounts [default, managed]. */
class ServiceAccountsSyncTest {

    record Case(String name, String namespacePhase, List<String> existing, List<String> expectedCreates) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> serviceAccountCreation() {
        // a namespace event and a ServiceAccount delete both reduce to a sync of the namespace (SC-2);
        // the deleted account is simply absent from the cache
        return Stream.of(
                new Case("new active namespace missing serviceaccounts", "Active", List.of(), List.of("default", "managed")),
                new Case("new active namespace missing serviceaccount", "Active", List.of("managed"), List.of("default")),
                new Case("new active namespace with serviceaccounts", "Active", List.of("default", "managed"), List.of()),
                new Case("new terminating namespace", "Terminating", List.of(), List.of()),
                new Case("updated active namespace missing serviceaccounts", "Active", List.of(),
                        List.of("default", "managed")),
                new Case("updated active namespace missing serviceaccount", "Active", List.of("default"),
                        List.of("managed")),
                new Case("updated active namespace with serviceaccounts", "Active", List.of("default", "managed"),
                        List.of()),
                new Case("updated terminating namespace", "Terminating", List.of(), List.of()),
                new Case("deleted serviceaccount without namespace", null, List.of(), List.of()),
                new Case("deleted serviceaccount with active namespace", "Active", List.of("managed"), List.of("default")),
                new Case("deleted serviceaccount with terminating namespace", "Terminating", List.of(), List.of()),
                new Case("deleted unmanaged serviceaccount with active namespace", "Active",
                        List.of("default", "managed"), List.of()),
                new Case("deleted unmanaged serviceaccount with terminating namespace", "Terminating", List.of(),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void serviceAccountCreation(Case c) {
        Cache<V1Namespace> namespaces = new Cache<>();
        if (c.namespacePhase() != null) {
            namespaces.add(namespace("testns", c.namespacePhase()));
        }
        Cache<V1ServiceAccount> accounts = new Cache<>();
        c.existing().forEach(name -> accounts.add(account("testns", name)));
        List<String> created = new ArrayList<>();
        ServiceAccountsSync sync = new ServiceAccountsSync(new Lister<>(namespaces), new Lister<>(accounts),
                (ns, name) -> created.add(name), List.of("default", "managed"));

        assertThat(sync.reconcile("testns")).isEqualTo(Result.DONE);
        assertThat(created).containsExactlyElementsOf(c.expectedCreates());
    }

    @Test
    void createErrors_alreadyExistsAndTerminatingAreIgnored_othersRetry() { // SC-3
        Cache<V1Namespace> namespaces = new Cache<>();
        namespaces.add(namespace("testns", "Active"));
        List<ApiException> answers = new ArrayList<>(List.of(
                new ApiException(409, Map.of(), "{\"reason\":\"AlreadyExists\"}"),
                new ApiException(403, Map.of(), "{\"reason\":\"Forbidden\",\"details\":{\"causes\":"
                        + "[{\"reason\":\"NamespaceTerminating\"}]}}")));
        ServiceAccountsSync sync = new ServiceAccountsSync(new Lister<>(namespaces), new Lister<>(new Cache<>()),
                (ns, name) -> {
                    throw answers.remove(0);
                }, List.of("default", "managed"));
        assertThat(sync.reconcile("testns")).isEqualTo(Result.DONE);

        ServiceAccountsSync failing = new ServiceAccountsSync(new Lister<>(namespaces), new Lister<>(new Cache<>()),
                (ns, name) -> {
                    throw new ApiException(500, Map.of(), "{\"message\":\"etcd down\"}");
                }, List.of("default"));
        assertThat(failing.reconcile("testns")).isEqualTo(Result.RETRY);
    }

    @Test
    void failedCreate_logsWhatFailedAndTheApiServersReason_inFailuresWords() {
        Cache<V1Namespace> namespaces = new Cache<>();
        namespaces.add(namespace("testns", "Active"));
        ServiceAccountsSync failing = new ServiceAccountsSync(new Lister<>(namespaces), new Lister<>(new Cache<>()),
                (ns, name) -> {
                    throw new ApiException(500, Map.of(), "{\"kind\":\"Status\",\"message\":\"etcd down\"}");
                }, List.of("default"));

        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            assertThat(failing.reconcile("testns")).isEqualTo(Result.RETRY);

            assertThat(logs.text()).contains("creating serviceaccount testns/default: 500 Internal Server Error: etcd down")
                    .doesNotContain("Exception").doesNotContain("null");
        }
    }

    static V1Namespace namespace(String name, String phase) {
        return new V1Namespace().metadata(new V1ObjectMeta().name(name)).status(new V1NamespaceStatus().phase(phase));
    }

    static V1ServiceAccount account(String ns, String name) {
        return new V1ServiceAccount().metadata(new V1ObjectMeta().name(name).namespace(ns));
    }
}
