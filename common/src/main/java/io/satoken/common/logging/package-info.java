/**
 * How satoken logs: logback set up in code ({@link io.satoken.common.logging.LogSetup}), text or JSON lines
 * on stderr with ISO-8601 UTC times, stack traces only at debug.
 */
package io.satoken.common.logging;
