/**
 * The agent's local status endpoint, HTTP on a Unix socket only reachable by root and the agent's user, and the
 * report it serves: what the agent keeps for each pod volume and static projection, never a token. {@code
 * satoken-agent explain} reads it and prints it ({@code StatusView}).
 */
package io.satoken.agent.status;
