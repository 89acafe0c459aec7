package io.flowkv.core.aar;

/**
 * Chooses the partition of a key within a window. Reads are cheapest when the keys the engine fires
 * one after another share a partition, because a window is read one loaded partition at a time: an
 * engine that fires keys grouped by some prefix of the key (Flink fires the timers of one key group
 * together) should partition by that prefix.
 */
@FunctionalInterface
public interface KeyPartitioner {
    /** Partition by the key's 64-bit hash: spreads keys evenly when reads have no order. */
    KeyPartitioner BY_HASH =
            (key, keyHash, partitions) -> (int) Long.remainderUnsigned(keyHash, partitions);

    /** The partition of {@code key}, in {@code [0, partitions)}; must not change for a key. */
    int partition(byte[] key, long keyHash, int partitions);
}
