package io.satoken.common.logging;

import static org.assertj.core.api.Assertions.assertThat;

import io.satoken.common.testing.CapturedLogs;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class InformerStopFilterTest {

    /** Where client-java 25 reports its informer threads being interrupted by a stop. */
    private static final Logger processor = LoggerFactory.getLogger("io.kubernetes.client.informer.cache.ProcessorListener");
    private static final Logger controller = LoggerFactory.getLogger("io.kubernetes.client.informer.cache.Controller");
    private static final Logger elector = LoggerFactory.getLogger("io.kubernetes.client.extended.leaderelection.LeaderElector");

    @Test
    void informerThreadsInterruptedByAStop_logNothing() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            processor.error("processor interrupted: {}", new InterruptedException());
            controller.error("DefaultController#processLoop get interrupted {}", null, new InterruptedException());
            assertThat(logs.text()).isEmpty();
        }
    }

    @Test
    void otherInformerErrors_andInterruptsElsewhere_areLogged() {
        try (CapturedLogs logs = CapturedLogs.start(LogLevel.INFO, LogFormat.TEXT)) {
            processor.error("failed invoking informer handler", new IllegalStateException("bug"));
            elector.error("Unexpected error on acquiring or renewing the lease", new InterruptedException());
            assertThat(logs.lines()).hasSize(2);
        }
    }
}
