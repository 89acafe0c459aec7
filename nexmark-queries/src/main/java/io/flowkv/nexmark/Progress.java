package io.flowkv.nexmark;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Events generated in this JVM, for the progress line of an embedded run. Readers add in batches,
 * so the count lags by at most a few hundred events per reader. Under {@code flink run} the readers
 * run elsewhere and this stays 0.
 */
final class Progress {
    private static final AtomicLong EVENTS = new AtomicLong();

    private Progress() {}

    static void add(long events) {
        EVENTS.addAndGet(events);
    }

    static long events() {
        return EVENTS.get();
    }

    static void reset() {
        EVENTS.set(0);
    }
}
