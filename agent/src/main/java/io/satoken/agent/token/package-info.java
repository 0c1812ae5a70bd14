/**
 * Tokens and where they come from. {@link TokenCache} holds one token per {@link TokenKey} (ServiceAccount,
 * audiences, lifetime, bound object; TM-1) in a Caffeine cache: one TokenRequest per key however many callers ask at
 * once, a still-valid token kept when its refresh fails, eviction at expiry (TM-4, TM-5, TM-7). It learns when a
 * token is due through {@link RefreshTime}, which {@code refresh.RefreshPolicy} implements (TM-8, TM-C1).
 * {@link TokenRequestSource} issues tokens through the TokenRequest API ({@code LocalIssuer} signs them itself for
 * the demo). At start, {@code TokenAdoption} puts tokens found on disk into the cache once their signature checks
 * against the API server's keys ({@code IssuerKeys}). A token's text never appears in a message, a log line or a
 * toString.
 */
package io.satoken.agent.token;
