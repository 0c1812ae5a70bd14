package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * AD-4: cache first, then live GETs; ten for {@code default} with one random 100–199 ms pause, one otherwise.
 * An account every attempt found missing is remembered as missing for a few seconds (the first security review).
 */
class ServiceAccountLookupTest {

    @Test
    void get_cachedAccount_needsNoLiveGet() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().cache(account("app"));

        assertThat(accounts.lookup().get("ns", "app").getMetadata().getName()).isEqualTo("app");
        assertThat(accounts.liveGets).isZero();
    }

    @Test
    void get_missingDefault_triedTenTimesWithOneInterval() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();

        assertThatThrownBy(() -> accounts.lookup().get("ns", "default"))
                .isInstanceOf(ServiceAccountLookup.LookupException.class)
                .hasMessage("serviceaccount \"default\" not found");
        assertThat(accounts.liveGets).isEqualTo(10);
        // the fixture's jitter is 42: one interval of 100 + 42 ms, drawn once
        assertThat(accounts.pauses).isEqualTo(Collections.nCopies(9, Duration.ofMillis(142)));
    }

    @Test
    void get_missingOtherAccount_triedOnce() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();

        assertThatThrownBy(() -> accounts.lookup().get("ns", "app"))
                .hasMessage("serviceaccount \"app\" not found");
        assertThat(accounts.liveGets).isEqualTo(1);
        assertThat(accounts.pauses).isEmpty();
    }

    @Test
    void get_defaultCreatedMeanwhile_foundOnALaterAttempt() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        ServiceAccountLookup lookup = new ServiceAccountLookup((ns, name) -> Optional.empty(), (ns, name) -> {
            accounts.liveGets++;
            if (accounts.liveGets < 3) {
                throw new io.kubernetes.client.openapi.ApiException(404, "not found");
            }
            return account(name);
        }, accounts.pauses::add, () -> 99, accounts.nanos::get);

        assertThat(lookup.get("ns", "default").getMetadata().getName()).isEqualTo("default");
        assertThat(accounts.liveGets).isEqualTo(3);
        assertThat(accounts.pauses).containsExactly(Duration.ofMillis(199), Duration.ofMillis(199));
    }

    @Test
    void get_otherApiError_endsTheLookupAtOnce() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        accounts.failLiveWith = 503;

        assertThatThrownBy(() -> accounts.lookup().get("ns", "default")).hasMessage("503 Service Unavailable: injected");
        assertThat(accounts.liveGets).isEqualTo(1);
    }

    @Test
    void missingAccount_isRemembered_soRepeatedReviewsHoldNoWorkerForRetries() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        ServiceAccountLookup lookup = accounts.lookup();
        assertThatThrownBy(() -> lookup.get("ns", "default")).hasMessage("serviceaccount \"default\" not found");

        // 1,000 forged reviews naming the same missing account: answered at once, the same way
        for (int i = 0; i < 1000; i++) {
            assertThatThrownBy(() -> lookup.get("ns", "default"))
                    .isInstanceOf(ServiceAccountLookup.LookupException.class)
                    .hasMessage("serviceaccount \"default\" not found");
        }
        assertThat(accounts.liveGets).isEqualTo(10);
        assertThat(accounts.pauses).hasSize(9);
    }

    @Test
    void rememberedMiss_afterAFewSeconds_expires() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        ServiceAccountLookup lookup = accounts.lookup();
        assertThatThrownBy(() -> lookup.get("ns", "app")).hasMessage("serviceaccount \"app\" not found");

        accounts.advance(ServiceAccountLookup.MISSING_TTL.minusMillis(1));
        assertThatThrownBy(() -> lookup.get("ns", "app")).hasMessage("serviceaccount \"app\" not found");
        assertThat(accounts.liveGets).isEqualTo(1);

        accounts.advance(Duration.ofMillis(1));
        accounts.onlyLive(account("app"));
        assertThat(lookupName(lookup, "app")).isEqualTo("app");
        assertThat(accounts.liveGets).isEqualTo(2);
    }

    @Test
    void rememberedMiss_accountTheInformerHasSeen_neverHidden() throws Exception {
        // AD-4's reason: default may be created a moment after its namespace
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        ServiceAccountLookup lookup = accounts.lookup();
        assertThatThrownBy(() -> lookup.get("ns", "default")).isInstanceOf(ServiceAccountLookup.LookupException.class);

        accounts.cache(account("default"));

        assertThat(lookupName(lookup, "default")).isEqualTo("default");
        assertThat(accounts.liveGets).isEqualTo(10);
    }

    @Test
    void rememberedMiss_perNamespaceAndName() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().onlyLive(account("app"));
        ServiceAccountLookup lookup = accounts.lookup();
        assertThatThrownBy(() -> lookup.get("other", "missing")).isInstanceOf(ServiceAccountLookup.LookupException.class);

        assertThat(lookupName(lookup, "app")).isEqualTo("app");
        assertThatThrownBy(() -> lookup.get("ns", "missing")).isInstanceOf(ServiceAccountLookup.LookupException.class);
        assertThat(accounts.liveGets).isEqualTo(3);
    }

    @Test
    void otherApiError_isNotRemembered() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        accounts.failLiveWith = 503;
        ServiceAccountLookup lookup = accounts.lookup();
        assertThatThrownBy(() -> lookup.get("ns", "default")).hasMessage("503 Service Unavailable: injected");

        accounts.failLiveWith = 0;
        accounts.onlyLive(account("default"));

        assertThat(lookupName(lookup, "default")).isEqualTo("default");
        assertThat(accounts.liveGets).isEqualTo(2);
    }

    @Test
    void accountFoundOnALaterAttempt_notRememberedAsMissing() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        int[] gets = {0};
        ServiceAccountLookup lookup = new ServiceAccountLookup((ns, name) -> Optional.empty(), (ns, name) -> {
            gets[0]++;
            if (gets[0] == 2) {
                throw new io.kubernetes.client.openapi.ApiException(404, "not found");
            }
            return account(name);
        }, accounts.pauses::add, () -> 0, accounts.nanos::get);
        lookup.get("ns", "default");

        assertThat(lookup.get("ns", "default").getMetadata().getName()).isEqualTo("default");
        assertThat(lookup.get("ns", "default").getMetadata().getName()).isEqualTo("default");
        assertThat(gets[0]).isEqualTo(4);
    }

    @Test
    void freshMissingNamespacesFlood_holdsAtMostFourLookups_theOthersAnsweredAtOnce() throws Exception {
        try (Flood flood = new Flood()) {
            List<Future<String>> lookups = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                lookups.add(flood.lookup("forged-" + i, "default"));
            }

            List<String> atOnce = flood.answeredWhileRetriesWait(lookups, 12);

            assertThat(flood.waiting()).isEqualTo(ServiceAccountLookup.RETRYING);
            assertThat(atOnce).hasSize(12).allSatisfy(message -> assertThat(message).isEqualTo(
                    "serviceaccount \"default\" not found (not retried: 4 lookups of missing ServiceAccounts, or 2 in "
                            + "namespace " + message.replaceAll(".*in namespace (\\S+),.*", "$1")
                            + ", are retrying already)"));
            flood.release();
            assertThat(flood.messages(lookups)).filteredOn("serviceaccount \"default\" not found"::equals).hasSize(4);
        }
    }

    @Test
    void burstInOneNewNamespace_retriesTwo_leavingRetriesForOtherNamespaces() throws Exception {
        try (Flood flood = new Flood()) {
            List<Future<String>> burst = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                burst.add(flood.lookup("new", "default"));
            }
            assertThat(flood.answeredWhileRetriesWait(burst, 3)).hasSize(3)
                    .allSatisfy(message -> assertThat(message).contains("not retried"));
            assertThat(flood.waiting()).isEqualTo(ServiceAccountLookup.RETRYING_PER_NAMESPACE);

            Future<String> other = flood.lookup("other", "default");
            flood.awaitWaiting(ServiceAccountLookup.RETRYING_PER_NAMESPACE + 1);
            flood.live.put("other", account("default"));
            flood.release();

            assertThat(other.get(10, TimeUnit.SECONDS)).isEqualTo("found default");
        }
    }

    @Test
    void missingAccountOtherThanDefault_isNotRetried_soNeverLimited() throws Exception {
        try (Flood flood = new Flood()) {
            List<Future<String>> lookups = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                lookups.add(flood.lookup("ns-" + i, "app"));
            }

            assertThat(flood.answeredWhileRetriesWait(lookups, 16)).containsOnly("serviceaccount \"app\" not found");
        }
    }

    /**
     * Lookups on their own threads, as reviews on the webhook's workers, of accounts missing unless put in
     * {@link #live} (by namespace); a retry's pause waits until {@link #release}, so a retrying lookup holds its
     * thread as it would hold a worker.
     */
    static final class Flood implements AutoCloseable {
        final java.util.Map<String, io.kubernetes.client.openapi.models.V1ServiceAccount> live =
                new java.util.concurrent.ConcurrentHashMap<>();
        final CountDownLatch gate = new CountDownLatch(1);
        final java.util.concurrent.atomic.AtomicInteger paused = new java.util.concurrent.atomic.AtomicInteger();
        final ExecutorService workers = Executors.newFixedThreadPool(32);
        final ServiceAccountLookup lookup = new ServiceAccountLookup((ns, name) -> Optional.empty(), (ns, name) -> {
            var account = live.get(ns);
            if (account == null) {
                throw new io.kubernetes.client.openapi.ApiException(404, "not found");
            }
            return account;
        }, pause -> {
            paused.incrementAndGet();
            try {
                gate.await();
            } finally {
                paused.decrementAndGet();
            }
        }, () -> 0, () -> 0L);

        Future<String> lookup(String namespace, String name) {
            return workers.submit(() -> {
                try {
                    return "found " + lookup.get(namespace, name).getMetadata().getName();
                } catch (ServiceAccountLookup.LookupException e) {
                    return e.getMessage();
                }
            });
        }

        /**
         * The messages of the lookups answered while the retrying ones wait: {@code count} of them, within 10 s
         * (the lookups that retry wait until {@link #release}, for ever on code that retries every lookup).
         */
        List<String> answeredWhileRetriesWait(List<Future<String>> lookups, int count) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (lookups.stream().filter(Future::isDone).count() < count && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            awaitWaiting(lookups.size() - count);
            List<String> messages = new ArrayList<>();
            for (Future<String> f : lookups) {
                if (f.isDone()) {
                    messages.add(f.get());
                }
            }
            assertThat(messages).as("lookups answered while %d retry", waiting()).hasSize(count);
            return messages;
        }

        void awaitWaiting(int n) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (paused.get() < n && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertThat(paused.get()).isEqualTo(n);
        }

        int waiting() {
            return paused.get();
        }

        void release() {
            gate.countDown();
        }

        List<String> messages(List<Future<String>> lookups) throws Exception {
            List<String> messages = new ArrayList<>();
            for (Future<String> f : lookups) {
                messages.add(f.get(10, TimeUnit.SECONDS));
            }
            return messages;
        }

        @Override
        public void close() {
            gate.countDown();
            workers.shutdownNow();
        }
    }

    private static String lookupName(ServiceAccountLookup lookup, String name) throws Exception {
        return lookup.get("ns", name).getMetadata().getName();
    }

    @Test
    void volumeNameSuffix_generated_usesTheKubernetesAlphabet() {
        VolumeNameSuffix suffix = new VolumeNameSuffix(new java.util.Random(7));
        for (int i = 0; i < 1000; i++) {
            assertThat(suffix.get()).hasSize(5).matches("[bcdfghjklmnpqrstvwxz2456789]{5}");
        }
    }
}
