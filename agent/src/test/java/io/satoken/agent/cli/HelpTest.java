package io.satoken.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.HelpExamples;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Every command's {@code --help} ends with examples that are real command lines, and {@code help} is a command. */
class HelpTest {

    record Result(int exit, String out, String err) { }

    @Test
    void everyCommand_showsExamples_thatParse() {
        List<String> commands = HelpExamples.checkEveryCommand("satoken-agent", AgentCommand::new, args -> {
            Result r = run(args);
            return Map.entry(r.exit(), r.out());
        });

        assertThat(commands).contains("run", "validate", "demo", "verify", "explain");
    }

    @Test
    void help_isACommand_showingACommandsUsageAndExamples() {
        Result run = run("help", "run");
        Result top = run("help");

        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("Usage: satoken-agent run", "--config", "Examples:");
        assertThat(top.exit()).isZero();
        assertThat(top.out()).contains("Usage: satoken-agent", "help", "explain", "Examples:");
    }

    @Test
    void help_ofAnUnknownCommand_isAUsageErrorOnOneLine() {
        Result r = run("help", "frobnicate");

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip().lines()).singleElement().asString().contains("frobnicate");
    }

    @Test
    void noCommand_namesEveryCommand() {
        assertThat(run().err()).contains("run, validate, demo, verify, explain, help");
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = AgentCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
