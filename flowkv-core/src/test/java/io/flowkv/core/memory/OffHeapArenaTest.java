package io.flowkv.core.memory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OffHeapArenaTest {

    @Test
    void shouldKeepRecordsAtTheirPositionsAcrossChunks() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (OffHeapArena arena = new OffHeapArena(budget, 256)) {
            long[] positions = new long[100];
            for (int i = 0; i < positions.length; i++) {
                positions[i] = arena.tryAllocate(24);
                arena.putLong(positions[i], 0, i);
                arena.putInt(positions[i], 8, -i);
                arena.putBytes(positions[i], 12, new byte[] {(byte) i, 1, 2, 3}, 0, 4);
            }
            for (int i = 0; i < positions.length; i++) {
                assertThat(arena.getLong(positions[i], 0)).isEqualTo(i);
                assertThat(arena.getInt(positions[i], 8)).isEqualTo(-i);
                assertThat(
                                arena.equalsBytes(
                                        positions[i], 12, new byte[] {(byte) i, 1, 2, 3}, 0, 4))
                        .isTrue();
            }
            assertThat(arena.usedBytes()).isEqualTo(2400);
            assertThat(budget.used()).isEqualTo(arena.reservedBytes());
        }
        assertThat(budget.used()).isZero();
    }

    /** The first chunk may take the budget's headroom: a write buffer needs one to work at all. */
    @Test
    void shouldLeaveTheHeadroomToOthersPastTheFirstChunk() {
        MemoryBudget budget = new MemoryBudget(1024);
        try (OffHeapArena arena = new OffHeapArena(budget, 1000)) {
            assertThat(arena.tryAllocate(1000)).isEqualTo(OffHeapArena.pack(0, 0));
        }
        MemoryBudget shared = new MemoryBudget(1400);
        try (OffHeapArena arena = new OffHeapArena(shared, 500)) {
            assertThat(arena.tryAllocate(500)).isNotEqualTo(OffHeapArena.NO_SPACE);
            assertThat(arena.tryAllocate(500)).isNotEqualTo(OffHeapArena.NO_SPACE);
            assertThat(arena.tryAllocate(500)).isEqualTo(OffHeapArena.NO_SPACE);
            assertThat(shared.available())
                    .isGreaterThanOrEqualTo(1400 / MemoryBudget.CACHE_HEADROOM_DIVISOR);
        }
    }

    @Test
    void shouldRefuseWhenTheBudgetIsExhaustedAndRecoverAfterReset() {
        // Two chunks fit below the budget's headroom (1200 / 16 = 75 bytes), a third does not.
        MemoryBudget budget = new MemoryBudget(1200);
        try (OffHeapArena arena = new OffHeapArena(budget, 512)) {
            assertThat(arena.tryAllocate(400)).isNotEqualTo(OffHeapArena.NO_SPACE);
            assertThat(arena.tryAllocate(400)).isNotEqualTo(OffHeapArena.NO_SPACE);
            assertThat(arena.tryAllocate(400)).isEqualTo(OffHeapArena.NO_SPACE);
            assertThat(budget.used()).isEqualTo(1024);

            arena.reset();
            assertThat(budget.used()).isEqualTo(512);
            assertThat(arena.tryAllocate(400)).isEqualTo(OffHeapArena.pack(0, 0));
        }
        assertThat(budget.used()).isZero();
    }

    /**
     * A recycled arena keeps its chunks and fills them again in order without asking the budget;
     * releasing the spares gives back the chunks the new records have not taken.
     */
    @Test
    void shouldRefillRecycledChunksAndReleaseOnlyTheSpareOnes() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (OffHeapArena arena = new OffHeapArena(budget, 256)) {
            for (int i = 0; i < 4; i++) {
                arena.tryAllocate(200); // one chunk each
            }
            OffHeapBuffer second = arena.chunk(OffHeapArena.pack(1, 0));
            assertThat(budget.used()).isEqualTo(1024);

            arena.recycle();
            assertThat(arena.usedBytes()).isZero();
            assertThat(budget.used()).as("chunks kept").isEqualTo(1024);
            long first = arena.tryAllocate(200);
            long next = arena.tryAllocate(200);
            assertThat(first).isEqualTo(OffHeapArena.pack(0, 0));
            assertThat(next).isEqualTo(OffHeapArena.pack(1, 0));
            assertThat(arena.chunk(next)).as("the kept chunk, not a new one").isSameAs(second);
            arena.putLong(next, 0, 99);
            assertThat(budget.used()).isEqualTo(1024);

            arena.releaseSpares();
            assertThat(budget.used()).as("the two chunks in use").isEqualTo(512);
            assertThat(arena.getLong(next, 0)).isEqualTo(99);
            assertThat(arena.tryAllocate(200)).isEqualTo(OffHeapArena.pack(2, 0));
            assertThat(budget.used()).isEqualTo(768);

            arena.recycle();
            arena.releaseSpares();
            assertThat(budget.used()).as("an idle arena keeps its first chunk").isEqualTo(256);
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldGiveOversizedRecordsAChunkOfTheirOwn() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        try (OffHeapArena arena = new OffHeapArena(budget, 128)) {
            long small = arena.tryAllocate(8);
            long big = arena.tryAllocate(1000);
            arena.putLong(small, 0, 42);
            arena.putLong(big, 992, 7);
            assertThat(arena.chunk(big).capacity()).isEqualTo(1000);
            assertThat(arena.getLong(small, 0)).isEqualTo(42);
            assertThat(arena.getLong(big, 992)).isEqualTo(7);
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldCheckBoundsWithIndexLengthAndCapacity() {
        MemoryBudget budget = new MemoryBudget(1024);
        try (OffHeapBuffer buffer = OffHeapBuffer.allocate(budget, 64, "test")) {
            assertThatThrownBy(() -> buffer.putLong(60, 1))
                    .isInstanceOf(IndexOutOfBoundsException.class)
                    .hasMessage("index=60 length=8 capacity=64");
        }
    }

    @Test
    void shouldRejectAllocationsBeyondTheBudgetNamingThePurpose() {
        MemoryBudget budget = new MemoryBudget(100);
        assertThatThrownBy(() -> OffHeapBuffer.allocate(budget, 200, "write buffer"))
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("write buffer")
                .hasMessageContaining("requested=200");
        assertThat(budget.used()).isZero();
        assertThatThrownBy(() -> new MemoryBudget(0))
                .hasMessageContaining("memory budget (bytes) must be > 0")
                .hasMessageContaining("was 0");
    }

    @Test
    void shouldMoveBytesThroughAnIoBuffer() {
        MemoryBudget budget = new MemoryBudget(1 << 16);
        try (OffHeapBuffer a = OffHeapBuffer.allocate(budget, 100, "a");
                OffHeapBuffer b = OffHeapBuffer.allocate(budget, 100, "b");
                IoBuffer io = IoBuffer.allocate(budget, 128, "io")) {
            byte[] data = new byte[100];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 7);
            }
            a.putBytes(0, data, 0, 100);
            a.copyTo(10, io, 50);
            io.buffer().flip();
            b.copyFrom(io, 0, 50);
            byte[] out = new byte[50];
            b.getBytes(0, out, 0, 50);
            assertThat(out).containsExactly(java.util.Arrays.copyOfRange(data, 10, 60));
        }
        assertThat(budget.used()).isZero();
    }

    @Test
    void shouldKeepAnIoBufferInChargedNativeMemoryThatChannelsUseDirectly(@TempDir Path dir)
            throws IOException {
        MemoryBudget budget = new MemoryBudget(1 << 16);
        Path file = dir.resolve("staged");
        try (IoBuffer io = IoBuffer.allocate(budget, 4096, "io");
                FileChannel channel =
                        FileChannel.open(
                                file,
                                StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.READ,
                                StandardOpenOption.WRITE)) {
            assertThat(budget.used()).isEqualTo(4096);
            ByteBuffer view = io.buffer();
            assertThat(view.isDirect()).isTrue();
            assertThat(view.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
            assertThat(view.position()).isZero();
            assertThat(view.limit()).isEqualTo(4096);
            view.order(ByteOrder.LITTLE_ENDIAN).putLong(0x0102030405060708L).putInt(42).flip();
            assertThat(channel.write(view, 0)).isEqualTo(12);
            view.clear();
            assertThat(channel.read(view, 0)).isEqualTo(12);
            assertThat(view.getLong(0)).isEqualTo(0x0102030405060708L);
            assertThat(view.getInt(8)).isEqualTo(42);
        }
        assertThat(budget.used()).isZero();
        assertThat(Files.readAllBytes(file)).containsExactly(8, 7, 6, 5, 4, 3, 2, 1, 42, 0, 0, 0);
    }

    @Test
    void shouldChargeNothingWhenAnIoBufferDoesNotFit() {
        MemoryBudget budget = new MemoryBudget(1000);
        assertThatThrownBy(() -> IoBuffer.allocate(budget, 4096, "spill staging"))
                .isInstanceOf(MemoryBudgetExceededException.class)
                .hasMessageContaining("spill staging");
        assertThat(budget.used()).isZero();
    }
}
