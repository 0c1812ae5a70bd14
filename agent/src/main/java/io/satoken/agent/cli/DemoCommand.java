package io.satoken.agent.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Placeholder so the command tree compiles; replaced by the demo implementation. */
@Command(name = "demo", mixinStandardHelpOptions = true, description = "Runs the token pipeline with a local issuer.")
final class DemoCommand implements Callable<Integer> {
    @Override
    public Integer call() {
        throw new UnsupportedOperationException("not built yet");
    }
}
