package io.satoken.e2e.node;

/**
 * What a command run in a container printed and how it exited. Its output may hold a token, so
 * {@link #toString()} shows sizes only; a test that prints output decides that itself.
 */
public record ExecResult(int exitCode, String stdout, String stderr) {

    public boolean succeeded() {
        return exitCode == 0;
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", stdout=" + stdout.length() + " chars, stderr="
                + stderr.length() + " chars]";
    }
}
