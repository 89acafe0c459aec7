package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.MemoryBudget;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static io.flowkv.core.aur.WindowStatTable.EXPLICIT_ETT;
import static io.flowkv.core.aur.WindowStatTable.NO_ID;
import static io.flowkv.core.aur.WindowStatTable.SERVED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class AurManifestTest {
    @TempDir Path dir;

    private MemoryBudget budget;
    private WindowStatTable source;
    private WindowStatTable restored;
    private Path manifest;
    private Path restoreDir;

    @BeforeEach
    void openTables() throws Exception {
        budget = new MemoryBudget(16L << 20);
        source = new WindowStatTable(budget, FileIo.DEFAULT, mkdir("source"), 1L << 20, null);
        restored = new WindowStatTable(budget, FileIo.DEFAULT, mkdir("restored"), 1L << 20, null);
        manifest = dir.resolve(AurStore.fileName(AurStore.MANIFEST_PREFIX, 11));
        restoreDir = dir.resolve("store");
    }

    @AfterEach
    void releaseTables() {
        source.release();
        restored.release();
        assertThat(budget.used()).as("budget after release").isZero();
    }

    private Path mkdir(String name) throws Exception {
        return Files.createDirectories(dir.resolve(name));
    }

    private LogSegment data(int id, long size) {
        return new LogSegment(
                id,
                dir.resolve(AurStore.fileName(AurStore.DATA_PREFIX, id)),
                FileType.AUR_DATA_LOG,
                size);
    }

    private LogSegment index(int id, long size) {
        return new LogSegment(
                id,
                dir.resolve(AurStore.fileName(AurStore.INDEX_PREFIX, id)),
                FileType.AUR_INDEX_LOG,
                size);
    }

    private static List<Integer> ids(List<LogSegment> segments) {
        List<Integer> out = new ArrayList<>();
        for (LogSegment s : segments) {
            out.add(s.id);
        }
        return out;
    }

    private static List<Long> sizes(List<LogSegment> segments) {
        List<Long> out = new ArrayList<>();
        for (LogSegment s : segments) {
            out.add(s.size);
        }
        return out;
    }

    @Test
    void shouldRoundTripCountersLogsAndEveryWindowsFields() throws Exception {
        byte[] keyA = bytes("alpha");
        byte[] winA = timeWindow(0, 100);
        byte[] keyB = bytes("b".repeat(60)); // too long to keep inline: a slab block
        byte[] winB = timeWindow(100, 200);
        byte[] keyGone = bytes("gone");
        byte[] keyC = bytes("gamma");
        byte[] winC = new byte[0];

        int a = source.insert(keyA, winA, 3);
        source.setEtt(a, 100);
        source.setMaxTimestamp(a, 99);
        source.setDiskBytes(a, 1200);
        source.setFlags(a, EXPLICIT_ETT | SERVED);
        int b = source.insert(keyB, winB, 7);
        source.setMaxTimestamp(b, 150);
        source.setDiskBytes(b, 0);
        source.setFlags(b, SERVED);
        int gone = source.insert(keyGone, winA, 8);
        source.setDiskBytes(gone, 5000);
        int c = source.insert(keyC, winC, 0);
        source.setEtt(c, -5);
        source.setMaxTimestamp(c, -10);
        source.setDiskBytes(c, 48);
        source.setFlags(c, EXPLICIT_ETT);
        source.remove(gone, keyGone, winA); // leaves a free record between live ones

        DataLogs dataLogs = new DataLogs(dir);
        // Log 9 holds compacted frames older than log 5's: log order is not id order.
        dataLogs.replaceAll(
                List.of(
                        data(9, LogFileHeader.LENGTH + 500L),
                        data(5, LogFileHeader.LENGTH + 1000L),
                        data(7, LogFileHeader.LENGTH)));
        List<LogSegment> indexLogs =
                List.of(index(4, LogFileHeader.LENGTH + 64L), index(8, 3L << 32));

        byte[] payload =
                AurManifest.encode(42L, 10, 1_234_567_890_123L, dataLogs, indexLogs, source);
        AurManifest m = AurManifest.decode(manifest, payload, restoreDir, restored);

        assertThat(m.flushSeq).isEqualTo(42L);
        assertThat(m.nextFileId).isEqualTo(10);
        assertThat(m.readClock).isEqualTo(1_234_567_890_123L);

        assertThat(ids(m.dataLogs)).containsExactly(9, 5, 7);
        assertThat(sizes(m.dataLogs))
                .containsExactly(
                        LogFileHeader.LENGTH + 500L,
                        LogFileHeader.LENGTH + 1000L,
                        (long) LogFileHeader.LENGTH);
        for (LogSegment s : m.dataLogs) {
            assertThat(s.path)
                    .isEqualTo(restoreDir.resolve(AurStore.fileName(AurStore.DATA_PREFIX, s.id)));
            assertThat(s.type).isEqualTo(FileType.AUR_DATA_LOG);
        }
        assertThat(ids(m.indexLogs)).containsExactly(4, 8);
        assertThat(sizes(m.indexLogs)).containsExactly(LogFileHeader.LENGTH + 64L, 3L << 32);
        for (LogSegment s : m.indexLogs) {
            assertThat(s.path)
                    .isEqualTo(restoreDir.resolve(AurStore.fileName(AurStore.INDEX_PREFIX, s.id)));
            assertThat(s.type).isEqualTo(FileType.AUR_INDEX_LOG);
        }

        assertThat(restored.size()).isEqualTo(3);
        assertThat(restored.find(keyGone, winA)).as("removed window").isEqualTo(NO_ID);
        assertThat(m.liveBytes).isEqualTo(1200 + 0 + 48);
        assertThat(restored.knownTriggerTimes()).isEqualTo(2);

        int ra = restored.find(keyA, winA);
        assertThat(ra).isNotEqualTo(NO_ID);
        assertThat(restored.ett(ra)).isEqualTo(100);
        assertThat(restored.maxTimestamp(ra)).isEqualTo(99);
        assertThat(restored.firstSeq(ra)).isEqualTo(3);
        assertThat(restored.diskBytes(ra)).isEqualTo(1200);
        assertThat(restored.flags(ra)).as("served flag dropped").isEqualTo(EXPLICIT_ETT);

        int rb = restored.find(keyB, winB);
        assertThat(rb).isNotEqualTo(NO_ID);
        assertThat(restored.key(rb)).isEqualTo(keyB);
        assertThat(restored.window(rb)).isEqualTo(winB);
        assertThat(restored.ett(rb)).isEqualTo(TriggerTimePredictor.UNKNOWN);
        assertThat(restored.maxTimestamp(rb)).isEqualTo(150);
        assertThat(restored.firstSeq(rb)).isEqualTo(7);
        assertThat(restored.diskBytes(rb)).isZero();
        assertThat(restored.flags(rb)).isZero();

        int rc = restored.find(keyC, winC);
        assertThat(rc).isNotEqualTo(NO_ID);
        assertThat(restored.window(rc)).isEmpty();
        assertThat(restored.ett(rc)).isEqualTo(-5);
        assertThat(restored.maxTimestamp(rc)).isEqualTo(-10);
        assertThat(restored.firstSeq(rc)).isZero();
        assertThat(restored.diskBytes(rc)).isEqualTo(48);
        assertThat(restored.flags(rc)).isEqualTo(EXPLICIT_ETT);
    }

    @Test
    void shouldRoundTripAStoreWithoutLogsOrWindows() throws Exception {
        byte[] payload =
                AurManifest.encode(1L, 1, 0L, new DataLogs(dir), List.<LogSegment>of(), source);
        AurManifest m = AurManifest.decode(manifest, payload, restoreDir, restored);

        assertThat(m.flushSeq).isEqualTo(1L);
        assertThat(m.nextFileId).isEqualTo(1);
        assertThat(m.readClock).isZero();
        assertThat(m.dataLogs).isEmpty();
        assertThat(m.indexLogs).isEmpty();
        assertThat(m.liveBytes).isZero();
        assertThat(restored.size()).isZero();
    }

    /** A payload's header fields before the data-log count. */
    private static ManifestCodec.Writer header(int version) {
        ManifestCodec.Writer out = new ManifestCodec.Writer();
        out.putInt(version);
        out.putLong(5L);
        out.putInt(3);
        out.putLong(0L);
        return out;
    }

    private static void putWindow(ManifestCodec.Writer out, long diskBytes) {
        out.putLong(100L); // ett
        out.putLong(90L); // max timestamp
        out.putLong(1L); // first sequence
        out.putLong(diskBytes);
        out.putInt(EXPLICIT_ETT);
        out.putBytes(bytes("key"));
        out.putBytes(timeWindow(0, 100));
    }

    private CorruptLogException decodeFailure(byte[] payload) {
        CorruptLogException e =
                catchThrowableOfType(
                        CorruptLogException.class,
                        () -> AurManifest.decode(manifest, payload, restoreDir, restored));
        assertThat(e).as("decode must fail with CorruptLogException").isNotNull();
        assertThat(e.file()).isEqualTo(manifest);
        return e;
    }

    @Test
    void shouldRejectAnotherPayloadVersion() {
        ManifestCodec.Writer out = header(AurManifest.VERSION + 1);
        out.putInt(0);
        out.putInt(0);
        out.putInt(0);

        CorruptLogException e = decodeFailure(out.toByteArray());

        assertThat(e)
                .hasMessageContaining(
                        "unsupported AUR manifest payload version "
                                + (AurManifest.VERSION + 1)
                                + " (this build reads "
                                + AurManifest.VERSION
                                + ")");
        assertThat(e.offset()).isZero();
    }

    @Test
    void shouldRejectAWindowListedTwice() {
        ManifestCodec.Writer out = header(AurManifest.VERSION);
        out.putInt(0);
        out.putInt(0);
        out.putInt(2);
        putWindow(out, 10);
        putWindow(out, 10);

        assertThat(decodeFailure(out.toByteArray()))
                .hasMessageContaining("duplicate or invalid window entry 1 in manifest");
    }

    @Test
    void shouldRejectANegativeDataByteCount() {
        ManifestCodec.Writer out = header(AurManifest.VERSION);
        out.putInt(0);
        out.putInt(0);
        out.putInt(1);
        putWindow(out, -1);

        assertThat(decodeFailure(out.toByteArray()))
                .hasMessageContaining("duplicate or invalid window entry 0 in manifest");
        assertThat(restored.size()).as("nothing inserted").isZero();
    }

    @Test
    void shouldRejectBadSegmentIds() {
        ManifestCodec.Writer zeroData = header(AurManifest.VERSION);
        zeroData.putInt(1);
        zeroData.putInt(0);
        zeroData.putLong(100L);
        zeroData.putInt(0);
        zeroData.putInt(0);
        assertThat(decodeFailure(zeroData.toByteArray()))
                .hasMessageContaining("bad segment id 0 or length 100");

        ManifestCodec.Writer zeroIndex = header(AurManifest.VERSION);
        zeroIndex.putInt(0);
        zeroIndex.putInt(1);
        zeroIndex.putInt(0);
        zeroIndex.putLong(100L);
        zeroIndex.putInt(0);
        assertThat(decodeFailure(zeroIndex.toByteArray()))
                .hasMessageContaining("bad segment id 0 or length 100");

        int tooLarge = Positions.MAX_SEGMENT + 1;
        ManifestCodec.Writer past = header(AurManifest.VERSION);
        past.putInt(1);
        past.putInt(tooLarge);
        past.putLong(100L);
        past.putInt(0);
        past.putInt(0);
        assertThat(decodeFailure(past.toByteArray()))
                .hasMessageContaining("bad segment id " + tooLarge + " or length 100");
    }

    @Test
    void shouldRejectALogListedTwice() {
        ManifestCodec.Writer data = header(AurManifest.VERSION);
        data.putInt(2);
        data.putInt(4);
        data.putLong(100L);
        data.putInt(4);
        data.putLong(200L);
        data.putInt(0);
        data.putInt(0);
        assertThat(decodeFailure(data.toByteArray()))
                .hasMessageContaining("data segment id 4 listed twice");

        ManifestCodec.Writer index = header(AurManifest.VERSION);
        index.putInt(0);
        index.putInt(2);
        index.putInt(6);
        index.putLong(100L);
        index.putInt(6);
        index.putLong(100L);
        index.putInt(0);
        assertThat(decodeFailure(index.toByteArray()))
                .hasMessageContaining("index segment id 6 listed twice");
    }

    @Test
    void shouldRejectASegmentShorterThanTheLogFileHeader() {
        long shortLength = LogFileHeader.LENGTH - 1;
        ManifestCodec.Writer out = header(AurManifest.VERSION);
        out.putInt(1);
        out.putInt(3);
        out.putLong(shortLength);
        out.putInt(0);
        out.putInt(0);

        assertThat(decodeFailure(out.toByteArray()))
                .hasMessageContaining("bad segment id 3 or length " + shortLength);
    }

    @Test
    void shouldRejectEveryTruncationOfAPayload() throws Exception {
        int w = source.insert(bytes("key"), timeWindow(0, 100), 1);
        source.setDiskBytes(w, 64);
        DataLogs dataLogs = new DataLogs(dir);
        dataLogs.add(data(2, LogFileHeader.LENGTH + 64L));
        byte[] payload =
                AurManifest.encode(
                        4L, 5, 6L, dataLogs, List.of(index(3, LogFileHeader.LENGTH)), source);

        assertThat(decodeFailure(Arrays.copyOf(payload, 2)))
                .hasMessageContaining("manifest payload ends inside field 'payload version'");
        restored.release();
        restored =
                new WindowStatTable(
                        budget, FileIo.DEFAULT, dir.resolve("restored"), 1L << 20, null);
        assertThat(decodeFailure(Arrays.copyOf(payload, payload.length - 1)))
                .hasMessageContaining("bad window length 16");

        for (int cut = 0; cut < payload.length; cut++) {
            restored.release();
            restored =
                    new WindowStatTable(
                            budget, FileIo.DEFAULT, dir.resolve("restored"), 1L << 20, null);
            int length = cut;
            assertThatThrownBy(
                            () ->
                                    AurManifest.decode(
                                            manifest,
                                            Arrays.copyOf(payload, length),
                                            restoreDir,
                                            restored))
                    .as("payload cut to %d of %d bytes", cut, payload.length)
                    .isInstanceOf(CorruptLogException.class);
        }

        restored.release();
        restored =
                new WindowStatTable(
                        budget, FileIo.DEFAULT, dir.resolve("restored"), 1L << 20, null);
        assertThat(AurManifest.decode(manifest, payload, restoreDir, restored).liveBytes)
                .as("the whole payload decodes")
                .isEqualTo(64);
    }
}
