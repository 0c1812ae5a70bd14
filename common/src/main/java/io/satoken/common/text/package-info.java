/**
 * Values written for people, the way Kubernetes tools write them: {@link DurationText} ({@code 670ms},
 * {@code 1m0s}), in log lines, messages and {@code explain}. Imports no other package of common, so that any
 * package may use it.
 */
package io.satoken.common.text;
