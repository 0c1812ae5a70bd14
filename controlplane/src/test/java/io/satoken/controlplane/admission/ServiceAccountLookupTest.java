package io.satoken.controlplane.admission;

import static io.satoken.controlplane.admission.AdmissionFixtures.account;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Collections;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** AD-4: cache first, then live GETs; ten for {@code default} with one random 100–199 ms pause, one otherwise. */
class ServiceAccountLookupTest {

    @Test
    void cached_account_needs_no_live_get() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts().cache(account("app"));

        assertThat(accounts.lookup().get("ns", "app").getMetadata().getName()).isEqualTo("app");
        assertThat(accounts.liveGets).isZero();
    }

    @Test
    void missing_default_is_tried_ten_times_with_one_interval() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();

        assertThatThrownBy(() -> accounts.lookup().get("ns", "default"))
                .isInstanceOf(ServiceAccountLookup.LookupException.class)
                .hasMessage("serviceaccount \"default\" not found");
        assertThat(accounts.liveGets).isEqualTo(10);
        // the fixture's jitter is 42: one interval of 100 + 42 ms, drawn once
        assertThat(accounts.pauses).isEqualTo(Collections.nCopies(9, Duration.ofMillis(142)));
    }

    @Test
    void missing_other_account_is_tried_once() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();

        assertThatThrownBy(() -> accounts.lookup().get("ns", "app"))
                .hasMessage("serviceaccount \"app\" not found");
        assertThat(accounts.liveGets).isEqualTo(1);
        assertThat(accounts.pauses).isEmpty();
    }

    @Test
    void default_created_meanwhile_is_found_on_a_later_attempt() throws Exception {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        ServiceAccountLookup lookup = new ServiceAccountLookup((ns, name) -> Optional.empty(), (ns, name) -> {
            accounts.liveGets++;
            if (accounts.liveGets < 3) {
                throw new io.kubernetes.client.openapi.ApiException(404, "not found");
            }
            return account(name);
        }, accounts.pauses::add, () -> 99);

        assertThat(lookup.get("ns", "default").getMetadata().getName()).isEqualTo("default");
        assertThat(accounts.liveGets).isEqualTo(3);
        assertThat(accounts.pauses).containsExactly(Duration.ofMillis(199), Duration.ofMillis(199));
    }

    @Test
    void other_api_error_ends_the_lookup_at_once() {
        AdmissionFixtures.Accounts accounts = new AdmissionFixtures.Accounts();
        accounts.failLiveWith = 503;

        assertThatThrownBy(() -> accounts.lookup().get("ns", "default")).hasMessage("503 injected");
        assertThat(accounts.liveGets).isEqualTo(1);
    }

    @Test
    void generated_volume_names_use_the_kubernetes_alphabet() {
        VolumeNameSuffix suffix = new VolumeNameSuffix(new java.util.Random(7));
        for (int i = 0; i < 1000; i++) {
            assertThat(suffix.get()).hasSize(5).matches("[bcdfghjklmnpqrstvwxz2456789]{5}");
        }
    }
}
