package io.satoken.common.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.AccessDeniedException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** What a mistyped command line and a failed command print: the reason, in words, once. */
class ExitCodesTest {

    @Command(name = "tool", subcommands = {Run.class, Validate.class})
    static final class Tool {
    }

    @Command(name = "run")
    static final class Run implements Callable<Integer> {
        @Option(names = "--config", required = true)
        Path config;

        @Option(names = "--node-name")
        String nodeName;

        @Override
        public Integer call() throws Exception {
            throw new AccessDeniedException(config.toString());
        }
    }

    @Command(name = "validate")
    static final class Validate implements Callable<Integer> {
        @Override
        public Integer call() {
            throw new IllegalStateException();
        }
    }

    private record Result(int code, String err) {
    }

    private static Result run(String... args) {
        StringWriter err = new StringWriter();
        int code = ExitCodes.execute(new CommandLine(new Tool()), new PrintWriter(new StringWriter()),
                new PrintWriter(err, true), args);
        return new Result(code, err.toString());
    }

    @Test
    void aMisspelledOption_isNamedWithTheOneMeant_beforeWhatItCaused() {
        Result r = run("run", "--confg", "/etc/satoken/agent.yaml");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().lines()).first()
                .isEqualTo("tool run: unknown option '--confg' (did you mean --config?)");
        assertThat(r.err()).contains("--config");
    }

    @Test
    void anOptionFarFromEveryName_isNamedWithoutAGuess() {
        Result r = run("run", "--config", "a.yaml", "--bogus-flag=1");

        assertThat(r.err().lines()).first().isEqualTo("tool run: unknown option '--bogus-flag'");
        assertThat(r.err()).doesNotContain("Unknown option").doesNotContain("Unmatched");
    }

    @Test
    void anUnknownCommand_listsTheCommands_notAnIndex() {
        Result r = run("rnu");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().lines()).containsExactly("tool: unexpected argument 'rnu' (tool has: run, validate)");
    }

    @Test
    void anOptionValue_isNotTakenForAnArgument() {
        assertThat(ExitCodes.unknownArguments(new CommandLine(new Tool()).getCommandSpec(),
                new String[] {"run", "--node-name", "n1", "--config", "c.yaml"})).isEmpty();
    }

    @Test
    void aFileTheCommandCannotRead_isNamedWithItsReason() {
        Result r = run("run", "--config", "/etc/satoken/agent.yaml");

        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).isEqualTo("tool run: /etc/satoken/agent.yaml: permission denied" + System.lineSeparator());
    }

    @Test
    void aFailureWithoutAMessage_printsNoClassName() {
        Result r = run("validate");

        assertThat(r.err()).isEqualTo("tool validate: internal error (--log-level debug logs where)"
                + System.lineSeparator()).doesNotContain("Exception");
    }
}
