package io.satoken.controlplane.controller;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link Controller} that is its {@link ControllerLoop}s: it starts and closes them, in the order it made them.
 * A subclass only wires its informers' events to the loops it makes with {@link #addLoop}.
 */
public abstract class LoopController implements Controller {

    private final String name;
    private final List<ControllerLoop<?>> loops = new ArrayList<>();

    protected LoopController(String name) {
        this.name = name;
    }

    /** A new loop named {@code loopName} that starts and closes with this controller. */
    protected final <K> ControllerLoop<K> addLoop(String loopName, Reconciler<K> reconciler, int workers,
            int maxRetries, ControllerMetrics metrics) {
        ControllerLoop<K> loop = new ControllerLoop<>(loopName, reconciler, workers, maxRetries, metrics);
        loops.add(loop);
        return loop;
    }

    @Override
    public final String name() {
        return name;
    }

    @Override
    public final void start() {
        loops.forEach(ControllerLoop::start);
    }

    @Override
    public final void close() {
        loops.forEach(ControllerLoop::close);
    }
}
