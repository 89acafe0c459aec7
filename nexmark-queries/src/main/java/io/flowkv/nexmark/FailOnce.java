package io.flowkv.nexmark;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The failure of a restore-time run ({@code NexmarkRunner --fail-after N}): an identity map chained
 * to the source that throws once, on the first event after the first checkpoint to complete once
 * this JVM's sources have generated {@code N} events. Flink then restarts the job from that
 * checkpoint, so the state restored is the state the job held when it failed and next to no events
 * are replayed.
 *
 * <p>Embedded runs only: the trigger reads {@link Progress}, the events generated in this JVM, and
 * records when it fired in this JVM's statics for {@link RestoreTimeline}.
 */
final class FailOnce implements MapFunction<Event, Event>, CheckpointListener {
    private static final long serialVersionUID = 1L;

    private static final AtomicBoolean FIRED = new AtomicBoolean();
    private static volatile boolean armed;
    private static volatile long failedAtMs;
    private static volatile long failedAtEvents;

    private final long afterEvents;

    FailOnce(long afterEvents) {
        if (afterEvents <= 0) {
            throw new IllegalArgumentException("afterEvents must be > 0: " + afterEvents);
        }
        this.afterEvents = afterEvents;
    }

    /** Forgets an earlier run in this JVM (tests run several). */
    static void reset() {
        FIRED.set(false);
        armed = false;
        failedAtMs = 0;
        failedAtEvents = 0;
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

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        if (!FIRED.get() && Progress.events() >= afterEvents) {
            armed = true;
        }
    }

    /** What {@link FailOnce} throws, recognisable in the job's exception history. */
    static final class InjectedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFailure(String message) {
            super(message);
        }
    }
}
