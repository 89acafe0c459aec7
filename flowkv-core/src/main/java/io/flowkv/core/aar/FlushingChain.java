package io.flowkv.core.aar;

/**
 * One partition's chain as a flush in the background took it: where it starts in the detached arena
 * and what it holds, so that the partition's counters can move from "buffered" to "in the segments"
 * once it is written ({@code AarStore#settle}).
 */
final class FlushingChain {
    final AarPartition partition;
    final long head;
    final long appendBytes;
    final long removeBytes;

    /** Bytes written to the segment, frame headers included; set by the flushing thread. */
    long written;

    /** Set by the flushing thread once the chain is in the segment (not yet synced). */
    boolean done;

    FlushingChain(AarPartition partition) {
        this.partition = partition;
        this.head = partition.chainHead;
        this.appendBytes = partition.bufferedAppendBytes;
        this.removeBytes = partition.bufferedRemoveBytes;
    }

    /** Whether the chain has a record to write (killed appends are skipped). */
    boolean hasRecords() {
        return appendBytes > 0 || removeBytes > 0;
    }
}
