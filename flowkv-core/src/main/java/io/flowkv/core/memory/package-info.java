/**
 * Memory the stores hold, all charged to one {@link io.flowkv.core.memory.MemoryBudget} per
 * operator subtask.
 *
 * <pre>
 *   MemoryBudget (capacity, used)
 *      ^ reserve / release
 *      |
 *   OffHeapArena --chunks--> OffHeapBuffer (native: allocated, zeroed and freed directly) ...
 *   OffHeapLongArray (growable work lists)  --> OffHeapBuffer
 *   IoBuffer (staging for file I/O, a direct ByteBuffer view) --> OffHeapBuffer
 * </pre>
 *
 * Every byte charged to the budget is native memory: Flink sizes managed memory off-heap.
 */
package io.flowkv.core.memory;
