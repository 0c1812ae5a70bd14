package io.satoken.common.testing;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The machinery behind {@link RequiresKubeApiServer}: skips when the binaries are missing, and hands
 * out one shared server kept in the root store, so every *IT class of a run reuses it (start-up costs
 * seconds) and JUnit closes it when the run ends.
 */
public final class KubeApiServerExtension implements ExecutionCondition, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(KubeApiServerExtension.class);
    private static final AtomicBoolean SKIP_ANNOUNCED = new AtomicBoolean();

    /** The outcome of the one start attempt: a failed start is not retried for every class. */
    private record Shared(KubeApiServer server, IOException failure) implements AutoCloseable {
        @Override
        public void close() {
            if (server != null) {
                server.close();
            }
        }
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        String missing = missingBinaries();
        if (missing == null) {
            return ConditionEvaluationResult.enabled("kube-apiserver and etcd found");
        }
        String reason = missing + ": real-API tests SKIPPED";
        if (SKIP_ANNOUNCED.compareAndSet(false, true)) {
            System.err.println("*** SKIPPED real-API tests: " + missing + " ***");
        }
        return ConditionEvaluationResult.disabled(reason);
    }

    /** Why the real-API tests cannot run, or null when they can. */
    static String missingBinaries() {
        if (KubeApiServer.binaryDir().isEmpty()) {
            return "kube-apiserver not found in $KUBEBUILDER_ASSETS (" + KubeApiServer.assetsDir() + ")";
        }
        if (KubeApiServer.etcdBinary().isEmpty()) {
            return "etcd not found in $KUBEBUILDER_ASSETS (" + KubeApiServer.assetsDir() + ") or on PATH";
        }
        return null;
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == KubeApiServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Shared shared = context.getRoot().getStore(NAMESPACE)
                .getOrComputeIfAbsent(Shared.class, k -> startShared(), Shared.class);
        if (shared.failure() != null) {
            throw new ParameterResolutionException("the shared kube-apiserver did not start", shared.failure());
        }
        return shared.server();
    }

    private static Shared startShared() {
        long started = System.nanoTime();
        try {
            KubeApiServer server = KubeApiServer.create().start();
            System.err.printf("kube-apiserver + etcd ready at %s in %d ms (%s)%n",
                    server.url(), (System.nanoTime() - started) / 1_000_000, server.workDir());
            return new Shared(server, null);
        } catch (IOException e) {
            return new Shared(null, e);
        }
    }
}
