/**
 * Seeing whether consumers read the token files the agent wrote. {@link io.satoken.agent.reads.Inotify} reports
 * each open of a file in a watched directory, through any mount of it, read-only bind mounts included; {@link
 * io.satoken.agent.reads.ReadTracker} follows each file's reads across rotations and reports a reader that kept
 * the old token; {@link io.satoken.agent.reads.ConsumerReads} is the part the agent starts and stops.
 */
package io.satoken.agent.reads;
