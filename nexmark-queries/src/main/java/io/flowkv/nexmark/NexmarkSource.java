package io.flowkv.nexmark;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceReader;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The NEXMark stream as a bounded FLIP-27 source. The enumerator cuts the event numbers into one
 * interleaved {@link NexmarkSplit} per reader and gives split {@code i} to reader {@code i}, once:
 * a reader must never take a second split, whose earlier timestamps its watermark would have passed
 * already. Timestamps and watermarks come from the {@code WatermarkStrategy} given to {@code
 * fromSource} (see {@link Queries#events}).
 */
public final class NexmarkSource
        implements Source<Event, NexmarkSplit, Collection<NexmarkSplit>>,
                ResultTypeQueryable<Event> {
    private static final long serialVersionUID = 1L;

    /** Paced to event time: event 0's time is this far after the job's start, rounded up. */
    static final long PACE_START_DELAY_MS = 2_000;

    private static final Logger LOG = LoggerFactory.getLogger(NexmarkSource.class);

    private final GeneratorConfig config;
    private final double maxRate;

    /**
     * @param maxRate events per second over all readers in wall-clock time; 0 is unlimited; {@link
     *     NexmarkSplit#PACE_TO_EVENT_TIME} paces every event to its event time, with the base time
     *     of {@code config} replaced by a time just after the job starts
     */
    public NexmarkSource(GeneratorConfig config, double maxRate) {
        this.config = config;
        this.maxRate = maxRate;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<Event, NexmarkSplit> createReader(SourceReaderContext context) {
        return new IteratorSourceReader<>(context);
    }

    @Override
    public SplitEnumerator<NexmarkSplit, Collection<NexmarkSplit>> createEnumerator(
            SplitEnumeratorContext<NexmarkSplit> context) {
        int count = context.currentParallelism();
        GeneratorConfig config = this.config;
        if (maxRate == NexmarkSplit.PACE_TO_EVENT_TIME) {
            // The job is starting: event time begins at a whole second shortly after now, when
            // the readers are deployed, whatever the time the job took to start.
            long base = (System.currentTimeMillis() / 1000 + 1) * 1000 + PACE_START_DELAY_MS;
            config = config.withBaseTime(base);
            LOG.info("NEXMark source paced to event time: event 0 at epoch ms {}", base);
        }
        List<NexmarkSplit> splits = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            double splitRate =
                    maxRate == NexmarkSplit.PACE_TO_EVENT_TIME ? maxRate : maxRate / count;
            splits.add(new NexmarkSplit(config, i, count, 0, splitRate));
        }
        return new Enumerator(context, splits);
    }

    @Override
    public SplitEnumerator<NexmarkSplit, Collection<NexmarkSplit>> restoreEnumerator(
            SplitEnumeratorContext<NexmarkSplit> context, Collection<NexmarkSplit> checkpoint) {
        return new Enumerator(context, checkpoint);
    }

    @Override
    public SimpleVersionedSerializer<NexmarkSplit> getSplitSerializer() {
        return NexmarkSplit.Serializer.INSTANCE;
    }

    @Override
    public SimpleVersionedSerializer<Collection<NexmarkSplit>> getEnumeratorCheckpointSerializer() {
        return new CheckpointSerializer();
    }

    @Override
    public TypeInformation<Event> getProducedType() {
        return EventSerializers.EVENT_TYPE;
    }

    /** Hands split {@code i} to reader {@code i % parallelism} on its first request. */
    static final class Enumerator
            implements SplitEnumerator<NexmarkSplit, Collection<NexmarkSplit>> {
        private final SplitEnumeratorContext<NexmarkSplit> context;
        private final List<NexmarkSplit> pending;

        Enumerator(SplitEnumeratorContext<NexmarkSplit> context, Collection<NexmarkSplit> splits) {
            this.context = context;
            this.pending = new ArrayList<>(splits);
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtaskId, String requesterHostname) {
            int parallelism = context.currentParallelism();
            List<NexmarkSplit> mine = new ArrayList<>();
            for (NexmarkSplit split : pending) {
                if (split.index() % parallelism == subtaskId) {
                    mine.add(split);
                }
            }
            pending.removeAll(mine);
            for (NexmarkSplit split : mine) {
                context.assignSplit(split, subtaskId);
            }
            context.signalNoMoreSplits(subtaskId);
        }

        @Override
        public void addSplitsBack(List<NexmarkSplit> splits, int subtaskId) {
            pending.addAll(splits);
        }

        @Override
        public void addReader(int subtaskId) {}

        @Override
        public Collection<NexmarkSplit> snapshotState(long checkpointId) {
            return new ArrayList<>(pending);
        }

        @Override
        public void close() {}
    }

    /** The enumerator's pending splits: a count, then each split in its own format. */
    static final class CheckpointSerializer
            implements SimpleVersionedSerializer<Collection<NexmarkSplit>> {

        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(Collection<NexmarkSplit> splits) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(256);
            out.writeInt(splits.size());
            for (NexmarkSplit split : splits) {
                byte[] bytes = NexmarkSplit.Serializer.INSTANCE.serialize(split);
                out.writeInt(bytes.length);
                out.write(bytes);
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public Collection<NexmarkSplit> deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) {
                throw new IOException("Unknown NEXMark enumerator checkpoint version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            int n = in.readInt();
            List<NexmarkSplit> splits = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                byte[] split = new byte[in.readInt()];
                in.readFully(split);
                splits.add(
                        NexmarkSplit.Serializer.INSTANCE.deserialize(
                                NexmarkSplit.Serializer.INSTANCE.getVersion(), split));
            }
            return splits;
        }
    }
}
