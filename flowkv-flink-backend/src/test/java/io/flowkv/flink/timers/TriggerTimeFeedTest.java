package io.flowkv.flink.timers;

import io.flowkv.core.aur.TriggerTimePredictor;
import io.flowkv.flink.FlowKVKeyedStateBackend;
import io.flowkv.flink.FlowKVStateBackend;
import io.flowkv.flink.storage.KeyBytes;
import io.flowkv.flink.storage.StateStorage;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A non-merging window operator's timers reach its AUR window contents as trigger times: a global
 * window whose trigger fires at an event time gets that time as its ETT, the earliest of its
 * timers, and keeps none once fired and purged.
 */
class TriggerTimeFeedTest {
    private static final int MAX_PARALLELISM = 128;
    private static final TypeInformation<Tuple2<String, Long>> IN =
            Types.TUPLE(Types.STRING, Types.LONG);
    private static final KeySelector<Tuple2<String, Long>, String> KEY = t -> t.f0;

    @Test
    void shouldFeedTimersAsTriggerTimesOfGlobalWindows() throws Exception {
        WindowOperatorBuilder<Tuple2<String, Long>, String, GlobalWindow> builder =
                new WindowOperatorBuilder<>(
                        GlobalWindows.create(),
                        new FireAfter(100),
                        new ExecutionConfig(),
                        IN,
                        KEY,
                        Types.STRING);
        KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, Long>, String> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        builder.process(new Count()), KEY, Types.STRING, MAX_PARALLELISM, 1, 0);
        try {
            h.setStateBackend(new FlowKVStateBackend());
            h.open();
            h.processElement(new StreamRecord<>(Tuple2.of("a", 5L), 5));
            h.processElement(new StreamRecord<>(Tuple2.of("a", 3L), 3));
            h.processElement(new StreamRecord<>(Tuple2.of("b", 50L), 50));
            FlowKVKeyedStateBackend<?> backend =
                    (FlowKVKeyedStateBackend<?>) h.getOperator().getKeyedStateBackend();
            assertThat(backend.storePattern("window-contents")).isEqualTo(StorePattern.AUR);
            StateStorage storage =
                    backend.storage(backend.registeredStates().get("window-contents"));
            assertThat(triggerTime(storage, "a")).as("earliest of a's timers").isEqualTo(103);
            assertThat(triggerTime(storage, "b")).isEqualTo(150);

            h.processWatermark(104);
            assertThat(h.extractOutputValues()).containsExactly("a:2");
            assertThat(triggerTime(storage, "a"))
                    .as("a fired and purged")
                    .isEqualTo(TriggerTimePredictor.UNKNOWN);
            assertThat(triggerTime(storage, "b")).isEqualTo(150);
        } finally {
            h.close();
        }
    }

    private static long triggerTime(StateStorage storage, String key) throws Exception {
        KeyBytes<String, GlobalWindow> bytes =
                new KeyBytes<>(StringSerializer.INSTANCE, new GlobalWindow.Serializer(), 1);
        int keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(key, MAX_PARALLELISM);
        return storage.triggerTimes(keyGroup)
                .triggerTime(bytes.key(key, keyGroup), bytes.namespace(GlobalWindow.get()));
    }

    /** Fires a global window {@code delay} after each element's timestamp. */
    private static final class FireAfter extends Trigger<Tuple2<String, Long>, GlobalWindow> {
        private static final long serialVersionUID = 1L;
        private final long delay;

        FireAfter(long delay) {
            this.delay = delay;
        }

        @Override
        public TriggerResult onElement(
                Tuple2<String, Long> element,
                long timestamp,
                GlobalWindow window,
                TriggerContext ctx) {
            ctx.registerEventTimeTimer(timestamp + delay);
            return TriggerResult.CONTINUE;
        }

        @Override
        public TriggerResult onEventTime(long time, GlobalWindow window, TriggerContext ctx) {
            return TriggerResult.FIRE_AND_PURGE;
        }

        @Override
        public TriggerResult onProcessingTime(long time, GlobalWindow window, TriggerContext ctx) {
            return TriggerResult.CONTINUE;
        }

        @Override
        public void clear(GlobalWindow window, TriggerContext ctx) {}
    }

    private static final class Count
            extends ProcessWindowFunction<Tuple2<String, Long>, String, String, GlobalWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String key,
                Context context,
                Iterable<Tuple2<String, Long>> elements,
                Collector<String> out) {
            int n = 0;
            for (Tuple2<String, Long> ignored : elements) {
                n++;
            }
            out.collect(key + ":" + n);
        }
    }
}
