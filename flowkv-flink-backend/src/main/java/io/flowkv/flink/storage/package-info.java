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
 *     ListStateStorage: append, getElements          ValueStateStorage: get, put
 *       AarStateStorage        AAR: tumbling and      RmwStateStorage  RMW: aggregates and
 *                              sliding windows                         reduces; GENERIC: other
 *       AurStateStorage        AUR: session, global                    value and map state
 *                              and custom windows     MapStateStorage  map state, one record
 *       AdaptiveWindowStorage  AAR until windows                       per entry, over a value
 *                              fire per key, then AUR                  storage
 *       RmwListStorage         list state outside windows (GENERIC)
 * </pre>
 *
 * Every operation on a key takes its key group from the caller, which routes it to its store
 * instance. Store keys are key-group prefixed too ({@link io.flowkv.flink.storage.KeyBytes}): what
 * is read back from a store or a snapshot carries its key group with it. {@link
 * io.flowkv.flink.storage.StoreSizing} divides the backend's memory budget among its stores. The
 * package sits on flowkv-core's stores and on the settings of the config package; states,
 * snapshots, restores and metrics use it.
 */
package io.flowkv.flink.storage;
