package io.satoken.agent.deploy;

import java.nio.file.Files;
import java.nio.file.Path;

/** The repository's checkout, found from the agent module, where Maven runs its tests. */
final class Repo {

    private Repo() {
    }

    static Path root() {
        Path module = Path.of("").toAbsolutePath();
        Path root = module.getParent();
        if (root == null || !Files.isRegularFile(root.resolve("systemd/install.sh"))) {
            throw new IllegalStateException("expected to run in the agent module of a satoken checkout, ran in " + module);
        }
        return root;
    }
}
