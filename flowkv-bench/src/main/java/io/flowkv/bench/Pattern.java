package io.flowkv.bench;

import java.util.Locale;

/** The three state access patterns of the FlowKV paper, one trace generator and store each. */
public enum Pattern {
    /** Append, aligned read: list state of tumbling windows, fired per key then cleared. */
    AAR,
    /** Read-modify-write: an aggregate per (key, window) over sliding windows. */
    RMW,
    /** Append, unaligned read: list state of session windows, fired in trigger-time order. */
    AUR;

    public static Pattern parse(String name) {
        for (Pattern p : values()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("pattern must be one of aar, rmw, aur, was " + name);
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
