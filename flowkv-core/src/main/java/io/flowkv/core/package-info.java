/**
 * FlowKV's engine-agnostic stores. Callers speak bytes: serialized key, window (or namespace) and
 * value; the stores know nothing of Flink.
 *
 * <pre>
 *              append/get/remove (single writer thread)
 *   +------------------+------------------+------------------+
 *   |   aar.AarStore   |   aur.AurStore   |   rmw.RmwStore   |
 *   | buffer by window | buffer by (k,w)  | hash buffer      |
 *   | file per window  | data + index log | value log + hash |
 *   | x partition      | ETT prefetch     | index, compaction|
 *   +------------------+------------------+------------------+
 *   | index: LongHashIndex, Hashing                          |
 *   | log:   LogWriter/LogReader, frames, manifests, FileIo  |
 *   | memory: MemoryBudget, OffHeapArena/Buffer, IoBuffer    |
 *   +--------------------------------------------------------+
 * </pre>
 *
 * Every store keeps the contract of {@link io.flowkv.core.Store} (flush, seal, scan, counters,
 * memory, close): the AAR and AUR stores as {@link io.flowkv.core.ListStore}s, the RMW store as a
 * {@link io.flowkv.core.ValueStore}; the AUR store also takes {@link io.flowkv.core.TriggerTimes}.
 * Their options share {@link io.flowkv.core.StoreOptions}. Every byte a store holds is charged to a
 * {@link io.flowkv.core.memory.MemoryBudget}; every file has a versioned header and CRC32C frames
 * (docs/FORMAT.md); {@code seal()} yields immutable files plus a manifest from which {@code
 * restore()} rebuilds the store.
 */
package io.flowkv.core;
