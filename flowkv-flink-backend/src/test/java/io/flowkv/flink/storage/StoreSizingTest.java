package io.flowkv.flink.storage;

import io.flowkv.core.aur.AurStoreOptions;
import io.flowkv.core.index.PagedHashIndex;
import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.config.FlowKVSettings;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StoreSizingTest {
    private static final long MIB = 1L << 20;

    @Test
    void shouldSplitTheBudgetByPatternAndInstances() {
        StoreSizing sizing = new StoreSizing(FlowKVSettings.from(new Configuration()), 64 * MIB);

        assertThat(sizing.aarWriteBuffer()).isEqualTo(16 * MIB);
        assertThat(sizing.aurWriteBuffer(2)).isEqualTo(8 * MIB);
        assertThat(sizing.aurPrefetchBuffer(2)).isEqualTo(8 * MIB);
        assertThat(sizing.aurStatCache(2)).isEqualTo(8 * MIB);
        assertThat(sizing.rmwWriteBuffer(2)).isEqualTo(4 * MIB);
        assertThat(sizing.rmwIndexCache(2)).isEqualTo(8 * MIB);
    }

    @Test
    void shouldKeepEverySizeAboveWhatItsStoreWorksWith() {
        StoreSizing sizing = new StoreSizing(FlowKVSettings.from(new Configuration()), MIB);

        assertThat(sizing.rmwWriteBuffer(64)).isEqualTo(StoreSizing.MIN_WRITE_BUFFER_BYTES);
        assertThat(sizing.aurPrefetchBuffer(64)).isEqualTo(MIB);
        assertThat(sizing.aurStatCache(64)).isEqualTo(AurStoreOptions.MIN_STAT_CACHE_BYTES);
        assertThat(sizing.rmwIndexCache(64)).isEqualTo(PagedHashIndex.MIN_CACHE_BYTES);
    }

    @Test
    void shouldGiveEveryInstanceTheConfiguredSizesWhenSet() {
        Configuration config = new Configuration();
        config.set(FlowKVOptions.WRITE_BUFFER_SIZE, MemorySize.ofMebiBytes(3));
        config.set(FlowKVOptions.INDEX_CACHE_SIZE, MemorySize.ofMebiBytes(5));
        StoreSizing sizing = new StoreSizing(FlowKVSettings.from(config), 64 * MIB);

        assertThat(sizing.aarWriteBuffer()).isEqualTo(3 * MIB);
        assertThat(sizing.aurWriteBuffer(4)).isEqualTo(3 * MIB);
        assertThat(sizing.rmwWriteBuffer(4)).isEqualTo(3 * MIB);
        assertThat(sizing.aurStatCache(4)).isEqualTo(5 * MIB);
        assertThat(sizing.rmwIndexCache(4)).isEqualTo(5 * MIB);
    }
}
