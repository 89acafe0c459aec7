/**
 * The Append and Aligned Read store (FlowKV paper §4.1): list state of windows that fire for every
 * key at once (tumbling and sliding windows).
 *
 * <pre>
 *  append(k, w, v)                          get(k, w) / remove(k, w)
 *       |                                          |
 *       v                                          v
 *  WindowTable: w -> AarWindow          PartitionLoader (gradual loading)
 *       |          [p0][p1]..[pN-1]       first read of (w, p): replay its
 *       |           | chain of records     segments into a LoadedPartition,
 *       v           v (append order)       later reads replay only new frames
 *  WriteBuffer: one OffHeapArena                 |
 *       | flush: chain of (w, p) -> frames        |  LoadedPartition: OffHeapArena of
 *       v                                         |  key entries + value lists,
 *  SegmentFiles: aar-&lt;id&gt;.log per (w, p)   ----+  LongHashIndex key -> entry
 *    [hdr][frame: rec rec rec][frame: ...]
 *    rec = APPEND(k, v) | REMOVE(k)
 *
 *  seal(): flush, sync, close segments (later appends start new ones), write
 *          aar-&lt;seq&gt;.manifest: windows -> partitions -> (file id, length)
 *  remove(k, w): drop buffered values of k, log REMOVE(k) if k has flushed values;
 *          last key of a partition removed -> delete its files; window empty -> forget it
 *  removeWindow(w): delete every file of w, drop its buffered records
 * </pre>
 *
 * A partition's content is always "its segments replayed in order, then its buffered chain", which
 * is what reads return. Usually one partition is loaded at a time; more stay loaded only while the
 * budget holds them and still leaves the write buffer room to reach its limit. File formats:
 * docs/format-aar.md.
 */
package io.flowkv.core.aar;
