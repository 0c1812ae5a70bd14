/**
 * How a satoken process connects to the API server: {@link KubeClients} finds the configuration ({@code --kubeconfig},
 * in-cluster, {@code $KUBECONFIG}, {@code ~/.kube/config}, in that order) and builds a client-java {@code ApiClient}
 * with connect and read timeouts, so that a token request cannot hang a thread for ever. Both programs' {@code run}
 * commands use it.
 */
package io.satoken.common.kube;
