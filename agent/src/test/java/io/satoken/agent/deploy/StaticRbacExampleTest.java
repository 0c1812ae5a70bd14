package io.satoken.agent.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubernetes.client.openapi.models.RbacV1Subject;
import io.kubernetes.client.openapi.models.V1ClusterRoleBinding;
import io.kubernetes.client.openapi.models.V1PolicyRule;
import io.kubernetes.client.openapi.models.V1Role;
import io.kubernetes.client.openapi.models.V1RoleBinding;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.util.Yaml;
import io.satoken.agent.config.AgentConfigParser;
import io.satoken.agent.config.StaticProjection;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code systemd/rbac-example.yaml}, the least-privilege RBAC of a static-mode agent, parses, and grants the
 * example {@code systemd/agent.yaml} exactly its ServiceAccounts' tokens (StaticModeIT runs the agent with it).
 */
class StaticRbacExampleTest {

    private static final Path ROOT = Repo.root();

    @Test
    void roles_grantTokensOfExactlyTheConfiguredServiceAccounts_byResourceName() throws Exception {
        List<Object> objects = Yaml.loadAll(ROOT.resolve("systemd/rbac-example.yaml").toFile());
        Map<String, TreeSet<String>> configured = AgentConfigParser.parse(ROOT.resolve("systemd/agent.yaml"))
                .projections().stream().collect(Collectors.groupingBy(StaticProjection::namespace, TreeMap::new,
                        Collectors.mapping(StaticProjection::serviceAccount, Collectors.toCollection(TreeSet::new))));

        Map<String, TreeSet<String>> granted = new TreeMap<>();
        List<String> bound = new ArrayList<>();
        for (Object o : objects) {
            if (o instanceof V1Role role) {
                assertThat(role.getRules()).singleElement().satisfies(rule -> {
                    assertThat(rule.getApiGroups()).containsExactly("");
                    assertThat(rule.getResources()).containsExactly("serviceaccounts/token");
                    assertThat(rule.getVerbs()).containsExactly("create");
                    assertThat(rule.getResourceNames()).as("a Role without resourceNames grants every account")
                            .isNotEmpty();
                });
                V1PolicyRule rule = role.getRules().get(0);
                granted.put(role.getMetadata().getNamespace(), new TreeSet<>(rule.getResourceNames()));
            } else if (o instanceof V1RoleBinding binding) {
                assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
                assertThat(binding.getSubjects()).extracting(RbacV1Subject::getName).containsExactly("satoken-static-agent");
                bound.add(binding.getMetadata().getNamespace());
            } else if (o instanceof V1ClusterRoleBinding binding) {
                // the only cluster-wide grant: reading the API server's ServiceAccount keys
                assertThat(binding.getRoleRef().getName()).isEqualTo("system:service-account-issuer-discovery");
            } else {
                assertThat(o).isInstanceOf(V1ServiceAccount.class);
            }
        }

        assertThat(granted).isEqualTo(configured);
        assertThat(bound).containsExactlyInAnyOrderElementsOf(configured.keySet());
    }
}
