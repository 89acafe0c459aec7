package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Chooses the store of a state from what Flink's window operators register (DESIGN.md §4): the
 * descriptor type says append (list) or read-modify-write (aggregating, reducing); the namespace
 * serializer and a registered merging window set say aligned or unaligned. Flink SQL's window
 * operators are recognised by their operator class and state names (window join rows: AAR; window
 * aggregate accumulators and window deduplication rows: RMW; window TopN maps: the general store).
 * An explicit override for the operator wins over all of it.
 */
@Internal
public final class StoreSelector {
    public static final String WINDOW_CONTENTS = "window-contents";
    public static final String MERGING_WINDOW_SET = "merging-window-set";

    /**
     * Flink SQL's session window operators: the map from each session window to the window its
     * state is kept under ({@code MergingWindowSet} of the table runtime), one or two entries per
     * key, changed at nearly every element.
     */
    public static final String SESSION_WINDOW_MAPPING = "session-window-mapping";

    /**
     * Flink SQL's window join operators (window TVF joins): each side's rows in a list state per
     * window end ({@code Long} namespace), read and cleared when the window ends for the key. For
     * TUMBLE, HOP and CUMULATE windows that is the same instant for every key: AAR's pattern.
     */
    static final Set<String> SQL_WINDOW_JOINS =
            Set.of("WindowJoinOperator", "AsyncStateWindowJoinOperator");

    static final Set<String> SQL_WINDOW_JOIN_ROWS = Set.of("left-records", "right-records");

    /** Flink SQL's window aggregate operators: an accumulator per key and slice end. */
    static final Set<String> SQL_WINDOW_AGGREGATES =
            Set.of("WindowAggOperator", "AsyncStateWindowAggOperator");

    static final String SQL_WINDOW_ACCUMULATORS = "window-aggs";

    /**
     * Flink SQL's window deduplication (also built on {@code WindowAggOperator}): the first or last
     * row of a key per window end, replaced as rows arrive and read when the window ends. A value
     * read, modified and written back per key and window: RMW, like the accumulators.
     */
    static final String SQL_WINDOW_DEDUP_ROW = "window_deduplicate";

    /**
     * Flink SQL's window TopN (on {@code WindowAggOperator}): per key and window end, a map from
     * sort key to the rows that have it, merged into as records arrive and read whole at the window
     * end. A map, not a list, so no appending store can hold it; the general store keeps one record
     * per map entry, which is what a TopN's point updates want.
     */
    static final String SQL_WINDOW_RANK_ROWS = "window_rank";

    /**
     * A state one of Flink SQL's window operators registers per slice end ({@code Long} namespace),
     * and the store it gets.
     */
    private record SqlWindowState(
            Set<String> operators,
            Set<String> names,
            StateDescriptor.Type type,
            StorePattern pattern,
            String reason) {
        boolean matches(String operator, String stateName, StateDescriptor.Type t) {
            return t == type && operators.contains(operator) && names.contains(stateName);
        }
    }

    private static final List<SqlWindowState> SQL_WINDOW_STATES =
            List.of(
                    new SqlWindowState(
                            SQL_WINDOW_JOINS,
                            SQL_WINDOW_JOIN_ROWS,
                            StateDescriptor.Type.LIST,
                            StorePattern.AAR,
                            "list state, SQL window join rows buffered per window end"),
                    new SqlWindowState(
                            SQL_WINDOW_AGGREGATES,
                            Set.of(SQL_WINDOW_ACCUMULATORS),
                            StateDescriptor.Type.VALUE,
                            StorePattern.RMW,
                            "value state, SQL window aggregate accumulators per slice"),
                    new SqlWindowState(
                            SQL_WINDOW_AGGREGATES,
                            Set.of(SQL_WINDOW_DEDUP_ROW),
                            StateDescriptor.Type.VALUE,
                            StorePattern.RMW,
                            "value state, SQL window deduplication row per key and window"),
                    new SqlWindowState(
                            SQL_WINDOW_AGGREGATES,
                            Set.of(SQL_WINDOW_RANK_ROWS),
                            StateDescriptor.Type.MAP,
                            StorePattern.GENERIC,
                            "map state, SQL window TopN rows per sort key and window"
                                    + " (one record per map entry)"));

    /**
     * The decision and why, for the log line. {@code judged}: AAR until the appends show whether
     * the windows are aligned or per key ({@link AdaptiveWindowStorage}).
     */
    record Choice(StorePattern pattern, String reason, boolean judged) {
        Choice(StorePattern pattern, String reason) {
            this(pattern, reason, false);
        }
    }

    private final StorePattern override;
    private final boolean judgeAlignment;

    /**
     * {@code judgeAlignment}: non-merging time windows start on AAR and move to AUR if their
     * appends show windows per key.
     */
    StoreSelector(StorePattern override, boolean judgeAlignment) {
        this.override = override;
        this.judgeAlignment = judgeAlignment;
    }

    Choice choose(
            String operatorIdentifier,
            String stateName,
            StateDescriptor.Type type,
            TypeSerializer<?> namespaceSerializer,
            Collection<String> registeredStateNames) {
        Choice detected =
                namespaceSerializer instanceof LongSerializer
                        ? sqlWindowState(operatorClass(operatorIdentifier), stateName, type)
                        : null;
        if (detected == null) {
            detected = byWindowShape(stateName, type, namespaceSerializer, registeredStateNames);
        }
        if (override == null) {
            return detected;
        }
        StorePattern forced = override;
        // Appending stores hold list elements only; a forced AAR/AUR on another state type would
        // not be able to serve it, so such states keep the general store.
        boolean listOnly = forced == StorePattern.AAR || forced == StorePattern.AUR;
        if (listOnly && type != StateDescriptor.Type.LIST) {
            return new Choice(
                    StorePattern.GENERIC,
                    "override " + forced + " applies to list state only; " + detected.reason());
        }
        return new Choice(forced, "configured override (state.backend.flowkv.pattern-override)");
    }

    /** The store the DataStream window operator's state shape asks for. */
    private Choice byWindowShape(
            String stateName,
            StateDescriptor.Type type,
            TypeSerializer<?> namespaceSerializer,
            Collection<String> registeredStateNames) {
        boolean timeWindow = namespaceSerializer instanceof TimeWindow.Serializer;
        boolean globalWindow = namespaceSerializer instanceof GlobalWindow.Serializer;
        boolean windowContents = WINDOW_CONTENTS.equals(stateName);
        boolean merging = registeredStateNames.contains(MERGING_WINDOW_SET);
        Choice detected;
        if (type == StateDescriptor.Type.LIST && (timeWindow || globalWindow || windowContents)) {
            if (merging) {
                detected = new Choice(StorePattern.AUR, "list state, merging window assigner");
            } else if (globalWindow) {
                detected = new Choice(StorePattern.AUR, "list state, global window");
            } else if (timeWindow) {
                detected =
                        new Choice(
                                StorePattern.AAR,
                                "list state, time windows without merging",
                                judgeAlignment);
            } else {
                detected = new Choice(StorePattern.AUR, "list state, custom window");
            }
        } else if ((type == StateDescriptor.Type.AGGREGATING
                        || type == StateDescriptor.Type.REDUCING)
                && (timeWindow || globalWindow || windowContents)) {
            detected =
                    new Choice(
                            StorePattern.RMW,
                            type.name().toLowerCase(Locale.ROOT) + " state, window");
        } else {
            detected =
                    new Choice(
                            StorePattern.GENERIC,
                            type.name().toLowerCase(Locale.ROOT) + " state, not window contents");
        }
        return detected;
    }

    /** The store of a state Flink SQL's window operators register per slice end, or null. */
    private static Choice sqlWindowState(
            String operator, String stateName, StateDescriptor.Type type) {
        for (SqlWindowState s : SQL_WINDOW_STATES) {
            if (s.matches(operator, stateName, type)) {
                return new Choice(s.pattern(), s.reason());
            }
        }
        return null;
    }

    /**
     * The operator's class from Flink's operator identifier, {@code <simple class name>_<operator
     * id>_(<subtask>/<parallelism>)}.
     */
    static String operatorClass(String operatorIdentifier) {
        int end = operatorIdentifier.indexOf('_');
        return end < 0 ? operatorIdentifier : operatorIdentifier.substring(0, end);
    }
}
