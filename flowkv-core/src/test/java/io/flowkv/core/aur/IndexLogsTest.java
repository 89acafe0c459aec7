package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class IndexLogsTest {
    @TempDir Path dir;

    private MemoryBudget budget;
    private WindowStatTable table;
    private IndexLogs logs;
    private final List<LogSegment> opened = new ArrayList<>();

    @BeforeEach
    void open() throws Exception {
        budget = new MemoryBudget(16L << 20);
        table =
                new WindowStatTable(
                        budget,
                        FileIo.DEFAULT,
                        Files.createDirectories(dir.resolve("t")),
                        1L << 20,
                        null);
        logs = new IndexLogs(FileIo.DEFAULT);
    }

    @AfterEach
    void close() throws Exception {
        for (LogSegment log : opened) {
            log.close();
        }
        table.release();
        assertThat(budget.used()).as("budget after release").isZero();
    }

    /**
     * Writes an index log of one frame per element of {@code frames}, each of the given entries.
     */
    private LogSegment indexLog(int id, long[][]... frames) throws Exception {
        Path path = dir.resolve(AurStore.fileName(AurStore.INDEX_PREFIX, id));
        try (IoBuffer staging = IoBuffer.allocate(budget, 4096, "staging");
                LogWriter out =
                        LogWriter.create(
                                FileIo.DEFAULT, path, FileType.AUR_INDEX_LOG, id, staging)) {
            for (long[][] frame : frames) {
                out.beginFrame();
                for (long[] e : frame) {
                    // {key number, window start, seq, frame length}
                    byte[] key = bytes("k" + e[0]);
                    byte[] window = timeWindow(e[1], e[1] + 10);
                    IndexEntryDescriptor.write(
                            out,
                            e[2],
                            Positions.pack(1, 64 + e[2] * 100),
                            (int) e[3],
                            1,
                            e[1] + 9,
                            key,
                            0,
                            key.length,
                            window,
                            0,
                            window.length);
                }
                out.endFrame();
            }
            out.flush();
            LogSegment log = new LogSegment(id, path, FileType.AUR_INDEX_LOG, out.size());
            opened.add(log);
            return log;
        }
    }

    @Test
    void scanVisitsEveryEntryInWriteOrderAndCountsItsBytes() throws Exception {
        logs.add(
                indexLog(
                        1,
                        new long[][] {{1, 0, 1, 50}, {2, 0, 2, 60}},
                        new long[][] {{1, 0, 3, 70}}));
        logs.add(indexLog(2, new long[][] {{3, 10, 4, 80}}));

        IndexEntryDescriptor e = new IndexEntryDescriptor();
        List<String> seen = new ArrayList<>();
        long scanned =
                logs.scan(
                        e,
                        (log, frameOffset) -> seen.add(log.id + ":" + e.seq + ":" + e.frameLength));

        assertThat(seen).containsExactly("1:1:50", "1:2:60", "1:3:70", "2:4:80");
        int k1 = bytes("k1").length;
        int w = timeWindow(0, 10).length;
        assertThat(scanned).isEqualTo(4L * IndexEntryDescriptor.length(k1, w));
        assertThat(logs.size()).isEqualTo(2);
    }

    @Test
    void scanLiveSkipsUnknownWindowsAndEntriesOlderThanTheirWindow() throws Exception {
        logs.add(
                indexLog(
                        1,
                        new long[][] {{1, 0, 1, 50}, {2, 0, 2, 60}, {1, 0, 3, 70}, {3, 0, 4, 80}}));
        int first = table.insert(bytes("k1"), timeWindow(0, 10), 3); // seq 1 is from before
        int second = table.insert(bytes("k2"), timeWindow(0, 10), 1);
        // k3's window is not in the table: removed.

        IndexEntryDescriptor e = new IndexEntryDescriptor();
        List<String> live = new ArrayList<>();
        logs.scanLive(e, table, id -> live.add(id + ":" + e.seq));

        assertThat(live).containsExactly(second + ":2", first + ":3");
    }

    @Test
    void replaceAllSwapsTheLogsScanned() throws Exception {
        logs.add(indexLog(1, new long[][] {{1, 0, 1, 50}}));
        LogSegment compacted = indexLog(7, new long[][] {{1, 0, 9, 50}});
        logs.replaceAll(List.of(compacted));

        IndexEntryDescriptor e = new IndexEntryDescriptor();
        List<Long> seqs = new ArrayList<>();
        logs.scan(e, (log, frameOffset) -> seqs.add(e.seq));

        assertThat(seqs).containsExactly(9L);
        assertThat(logs.asList()).containsExactly(compacted);
    }

    @Test
    void aDamagedFrameFailsTheScanNamingTheLog() throws Exception {
        LogSegment log = indexLog(1, new long[][] {{1, 0, 1, 50}, {2, 0, 2, 60}});
        logs.add(log);
        try (RandomAccessFile file = new RandomAccessFile(log.path.toFile(), "rw")) {
            long at = file.length() - 3;
            file.seek(at);
            int b = file.read();
            file.seek(at);
            file.write(b ^ 0xFF);
        }

        IndexEntryDescriptor e = new IndexEntryDescriptor();
        assertThatThrownBy(() -> logs.scan(e, (l, frameOffset) -> {}))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(log.path.getFileName().toString());
    }
}
