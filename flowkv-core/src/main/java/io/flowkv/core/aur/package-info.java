/**
 * The append and unaligned read (AUR) store: list state of session, count and global windows, read
 * one (key, window) at a time when its trigger fires (FlowKV §4.2, Figure 7).
 *
 * <pre>
 *  append(k, w, v, t)                      get(k, w)
 *     |  (1) hash (k, state window)           |  (4) prefetch buffer hit? serve it
 *     v                                       v        + write-buffer values after it
 *  +--------------+   (2) ETT = max t + gap  +-----------------+
 *  | write buffer |------------------------->| stat table      |  per window: ETT, first seq,
 *  | (off-heap,   |   or setTriggerTime      | (primitive hash)|  data bytes, buffer chain,
 *  |  chain per w)|                          +-----------------+  head of its frame chain
 *  +--------------+                                 | miss: pick N = ratio x live windows
 *     | (3) flush: one frame per window             |       with the smallest time to ETT
 *     v                                             v
 *  +------------------------------+   (5) the frame chains (off-heap, one record per flushed
 *  | data log  [frame][frame]...  |<--+     frame) of the requested + N predicted windows say
 *  +------------------------------+   |     where their frames are: O(their frames), no scan
 *  | index log [k,w,pos,len,seq]..|---+ (5') a broken chain (budget) or (7) space amplification
 *  +------------------------------+         > MSA (and the store still grows): ONE scan of the
 *                 |                          index log; (7) moves the live frames of the cheapest
 *                 |                          run of data logs that brings the amplification half
 *                 |                          way down to 1 into one new log with transferTo (zero
 *                 |                          copy) and rewrites the index
 *                 | (6) coalesced reads of adjacent frames
 *                 v
 *        +-----------------+  by window; a flush of new data extends a prefetched copy, the
 *        | prefetch buffer |  copy goes once served or when room is needed (oldest first)
 *        +-----------------+
 * </pre>
 *
 * {@link io.flowkv.core.aur.AurStore} is the store, {@link io.flowkv.core.aur.AurStoreOptions} its
 * configuration, {@link io.flowkv.core.aur.TriggerTimePredictor} the seam for custom windows. The
 * store decides; its parts hold the state, one job each:
 *
 * <ul>
 *   <li>{@code WriteBuffer} (1, 3): buffered values chained per window, and the windows that have
 *       any;
 *   <li>{@code WindowStatTable} (2): one off-heap record per live window, paged to a scratch file
 *       past its cache;
 *   <li>{@code PrefetchBuffer} (4): which windows to bet on, and their copies;
 *   <li>{@code FrameChains} (5): each window's flushed frames; {@code FrameBatch}: the frames one
 *       miss collects, in file order; {@code BatchLoader} (6): reads them;
 *   <li>{@code ReadAhead}: once the last batch is half served, reads the next bets on a background
 *       thread while the task goes on (beyond the paper, whose bets ride on the read that missed);
 *   <li>{@code DataLogs}: the data logs in log order; {@code IndexLogs}: the index logs and their
 *       scan (5', 7), whose entries {@code IndexEntryDescriptor} parses and writes;
 *   <li>{@code Compaction} (7): the move to a new data log and index log;
 *   <li>{@code AurManifest}: what a seal writes and a restore reads.
 * </ul>
 *
 * File layouts are in docs/FORMAT.md.
 */
package io.flowkv.core.aur;
