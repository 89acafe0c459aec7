package io.flowkv.nexmark;

import org.apache.flink.api.connector.source.lib.util.IteratorSourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Split {@code index} of {@code count}: the event numbers {@code index + k * count} for {@code k >=
 * position}, below {@code config.events()}. Splits interleave, so parallel readers advance through
 * event time together and the combined watermark does not hold back one reader's windows.
 *
 * @param maxRate events per second this split may produce in wall-clock time; 0 is unlimited;
 *     {@link #PACE_TO_EVENT_TIME}: no event before the wall-clock time equal to its event time
 */
public record NexmarkSplit(
        GeneratorConfig config, int index, int count, long position, double maxRate)
        implements IteratorSourceSplit<Event, NexmarkSplit.EventIterator> {

    /**
     * The {@code maxRate} that paces the split to the wall clock: event {@code n} is emitted no
     * earlier than {@code config.timestampOf(n)} epoch milliseconds, so with a base time near now
     * event time and wall-clock time coincide, and a window's end is the wall-clock time its last
     * event could arrive (for latency measurement).
     */
    public static final double PACE_TO_EVENT_TIME = -1;

    @Override
    public String splitId() {
        return Integer.toString(index);
    }

    @Override
    public EventIterator getIterator() {
        return new EventIterator(this);
    }

    @Override
    public NexmarkSplit getUpdatedSplitForIterator(EventIterator iterator) {
        return new NexmarkSplit(config, index, count, iterator.position, maxRate);
    }

    /** Generates the split's events; sleeps when ahead of {@link #maxRate()}. */
    public static final class EventIterator implements Iterator<Event> {
        private static final int PACE_EVERY = 256;

        private final EventGenerator generator;
        private final int index;
        private final int count;
        private final long events;
        private final double nanosPerEvent;
        private final boolean paceToEventTime;
        private final GeneratorConfig config;
        private long position;
        private long emitted;
        private long startNanos;

        EventIterator(NexmarkSplit split) {
            this.generator = new EventGenerator(split.config);
            this.index = split.index;
            this.count = split.count;
            this.events = split.config.events();
            this.nanosPerEvent = split.maxRate > 0 ? 1e9 / split.maxRate : 0;
            this.paceToEventTime = split.maxRate == PACE_TO_EVENT_TIME;
            this.config = split.config;
            this.position = split.position;
        }

        @Override
        public boolean hasNext() {
            return index + position * count < events;
        }

        @Override
        public Event next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            long n = index + position * count;
            position++;
            if (++emitted % PACE_EVERY == 0) {
                Progress.add(PACE_EVERY);
                if (nanosPerEvent > 0) {
                    pace();
                }
            }
            if (paceToEventTime) {
                // Every event, not every PACE_EVERY: at a few thousand events per second a
                // batch would run hundreds of milliseconds ahead of the clock, and a window
                // could close before its end in wall-clock time.
                sleepUntil(config.timestampOf(n));
            }
            return generator.event(n);
        }

        private static void sleepUntil(long epochMillis) {
            long ahead = epochMillis - System.currentTimeMillis();
            if (ahead > 0) {
                try {
                    Thread.sleep(ahead);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void pace() {
            long now = System.nanoTime();
            if (startNanos == 0) {
                startNanos = now;
                emitted = 0;
                return;
            }
            long aheadNanos = (long) (emitted * nanosPerEvent) - (now - startNanos);
            if (aheadNanos > 1_000_000) {
                try {
                    Thread.sleep(aheadNanos / 1_000_000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** Checkpoint format: version 1 = the generator configuration, then the split's position. */
    static final class Serializer implements SimpleVersionedSerializer<NexmarkSplit> {
        static final Serializer INSTANCE = new Serializer();

        @Override
        public int getVersion() {
            return 1;
        }

        @Override
        public byte[] serialize(NexmarkSplit split) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(96);
            GeneratorConfig c = split.config;
            out.writeLong(c.events());
            out.writeLong(c.eventRate());
            out.writeLong(c.baseTime());
            out.writeInt(c.hotAuctionRatio());
            out.writeInt(c.hotBiddersRatio());
            out.writeInt(c.hotSellersRatio());
            out.writeInt(c.avgPersonBytes());
            out.writeInt(c.avgAuctionBytes());
            out.writeInt(c.avgBidBytes());
            out.writeInt(split.index);
            out.writeInt(split.count);
            out.writeLong(split.position);
            out.writeDouble(split.maxRate);
            return out.getCopyOfBuffer();
        }

        @Override
        public NexmarkSplit deserialize(int version, byte[] bytes) throws IOException {
            if (version != 1) {
                throw new IOException("Unknown NEXMark split version " + version);
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            GeneratorConfig config =
                    new GeneratorConfig(
                            in.readLong(),
                            in.readLong(),
                            in.readLong(),
                            in.readInt(),
                            in.readInt(),
                            in.readInt(),
                            in.readInt(),
                            in.readInt(),
                            in.readInt());
            return new NexmarkSplit(
                    config, in.readInt(), in.readInt(), in.readLong(), in.readDouble());
        }
    }
}
