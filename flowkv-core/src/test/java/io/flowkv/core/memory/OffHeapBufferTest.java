package io.flowkv.core.memory;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffHeapBufferTest {

    @Test
    void shouldCopyArraysInAndOutAtAnyOffsetAndLength() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        Random random = new Random(7);
        try (OffHeapBuffer buffer = OffHeapBuffer.allocate(budget, 4096, "test")) {
            byte[] shadow = new byte[4096];
            // Lengths from 0 to 299 bytes, at any index and at odd offsets into the array.
            for (int round = 0; round < 2_000; round++) {
                int length = random.nextInt(300);
                int index = random.nextInt(4096 - length + 1);
                int offset = random.nextInt(5);
                byte[] src = new byte[offset + length];
                random.nextBytes(src);
                buffer.putBytes(index, src, offset, length);
                System.arraycopy(src, offset, shadow, index, length);
            }
            byte[] all = new byte[4096 + 3];
            buffer.getBytes(0, all, 3, 4096);
            for (int i = 0; i < 4096; i++) {
                assertThat(all[i + 3]).as("byte %d", i).isEqualTo(shadow[i]);
            }
            // The byte and long accessors see what the bulk copies wrote: little-endian.
            assertThat(buffer.getByte(4095)).isEqualTo(shadow[4095]);
            long expected = 0;
            for (int i = 7; i >= 0; i--) {
                expected = expected << 8 | (shadow[100 + i] & 0xFFL);
            }
            assertThat(buffer.getLong(100)).isEqualTo(expected);
            assertThat(buffer.equalsBytes(10, shadow, 10, 200)).isTrue();
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldHandOutZeroedMemoryEvenWhereAFreedBlockWas() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        // Freed blocks of one size come back from the allocator at once: each new block must
        // still read as zeros (stores rely on it, e.g. for empty index slots).
        for (int round = 0; round < 50; round++) {
            try (OffHeapBuffer buffer = OffHeapBuffer.allocate(budget, 4096, "test")) {
                for (long i = 0; i < 4096; i += 8) {
                    assertThat(buffer.getLong(i)).as("round %d, byte %d", round, i).isZero();
                }
                for (long i = 0; i < 4096; i += 8) {
                    buffer.putLong(i, -1L);
                }
            }
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldCopyBetweenBlocks() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (OffHeapBuffer a = OffHeapBuffer.allocate(budget, 256, "a");
                OffHeapBuffer b = OffHeapBuffer.allocate(budget, 256, "b")) {
            for (int i = 0; i < 256; i++) {
                a.putByte(i, (byte) i);
            }
            a.copyTo(16, b, 100, 64);
            for (int i = 0; i < 64; i++) {
                assertThat(b.getByte(100 + i)).isEqualTo((byte) (16 + i));
            }
            assertThat(b.getByte(99)).isZero();
            assertThat(b.getByte(164)).isZero();
            assertThatThrownBy(() -> a.copyTo(200, b, 0, 64))
                    .isInstanceOf(IndexOutOfBoundsException.class);
        }
    }

    @Test
    void shouldRefuseCopiesOutsideTheBlockOrAfterClose() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        OffHeapBuffer buffer = OffHeapBuffer.allocate(budget, 64, "test");
        byte[] bytes = new byte[16];
        assertThatThrownBy(() -> buffer.putBytes(56, bytes, 0, 16))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("index=56 length=16 capacity=64");
        assertThatThrownBy(() -> buffer.getBytes(-1, bytes, 0, 1))
                .isInstanceOf(IndexOutOfBoundsException.class);
        // Past the end of the array: refused too, whichever of the two checks sees it.
        assertThatThrownBy(() -> buffer.getBytes(0, bytes, 8, 16))
                .isInstanceOfAny(IndexOutOfBoundsException.class, IllegalArgumentException.class);
        // A range outside the array, even one the block could take, is never copied.
        assertThatThrownBy(() -> buffer.putBytes(0, bytes, -1, 4))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("offset=-1 length=4 array length=16");
        assertThatThrownBy(() -> buffer.getBytes(0, bytes, 14, 4))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("offset=14 length=4 array length=16");
        buffer.close();
        assertThatThrownBy(() -> buffer.putBytes(0, bytes, 0, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThat(budget.used()).isZero();
    }
}
