package io.flowkv.core.aur;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogReader;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.log.Positions;
import io.flowkv.core.memory.IoBuffer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.memory.MemoryBudgetExceededException;
import io.flowkv.core.memory.OffHeapBuffer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.flowkv.core.aur.AurTestSupport.bytes;
import static io.flowkv.core.aur.AurTestSupport.timeWindow;
import static io.flowkv.core.aur.WindowStatTable.NONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WriteBufferTest {
    @TempDir Path dir;

    private MemoryBudget budget;
    private WindowStatTable table;

    @BeforeEach
    void openTable() {
        budget = new MemoryBudget(8L << 20);
        table = new WindowStatTable(budget, FileIo.DEFAULT, dir, 1L << 20, null);
    }

    @AfterEach
    void releaseTable() {
        table.release();
        assertThat(budget.used()).as("budget after the table's release").isZero();
    }

    /** Inserts {@code n} windows into the table; returns their ids. */
    private int[] windows(int n) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = table.insert(bytes("key-" + i), timeWindow(i * 10L, i * 10L + 10), i);
        }
        return ids;
    }

    /** Lists the window if it is new (as the store does), then appends. */
    private static void add(WriteBuffer buffer, int id, String value) {
        buffer.reserveWindow();
        buffer.append(id, bytes(value));
    }

    private static List<String> values(WriteBuffer buffer, int id) {
        List<String> out = new ArrayList<>();
        buffer.forEachValue(
                id, (buf, off, len) -> out.add(new String(buf, off, len, StandardCharsets.UTF_8)));
        return out;
    }

    private static List<Integer> listed(WriteBuffer buffer) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < buffer.windows(); i++) {
            out.add(buffer.window(i));
        }
        return out;
    }

    private static byte[] filled(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed + 31 * i);
        }
        return b;
    }

    /** The frame payload of {@code values}: [length: int LE][bytes] each. */
    private static byte[] payload(byte[]... values) {
        int size = 0;
        for (byte[] v : values) {
            size += 4 + v.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        for (byte[] v : values) {
            out.putInt(v.length).put(v);
        }
        return out.array();
    }

    @Test
    void shouldServeValuesPerWindowInAppendOrderAndListWindowsInFirstAppendOrder() {
        int[] w = windows(4);
        String big = "v".repeat(200); // longer than the initial scratch array
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20)) {
            add(buffer, w[1], "b1");
            add(buffer, w[0], "a1");
            add(buffer, w[1], "b2");
            add(buffer, w[2], "");
            add(buffer, w[0], big);
            add(buffer, w[1], "b3");

            assertThat(buffer.windows()).isEqualTo(3);
            assertThat(listed(buffer)).containsExactly(w[1], w[0], w[2]);
            assertThat(values(buffer, w[1])).containsExactly("b1", "b2", "b3");
            assertThat(values(buffer, w[0])).containsExactly("a1", big);
            assertThat(values(buffer, w[2])).as("an empty value is a value").containsExactly("");
            assertThat(buffer.forEachValue(w[2], (b, o, l) -> {})).isTrue();

            assertThat(table.valueCount(w[1])).isEqualTo(3);
            assertThat(table.valueCount(w[0])).isEqualTo(2);
            assertThat(table.valueCount(w[2])).isEqualTo(1);
            assertThat(new int[] {table.dirtySlot(w[1]), table.dirtySlot(w[0])})
                    .containsExactly(0, 1);
            assertThat(table.dirtySlot(w[2])).isEqualTo(2);

            List<String> none = new ArrayList<>();
            assertThat(buffer.forEachValue(w[3], (b, o, l) -> none.add("called"))).isFalse();
            assertThat(none).isEmpty();
            assertThat(table.writeHead(w[3])).isEqualTo(NONE);
            assertThat(table.dirtySlot(w[3])).isEqualTo(-1);
        }
    }

    @Test
    void shouldKeepTheOtherWindowsListedAndServedAfterDroppingAMiddleOne() {
        int[] w = windows(4);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20)) {
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 4; i++) {
                    add(buffer, w[i], "w" + i + "-" + round);
                }
            }

            buffer.drop(w[1]);

            assertThat(buffer.windows()).isEqualTo(3);
            assertThat(listed(buffer)).containsExactlyInAnyOrder(w[0], w[2], w[3]);
            for (int i = 0; i < buffer.windows(); i++) {
                assertThat(table.dirtySlot(buffer.window(i)))
                        .as("dirty slot of listed window %d", buffer.window(i))
                        .isEqualTo(i);
            }
            assertThat(values(buffer, w[0])).containsExactly("w0-0", "w0-1");
            assertThat(values(buffer, w[2])).containsExactly("w2-0", "w2-1");
            assertThat(values(buffer, w[3])).containsExactly("w3-0", "w3-1");
            assertThat(values(buffer, w[1])).isEmpty();
            assertThat(table.writeHead(w[1])).isEqualTo(NONE);
            assertThat(table.writeTail(w[1])).isEqualTo(NONE);
            assertThat(table.valueCount(w[1])).isZero();
            assertThat(table.dirtySlot(w[1])).isEqualTo(-1);
            assertThat(buffer.payloadBytes(w[1])).isZero();

            // The moved window still appends to its own chain; the dropped one starts afresh.
            add(buffer, w[3], "w3-2");
            add(buffer, w[1], "w1-again");
            assertThat(values(buffer, w[3])).containsExactly("w3-0", "w3-1", "w3-2");
            assertThat(values(buffer, w[1])).containsExactly("w1-again");
            assertThat(buffer.windows()).isEqualTo(4);
            assertThat(buffer.window(3)).isEqualTo(w[1]);
            assertThat(table.dirtySlot(w[1])).isEqualTo(3);

            // Dropping a window without buffered values changes nothing else.
            int[] idle = windows(5);
            buffer.drop(idle[4]);
            assertThat(buffer.windows()).isEqualTo(4);
            assertThat(listed(buffer)).containsExactlyInAnyOrder(w[0], w[1], w[2], w[3]);
        }
    }

    @Test
    void shouldKeepTheListInOrderWhileItGrows() {
        int[] w = windows(40);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20)) {
            List<Integer> expected = new ArrayList<>();
            long listBytes = 0;
            for (int i = 0; i < w.length; i++) {
                add(buffer, w[i], "v" + i);
                expected.add(w[i]);
                if (i == 0) {
                    listBytes = buffer.memoryBytes();
                }
            }
            assertThat(listed(buffer)).containsExactlyElementsOf(expected);
            assertThat(buffer.memoryBytes()).as("grown list").isGreaterThan(listBytes);
            for (int i = 0; i < w.length; i++) {
                assertThat(values(buffer, w[i])).containsExactly("v" + i);
                assertThat(table.dirtySlot(w[i])).isEqualTo(i);
            }
        }
    }

    @Test
    void shouldCopyThePayloadAsLengthPrefixedValues() {
        int[] w = windows(3);
        byte[] one = bytes("x");
        byte[] empty = new byte[0];
        byte[] large = filled(300, 7);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20)) {
            buffer.reserveWindow();
            buffer.append(w[0], one);
            buffer.reserveWindow();
            buffer.append(w[1], bytes("other window"));
            buffer.append(w[0], empty);
            buffer.append(w[0], large);

            byte[] expected = payload(one, empty, large);
            assertThat(buffer.payloadBytes(w[0])).isEqualTo(4 + 1 + 4 + 0 + 4 + 300);
            assertThat(buffer.payloadBytes(w[1])).isEqualTo(4 + "other window".length());
            assertThat(buffer.payloadBytes(w[2])).isZero();

            int at = 16;
            try (OffHeapBuffer target =
                    OffHeapBuffer.allocate(
                            budget, at + buffer.payloadBytes(w[0]) + 8, "test payload")) {
                byte[] guard = filled((int) target.capacity(), 99);
                target.putBytes(0, guard, 0, guard.length);

                buffer.copyPayload(w[0], target, at);

                byte[] copied = new byte[expected.length];
                target.getBytes(at, copied, 0, copied.length);
                assertThat(copied).isEqualTo(expected);
                byte[] before = new byte[at];
                target.getBytes(0, before, 0, at);
                assertThat(before).isEqualTo(Arrays.copyOf(guard, at));
                byte[] after = new byte[8];
                target.getBytes(at + expected.length, after, 0, 8);
                assertThat(after)
                        .isEqualTo(
                                Arrays.copyOfRange(
                                        guard, at + expected.length, at + expected.length + 8));
            }
        }
    }

    @Test
    void shouldWriteTheLaidOutFramesAfterTheTableLetTheWindowsGo() throws Exception {
        int[] w = windows(2);
        byte[] small = bytes("first");
        byte[] large = filled(1000, 3); // larger than the staging buffer
        byte[] otherValue = bytes("second window");
        Path file = dir.resolve("data.log");
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20);
                WriteBuffer next = new WriteBuffer(table, budget, 1L << 20);
                IoBuffer staging = IoBuffer.allocate(budget, 256, "test staging")) {
            buffer.reserveWindow();
            buffer.append(w[0], small);
            buffer.reserveWindow();
            buffer.append(w[1], otherValue);
            buffer.append(w[0], large);

            long first;
            long second;
            try (LogWriter out =
                    LogWriter.create(FileIo.DEFAULT, file, FileType.AUR_DATA_LOG, 1, staging)) {
                first = out.size();
                long firstLength = FrameDescriptor.HEADER_LENGTH + buffer.payloadBytes(w[0]);
                second = first + firstLength;
                buffer.setFlushed(0, Positions.pack(1, first), firstLength);
                buffer.setFlushed(
                        1,
                        Positions.pack(1, second),
                        FrameDescriptor.HEADER_LENGTH + buffer.payloadBytes(w[1]));
                buffer.detach();
                // The table has let the windows go: a new value starts a chain in another buffer.
                assertThat(table.writeHead(w[0])).isEqualTo(NONE);
                next.reserveWindow();
                next.append(w[0], bytes("after the flush"));

                buffer.writeFrames(out);
                out.flush();
                assertThat(out.size()).isEqualTo(second + buffer.flushedLength(1));
            }
            try (LogReader in = LogReader.open(FileIo.DEFAULT, file, FileType.AUR_DATA_LOG, -1)) {
                assertThat(in.readFrame(first)).isEqualTo(payload(small, large));
                assertThat(in.readFrame(second)).isEqualTo(payload(otherValue));
            }
            assertThat(values(next, w[0])).containsExactly("after the flush");
        }
    }

    @Test
    void shouldRefuseToWriteFramesWhereTheLayoutDidNotPutThem() throws Exception {
        int[] w = windows(1);
        Path file = dir.resolve("data.log");
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20);
                IoBuffer staging = IoBuffer.allocate(budget, 256, "test staging");
                LogWriter out =
                        LogWriter.create(FileIo.DEFAULT, file, FileType.AUR_DATA_LOG, 1, staging)) {
            add(buffer, w[0], "v");
            long at = out.size() + 8;
            buffer.setFlushed(0, Positions.pack(1, at), 20);
            buffer.detach();

            assertThatThrownBy(() -> buffer.writeFrames(out))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("laid out at " + at);
        }
    }

    @Test
    void shouldRememberWhereEachListedWindowWasFlushed() {
        int[] w = windows(3);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 1L << 20)) {
            for (int id : w) {
                add(buffer, id, "v");
            }
            long[] positions = {
                Positions.pack(7, 123_456),
                Positions.pack(Positions.MAX_SEGMENT, 32),
                Long.MAX_VALUE
            };
            long[] lengths = {40, 1L << 33, 8};
            for (int i = 0; i < 3; i++) {
                buffer.setFlushed(i, positions[i], lengths[i]);
            }
            for (int i = 0; i < 3; i++) {
                assertThat(buffer.flushedPosition(i)).as("position %d", i).isEqualTo(positions[i]);
                assertThat(buffer.flushedLength(i)).as("length %d", i).isEqualTo(lengths[i]);
            }
            assertThat(listed(buffer)).as("ids untouched").containsExactly(w[0], w[1], w[2]);
        }
    }

    @Test
    void shouldEmptyTheWindowsAndResetTheirTableFieldsOnDetachAndRecycle() {
        int[] w = windows(3);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 4096)) {
            for (int round = 0; round < 20; round++) {
                for (int id : w) {
                    add(buffer, id, "round " + round + " of a value long enough to fill chunks");
                }
            }
            long held = buffer.memoryBytes();

            buffer.detach();
            buffer.recycle();

            assertThat(buffer.windows()).isZero();
            for (int id : w) {
                assertThat(table.writeHead(id)).as("write head of %d", id).isEqualTo(NONE);
                assertThat(table.writeTail(id)).as("write tail of %d", id).isEqualTo(NONE);
                assertThat(table.valueCount(id)).as("value count of %d", id).isZero();
                assertThat(table.dirtySlot(id)).as("dirty slot of %d", id).isEqualTo(-1);
                assertThat(values(buffer, id)).isEmpty();
                assertThat(buffer.payloadBytes(id)).isZero();
            }
            assertThat(buffer.memoryBytes()).as("chunks kept for the next appends").isEqualTo(held);
            assertThat(buffer.full(1 << 20)).as("empty buffer is never full").isFalse();

            add(buffer, w[2], "after");
            add(buffer, w[0], "again");
            assertThat(listed(buffer)).containsExactly(w[2], w[0]);
            assertThat(values(buffer, w[2])).containsExactly("after");
            assertThat(values(buffer, w[0])).containsExactly("again");
            assertThat(table.valueCount(w[2])).isEqualTo(1);
            buffer.releaseSpares();
            assertThat(buffer.memoryBytes()).as("spare chunks returned").isLessThan(held);
            assertThat(values(buffer, w[2])).containsExactly("after");
            assertThat(values(buffer, w[0])).containsExactly("again");
        }
    }

    @Test
    void shouldAskForAFlushOnlyOnceAWindowIsListedAndTheLimitWouldPass() {
        int[] w = windows(1);
        int limit = 1024;
        int header = 12;
        try (WriteBuffer buffer = new WriteBuffer(table, budget, limit)) {
            assertThat(buffer.full(10 * limit)).as("nothing listed").isFalse();

            buffer.reserveWindow();
            buffer.append(w[0], new byte[100]);
            int used = header + 100;
            int fits = limit - used - header;
            assertThat(buffer.full(fits)).as("exactly at the limit").isFalse();
            assertThat(buffer.full(fits + 1)).as("one byte past the limit").isTrue();

            buffer.drop(w[0]);
            assertThat(buffer.full(fits + 1)).as("no window listed").isFalse();
        }
    }

    @Test
    void shouldChangeNothingWhenTheBudgetRefusesAndThrowOnTheInsistingCalls() {
        int[] w = windows(20);
        try (WriteBuffer buffer = new WriteBuffer(table, budget, 4096)) {
            long before = budget.used();
            long hog = budget.available();
            assertThat(budget.tryReserve(hog)).isTrue();

            assertThat(buffer.tryReserveWindow()).isFalse();
            assertThat(buffer.memoryBytes()).isZero();
            assertThatThrownBy(buffer::reserveWindow)
                    .isInstanceOf(MemoryBudgetExceededException.class)
                    .hasMessageContaining("AUR dirty-window list");
            assertThat(buffer.tryAppend(w[0], bytes("refused"))).isFalse();
            assertThat(table.writeHead(w[0])).isEqualTo(NONE);
            assertThat(table.valueCount(w[0])).isZero();
            assertThatThrownBy(() -> buffer.append(w[0], bytes("refused")))
                    .isInstanceOf(MemoryBudgetExceededException.class)
                    .hasMessageContaining("AUR write buffer");
            assertThat(buffer.windows()).isZero();
            assertThat(budget.used()).isEqualTo(before + hog);
            budget.release(hog);

            // List 16 windows (a full list) and nearly fill the first chunk (1 KiB for this limit).
            for (int i = 0; i < 16; i++) {
                add(buffer, w[i], "v" + i);
            }
            String filler = "f".repeat(700);
            buffer.append(w[0], bytes(filler));
            assertThat(buffer.windows()).isEqualTo(16);
            long held = buffer.memoryBytes();
            long tail = table.writeTail(w[0]);

            hog = budget.available();
            assertThat(budget.tryReserve(hog)).isTrue();

            // Another value needs a second chunk, a 17th window a larger list: both refused.
            assertThat(buffer.tryAppend(w[0], filled(200, 2))).isFalse();
            assertThat(values(buffer, w[0])).containsExactly("v0", filler);
            assertThat(table.valueCount(w[0])).isEqualTo(2);
            assertThat(table.writeTail(w[0])).isEqualTo(tail);
            assertThatThrownBy(() -> buffer.append(w[0], filled(200, 2)))
                    .isInstanceOf(MemoryBudgetExceededException.class);

            assertThat(buffer.tryReserveWindow()).isFalse();
            assertThatThrownBy(buffer::reserveWindow)
                    .isInstanceOf(MemoryBudgetExceededException.class);
            assertThat(buffer.windows()).isEqualTo(16);
            assertThat(buffer.memoryBytes()).isEqualTo(held);
            assertThat(table.dirtySlot(w[16])).isEqualTo(-1);
            budget.release(hog);

            assertThat(buffer.tryReserveWindow()).isTrue();
            assertThat(buffer.tryAppend(w[16], bytes("v16"))).isTrue();
            assertThat(buffer.tryAppend(w[0], bytes("last"))).isTrue();
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i <= 16; i++) {
                expected.add(w[i]);
            }
            assertThat(listed(buffer)).containsExactlyElementsOf(expected);
            assertThat(values(buffer, w[0])).hasSize(3).endsWith("last");
            assertThat(values(buffer, w[16])).containsExactly("v16");
        }
    }

    @Test
    void shouldReturnItsMemoryOnCloseLeavingTheTablesAlone() {
        int[] w = windows(30);
        WriteBuffer buffer = new WriteBuffer(table, budget, 4096);
        for (int round = 0; round < 10; round++) {
            for (int id : w) {
                add(buffer, id, "value " + round + " of window " + id);
            }
        }
        assertThat(buffer.memoryBytes()).isPositive();
        assertThat(budget.used()).isEqualTo(table.memoryBytes() + buffer.memoryBytes());

        buffer.close();

        assertThat(buffer.memoryBytes()).isZero();
        assertThat(buffer.windows()).isZero();
        assertThat(budget.used()).as("only the table's memory").isEqualTo(table.memoryBytes());
        buffer.close();
        assertThat(budget.used()).as("second close").isEqualTo(table.memoryBytes());
    }
}
