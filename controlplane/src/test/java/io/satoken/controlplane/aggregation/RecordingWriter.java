package io.satoken.controlplane.aggregation;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ClusterRole;
import java.util.ArrayList;
import java.util.List;

/** Records the aggregation controller's API calls; its applies can be made to fail with a given status. */
final class RecordingWriter implements ClusterRoleWriter {

    sealed interface Call permits Apply, Update {
    }

    /** An apply, its body parsed so that comparisons ignore field order and spacing. */
    record Apply(String name, JsonElement body) implements Call {
        static Apply of(String name, String json) {
            return new Apply(name, JsonParser.parseString(json));
        }
    }

    record Update(V1ClusterRole role) implements Call {
    }

    final List<Call> calls = new ArrayList<>();
    private int applyStatus;
    private int updateStatus;

    /** Makes every apply fail with HTTP {@code status} (e.g. 415), after recording it. */
    RecordingWriter failApplies(int status) {
        this.applyStatus = status;
        return this;
    }

    RecordingWriter failUpdates(int status) {
        this.updateStatus = status;
        return this;
    }

    @Override
    public void apply(String name, String body) throws ApiException {
        calls.add(Apply.of(name, body));
        if (applyStatus != 0) {
            throw new ApiException(applyStatus, "apply refused by the test");
        }
    }

    @Override
    public void update(V1ClusterRole role) throws ApiException {
        calls.add(new Update(role)); // the sync's own copy; a JSON copy would turn null rules into []
        if (updateStatus != 0) {
            throw new ApiException(updateStatus, "update refused by the test");
        }
    }
}
