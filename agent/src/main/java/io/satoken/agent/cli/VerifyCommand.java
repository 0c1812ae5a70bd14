package io.satoken.agent.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder so the command tree compiles; the verify helper replaces this file. */
@Command(name = "verify", mixinStandardHelpOptions = true, description = "Verifies a token file against a JWKS.")
final class VerifyCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("not built yet");
    }
}
