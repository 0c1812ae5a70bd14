/**
 * Reload notification, opt-in per volume ({@code reloadSignal}, {@code reloadContainer}): after each rotation of
 * such a volume, once the new files are in place, the agent signals the main process of the named container of the
 * volume's own pod, and the read tracker tells whether it re-read.
 */
package io.satoken.agent.reload;
