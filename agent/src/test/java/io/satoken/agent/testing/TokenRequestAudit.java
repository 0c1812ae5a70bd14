package io.satoken.agent.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An audit policy for kube-apiserver that records every TokenRequest at level Metadata, and nothing else: each
 * event names the user who asked, and the user it acted as ({@code impersonatedUser}), never the token.
 */
public final class TokenRequestAudit {

    private static final String POLICY = """
            apiVersion: audit.k8s.io/v1
            kind: Policy
            omitStages: [RequestReceived]
            rules:
              - level: Metadata
                resources:
                  - group: ""
                    resources: [serviceaccounts/token]
              - level: None
            """;

    private TokenRequestAudit() {
    }

    /** Writes the policy to {@code file}, for {@code --audit-policy-file}; returns the file. */
    public static Path writePolicy(Path file) throws IOException {
        return Files.writeString(file, POLICY);
    }
}
