/**
 * Static mode (a systemd unit): token files named in the agent's config file rather than asked for by pods, each
 * holding a token bound to no object. {@link StaticTokens} keeps the refresh scheduler running exactly the config's
 * directories: it creates missing ones with the group and mode their files' readers need, adopts still-valid tokens
 * already on disk, and removes the files of entries that were dropped. {@link ConfigWatcher} polls the config file
 * and hands on a changed, valid config without a restart; one that changes {@code mode} or {@code kubeletDir} is
 * refused.
 */
package io.satoken.agent.statics;
