package io.satoken.agent.csi;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

/** What the kubelet's FailedMount Event shows when a publish fails unexpectedly. */
class PublishCallTest {

    @Test
    void internal_namesTheVolumeAndTheFailureInWords() {
        Status status = PublishCall.internal("vol-1", new IllegalStateException("the volume's record is gone"));

        assertThat(status.getCode()).isEqualTo(Status.Code.INTERNAL);
        assertThat(status.getDescription()).isEqualTo("volume vol-1: the volume's record is gone");
    }

    @Test
    void internal_ofAFailureWithoutMessage_neverShowsAClassNameOrNull() {
        Status status = PublishCall.internal("vol-1", new NullPointerException());

        assertThat(status.getDescription()).isEqualTo("volume vol-1: failed without saying why")
                .doesNotContain("Exception").doesNotContain("null");
    }
}
