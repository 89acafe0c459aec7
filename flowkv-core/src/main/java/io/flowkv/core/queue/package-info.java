/**
 * Sorted queues off the Java heap: Flink's timers, held on disk with bounded memory.
 *
 * <pre>
 *   add/remove/peek/poll(element)       (single writer thread)
 *          |
 *          v
 *  SortedQueueStore: an LSM tree of records (element, seq, ADD|DEL); no index, no random reads
 *   |  memtable (TreeMap element -> latest record, capped, on the heap)
 *   |                 | flush
 *   |                 v
 *   |              SortedRunWriter -> run-NNNNNNNN.log  [hdr][block][block]...
 *   |              tiers: 4 runs of tier t -> merge (latest record per element) -> 1 run of t+1
 *   |              RunCursor per run (one read buffer), heap of runs by head
 *   v
 *  smallest element at the heads, decided by its latest record: ADD = peek();
 *  poll() and skipped DELs advance every record of it
 * </pre>
 *
 * The run file format is {@link io.flowkv.core.queue.SortedRunDescriptor} and docs/FORMAT.md
 * ("Sorted run files").
 */
package io.flowkv.core.queue;
