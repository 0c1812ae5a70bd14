package io.satoken.e2e.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * The pods' network: a private Linux bridge ({@value #BRIDGE}, {@value #SUBNET}) from the CNI {@code bridge}
 * plugin with {@code host-local} addresses. The bridge is the pods' gateway ({@code isGateway}) but nothing
 * is masqueraded ({@code ipMasq: false}) and no route leads out, so pods reach the host and each other and
 * nothing leaves the machine; the one route they get, the Services' range, also ends on the host. containerd's CRI plugin adds the loopback network itself.
 *
 * <p>Only one test node can run on a machine at a time: the bridge name is fixed.
 */
final class CniNetwork {

    static final String NAME = "satoken-test-node";
    static final String BRIDGE = "satoken0";
    static final String SUBNET = "10.88.77.0/24";
    /**
     * The test API servers' --service-cluster-ip-range: pods route it to the host (the bridge), where a test that
     * needs a Service's ClusterIP, with no kube-proxy, can put it ({@code WebhookOutageE2E}, the kubernetes Service).
     */
    static final String SERVICE_RANGE = "10.0.0.0/24";
    static final Path PLUGINS = Path.of("/usr/lib/cni");
    /** Where libcni caches results, outside any directory of ours; entries go with CNI DEL. */
    private static final Path RESULT_CACHE = Path.of("/var/lib/cni/results");

    private final Path confDir;
    private final Path ipamDir;

    CniNetwork(Path dir) {
        this.confDir = dir.resolve("net.d");
        this.ipamDir = dir.resolve("ipam");
    }

    /** The directory containerd reads network configurations from. */
    Path confDir() {
        return confDir;
    }

    /**
     * Writes the network configuration. A {@value #BRIDGE} left by an earlier run that died is deleted; one
     * with interfaces attached belongs to a node that is running, and is refused.
     */
    void write() throws IOException {
        Path ports = Path.of("/sys/class/net", BRIDGE, "brif");
        if (Files.isDirectory(ports)) {
            try (Stream<Path> attached = Files.list(ports)) {
                if (attached.findAny().isPresent()) {
                    throw new IOException("the bridge " + BRIDGE + " has interfaces attached: another test node is"
                            + " running on this machine; one at a time");
                }
            }
            System.err.println("node: deleting the bridge " + BRIDGE + " an earlier run left");
            remove();
        }
        Files.createDirectories(confDir);
        Files.createDirectories(ipamDir);
        Files.writeString(confDir.resolve("10-satoken.conflist"), """
                {
                  "cniVersion": "0.4.0",
                  "name": "%s",
                  "plugins": [
                    {
                      "type": "bridge",
                      "bridge": "%s",
                      "isGateway": true,
                      "ipMasq": false,
                      "hairpinMode": false,
                      "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": "%s"}]],
                        "routes": [{"dst": "%s"}],
                        "dataDir": "%s"
                      }
                    }
                  ]
                }
                """.formatted(NAME, BRIDGE, SUBNET, SERVICE_RANGE, ipamDir));
    }

    /** Deletes the bridge and the result-cache entries of this network; never throws. */
    void remove() {
        try {
            if (Files.exists(Path.of("/sys/class/net", BRIDGE))) {
                HostCommand.Result r = HostCommand.run("ip", "link", "delete", BRIDGE);
                if (!r.ok()) {
                    System.err.println("node: ip link delete " + BRIDGE + ": " + r.output().strip());
                }
            }
            if (Files.isDirectory(RESULT_CACHE)) {
                try (Stream<Path> cached = Files.list(RESULT_CACHE)) {
                    for (Path entry : cached.filter(p -> p.getFileName().toString().startsWith(NAME + "-")).toList()) {
                        Files.deleteIfExists(entry);
                    }
                }
            }
        } catch (IOException e) {
            System.err.println("node: could not remove the network " + NAME + ": " + e.getMessage());
        }
    }
}
