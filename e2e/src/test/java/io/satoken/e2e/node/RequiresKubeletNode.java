package io.satoken.e2e.node;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that runs real pods on a {@link KubeletNode}. Where the machine cannot run one (no
 * kubelet binary, not root, no containerd...: see {@link KubeletNode#unavailableReason()}) the class is
 * skipped, never faked, and the run prints one loud line saying why. The class starts its node itself.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(KubeletNodeCondition.class)
public @interface RequiresKubeletNode {
}
