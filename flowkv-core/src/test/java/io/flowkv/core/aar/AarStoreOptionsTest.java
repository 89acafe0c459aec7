package io.flowkv.core.aar;

import io.flowkv.core.log.FileIo;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AarStoreOptionsTest {
    private static final Path DIR = Path.of("unused");

    @Test
    void shouldUseDefaults() {
        AarStoreOptions options = AarStoreOptions.builder(DIR).build();

        assertThat(options.partitions()).isEqualTo(2);
        assertThat(options.writeBufferBytes()).isEqualTo(64L << 20);
        assertThat(options.ioBufferBytes()).isEqualTo(64 << 10);
        assertThat(options.fileIo()).isSameAs(FileIo.DEFAULT);
        assertThat(options.directory()).isEqualTo(DIR);
    }

    @Test
    void shouldAcceptPartitionBounds() {
        assertThat(AarStoreOptions.builder(DIR).partitions(1).build().partitions()).isEqualTo(1);
        assertThat(AarStoreOptions.builder(DIR).partitions(1024).build().partitions())
                .isEqualTo(1024);
    }

    @Test
    void shouldRejectPartitionsOutOfRange() {
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).partitions(0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("partitions must be in [1, 1024], was 0");
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).partitions(1025).build())
                .hasMessage("partitions must be in [1, 1024], was 1025");
    }

    @Test
    void shouldRejectNonPositiveWriteBuffer() {
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).writeBufferBytes(0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("writeBufferBytes must be in [1, 1099511627776]")
                .hasMessageEndingWith("was 0");
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).writeBufferBytes(-5).build())
                .hasMessageEndingWith("was -5");
    }

    @Test
    void shouldRejectIoBufferOutOfRange() {
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).ioBufferBytes(100).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ioBufferBytes must be in [4096, 67108864], was 100");
    }

    @Test
    void shouldRejectJitterSpreadOutOfRange() {
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).jitterSpread(0.95).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("jitterSpread must be in [0.0, 0.9], was 0.95");
    }

    @Test
    void shouldRejectMissingDirectoryAndFileIo() {
        assertThatThrownBy(() -> AarStoreOptions.builder(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessage("directory must not be null");
        assertThatThrownBy(() -> AarStoreOptions.builder(DIR).fileIo(null).build())
                .hasMessage("fileIo must not be null");
    }
}
