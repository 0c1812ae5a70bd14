/**
 * The {@code satoken-agent} command line, on picocli: {@link AgentCommand} and its subcommands. {@link RunCommand}
 * checks the flags and the config file, builds the API client and a {@code token.TokenRequestSource} behind the
 * {@code --qps}/{@code --burst} rate limit, and runs them in an {@link io.satoken.agent.runtime.AgentRuntime};
 * {@code validate} makes the same checks without contacting a cluster. {@link DemoCommand} runs the cache, the
 * scheduler and the writer against a {@code token.LocalIssuer}, and {@code verify} checks a token file against a
 * JWKS. Exit codes, log flags and the startup line come from {@code io.satoken.common.cli}.
 */
package io.satoken.agent.cli;
