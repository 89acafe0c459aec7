package io.flowkv.flink.timers;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TimerPackingTest {

    @Test
    void packsNumericKeysWithWindowLongVoidAndGlobalNamespaces() {
        check(
                new TimerSerializer<>(LongSerializer.INSTANCE, new TimeWindow.Serializer()),
                new TimerHeapInternalTimer<>(19_999L, -7L, new TimeWindow(10_000L, 20_000L)),
                new TimerHeapInternalTimer<>(19_999L, -7L, new TimeWindow(10_001L, 20_000L)));
        check(
                new TimerSerializer<>(IntSerializer.INSTANCE, LongSerializer.INSTANCE),
                new TimerHeapInternalTimer<>(5L, 42, 99L),
                new TimerHeapInternalTimer<>(5L, 42, 98L));
        check(
                new TimerSerializer<>(LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE),
                new TimerHeapInternalTimer<>(
                        Long.MIN_VALUE, Long.MAX_VALUE, VoidNamespace.INSTANCE),
                new TimerHeapInternalTimer<>(Long.MIN_VALUE, 0L, VoidNamespace.INSTANCE));
        check(
                new TimerSerializer<>(IntSerializer.INSTANCE, new GlobalWindow.Serializer()),
                new TimerHeapInternalTimer<>(Long.MAX_VALUE, Integer.MIN_VALUE, GlobalWindow.get()),
                new TimerHeapInternalTimer<>(
                        Long.MAX_VALUE - 1, Integer.MIN_VALUE, GlobalWindow.get()));
    }

    /**
     * Packs {@code timer} and checks it comes back equal, with the same hash, unlike {@code other}.
     */
    private static void check(
            TimerSerializer<?, ?> serializer,
            TimerHeapInternalTimer<?, ?> timer,
            TimerHeapInternalTimer<?, ?> other) {
        TimerPacking packing = TimerPacking.of(serializer);
        assertThat(packing).isNotNull();
        long[] records = new long[3 * packing.stride];
        int at = packing.stride;
        packing.pack(timer, records, at);

        assertThat(packing.unpack(records, at)).isEqualTo(timer);
        assertThat(packing.unpack(records, at).getKey())
                .isEqualTo(timer.getKey())
                .hasSameClassAs(timer.getKey());
        assertThat(packing.unpack(records, at).getNamespace()).isEqualTo(timer.getNamespace());
        assertThat(packing.matches(timer, records, at)).isTrue();
        assertThat(packing.matches(other, records, at)).isFalse();
        assertThat(packing.hash(records, at)).isEqualTo(packing.hash(timer));
        // The neighbours' longs are untouched.
        assertThat(records[0]).isZero();
        assertThat(records[2 * packing.stride]).isZero();
    }

    @Test
    void otherKeyAndNamespaceTypesStayObjects() {
        assertThat(
                        TimerPacking.of(
                                new TimerSerializer<>(
                                        StringSerializer.INSTANCE,
                                        VoidNamespaceSerializer.INSTANCE)))
                .isNull();
        assertThat(
                        TimerPacking.of(
                                new TimerSerializer<>(
                                        LongSerializer.INSTANCE, StringSerializer.INSTANCE)))
                .isNull();
        assertThat(TimerPacking.of(LongSerializer.INSTANCE)).isNull();
    }

    @Test
    void aTimerOfAnotherNamespaceIsRefusedByName() {
        TimerPacking packing =
                TimerPacking.of(
                        new TimerSerializer<>(
                                LongSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE));
        assertThatThrownBy(
                        () ->
                                packing.pack(
                                        new TimerHeapInternalTimer<>(1L, 1L, "not void"),
                                        new long[packing.stride],
                                        0))
                .isInstanceOf(ClassCastException.class)
                .hasMessageContaining("java.lang.String");
    }

    @Test
    void hashesSpreadOverTimersOfOneWindowEnd() {
        TimerPacking packing =
                TimerPacking.of(
                        new TimerSerializer<>(
                                LongSerializer.INSTANCE, new TimeWindow.Serializer()));
        // The same window for consecutive keys: the low bits of the hashes must still differ.
        java.util.Set<Integer> low = new java.util.HashSet<>();
        for (long key = 0; key < 1024; key++) {
            low.add(
                    packing.hash(
                                    new TimerHeapInternalTimer<>(
                                            9_999L, key, new TimeWindow(0, 10_000)))
                            & 1023);
        }
        assertThat(low.size()).as("distinct low 10 bits of 1024 hashes").isGreaterThan(500);
    }

    @Test
    void hashesDifferForTimersWhoseTimestampAndKeyDifferInTheSameBits() {
        TimerPacking packing =
                TimerPacking.of(
                        new TimerSerializer<>(
                                LongSerializer.INSTANCE, new TimeWindow.Serializer()));
        // One window, a timer every second for a thousand keys: timestamp ^ key is the same for
        // all of them, which a hash that XORs the two before mixing cannot tell apart.
        java.util.Set<Integer> hashes = new java.util.HashSet<>();
        long sameXor = 0x5_0000L;
        for (long i = 0; i < 1000; i++) {
            long timestamp = 1_000_000L + i * 1000;
            hashes.add(
                    packing.hash(
                            new TimerHeapInternalTimer<>(
                                    timestamp,
                                    timestamp ^ sameXor,
                                    new TimeWindow(1_000_000L, 2_000_000L))));
        }
        assertThat(hashes).as("distinct hashes of 1000 timers").hasSizeGreaterThan(990);
    }
}
