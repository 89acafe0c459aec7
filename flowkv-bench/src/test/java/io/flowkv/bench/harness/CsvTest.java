package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class CsvTest {

    @Test
    void shouldRoundTripEveryValue(@TempDir Path dir) throws Exception {
        Row ok =
                new Row()
                        .set(Column.EXPERIMENT, "throughput")
                        .set(Column.QUERY, "q7-session")
                        .set(Column.BACKEND, "flowkv")
                        .set(Column.REP, 2)
                        .set(Column.STATUS, Row.OK)
                        .set(Column.EVENTS_PER_S, 123456.5)
                        .set(Column.CHECKSUM, "00ff00ff00ff00ff");
        Row failed =
                new Row()
                        .set(Column.EXPERIMENT, "throughput")
                        .set(Column.QUERY, "q7")
                        .set(Column.BACKEND, "hashmap")
                        .set(Column.STATUS, "failed: exit 1: x, \"quoted\"\nnext line")
                        .set(Column.SETTING, "read-batch-ratio=0.1");
        Path file = dir.resolve("sub").resolve("t.csv");
        Csv.write(file, List.of(ok, failed));

        List<Row> back = Csv.read(file);

        assertThat(back).containsExactly(normalized(ok), normalized(failed));
        assertThat(back.get(0).getDouble(Column.EVENTS_PER_S)).isEqualTo(123456.5);
        assertThat(back.get(1).ok()).isFalse();
        assertThat(Csv.read(dir.resolve("missing.csv"))).isEmpty();
    }

    /** A row as read back: every column present, empty when unset. */
    private static Row normalized(Row r) {
        Row n = new Row();
        for (Column c : Column.values()) {
            n.set(c, r.get(c));
        }
        return n;
    }

    @Test
    void shouldReadColumnsInAnyOrder() {
        List<Row> rows = Csv.parse("backend,query\nrocksdb,q8\n");
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).get(Column.QUERY)).isEqualTo("q8");
        assertThat(rows.get(0).get(Column.BACKEND)).isEqualTo("rocksdb");
        assertThat(rows.get(0).get(Column.STATUS)).isEmpty();
    }

    @Test
    void shouldRejectMalformedFiles() {
        assertThatThrownBy(() -> Csv.parse("query,bogus\nq7,1\n")).hasMessageContaining("bogus");
        assertThatThrownBy(() -> Csv.parse("query,backend\nq7\n")).hasMessageContaining("1 fields");
        assertThatThrownBy(() -> Csv.parse("query\n\"q7\n")).hasMessageContaining("quoted");
    }

    @Test
    void shouldPrintPlainNumbers() {
        assertThat(new Row().set(Column.EVENTS_PER_S, 2_000_000.0).get(Column.EVENTS_PER_S))
                .isEqualTo("2000000");
        assertThat(new Row().set(Column.JFR_FLOWKV, Double.NaN).get(Column.JFR_FLOWKV)).isEmpty();
    }
}
