package io.satoken.controlplane.admission.view;

import static io.satoken.controlplane.admission.AdmissionFixtures.jackson;
import static io.satoken.controlplane.admission.AdmissionFixtures.json;
import static io.satoken.controlplane.admission.AdmissionFixtures.patched;
import static io.satoken.controlplane.admission.AdmissionFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.satoken.controlplane.admission.Verdict;
import org.junit.jupiter.api.Test;

class PodPatchTest {

    @Test
    void operations_noChange_none() throws Exception {
        PodPatch patch = new PodPatch(pod("{'containers':[{'name':'a'}]}"));

        assertThat(patch.changed()).isFalse();
        assertThat(patch.operations()).isEqualTo("[]");
    }

    @Test
    void operation_listItCreatedGrowsLater_keepsItsValue() throws Exception {
        JsonObject original = pod("{'containers':[{'name':'a'}]}");
        PodPatch patch = new PodPatch(original.deepCopy());

        patch.appendToSpec(PodView.VOLUMES, json("{'name':'one'}"));
        patch.appendToSpec(PodView.VOLUMES, json("{'name':'two'}"));

        assertThat(JsonParser.parseString(patch.operations())).isEqualTo(JsonParser.parseString(
                "[{\"op\":\"add\",\"path\":\"/spec/volumes\",\"value\":[{\"name\":\"one\"}]},"
                        + "{\"op\":\"add\",\"path\":\"/spec/volumes/-\",\"value\":{\"name\":\"two\"}}]"));
        assertThat(patched(original, Verdict.patch(patch.operations())).at("/spec/volumes"))
                .isEqualTo(jackson("[{'name':'one'},{'name':'two'}]"));
    }

    @Test
    void givenPod_showsEveryChange_patchMakesTheSamePod() throws Exception {
        JsonObject original = pod("{'containers':[{'name':'a','volumeMounts':[{'name':'x','mountPath':'/x'}]}]}");
        JsonObject pod = original.deepCopy();
        PodPatch patch = new PodPatch(pod);

        patch.setSpec("serviceAccountName", Json.text("default"));
        patch.appendToContainer(patch.view().containers(PodView.CONTAINERS).get(0), ContainerView.VOLUME_MOUNTS,
                json("{'name':'y','mountPath':'/y'}"));

        assertThat(pod.getAsJsonObject("spec")).isEqualTo(json("{'containers':[{'name':'a','volumeMounts':["
                + "{'name':'x','mountPath':'/x'},{'name':'y','mountPath':'/y'}]}],'serviceAccountName':'default'}"));
        assertThat(patched(original, Verdict.patch(patch.operations())))
                .isEqualTo(jackson(pod.toString().replace('"', '\'')));
    }

    @Test
    void operations_htmlCharacters_writtenAsTheyAre() throws Exception {
        PodPatch patch = new PodPatch(pod("{}"));

        patch.setSpec("hostname", Json.text("<a&b>"));

        assertThat(patch.operations()).contains("\"<a&b>\"");
    }
}
