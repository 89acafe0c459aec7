package io.flowkv.nexmark;

import org.apache.flink.api.common.functions.MapFunction;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The failure of a restore-time run ({@code NexmarkRunner --fail-after N}): an identity map chained
 * to the source that throws once, on the first event after {@link #arm()}. The runner arms it when
 * the checkpoint it triggered after {@code N} events completes; Flink then restarts the job from
 * that checkpoint, so the state restored is the state the job held when it failed and next to no
 * events are replayed.
 *
 * <p>Embedded runs only: the switch and the moment it fired are this JVM's statics.
 */
final class FailOnce implements MapFunction<Event, Event> {
    private static final long serialVersionUID = 1L;

    private static final AtomicBoolean FIRED = new AtomicBoolean();
    private static volatile boolean armed;
    private static volatile long failedAtMs;
    private static volatile long failedAtEvents;

    /** Forgets an earlier run in this JVM (tests run several). */
    static void reset() {
        FIRED.set(false);
        armed = false;
        failedAtMs = 0;
        failedAtEvents = 0;
    }

    /** The next event through any subtask throws. */
    static void arm() {
        armed = true;
    }

    /** When the failure was thrown, epoch ms; 0 if it was not. */
    static long failedAtMs() {
        return failedAtMs;
    }

    /** Events generated in this JVM when the failure was thrown. */
    static long failedAtEvents() {
        return failedAtEvents;
    }

    @Override
    public Event map(Event event) {
        if (armed && FIRED.compareAndSet(false, true)) {
            failedAtEvents = Progress.events();
            failedAtMs = System.currentTimeMillis();
            throw new InjectedFailure(
                    "injected failure after " + failedAtEvents + " events (--fail-after)");
        }
        return event;
    }

    /** What {@link FailOnce} throws, recognisable in the job's exception history. */
    static final class InjectedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFailure(String message) {
            super(message);
        }
    }
}
