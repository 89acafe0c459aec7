package io.flowkv.nexmark.sql;

import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RowChecksumTest {

    private static Row row(RowKind kind, long key, String value) {
        return Row.ofKind(kind, key, value);
    }

    private static long[] totals(int upsertKey, List<Row> changelog) {
        RowChecksum.Applied applied = new RowChecksum.Applied(upsertKey);
        changelog.forEach(applied::apply);
        return new long[] {applied.records.getLocalValue(), applied.sum.getLocalValue()};
    }

    /** The sums of the final table itself: one insert per row. */
    private static long[] table(Row... rows) {
        long sum = 0;
        for (Row r : rows) {
            sum += RowChecksum.hash(r);
        }
        return new long[] {rows.length, sum};
    }

    @Test
    void shouldApplyARetractingChangelog() {
        List<Row> changelog =
                List.of(
                        row(RowKind.INSERT, 1, "a"),
                        row(RowKind.INSERT, 2, "b"),
                        row(RowKind.UPDATE_BEFORE, 1, "a"),
                        row(RowKind.UPDATE_AFTER, 1, "c"),
                        row(RowKind.DELETE, 2, "b"));
        assertThat(totals(SqlQuery.NO_UPSERT_KEY, changelog))
                .containsExactly(table(row(RowKind.INSERT, 1, "c")));
    }

    @Test
    void shouldApplyAnUpsertChangelogByKeyWhateverTheNumberOfUpdates() {
        List<Row> twoUpdates =
                List.of(
                        row(RowKind.INSERT, 1, "a"),
                        row(RowKind.UPDATE_AFTER, 1, "b"),
                        row(RowKind.INSERT, 2, "x"),
                        row(RowKind.UPDATE_AFTER, 1, "c"),
                        row(RowKind.INSERT, 3, "y"),
                        row(RowKind.DELETE, 3, "y"));
        List<Row> oneUpdate =
                List.of(
                        row(RowKind.INSERT, 2, "x"),
                        row(RowKind.INSERT, 1, "b"),
                        row(RowKind.UPDATE_AFTER, 1, "c"));
        long[] expected = table(row(RowKind.INSERT, 1, "c"), row(RowKind.INSERT, 2, "x"));
        assertThat(totals(0, twoUpdates)).containsExactly(expected);
        assertThat(totals(0, oneUpdate)).containsExactly(expected);
        // Applied as a retracting changelog, the same rows count every update as a row of its own.
        assertThat(totals(SqlQuery.NO_UPSERT_KEY, twoUpdates)[0]).isEqualTo(4);
    }

    @Test
    void shouldApplyRetractionsOfAnUpsertKeyedChangelog() {
        List<Row> changelog =
                List.of(
                        row(RowKind.INSERT, 1, "a"),
                        row(RowKind.UPDATE_BEFORE, 1, "a"),
                        row(RowKind.UPDATE_AFTER, 1, "b"),
                        row(RowKind.DELETE, 7, "never inserted"));
        assertThat(totals(0, changelog)).containsExactly(table(row(RowKind.INSERT, 1, "b")));
    }
}
