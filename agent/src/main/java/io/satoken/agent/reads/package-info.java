/**
 * Seeing whether consumers read the token files the agent wrote. {@link Inotify} reports each open of a file in
 * a watched directory, through any mount of it, read-only bind mounts included.
 */
package io.satoken.agent.reads;
