package io.satoken.common.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Marks a test class that needs a real kube-apiserver + etcd. Without the binaries the class is
 * skipped (never faked) and the run prints one loud line saying so; with them, a parameter of type
 * {@link KubeApiServer} (in a constructor, a {@code @BeforeAll} or a test method) receives one shared,
 * started server with the default flags, started once per test run and closed at its end.
 *
 * <p>A class that needs other flags builds its own server with {@link KubeApiServer#builder()} and
 * closes it itself; this annotation still guards it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(KubeApiServerExtension.class)
public @interface RequiresKubeApiServer {
}
