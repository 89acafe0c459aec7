package io.flowkv.flink.storage;

import java.util.Locale;

/** The store a state is given. */
public enum StorePattern {
    /** Append, aligned read: list state of tumbling/sliding time windows. */
    AAR,
    /** Append, unaligned read: list state of merging (session), global or unknown windows. */
    AUR,
    /** Read-modify-write: aggregating and reducing window state. */
    RMW,
    /** Every other state: a key-value store over (key, namespace). */
    GENERIC;

    /** The pattern named by {@code text} (case-insensitive), or null. */
    public static StorePattern parse(String text) {
        if (text == null) {
            return null;
        }
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
