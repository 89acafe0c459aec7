package io.flowkv.bench;

import java.util.Locale;

/** The store implementations a trace runs against. */
public enum Backend {
    FLOWKV,
    ROCKSDB,
    HEAP;

    public static Backend parse(String name) {
        for (Backend b : values()) {
            if (b.name().equalsIgnoreCase(name)) {
                return b;
            }
        }
        throw new IllegalArgumentException(
                "backend must be one of flowkv, rocksdb, heap, was " + name);
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
