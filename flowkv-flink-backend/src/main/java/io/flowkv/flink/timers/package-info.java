/**
 * Flink's timers in a FlowKV backend: on the heap, in a FlowKV store, or on the heap until a bound
 * and in the store beyond it ({@code state.backend.flowkv.timer-service}). In every form, timers
 * due at the same time come out key group by key group.
 *
 * <pre>
 *   KeyGroupOrderedQueueSetFactory
 *     HEAP    KeyGroupPartitionedQueueSet  a heap per key group under a heap of key groups
 *     FLOWKV  FlowKVTimerQueue             flowkv-core's SortedQueueStore, off the Java heap
 *     AUTO    SpillingTimerQueue           the first until the bound, then the second
 *   TimerQueueSet    their base: Flink's snapshot wrapper takes a HeapPriorityQueueSet only
 *   TriggerTimeFeed  the timer service's view of a queue: reports the timers registered and
 *                    deleted through it to the backend, which makes a window's timers the
 *                    AUR store's trigger times for it
 * </pre>
 *
 * The package depends on flowkv-core only; the backend creates the queues, snapshots write them.
 */
package io.flowkv.flink.timers;
