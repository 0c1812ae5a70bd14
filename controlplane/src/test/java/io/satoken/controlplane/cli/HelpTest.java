package io.satoken.controlplane.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.satoken.common.testing.HelpExamples;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command's {@code --help} ends with examples that are real command lines, and {@code help} is a command. */
class HelpTest {

    record Result(int exit, String out, String err) { }

    @Test
    void everyCommand_showsExamples_thatParse() {
        List<String> commands = new ArrayList<>(List.of(""));
        new CommandLine(new ControlplaneCommand()).getSubcommands().keySet().stream().filter(c -> !c.equals("help"))
                .forEach(commands::add);
        assertThat(commands).contains("run", "validate");
        for (String command : commands) {
            Result help = command.isEmpty() ? run("--help") : run(command, "--help");
            assertThat(help.exit()).as(command).isZero();
            List<List<String>> examples = HelpExamples.of(help.out());
            assertThat(examples).as("examples of '%s'", command).isNotEmpty();
            if (!command.isEmpty()) {
                assertThat(examples).as("an example of '%s' runs it", command)
                        .anySatisfy(e -> assertThat(e.subList(0, 2)).containsExactly("satoken-controlplane", command));
            }
            for (List<String> example : examples) {
                assertThat(example.get(0)).isEqualTo("satoken-controlplane");
                List<String> args = example.subList(1, example.size());
                assertThatCode(() -> new CommandLine(new ControlplaneCommand()).parseArgs(args.toArray(String[]::new)))
                        .as(String.join(" ", example)).doesNotThrowAnyException();
            }
        }
    }

    @Test
    void help_isACommand_showingACommandsUsageAndExamples() {
        Result run = run("help", "run");
        Result top = run("help");

        assertThat(run.exit()).isZero();
        assertThat(run.out()).contains("Usage: satoken-controlplane run", "--controllers", "Examples:");
        assertThat(top.exit()).isZero();
        assertThat(top.out()).contains("Usage: satoken-controlplane", "help", "validate", "Examples:");
    }

    @Test
    void help_ofAnUnknownCommand_isAUsageErrorOnOneLine() {
        Result r = run("help", "frobnicate");

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip().lines()).singleElement().asString().contains("frobnicate");
    }

    @Test
    void noCommand_namesEveryCommand() {
        assertThat(run().err()).contains("run, validate, help");
    }

    private static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = ControlplaneCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Result(exit, out.toString(), err.toString());
    }
}
