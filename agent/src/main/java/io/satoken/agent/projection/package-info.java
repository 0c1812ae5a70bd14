/**
 * What the agent writes and where, as values. A {@link Projection} is one token file (a {@code token.TokenKey} at a
 * relative path, with mode and owner); a {@link TokenDirectory} is the files written together as one payload.
 * {@link PodProjections} makes a CSI volume's files into projections bound to its pod, with modes and owners chosen
 * from the pod's securityContext as kubelet chooses them (PV-1, PV-14, PV-16..PV-18). Static mode's config file,
 * which makes projections of its own, is read in {@code io.satoken.agent.config}.
 */
package io.satoken.agent.projection;
