package io.flowkv.flink;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.util.Collection;
import java.util.Locale;

/**
 * Chooses the store of a state from what Flink's window operators register (DESIGN.md §4): the
 * descriptor type says append (list) or read-modify-write (aggregating, reducing); the namespace
 * serializer and a registered merging window set say aligned or unaligned. An explicit override for
 * the operator wins over all of it.
 */
final class StoreSelector {
    static final String WINDOW_CONTENTS = "window-contents";
    static final String MERGING_WINDOW_SET = "merging-window-set";

    /** The decision and why, for the log line. */
    record Choice(StorePattern pattern, String reason) {}

    private final StorePattern override;

    StoreSelector(StorePattern override) {
        this.override = override;
    }

    Choice choose(
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
                detected = new Choice(StorePattern.AAR, "list state, time windows without merging");
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
}
