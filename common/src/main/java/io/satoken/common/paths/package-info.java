/** The rules for the relative paths of token files (AW-15), shared by the agent's writer and the projection parser. */
package io.satoken.common.paths;
