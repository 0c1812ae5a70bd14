package io.satoken.controlplane.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.controlplane.injection.InjectionCheckController;
import org.junit.jupiter.api.Test;

/** The injection check looks for the volume the webhook adds, by the same name. */
class InjectedVolumeNameTest {

    @Test
    void injectionCheck_looksForTheVolumeNameTheWebhookAdds() {
        assertThat(InjectionCheckController.VOLUME_NAME).isEqualTo(AgentTokenInjection.VOLUME_NAME);
    }
}
