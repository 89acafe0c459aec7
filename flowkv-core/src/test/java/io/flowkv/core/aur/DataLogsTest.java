package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.LogFileHeader;
import io.flowkv.core.log.Positions;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DataLogsTest {
    private static final Path DIR = Path.of("/tmp/aur");

    private static LogSegment log(int id) {
        return new LogSegment(
                id,
                DIR.resolve(AurStore.fileName(AurStore.DATA_PREFIX, id)),
                FileType.AUR_DATA_LOG,
                0);
    }

    @Test
    void shouldKeepLogsInWriteOrderAndFindThemById() throws Exception {
        DataLogs logs = new DataLogs(DIR);
        logs.add(log(1));
        logs.add(log(2));
        logs.add(log(4));

        assertThat(logs.idsFollowOrder()).isTrue();
        assertThat(logs.find(4).rank).isEqualTo(2);
        assertThat(logs.find(3)).isNull();
        assertThat(logs.require(2).id).isEqualTo(2);
        assertThatThrownBy(() -> logs.require(3))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining(AurStore.fileName(AurStore.DATA_PREFIX, 3))
                .hasMessageContaining("not part of the store");
    }

    @Test
    void shouldSortPositionsInLogOrderOnceACompactedLogTakesAnEarlierPlace() throws Exception {
        DataLogs logs = new DataLogs(DIR);
        // Log 9 holds the frames compacted out of the logs before 5: it comes first.
        logs.replaceAll(List.of(log(9), log(5), log(7)));

        assertThat(logs.idsFollowOrder()).isFalse();
        List<Integer> order = new ArrayList<>();
        for (LogSegment segment : logs) {
            order.add(segment.id);
        }
        assertThat(order).containsExactly(9, 5, 7);

        long inNine = Positions.pack(9, 4000);
        long inFive = Positions.pack(5, 100);
        long inSeven = Positions.pack(7, 10);
        assertThat(logs.toRankPosition(inNine)).isLessThan(logs.toRankPosition(inFive));
        assertThat(logs.toRankPosition(inFive)).isLessThan(logs.toRankPosition(inSeven));
        for (long p : new long[] {inNine, inFive, inSeven}) {
            assertThat(logs.fromRankPosition(logs.toRankPosition(p))).isEqualTo(p);
        }
        assertThatThrownBy(() -> logs.toRankPosition(Positions.pack(6, 0)))
                .isInstanceOf(CorruptLogException.class);
    }

    private static LogSegment sized(int id, long bytes, long live) {
        LogSegment segment =
                new LogSegment(
                        id,
                        DIR.resolve(AurStore.fileName(AurStore.DATA_PREFIX, id)),
                        FileType.AUR_DATA_LOG,
                        LogFileHeader.LENGTH + bytes);
        segment.live = live;
        return segment;
    }

    private static List<Integer> victims(DataLogs logs) {
        List<Integer> out = new ArrayList<>();
        for (LogSegment segment : logs) {
            if (segment.victim) {
                out.add(segment.id);
            }
        }
        return out;
    }

    @Test
    void shouldEmptyTheRunWithTheFewestLiveBytesThatReclaimsTheExcess() {
        DataLogs logs = new DataLogs(DIR);
        LogSegment active = sized(6, 100, 100);
        logs.replaceAll(
                List.of(
                        sized(1, 100, 90),
                        sized(2, 100, 10),
                        sized(3, 100, 20),
                        sized(4, 0, 0),
                        sized(5, 100, 80),
                        active));

        // 170 dead bytes in logs 2 and 3 cost 30 live bytes; 1 + 2 would cost 100.
        logs.markVictims(false, 170, active);
        assertThat(victims(logs)).containsExactly(2, 3, 4);

        // Nothing to reclaim: only the empty log goes, never the one being written.
        logs.markVictims(false, 0, active);
        assertThat(victims(logs)).containsExactly(4);

        logs.markVictims(true, 0, active);
        assertThat(victims(logs)).containsExactly(1, 2, 3, 4, 5, 6);
    }
}
