package io.flowkv.core.queue;

import java.nio.file.Path;

/**
 * One sorted run on disk: its file, its tier (0 for a flushed memtable, t + 1 for a merge of tier t
 * runs) and the cursor that {@link SortedQueueStore#poll()} consumes it with.
 */
record SortedRun(long id, int tier, Path file, RunCursor cursor) {}
