package io.flowkv.core.aar;

import java.util.Arrays;

/**
 * One window of the store: its serialized bytes and the partitions that hold or held data of it.
 *
 * <p>A partition's bookkeeping exists only once a key of it is appended to the window. Aligned
 * windows are few and touch every partition; windows that fire per key (a custom assigner that
 * shifts each key's windows) are many and each touches one or two. The present partitions are kept
 * sorted by index in a small array until a quarter of them are present, then in an array indexed by
 * partition, so neither case pays for the other on the heap.
 */
final class AarWindow {
    final byte[] bytes;
    final long hash;
    final int id;
    private final int partitionCount;

    /** Sparse: the present partitions by ascending index. Dense: indexed by partition, or null. */
    private AarPartition[] partitions;

    private int present;
    private boolean dense;

    AarWindow(byte[] bytes, long hash, int id, int partitionCount) {
        this.bytes = bytes;
        this.hash = hash;
        this.id = id;
        this.partitionCount = partitionCount;
        this.partitions = new AarPartition[Math.min(2, partitionCount)];
    }

    /** The partition of {@code index}, created if this window had none yet. */
    AarPartition partition(int index) {
        if (dense) {
            AarPartition p = partitions[index];
            if (p == null) {
                p = new AarPartition(this, index);
                partitions[index] = p;
                present++;
            }
            return p;
        }
        int at = find(index);
        if (at >= 0) {
            return partitions[at];
        }
        AarPartition p = new AarPartition(this, index);
        if (present + 1 > Math.max(2, partitionCount / 4)) {
            AarPartition[] all = new AarPartition[partitionCount];
            for (int i = 0; i < present; i++) {
                all[partitions[i].index] = partitions[i];
            }
            all[index] = p;
            partitions = all;
            dense = true;
        } else {
            int insert = -at - 1;
            if (present == partitions.length) {
                partitions = Arrays.copyOf(partitions, Math.min(partitionCount, present * 2));
            }
            System.arraycopy(partitions, insert, partitions, insert + 1, present - insert);
            partitions[insert] = p;
        }
        present++;
        return p;
    }

    /** The partition of {@code index} if this window has one, else null. */
    AarPartition existing(int index) {
        if (dense) {
            return partitions[index];
        }
        int at = find(index);
        return at >= 0 ? partitions[at] : null;
    }

    /**
     * The present partitions in ascending index order (a copy: callers may add while iterating).
     */
    AarPartition[] present() {
        AarPartition[] out = new AarPartition[present];
        int n = 0;
        for (AarPartition p : partitions) {
            if (p != null && n < present) {
                out[n++] = p;
            }
        }
        return out;
    }

    int partitionCount() {
        return partitionCount;
    }

    boolean isEmpty() {
        for (AarPartition p : partitions) {
            if (p != null && !p.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /** Binary search of the sparse array: the slot of {@code index}, or -(insertion point) - 1. */
    private int find(int index) {
        int lo = 0;
        int hi = present - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int at = partitions[mid].index;
            if (at < index) {
                lo = mid + 1;
            } else if (at > index) {
                hi = mid - 1;
            } else {
                return mid;
            }
        }
        return -lo - 1;
    }
}
