package io.flowkv.core.index;

import io.flowkv.core.log.FaultInjectingFileIo;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PagedRecordsTest {
    private static final int RECORD = 40;

    @TempDir Path dir;

    private final FaultInjectingFileIo io = new FaultInjectingFileIo();
    private final MemoryBudget budget = new MemoryBudget(8L << 20);
    private PagedRecords records;

    @AfterEach
    void shouldLeakNothing() {
        if (records != null) {
            records.close();
        }
        assertThat(budget.used()).as("budget after close").isZero();
        assertThat(io.openChannels()).as("open channels after close").isZero();
        assertThat(dir.resolve("r.records")).as("page file after close").doesNotExist();
    }

    private PagedRecords open(long cacheBytes) {
        return new PagedRecords(
                budget, io, dir.resolve("r.records"), "test records", RECORD, cacheBytes);
    }

    private static long seed() {
        String s = System.getProperty("flowkv.seed");
        return s == null ? System.nanoTime() : Long.parseLong(s);
    }

    @Test
    void shouldMatchAnArrayModelWithATinyCache() {
        long seed = seed();
        SplittableRandom rnd = new SplittableRandom(seed);
        int n = 20_000;
        long[] a = new long[n];
        int[] b = new int[n];
        byte[][] c = new byte[n][];
        records = open(PagedRecords.MIN_CACHE_BYTES);
        int size = 0;
        for (int op = 0; op < 200_000; op++) {
            if (size < n && (size == 0 || rnd.nextInt(10) == 0)) {
                int grow = Math.min(n - size, 1 + rnd.nextInt(500));
                records.ensureCapacity(size + grow);
                size += grow;
                continue;
            }
            int r = rnd.nextInt(size);
            String at = "seed=" + seed + " op=" + op + " record=" + r;
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    a[r] = rnd.nextLong();
                    records.putLong(r, 0, a[r]);
                }
                case 1 -> {
                    b[r] = rnd.nextInt();
                    records.putInt(r, 8, b[r]);
                }
                case 2 -> {
                    c[r] = new byte[rnd.nextInt(RECORD - 12 + 1)];
                    rnd.nextBytes(c[r]);
                    records.putBytes(r, 12, c[r], 0, c[r].length);
                }
                default -> {
                    assertThat(records.getLong(r, 0)).as(at).isEqualTo(a[r]);
                    assertThat(records.getInt(r, 8)).as(at).isEqualTo(b[r]);
                    if (c[r] != null) {
                        byte[] got = new byte[c[r].length];
                        records.getBytes(r, 12, got, 0, got.length);
                        assertThat(got).as(at).isEqualTo(c[r]);
                        assertThat(records.equalsBytes(r, 12, c[r], 0, c[r].length)).isTrue();
                    }
                }
            }
        }
        for (int r = 0; r < size; r++) {
            assertThat(records.getLong(r, 0))
                    .as("seed=%d final record %d", seed, r)
                    .isEqualTo(a[r]);
            assertThat(records.getInt(r, 8)).isEqualTo(b[r]);
        }
        assertThat(records.pageWrites()).as("seed=%d pages spilled", seed).isPositive();
        assertThat(records.pageReads()).as("seed=%d pages read back", seed).isPositive();
        assertThat(records.memoryBytes())
                .as("cache plus a page table of 8 bytes per page")
                .isLessThanOrEqualTo(PagedRecords.MIN_CACHE_BYTES + 8L * 2 * (n / (4096 / RECORD)));
        assertThat(budget.used()).isEqualTo(records.memoryBytes());
    }

    @Test
    void shouldGrowPastItsOwnCacheWithASharedOneAndGiveItBackWhenClosed() {
        // Records of 40 B, 102 per page: 4 pages per chunk hold 408 records. Own cache: one
        // chunk; share: two more chunks.
        long chunk = PagedRecords.MIN_CACHE_BYTES;
        CacheShare share = new CacheShare(2 * chunk);
        records =
                new PagedRecords(
                        budget, io, dir.resolve("r.records"), "test records", RECORD, chunk, share);
        int fits = 3 * 4 * (PagedRecords.PAGE_BYTES / RECORD);
        records.ensureCapacity(fits);
        for (int r = 0; r < fits; r++) {
            records.putLong(r, 0, r);
        }
        for (int r = 0; r < fits; r++) {
            assertThat(records.getLong(r, 0)).isEqualTo(r);
        }
        assertThat(records.pageWrites()).as("page writes while the share has room").isZero();
        assertThat(share.taken()).isEqualTo(2 * chunk);
        // A second cache finds the share taken: past its own chunk it spills.
        try (PagedRecords other =
                new PagedRecords(
                        budget,
                        io,
                        dir.resolve("other.records"),
                        "other records",
                        RECORD,
                        chunk,
                        share)) {
            other.ensureCapacity(fits);
            for (int r = 0; r < fits; r++) {
                other.putLong(r, 0, r);
            }
            for (int r = 0; r < fits; r++) {
                assertThat(other.getLong(r, 0)).isEqualTo(r);
            }
            assertThat(other.pageWrites()).as("the other cache's page writes").isPositive();
        }
        records.close();
        assertThat(share.taken()).as("share after close").isZero();
    }

    @Test
    void shouldReadNeverWrittenRecordsAsZeros() {
        records = open(PagedRecords.MIN_CACHE_BYTES);
        records.ensureCapacity(1_000);
        assertThat(records.getLong(999, 0)).isZero();
        assertThat(records.getInt(0, 36)).isZero();
        assertThatThrownBy(() -> records.getLong(records.capacity(), 0))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> records.putBytes(0, 30, new byte[11], 0, 11))
                .isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessageContaining("record of 40");
    }

    @Test
    void shouldTakeNothingBeforeTheFirstRecordAndRefuseClearlyWhenTheBudgetIsFull() {
        MemoryBudget tiny = new MemoryBudget(64);
        PagedRecords r =
                new PagedRecords(
                        tiny, io, dir.resolve("t.records"), "tiny records", RECORD, 1 << 20);
        try {
            assertThat(tiny.used()).isZero();
            assertThatThrownBy(() -> r.ensureCapacity(10_000))
                    .isInstanceOf(MemoryBudgetExceededException.class)
                    .hasMessageContaining("page table of tiny records");
        } finally {
            r.close();
        }
        assertThat(tiny.used()).isZero();
    }

    @Test
    void shouldRefuseFurtherUseAfterAPageCouldNotBeWritten() {
        records = open(PagedRecords.MIN_CACHE_BYTES);
        records.ensureCapacity(5_000);
        io.failWrites();
        assertThatThrownBy(
                        () -> {
                            for (int r = 0; r < 5_000; r++) {
                                records.putLong(r, 0, r);
                            }
                        })
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("test records")
                .hasMessageContaining("r.records");
        io.heal();
        assertThat(records.failure()).contains("injected");
        assertThatThrownBy(() -> records.getLong(4_999, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("unusable");
    }

    @Test
    void shouldNameACorruptPageWhenItIsReadBack() throws IOException {
        records = open(PagedRecords.MIN_CACHE_BYTES);
        records.ensureCapacity(5_000);
        for (int r = 0; r < 5_000; r++) {
            records.putLong(r, 0, r);
        }
        Path file = dir.resolve("r.records");
        assertThat(Files.size(file)).isGreaterThan(2 * 4096);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            long at = 4096 + 100; // page 0, evicted long ago
            raf.seek(at);
            int b = raf.read();
            raf.seek(at);
            raf.write(b ^ 0x5A);
        }
        assertThatThrownBy(() -> records.getLong(0, 0))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("Corrupt page 0")
                .hasMessageContaining("checksum");
    }
}
