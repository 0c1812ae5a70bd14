package io.satoken.common.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * logback's configuration until a command applies its flags, and in tests: info, text, stderr. Found
 * through {@code META-INF/services}, ahead of logback's search for a {@code logback.xml} and its debug-level
 * default, so the first line already has the right form and logback reports nothing about itself.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class DefaultLogConfigurator extends ContextAwareBase implements Configurator {

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        LogSetup.configure(context, LogLevel.INFO, LogFormat.TEXT, LogSetup.stderr());
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }
}
