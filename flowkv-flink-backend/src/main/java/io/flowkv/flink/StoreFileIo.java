package io.flowkv.flink;

import io.flowkv.core.log.FileIo;

/**
 * The {@link FileIo} through which every FlowKV store of this JVM opens, writes and deletes its
 * files: {@link FileIo#DEFAULT} unless a test installs another. Fault-injection suites that run
 * whole jobs on a MiniCluster (task managers in the test's JVM) install one that plays a full or
 * failing disk, since the stores are created deep inside the task managers. Production code never
 * installs anything.
 */
public final class StoreFileIo {
    private static volatile FileIo current = FileIo.DEFAULT;

    private StoreFileIo() {}

    static FileIo current() {
        return current;
    }

    /** Makes stores opened from now on use {@code io}. */
    public static void install(FileIo io) {
        if (io == null) {
            throw new IllegalArgumentException("io must not be null");
        }
        current = io;
    }

    /** Back to {@link FileIo#DEFAULT} for stores opened from now on. */
    public static void reset() {
        current = FileIo.DEFAULT;
    }
}
