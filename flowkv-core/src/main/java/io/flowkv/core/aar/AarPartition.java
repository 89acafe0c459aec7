package io.flowkv.core.aar;

import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.LogWriter;

import java.util.Arrays;

/**
 * Everything the store knows about one (window, partition): its chain of buffered records, its
 * segment files (the last one open for appends until the next seal) and, while it is being read,
 * its loaded view. The partition's content is always "segments in order, then the chain".
 */
final class AarPartition {
    final AarWindow window;
    final int index;

    long chainHead = AarRecordDescriptor.NO_RECORD;
    long chainTail = AarRecordDescriptor.NO_RECORD;

    /** Buffered APPEND records not yet killed by a remove. */
    int bufferedAppends;

    /** Log bytes of those records. */
    long bufferedAppendBytes;

    /** Log bytes of buffered REMOVE records. */
    long bufferedRemoveBytes;

    /** Records on the chain, whatever their type (a read of a buffered key scans them all). */
    int chainRecords;

    /**
     * Chains of this partition that a flush in the background still has to write (see {@code
     * AarStore}); their records are part of the partition's content, between the segments and the
     * chain.
     */
    int chainsInFlight;

    /** Log bytes of the live appends in those chains. */
    long inFlightAppendBytes;

    /** The chain indexed by key while its window fires; null otherwise. */
    ChainIndex chainIndex;

    private long[] fileIds = new long[1];
    private long[] lengths = new long[1];
    private int segments;

    /** Writer of the last segment, or null when it is sealed (or none exists). */
    LogWriter writer;

    /** Log bytes in the segments of values still live / of removed values and REMOVE records. */
    long fileLiveBytes;

    long fileDeadBytes;

    LoadedPartition loaded;

    /**
     * The memory the store could reach ({@code PartitionLoader}) when loading this partition last
     * failed for lack of it, or -1: it is read by streaming until more can be had.
     */
    long loadFailedWithin = -1;

    AarPartition(AarWindow window, int index) {
        this.window = window;
        this.index = index;
    }

    boolean hasChain() {
        return chainHead != AarRecordDescriptor.NO_RECORD;
    }

    /** Forgets the chain; its index, if any, must have been dropped ({@code WriteBuffer}). */
    void detachChain() {
        if (chainIndex != null) {
            throw new IllegalStateException("chain index not dropped before detaching the chain");
        }
        chainHead = AarRecordDescriptor.NO_RECORD;
        chainTail = AarRecordDescriptor.NO_RECORD;
        bufferedAppends = 0;
        bufferedAppendBytes = 0;
        bufferedRemoveBytes = 0;
        chainRecords = 0;
    }

    boolean hasSegments() {
        return segments > 0;
    }

    int segmentCount() {
        return segments;
    }

    long fileId(int segment) {
        return fileIds[segment];
    }

    long length(int segment) {
        return lengths[segment];
    }

    long totalSegmentBytes() {
        long sum = 0;
        for (int i = 0; i < segments; i++) {
            sum += lengths[i] - LogFileHeader.LENGTH;
        }
        return sum;
    }

    void addSegment(long fileId, long length) {
        if (segments == fileIds.length) {
            fileIds = Arrays.copyOf(fileIds, segments * 2);
            lengths = Arrays.copyOf(lengths, segments * 2);
        }
        fileIds[segments] = fileId;
        lengths[segments] = length;
        segments++;
    }

    void setLastLength(long length) {
        lengths[segments - 1] = length;
    }

    void clearSegments() {
        segments = 0;
        loadFailedWithin = -1;
        fileLiveBytes = 0;
        fileDeadBytes = 0;
    }

    /**
     * Nothing live here: no segment holds a live value and no buffered append is live. A partition
     * with a chain in flight is not empty (its segments may be changing on the flushing thread, so
     * they are not looked at then).
     */
    boolean isEmpty() {
        return chainsInFlight == 0 && bufferedAppends == 0 && segments == 0;
    }
}
