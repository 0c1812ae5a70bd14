package io.satoken.controlplane.admission;

/**
 * What the token-request check needs to know about a pod. Once a pod is bound, none of this can change
 * for its uid, which is what makes caching it by uid safe.
 *
 * @param nodeName "" while the pod is not yet scheduled
 */
record PodFacts(String namespace, String name, String uid, String nodeName, String serviceAccountName) {

    boolean bound() {
        return !nodeName.isEmpty();
    }

    String namespacedName() {
        return namespace + "/" + name;
    }
}
