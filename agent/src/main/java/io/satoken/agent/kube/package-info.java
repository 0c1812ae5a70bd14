/**
 * The agent's client-side limit on API requests: {@link RateLimiter}, a QPS/burst token bucket like client-go's
 * ({@code --qps}, {@code --burst}). {@link io.satoken.agent.token.TokenRequestSource} takes a slot from it before
 * every TokenRequest, so a node that starts hundreds of pods at once does not flood the API server.
 */
package io.satoken.agent.kube;
