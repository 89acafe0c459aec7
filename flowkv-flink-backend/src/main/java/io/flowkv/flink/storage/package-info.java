/**
 * Where a keyed state's entries live: the storage each registered state is bound to, and which
 * FlowKV store that is.
 *
 * <pre>
 *   StateRegistry: name -> RegisteredState (Flink's meta info, storage, state object)
 *   StoreBinder, on a state's first use: StoreSelector picks a StorePattern from the states the
 *       |        operator registered (or the pattern override); StorageFactory opens it
 *       v
 *   StateStorage, split into store instances by key group (PartitionedStorage)
 *     AarStateStorage        AAR: window contents of tumbling and sliding windows
 *     AurStateStorage        AUR: window contents of session, global and custom windows
 *     RmwStateStorage        RMW: aggregates and reduces; GENERIC: every other state
 *     AdaptiveWindowStorage  AAR until the appends show windows per key (WindowAlignment), then AUR
 *     MapStateStorage        map state one record per entry, over a value storage
 * </pre>
 *
 * Store keys are key-group prefixed ({@link io.flowkv.flink.storage.KeyBytes}), and {@link
 * io.flowkv.flink.storage.StoreSizing} divides the backend's memory budget among its stores. The
 * package sits on flowkv-core's stores and on the settings of the config package; states,
 * snapshots, restores and metrics use it.
 */
package io.flowkv.flink.storage;
