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
 *  | (off-heap,   |   or setTriggerTime      | (primitive hash)|  data bytes, buffer chain
 *  |  chain per w)|                          +-----------------+
 *  +--------------+                                 | miss: pick N = ratio x live windows
 *     | (3) flush: one frame per window             |       with the smallest time to ETT
 *     v                                             v
 *  +------------------------------+   (5) ONE scan of the index log: collect the frames of
 *  | data log  [frame][frame]...  |<--+     the requested + predicted windows, and (7) if
 *  +------------------------------+   |     space amplification > MSA move every live frame
 *  | index log [k,w,pos,len,seq]..|---+     to a new data log with transferTo (zero copy)
 *  +------------------------------+         and rewrite the index log
 *                 | (6) coalesced reads of adjacent frames
 *                 v
 *        +-----------------+  by window; evicted when a window's ETT changes or new data
 *        | prefetch buffer |  of it is flushed, so it never serves stale values
 *        +-----------------+
 * </pre>
 *
 * {@link io.flowkv.core.aur.AurStore} is the store, {@link io.flowkv.core.aur.AurStoreOptions} its
 * configuration, {@link io.flowkv.core.aur.TriggerTimePredictor} the seam for custom windows. File
 * layouts are in docs/format-aur.md.
 */
package io.flowkv.core.aur;
