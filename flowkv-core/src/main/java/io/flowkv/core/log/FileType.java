package io.flowkv.core.log;

/** The kinds of FlowKV files; the code is stored in every file header. */
public enum FileType {
    /** One partition segment of one AAR window: frames of (key, value) records. */
    AAR_WINDOW(1),
    /** An RMW value log segment: one frame per put or delete. */
    RMW_VALUE_LOG(2),
    /** An AUR data log segment: values of (key, window) runs, addressed by the index log. */
    AUR_DATA_LOG(3),
    /** An AUR index log segment: frames of index entries pointing into the data log. */
    AUR_INDEX_LOG(4),
    /** A store manifest: what a sealed store consists of. */
    MANIFEST(5),
    /** Entries of a Flink snapshot spilled by key group between its synchronous and async part. */
    SNAPSHOT_SPILL(6),
    /** A sorted run of a timer queue: blocks of byte strings in unsigned order (scratch). */
    SORTED_RUN(7),
    /**
     * The timers of one queue FlowKV stores, as of one incremental checkpoint: key group, timer.
     */
    TIMER_SNAPSHOT(8);

    private final short code;

    FileType(int code) {
        this.code = (short) code;
    }

    public short code() {
        return code;
    }

    public static FileType fromCode(int code) {
        for (FileType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        return null;
    }
}
