package io.flowkv.core.rmw;

import io.flowkv.core.log.FileIo;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RmwStoreOptionsTest {
    private final RmwStoreOptions.Builder builder = RmwStoreOptions.builder(Path.of("/tmp/rmw"));

    @Test
    void shouldUseThePaperDefaults() {
        RmwStoreOptions o = builder.build();
        assertThat(o.maxSpaceAmplification()).isEqualTo(1.5);
        assertThat(o.writeBufferBytes()).isEqualTo(64L << 20);
        assertThat(o.segmentRollBytes()).isEqualTo(64L << 20);
        assertThat(o.ioBufferBytes()).isEqualTo(64 << 10);
        assertThat(o.fileIo()).isSameAs(FileIo.DEFAULT);
    }

    @Test
    void shouldRejectMaxSpaceAmplificationOfOneOrLess() {
        assertThatThrownBy(() -> builder.maxSpaceAmplification(1.0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxSpaceAmplification must be in (1.0, 100.0], was 1.0");
        assertThatThrownBy(() -> builder.maxSpaceAmplification(0.5))
                .hasMessageContaining("maxSpaceAmplification");
        assertThatThrownBy(() -> builder.maxSpaceAmplification(Double.NaN))
                .hasMessageContaining("was NaN");
    }

    @Test
    void shouldRejectMaxSpaceAmplificationAboveOneHundred() {
        assertThatThrownBy(() -> builder.maxSpaceAmplification(100.5))
                .hasMessage("maxSpaceAmplification must be in (1.0, 100.0], was 100.5");
        assertThat(builder.maxSpaceAmplification(100.0).build().maxSpaceAmplification())
                .isEqualTo(100.0);
    }

    @Test
    void shouldRejectANonPositiveWriteBuffer() {
        assertThatThrownBy(() -> builder.writeBufferBytes(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("writeBufferBytes must be in [1, 1099511627776]")
                .hasMessageEndingWith("was 0");
        assertThatThrownBy(() -> builder.writeBufferBytes(-1)).hasMessageEndingWith("was -1");
    }

    @Test
    void shouldRejectSizesOutOfRange() {
        assertThatThrownBy(() -> builder.segmentRollBytes(100))
                .hasMessage("segmentRollBytes must be in [4096, 1099511627775], was 100");
        assertThatThrownBy(() -> builder.ioBufferBytes(16))
                .hasMessage("ioBufferBytes must be in [512, 67108864], was 16");
        assertThatThrownBy(() -> builder.jitterSpread(0.95)).hasMessageContaining("jitterSpread");
    }

    @Test
    void shouldRejectNulls() {
        assertThatThrownBy(() -> RmwStoreOptions.builder(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("directory");
        assertThatThrownBy(() -> builder.fileIo(null)).hasMessageContaining("fileIo");
    }
}
