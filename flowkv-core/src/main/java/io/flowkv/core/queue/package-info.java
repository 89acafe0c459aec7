/**
 * Sorted queues off the Java heap: Flink's timers, held on disk with bounded memory.
 *
 * <pre>
 *   add/remove/peek/poll(element)       (single writer thread)
 *          |
 *          v
 *  SortedQueueStore
 *   |  membership: RmwStore (members/)          "is e present?"  exact, spills to disk
 *   |  order:      memtable (TreeSet, capped)   "what is smallest?" may hold stale copies
 *   |                 | flush
 *   |                 v
 *   |              SortedRunWriter -> run-NNNNNNNN.log  [hdr][block][block]...
 *   |              tiers: 4 runs of tier t -> merge -> 1 run of tier t+1
 *   |              RunCursor per run (one read buffer), heap of runs by head
 *   v
 *  smallest head present in membership = peek(); poll() advances every copy of it
 * </pre>
 *
 * The run file format is {@link io.flowkv.core.queue.SortedRunDescriptor} and docs/FORMAT.md
 * ("Sorted run files").
 */
package io.flowkv.core.queue;
