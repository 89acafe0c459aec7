package io.flowkv.nexmark.sql;

import org.apache.flink.types.RowKind;

import javax.annotation.Nullable;

import java.util.HashMap;
import java.util.Map;

/**
 * How the rows of a SQL query's changelog change the table it describes: {@code +I}/{@code +U} add
 * a row, {@code -U}/{@code -D} take one away. With an upsert key ({@link SqlQuery#upsertKey}) a row
 * replaces the row of its key and a retraction removes the row of its key, as an upsert sink
 * applies a changelog that does not retract what it replaces; the applier then keeps each key's
 * current row. Not thread-safe.
 *
 * @param <R> how the caller represents a row (a hash, a text)
 */
public final class ChangelogApplier<R> {

    /** The table the changelog describes: {@code delta} +1 adds {@code row}, -1 takes it away. */
    public interface Table<R> {
        void count(R row, int delta);
    }

    private final boolean keyed;
    private final Table<R> table;
    private final Map<Object, R> rowsByKey = new HashMap<>();

    /** {@code upsertKey}: {@link SqlQuery#upsertKey} of the query whose changelog this applies. */
    public ChangelogApplier(int upsertKey, Table<R> table) {
        this.keyed = upsertKey != SqlQuery.NO_UPSERT_KEY;
        this.table = table;
    }

    /** Applies one change; {@code key}, the row's upsert key field, is read only with a key. */
    public void apply(RowKind kind, @Nullable Object key, R row) {
        boolean adds = kind == RowKind.INSERT || kind == RowKind.UPDATE_AFTER;
        if (!keyed) {
            table.count(row, adds ? 1 : -1);
            return;
        }
        R replaced = adds ? rowsByKey.put(key, row) : rowsByKey.remove(key);
        if (replaced != null) {
            table.count(replaced, -1);
        }
        if (adds) {
            table.count(row, 1);
        }
    }
}
