package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.Positions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

/**
 * The data logs of an AUR store in log order, with lookups by file id.
 *
 * <p>Log order is the order the frames were written in: a flush appends to the last log, and a
 * compaction puts the log it fills where the logs it emptied were. So each window's frames, read in
 * log order and then by offset, come oldest first. File ids alone do not give that order once a
 * compaction has run, because a compacted log gets a new, higher id than the logs written before
 * it. Positions name a log by its id ({@link Positions}); {@link #toRankPosition} and {@link
 * #fromRankPosition} convert them for sorting in log order.
 */
final class DataLogs implements Iterable<LogSegment> {
    private final Path directory;
    private final List<LogSegment> inOrder = new ArrayList<>();

    /** Ids of the logs ascending, and the logs in the same order: the lookup by id. */
    private int[] ids = new int[0];

    private LogSegment[] byId = new LogSegment[0];
    private boolean idsFollowOrder = true;

    DataLogs(Path directory) {
        this.directory = directory;
    }

    /** Adds the log now written to, after every other. */
    void add(LogSegment log) {
        inOrder.add(log);
        reindex();
    }

    /**
     * Replaces the logs by {@code logs}, in log order: a manifest's list, a compaction's outcome.
     */
    void replaceAll(List<LogSegment> logs) {
        inOrder.clear();
        inOrder.addAll(logs);
        reindex();
    }

    int size() {
        return inOrder.size();
    }

    /** The log at {@code rank} in log order. */
    LogSegment get(int rank) {
        return inOrder.get(rank);
    }

    @Override
    public Iterator<LogSegment> iterator() {
        return Collections.unmodifiableList(inOrder).iterator();
    }

    /** The log with file id {@code id}, or null if the store has none. */
    LogSegment find(int id) {
        int at = Arrays.binarySearch(ids, id);
        return at >= 0 ? byId[at] : null;
    }

    /**
     * The log with file id {@code id}; a position naming a log the store does not have is corrupt.
     */
    LogSegment require(int id) throws CorruptLogException {
        LogSegment log = find(id);
        if (log != null) {
            return log;
        }
        throw new CorruptLogException(
                directory.resolve(AurStore.fileName(AurStore.DATA_PREFIX, id)),
                0,
                "data segment is not part of the store");
    }

    /** Whether ids ascend in log order: then positions sort in log order as they are. */
    boolean idsFollowOrder() {
        return idsFollowOrder;
    }

    /** {@code position} with its log's rank in place of its id: sorts in log order. */
    long toRankPosition(long position) throws CorruptLogException {
        int rank = require(Positions.segment(position)).rank;
        return Positions.pack(rank, Positions.offset(position));
    }

    /** The position of a {@link #toRankPosition rank position}. */
    long fromRankPosition(long rankPosition) {
        int id = inOrder.get(Positions.segment(rankPosition)).id;
        return Positions.pack(id, Positions.offset(rankPosition));
    }

    /**
     * Marks the logs a compaction empties ({@link LogSegment#victim}): all of them, or the run of
     * consecutive logs (in log order) that holds the fewest live bytes ({@link LogSegment#live})
     * among those whose dead bytes add up to {@code excess}. Logs with no frames go too, except
     * {@code active}, the log being written. Windows mostly die in the order they were written, so
     * the oldest logs are nearly all dead and cost little to empty, where moving every live frame
     * rewrote about 1 / (threshold - 1) times the live bytes at every compaction.
     *
     * <p>A run, not any set: the compacted log takes the run's place in the order, so every
     * window's frames stay in write order when sorted by (log order, offset), which the chain read
     * relies on ({@link FrameBatch#sortInFileOrder}).
     */
    void markVictims(boolean all, long excess, LogSegment active) {
        int n = inOrder.size();
        for (LogSegment log : inOrder) {
            log.victim = all || (log.size <= LogFileHeader.LENGTH && log != active);
        }
        if (all) {
            return;
        }
        int bestFrom = -1;
        int bestTo = -1;
        long bestCost = Long.MAX_VALUE;
        long bestReclaimed = 0;
        for (int from = 0; from < n && excess > 0; from++) {
            long reclaimed = 0;
            long cost = 0;
            for (int to = from; to < n && cost <= bestCost; to++) {
                LogSegment log = inOrder.get(to);
                long bytes = log.size - LogFileHeader.LENGTH;
                long live = Math.max(0, Math.min(log.live, bytes));
                reclaimed += bytes - live;
                cost += live;
                if (reclaimed >= excess) {
                    if (cost < bestCost || (cost == bestCost && reclaimed > bestReclaimed)) {
                        bestFrom = from;
                        bestTo = to;
                        bestCost = cost;
                        bestReclaimed = reclaimed;
                    }
                    break;
                }
            }
        }
        for (int i = bestFrom; i >= 0 && i <= bestTo; i++) {
            inOrder.get(i).victim = true;
        }
    }

    /** Sets each log's {@link LogSegment#rank} and rebuilds the lookup by id. */
    private void reindex() {
        int n = inOrder.size();
        LogSegment[] sorted = new LogSegment[n];
        boolean ascending = true;
        for (int i = 0; i < n; i++) {
            LogSegment log = inOrder.get(i);
            log.rank = i;
            sorted[i] = log;
            ascending &= i == 0 || inOrder.get(i - 1).id < log.id;
        }
        Arrays.sort(sorted, (a, b) -> Integer.compare(a.id, b.id));
        int[] sortedIds = new int[n];
        for (int i = 0; i < n; i++) {
            sortedIds[i] = sorted[i].id;
        }
        ids = sortedIds;
        byId = sorted;
        idsFollowOrder = ascending;
    }
}
