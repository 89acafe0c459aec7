package io.flowkv.nexmark;

import org.apache.flink.api.common.functions.MapFunction;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The failure of a restore-time run ({@code NexmarkRunner --fail-after N}): an identity map chained
 * to the source. Once the runner sees {@code N} events it calls {@link #hold()} and triggers a
 * checkpoint; while held, the map sleeps a millisecond per event, so the sources trickle (about a
 * thousand events a second per subtask) and the task still takes the checkpoint's barrier between
 * events. When the checkpoint completes the runner calls {@link #arm()}, and the next event throws.
 * Flink then restarts the job from that checkpoint: every backend restores the state of the same
 * {@code N} events (give or take the trickle), and next to no events are replayed. If the
 * checkpoint cannot be taken, {@link #release} lets the sources run on and the run fails, saying
 * why.
 *
 * <p>Embedded runs only: the switch and the moments it moved are this JVM's statics.
 */
final class FailOnce implements MapFunction<Event, Event> {
    private static final long serialVersionUID = 1L;

    private static final AtomicBoolean FIRED = new AtomicBoolean();
    private static volatile boolean held;
    private static volatile boolean armed;
    private static volatile long heldAtMs;
    private static volatile long failedAtMs;
    private static volatile long failedAtEvents;
    private static volatile Throwable checkpointError;

    /** Forgets an earlier run in this JVM (tests run several). */
    static void reset() {
        FIRED.set(false);
        held = false;
        armed = false;
        heldAtMs = 0;
        failedAtMs = 0;
        failedAtEvents = 0;
        checkpointError = null;
    }

    /** Slows the sources to a trickle until {@link #arm()}. */
    static void hold() {
        heldAtMs = System.currentTimeMillis();
        held = true;
    }

    /** Lets the sources run on without a failure: the checkpoint to restore could not be taken. */
    static void release(Throwable error) {
        checkpointError = error;
        held = false;
    }

    /** Why the checkpoint to restore could not be taken, or null. */
    static Throwable checkpointError() {
        return checkpointError;
    }

    /** The next event through any subtask throws. */
    static void arm() {
        armed = true;
    }

    /** When {@link #hold()} was called, epoch ms; 0 if it was not. */
    static long heldAtMs() {
        return heldAtMs;
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
    public Event map(Event event) throws InterruptedException {
        if (held && !FIRED.get()) {
            if (armed && FIRED.compareAndSet(false, true)) {
                failedAtEvents = Progress.events();
                failedAtMs = System.currentTimeMillis();
                throw new InjectedFailure(
                        "injected failure after " + failedAtEvents + " events (--fail-after)");
            }
            Thread.sleep(1);
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
