package io.flowkv.flink.storage;

import io.flowkv.core.index.Hashing;

import java.util.Arrays;

/**
 * Whether the windows of a non-merging window operator are aligned (every key's elements go to the
 * same few windows, which fire for all keys at one time: AAR's pattern) or per key (each key has
 * windows of its own that fire at times of their own: AUR's), judged from the appends themselves.
 *
 * <p>In Flink's {@code WindowOperator} every (key, window) an element is added to registers the
 * timer that fires the window, so which keys share a window is which keys fire together. The
 * evidence is a sample: the first {@value #SAMPLED_WINDOWS} windows appended to, each with up to
 * {@value #SHARED_KEYS} distinct keys. A window reaching {@value #SHARED_KEYS} keys is shared.
 *
 * <ul>
 *   <li>Aligned: at least half of the sampled windows are shared. Tumbling and sliding windows get
 *       there within their first few keys.
 *   <li>Per key: the sample is full, fewer than a quarter of it is shared, at least {@value
 *       #KEYS_SEEN} distinct keys have been appended (one key's elements can fill many sliding
 *       windows alone) and the store holds at least {@link #manyWindows} windows (below that AAR
 *       serves per-key windows as well).
 *   <li>Neither after {@value #MAX_OBSERVATIONS} appends: aligned, and the sampling stops.
 * </ul>
 *
 * Bounded: {@value #SAMPLED_WINDOWS} window copies and a few hundred longs, whatever the state.
 */
final class WindowAlignment {
    enum Verdict {
        UNDECIDED,
        ALIGNED,
        PER_KEY
    }

    static final int SAMPLED_WINDOWS = 64;
    static final int SHARED_KEYS = 4;
    static final int KEYS_SEEN = 64;
    static final long MAX_OBSERVATIONS = 1 << 20;

    private final int manyWindows;
    private final byte[][] windows = new byte[SAMPLED_WINDOWS][];
    private final long[] windowHashes = new long[SAMPLED_WINDOWS];
    private final long[][] keys = new long[SAMPLED_WINDOWS][SHARED_KEYS];
    private final int[] keyCounts = new int[SAMPLED_WINDOWS];
    private int sampled;
    private int shared;
    private int lastSlot = -1;

    /** Distinct key hashes seen, up to {@link #KEYS_SEEN}; open addressing, 0 is empty. */
    private final long[] keysSeen = new long[KEYS_SEEN * 2];

    private int distinctKeys;
    private long observations;
    private Verdict verdict = Verdict.UNDECIDED;

    WindowAlignment(int manyWindows) {
        if (manyWindows < 1) {
            throw new IllegalArgumentException("manyWindows must be >= 1, was " + manyWindows);
        }
        this.manyWindows = manyWindows;
    }

    Verdict verdict() {
        return verdict;
    }

    /**
     * Records an append of {@code key} to {@code window}; {@code liveWindows} is how many windows
     * the store holds now. Returns the verdict, which once decided does not change.
     */
    Verdict observe(byte[] key, byte[] window, int liveWindows) {
        if (verdict != Verdict.UNDECIDED) {
            return verdict;
        }
        observations++;
        long keyHash = Hashing.hash64(key) | 1;
        if (distinctKeys < KEYS_SEEN) {
            addKeySeen(keyHash);
        }
        int slot = slotOf(window);
        if (slot >= 0 && keyCounts[slot] < SHARED_KEYS) {
            addKey(slot, keyHash);
        }
        if (shared * 2 >= Math.max(1, sampled) && shared > 0) {
            verdict = Verdict.ALIGNED;
        } else if (sampled == SAMPLED_WINDOWS
                && shared * 4 < SAMPLED_WINDOWS
                && distinctKeys >= KEYS_SEEN
                && liveWindows >= manyWindows) {
            verdict = Verdict.PER_KEY;
        } else if (observations >= MAX_OBSERVATIONS) {
            verdict = Verdict.ALIGNED;
        }
        return verdict;
    }

    /** The evidence, for the log line. */
    String evidence(int liveWindows) {
        return String.format(
                "%d of %d sampled windows shared by >= %d keys, %s%d distinct keys, %d live"
                        + " windows, %d appends observed",
                shared,
                sampled,
                SHARED_KEYS,
                distinctKeys >= KEYS_SEEN ? ">= " : "",
                distinctKeys,
                liveWindows,
                observations);
    }

    private int slotOf(byte[] window) {
        if (lastSlot >= 0 && Arrays.equals(windows[lastSlot], window)) {
            return lastSlot;
        }
        long hash = Hashing.hash64(window);
        for (int i = 0; i < sampled; i++) {
            if (windowHashes[i] == hash && Arrays.equals(windows[i], window)) {
                lastSlot = i;
                return i;
            }
        }
        if (sampled == SAMPLED_WINDOWS) {
            return -1;
        }
        windows[sampled] = window.clone();
        windowHashes[sampled] = hash;
        lastSlot = sampled;
        return sampled++;
    }

    private void addKey(int slot, long keyHash) {
        long[] seen = keys[slot];
        int n = keyCounts[slot];
        for (int i = 0; i < n; i++) {
            if (seen[i] == keyHash) {
                return;
            }
        }
        seen[n] = keyHash;
        keyCounts[slot] = n + 1;
        if (n + 1 == SHARED_KEYS) {
            shared++;
        }
    }

    private void addKeySeen(long keyHash) {
        int mask = keysSeen.length - 1;
        int i = (int) (keyHash ^ (keyHash >>> 32)) & mask;
        while (keysSeen[i] != 0) {
            if (keysSeen[i] == keyHash) {
                return;
            }
            i = (i + 1) & mask;
        }
        keysSeen[i] = keyHash;
        distinctKeys++;
    }
}
