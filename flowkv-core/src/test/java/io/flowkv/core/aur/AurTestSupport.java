package io.flowkv.core.aur;

import io.flowkv.core.ListReads;
import io.flowkv.core.TestSeeds;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

final class AurTestSupport {
    private AurTestSupport() {}

    /** A window as Flink's TimeWindow.Serializer writes it: start, end as big-endian longs. */
    static byte[] timeWindow(long start, long end) {
        return ByteBuffer.allocate(16).putLong(start).putLong(end).array();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** The seed of a randomized test: -Dflowkv.seed=N replays a run. */
    static long seed() {
        return TestSeeds.base();
    }

    /** The window's values as strings, or null if get returned false. */
    static List<String> read(AurStore store, byte[] key, byte[] window) throws IOException {
        return ListReads.read(store, key, window);
    }
}
