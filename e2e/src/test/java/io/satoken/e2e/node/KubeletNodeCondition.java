package io.satoken.e2e.node;

import java.util.Optional;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The condition behind {@link RequiresKubeletNode}: skips, printing why on stderr, where no node can run. */
public final class KubeletNodeCondition implements ExecutionCondition {

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<String> missing = KubeletNode.unavailableReason();
        if (missing.isEmpty()) {
            return ConditionEvaluationResult.enabled("this machine can run a test node");
        }
        String test = context.getTestClass().map(Class::getSimpleName).orElse("real-node tests");
        System.err.println("*** SKIPPED " + test + " (real-node test): " + missing.get() + " ***");
        return ConditionEvaluationResult.disabled(missing.get() + ": real-node tests SKIPPED");
    }
}
