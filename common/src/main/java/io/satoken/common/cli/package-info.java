/**
 * Command-line plumbing both programs share, on picocli: {@link ExitCodes} (one line per problem; exit 0, 1 or 2),
 * {@link UsageErrors} (every bad flag or file found before start, reported together), {@link LogOptions}
 * ({@code --log-level}, {@code --log-format}), {@link ClientAndMetricsOptions} ({@code --kubeconfig},
 * {@code --metrics-address}), {@link DurationConverter} (the duration flags' one grammar, which
 * {@code text.DurationText} writes back), {@link ExampleFooter} (the help's examples, laid out) and {@link CleanExit} (exit 0 after SIGTERM), with the build version
 * and the first log line of a long-running command. Used by {@code io.satoken.agent.cli} and
 * {@code io.satoken.controlplane.cli}.
 */
package io.satoken.common.cli;
