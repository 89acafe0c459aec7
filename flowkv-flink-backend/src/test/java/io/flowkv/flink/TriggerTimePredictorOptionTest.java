package io.flowkv.flink;

import io.flowkv.core.aur.TriggerTimePredictor;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.ExceptionUtils;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code state.backend.flowkv.trigger-time-predictor}: a predictor class named for an operator uid
 * is loaded for that operator's AUR states (a count window here) and sees every new window; other
 * operators keep the default; a class that cannot serve fails the job naming option and class.
 */
class TriggerTimePredictorOptionTest {
    private static final int KEYS = 50;
    private static final long ELEMENTS = 5_000;
    private static final int COUNT = 10;

    /** Windows the test predictor was asked about, over all its instances. */
    private static final AtomicLong ESTIMATES = new AtomicLong();

    @TempDir Path localDir;

    @BeforeEach
    void reset() {
        ESTIMATES.set(0);
    }

    @Test
    void shouldUseThePredictorConfiguredForTheOperatorUid() throws Exception {
        List<String> output = run(predictorFor("counted", CountingPredictor.class.getName()));

        assertThat(output).containsExactlyElementsOf(expected());
        // Every window of COUNT elements is new once: ELEMENTS / COUNT of them.
        assertThat(ESTIMATES.get())
                .as("estimates asked of the configured predictor")
                .isEqualTo(ELEMENTS / COUNT);
    }

    @Test
    void shouldLeaveOperatorsWithoutAnEntryOnTheDefault() throws Exception {
        List<String> output =
                run(predictorFor("another-operator", CountingPredictor.class.getName()));

        assertThat(output).containsExactlyElementsOf(expected());
        assertThat(ESTIMATES.get()).as("estimates asked of a predictor of another uid").isZero();
    }

    @Test
    void shouldFailTheJobNamingOptionAndClassWhenThePredictorCannotBeLoaded() {
        String missing = "com.example.NoSuchPredictor";
        assertThatThrownBy(() -> run(predictorFor("counted", missing)))
                .satisfies(
                        e ->
                                assertThat(ExceptionUtils.findThrowableWithMessage(e, missing))
                                        .as("an exception naming %s in %s", missing, e)
                                        .hasValueSatisfying(
                                                cause ->
                                                        assertThat(cause.getMessage())
                                                                .contains(
                                                                        FlowKVOptions
                                                                                .TRIGGER_TIME_PREDICTOR
                                                                                .key())
                                                                .contains("cannot be loaded")));
        String notAPredictor = String.class.getName();
        assertThatThrownBy(() -> run(predictorFor("counted", notAPredictor)))
                .satisfies(
                        e ->
                                assertThat(
                                                ExceptionUtils.findThrowableWithMessage(
                                                        e, "does not implement"))
                                        .as("an exception naming the interface in %s", e)
                                        .isPresent());
    }

    @Test
    void shouldRejectAValueThatIsNotAClassName() {
        Configuration conf = predictorFor("counted", "not a class");
        assertThatThrownBy(() -> FlowKVOptions.validate(conf))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(FlowKVOptions.TRIGGER_TIME_PREDICTOR.key())
                .hasMessageContaining("counted:not a class");
    }

    private Configuration predictorFor(String uid, String className) {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, "flowkv");
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        conf.set(FlowKVOptions.TRIGGER_TIME_PREDICTOR, Map.of(uid, className));
        return conf;
    }

    /** Count windows of COUNT elements per key; the window operator has the uid "counted". */
    private static List<String> run(Configuration conf) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(conf);
        env.setParallelism(1);
        List<String> output = new ArrayList<>();
        CloseableIterator<String> results =
                env.fromSequence(0, ELEMENTS - 1)
                        .map(i -> Tuple2.of(i % KEYS, i))
                        .returns(Types.TUPLE(Types.LONG, Types.LONG))
                        .keyBy(t -> t.f0)
                        .countWindow(COUNT)
                        .process(new Sum())
                        .uid("counted")
                        .executeAndCollect();
        try {
            results.forEachRemaining(output::add);
        } finally {
            results.close();
        }
        Collections.sort(output);
        return output;
    }

    private static List<String> expected() {
        List<String> expected = new ArrayList<>();
        for (long key = 0; key < KEYS; key++) {
            for (long first = key; first < ELEMENTS; first += (long) KEYS * COUNT) {
                long sum = 0;
                for (int j = 0; j < COUNT; j++) {
                    sum += first + (long) j * KEYS;
                }
                expected.add(key + "=" + sum);
            }
        }
        Collections.sort(expected);
        return expected;
    }

    private static final class Sum
            extends ProcessWindowFunction<Tuple2<Long, Long>, String, Long, GlobalWindow> {
        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                Long key,
                Context context,
                Iterable<Tuple2<Long, Long>> elements,
                Collector<String> out) {
            long sum = 0;
            for (Tuple2<Long, Long> e : elements) {
                sum += e.f1;
            }
            out.collect(key + "=" + sum);
        }
    }

    /** Counts the windows it is asked about; has no estimate for any. */
    public static final class CountingPredictor implements TriggerTimePredictor {
        @Override
        public long estimate(byte[] window, long maxTimestamp) {
            ESTIMATES.incrementAndGet();
            return UNKNOWN;
        }
    }
}
