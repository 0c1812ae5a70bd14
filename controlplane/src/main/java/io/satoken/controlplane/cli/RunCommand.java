package io.satoken.controlplane.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code satoken-controlplane run}: runs the selected controllers until stopped or leadership is lost. */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = "Run the controllers against the cluster.")
final class RunCommand implements Callable<Integer> {

    @Override
    public Integer call() {
        return 0;
    }
}
