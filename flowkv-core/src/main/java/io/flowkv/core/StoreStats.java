package io.flowkv.core;

/**
 * What one store instance did, for metrics. Written by one thread at a time: the store's own, or
 * (for the file count) an AAR store's flushing thread while the store's thread only appends; a
 * metrics reporter on another thread may see slightly stale values, which is fine for gauges.
 */
public final class StoreStats {
    long bytesAppended;
    long bytesFlushed;
    long bytesRead;
    long bytesCompactionWritten;
    long flushes;
    long compactions;
    long liveBytes;
    long deadBytes;
    long prefetchHits;
    long prefetchMisses;
    long prefetchLoads;
    long bytesPrefetched;
    long partitionsStreamed;
    long partitionLoads;
    long valueBytesServedFromDisk;
    long files;
    long entries;
    long indexPageReads;
    long indexPageWrites;
    long indexScans;
    long indexBytesScanned;
    long chainReads;
    long readAheads;

    public void addAppended(long bytes) {
        bytesAppended += bytes;
    }

    public void addFlushed(long bytes) {
        bytesFlushed += bytes;
        flushes++;
    }

    public void addRead(long bytes) {
        bytesRead += bytes;
    }

    public void addCompaction(long bytesWritten) {
        bytesCompactionWritten += bytesWritten;
        compactions++;
    }

    public void setLiveBytes(long bytes) {
        liveBytes = bytes;
    }

    public void setDeadBytes(long bytes) {
        deadBytes = bytes;
    }

    public void addLiveBytes(long delta) {
        liveBytes += delta;
    }

    public void addDeadBytes(long delta) {
        deadBytes += delta;
    }

    public void addPrefetchHit() {
        prefetchHits++;
    }

    public void addPrefetchMiss() {
        prefetchMisses++;
    }

    public void addPrefetchLoad(long bytes) {
        prefetchLoads++;
        bytesPrefetched += bytes;
    }

    /**
     * A partition (AAR: one window partition) was found too large to load into the budget even
     * alone, so it is read by streaming its files.
     */
    public void addPartitionStreamed() {
        partitionsStreamed++;
    }

    /** A partition (AAR: one window partition) was replayed from its files into memory. */
    public void addPartitionLoad() {
        partitionLoads++;
    }

    /**
     * A read returned {@code bytes} of values that were flushed (AUR: served from the data log or
     * from a copy read ahead of the trigger), the denominator of {@link #readAmplification()}.
     */
    public void addValueBytesServedFromDisk(long bytes) {
        valueBytesServedFromDisk += bytes;
    }

    /** The store's data and log files now: segments, not manifests or index scratch pages. */
    public void setFiles(long count) {
        files = count;
    }

    public void addFiles(long delta) {
        files += delta;
    }

    /**
     * What the store holds, in the unit it counts cheaply (see {@link #entries()}). Set where that
     * number changes anyway: never per access.
     */
    public void setEntries(long count) {
        entries = count;
    }

    /** An index log was read from start to end, {@code bytes} of frame payload (AUR). */
    public void addIndexScan(long bytes) {
        indexScans++;
        indexBytesScanned += bytes;
    }

    /** A read missed the prefetch buffer and followed its window's frame chain (AUR). */
    public void addChainRead() {
        chainReads++;
    }

    /** Bets were read on another thread ahead of their windows' reads (AUR). */
    public void addReadAhead() {
        readAheads++;
    }

    public long readAheads() {
        return readAheads;
    }

    public long indexScans() {
        return indexScans;
    }

    public long indexBytesScanned() {
        return indexBytesScanned;
    }

    public long chainReads() {
        return chainReads;
    }

    public long bytesAppended() {
        return bytesAppended;
    }

    public long bytesFlushed() {
        return bytesFlushed;
    }

    public long bytesRead() {
        return bytesRead;
    }

    public long bytesCompactionWritten() {
        return bytesCompactionWritten;
    }

    public long flushes() {
        return flushes;
    }

    public long compactions() {
        return compactions;
    }

    public long liveBytes() {
        return liveBytes;
    }

    public long deadBytes() {
        return deadBytes;
    }

    public long prefetchHits() {
        return prefetchHits;
    }

    public long prefetchMisses() {
        return prefetchMisses;
    }

    public long prefetchLoads() {
        return prefetchLoads;
    }

    public long bytesPrefetched() {
        return bytesPrefetched;
    }

    /** Index pages read back from disk and written out to it (an index larger than its cache). */
    public void setIndexPageCounts(long reads, long writes) {
        indexPageReads = reads;
        indexPageWrites = writes;
    }

    public long indexPageReads() {
        return indexPageReads;
    }

    public long indexPageWrites() {
        return indexPageWrites;
    }

    public long partitionsStreamed() {
        return partitionsStreamed;
    }

    public long partitionLoads() {
        return partitionLoads;
    }

    public long valueBytesServedFromDisk() {
        return valueBytesServedFromDisk;
    }

    public long files() {
        return files;
    }

    /**
     * An estimate of what the store holds, per store: RMW, the (key, namespace) entries of its
     * index (entries still only in the write buffer count after the next flush); AUR, the (key,
     * window) entries of its window stat table (a window registered by its trigger time alone
     * counts too); AAR, its windows (an aligned window's keys are known only while it is read).
     */
    public long entries() {
        return entries;
    }

    /** Total on-disk bytes over live bytes; 1.0 when nothing is dead (or nothing is stored). */
    public double spaceAmplification() {
        long total = liveBytes + deadBytes;
        return liveBytes <= 0
                ? (total == 0 ? 1.0 : Double.POSITIVE_INFINITY)
                : (double) total / liveBytes;
    }

    /** Prefetch hits over all gets served from disk or the prefetch buffer; NaN before any. */
    public double hitRatio() {
        long all = prefetchHits + prefetchMisses;
        return all == 0 ? Double.NaN : (double) prefetchHits / all;
    }

    /**
     * Bytes read from the data files over the flushed value bytes that reads returned; NaN before
     * any. Only the AUR store counts served bytes, so only its instances have a ratio; above 1 it
     * counts frame headers, value lengths and windows read ahead but dropped before their trigger.
     */
    public double readAmplification() {
        return valueBytesServedFromDisk == 0
                ? Double.NaN
                : (double) bytesRead / valueBytesServedFromDisk;
    }

    @Override
    public String toString() {
        return "StoreStats{appended="
                + bytesAppended
                + ", flushed="
                + bytesFlushed
                + ", flushes="
                + flushes
                + ", read="
                + bytesRead
                + ", compactionWritten="
                + bytesCompactionWritten
                + ", compactions="
                + compactions
                + ", live="
                + liveBytes
                + ", dead="
                + deadBytes
                + ", hits="
                + prefetchHits
                + ", misses="
                + prefetchMisses
                + ", streamed="
                + partitionsStreamed
                + ", partitionLoads="
                + partitionLoads
                + ", servedFromDisk="
                + valueBytesServedFromDisk
                + ", files="
                + files
                + ", entries="
                + entries
                + ", indexPageReads="
                + indexPageReads
                + ", indexPageWrites="
                + indexPageWrites
                + ", indexScans="
                + indexScans
                + ", chainReads="
                + chainReads
                + ", readAheads="
                + readAheads
                + "}";
    }
}
