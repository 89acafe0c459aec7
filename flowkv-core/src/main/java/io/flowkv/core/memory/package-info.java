/**
 * Memory the stores hold, all charged to one {@link io.flowkv.core.memory.MemoryBudget} per
 * operator subtask.
 *
 * <pre>
 *   MemoryBudget (capacity, used)
 *      ^ reserve / release
 *      |
 *   OffHeapArena --chunks--> OffHeapBuffer (native, chronicle-bytes) ...
 *   IoBuffer (staging for file I/O)
 * </pre>
 */
package io.flowkv.core.memory;
