package io.flowkv.nexmark;

import org.junit.jupiter.api.Test;

import java.util.Collection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class NexmarkSourceTest {

    private static final GeneratorConfig CONFIG =
            new GeneratorConfig(12_345, 777, 42, 3, 5, 7, 150, 400, 90);

    @Test
    void shouldRestoreASplitWhereItsIteratorStopped() throws Exception {
        NexmarkSplit split = new NexmarkSplit(CONFIG, 1, 3, 0, 500.0);
        NexmarkSplit.EventIterator it = split.getIterator();
        for (int i = 0; i < 10; i++) {
            it.next();
        }
        NexmarkSplit stopped = split.getUpdatedSplitForIterator(it);
        NexmarkSplit.Serializer serializer = NexmarkSplit.Serializer.INSTANCE;
        NexmarkSplit restored =
                serializer.deserialize(serializer.getVersion(), serializer.serialize(stopped));

        assertThat(restored).isEqualTo(new NexmarkSplit(CONFIG, 1, 3, 10, 500.0));
        assertThat(restored.getIterator().next()).isEqualTo(it.next());
    }

    @Test
    void shouldRoundTripTheEnumeratorCheckpoint() throws Exception {
        List<NexmarkSplit> pending =
                List.of(new NexmarkSplit(CONFIG, 0, 2, 5, 0), new NexmarkSplit(CONFIG, 1, 2, 0, 0));
        NexmarkSource.CheckpointSerializer serializer = new NexmarkSource.CheckpointSerializer();
        Collection<NexmarkSplit> restored =
                serializer.deserialize(serializer.getVersion(), serializer.serialize(pending));
        assertThat(restored).containsExactlyElementsOf(pending);
    }
}
