/**
 * Flink's keyed state interfaces on FlowKV storages: value, list, map, reducing and aggregating
 * state, handed to the operator by the keyed backend.
 *
 * <pre>
 *   FlowKVValueState  FlowKVListState  FlowKVMapState  FlowKVReducingState  FlowKVAggregatingState
 *        \________________________________|_________________________________/
 *   AbstractFlowKVState: current key (StateKeyContext) + current namespace -> store bytes
 *                        (storage.KeyBytes), values (de)serialized with the state's serializer
 *                                         |
 *                                         v
 *   storage.StateStorage: one value per (key, namespace), or list elements; map state one
 *                         record per entry through storage.MapStateStorage
 * </pre>
 *
 * A state sees its keyed backend only as a {@link io.flowkv.flink.state.StateKeyContext}, which the
 * backend implements; it depends on the storage package and on nothing else of the adapter. {@link
 * io.flowkv.flink.state.WindowStates} pairs a window operator's list states, as they are created,
 * with the trigger times the AUR store takes from them and from the operator's timers.
 */
package io.flowkv.flink.state;
