import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.*;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.api.common.functions.RichMapFunction;

public class CountRepro {
    public static void main(String[] a) throws Exception {
        String backend = a[0]; long n = Long.parseLong(a[1]); int keys = Integer.parseInt(a[2]);
        Configuration c = new Configuration();
        c.setString("state.backend.type", backend);
        c.set(TaskManagerOptions.MANAGED_MEMORY_SIZE, MemorySize.parse(a.length > 3 ? a[3] : "64m"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(c);
        env.setParallelism(1);
        DataGeneratorSource<Long> src = new DataGeneratorSource<>((GeneratorFunction<Long, Long>) i -> i, n, Types.LONG);
        long t0 = System.nanoTime();
        env.fromSource(src, WatermarkStrategy.noWatermarks(), "gen")
            .keyBy(i -> (i * 2654435761L) % keys, Types.LONG)
            .countWindow(20)
            .process(new ProcessWindowFunction<Long, Long, Long, GlobalWindow>() {
                public void process(Long k, Context ctx, Iterable<Long> els, Collector<Long> out) {
                    long m = Long.MIN_VALUE; for (long e : els) m = Math.max(m, e); out.collect(m);
                }
            }, Types.LONG)
            .map(new RichMapFunction<Long, Long>() { public Long map(Long v) { return v; } })
            .sinkTo(new org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink<>());
        env.execute("count");
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.printf("RESULT backend=%s records=%d keys=%d seconds=%.1f rec/s=%.0f%n", backend, n, keys, s, n / s);
    }
}
