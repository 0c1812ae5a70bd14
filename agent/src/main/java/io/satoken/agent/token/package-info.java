/**
 * Tokens and where they come from. {@link TokenCache} holds one token per {@link TokenKey} (ServiceAccount,
 * audiences, lifetime, bound object; TM-1) in a Caffeine cache, the only place the agent keeps a token: one
 * TokenRequest per key however many callers ask at once, a still-valid token kept when its refresh fails, eviction at
 * expiry (TM-4, TM-5, TM-7). {@link RefreshPolicy} says when a token is due: at 80 % of its lifetime or after 24 h,
 * less a jitter (TM-8, TM-C1). {@link TokenRequestSource} issues tokens through the TokenRequest API
 * ({@code LocalIssuer} signs them itself for the demo). {@link IssuerKeys} checks that a token found on disk is the
 * API server's, for {@code refresh.TokenAdoption}. This package imports no other package of the agent. A token's
 * text never appears in a message, a log line or a toString.
 */
package io.satoken.agent.token;
