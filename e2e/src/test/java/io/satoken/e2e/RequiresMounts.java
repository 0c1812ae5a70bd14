package io.satoken.e2e;

import io.satoken.common.testing.MountTable;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Marks a test class or method that has the agent publish CSI volumes: each publish mounts a real tmpfs,
 * which needs root. Where this process cannot mount one, the test is skipped, never faked, and the run
 * prints one loud line saying why. (This machine and CI run as root.)
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(RequiresMounts.Condition.class)
@interface RequiresMounts {

    /** Probes once per run by mounting a tmpfs in a temporary directory. */
    final class Condition implements ExecutionCondition {

        private static String reason;
        private static boolean probed;

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            boolean annotated = context.getElement().map(e -> e.isAnnotationPresent(RequiresMounts.class)).orElse(false);
            if (!annotated) {
                return ConditionEvaluationResult.enabled("no tmpfs mounts needed");
            }
            String why = probe();
            if (why == null) {
                return ConditionEvaluationResult.enabled("this process can mount a tmpfs");
            }
            System.err.println("*** SKIPPED " + context.getDisplayName() + ": cannot mount a tmpfs for the agent's CSI"
                    + " volumes: " + why + " ***");
            return ConditionEvaluationResult.disabled(why);
        }

        private static synchronized String probe() {
            if (!probed) {
                reason = MountTable.cannotMountReason();
                probed = true;
            }
            return reason;
        }
    }
}
