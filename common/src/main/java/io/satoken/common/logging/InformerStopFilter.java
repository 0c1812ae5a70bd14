package io.satoken.common.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Drops client-java's reports of its informer threads being interrupted. Stopping the informers
 * ({@code SharedInformerFactory.stopAllRegisteredInformers}, on every clean shutdown of the control plane)
 * interrupts each informer's threads, and client-java 25 logs every such interrupt as an ERROR with a stack
 * trace ("processor interrupted", "DefaultController#processLoop get interrupted"): a dozen ERRORs after a
 * SIGTERM that went well. Nothing but a stop interrupts those threads; any other error of theirs passes.
 */
final class InformerStopFilter extends Filter<ILoggingEvent> {

    static final String INFORMER_LOGGERS = "io.kubernetes.client.informer.";

    @Override
    public FilterReply decide(ILoggingEvent event) {
        IThrowableProxy error = event.getThrowableProxy();
        boolean interrupted = error != null && InterruptedException.class.getName().equals(error.getClassName());
        return interrupted && event.getLoggerName().startsWith(INFORMER_LOGGERS) ? FilterReply.DENY : FilterReply.NEUTRAL;
    }
}
