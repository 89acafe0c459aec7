package io.flowkv.nexmark.sql;

import io.flowkv.nexmark.Workload;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The nexmark-flink SQL queries that run here, written for this project from the public suite's
 * query definitions. q6, q10 and q13 are not run (docs/nexmark.md says why); q12 runs on event time
 * instead of processing time.
 */
public enum SqlQuery implements Workload {
    Q0("pass-through"),
    Q1("currency conversion"),
    Q2("selection"),
    Q3("local item suggestion: regular join"),
    Q4("average price per category: join + two group aggregates"),
    Q5("hot items: HOP window aggregates joined"),
    Q7("highest bid: TUMBLE window aggregate + interval join"),
    Q8("new users: TUMBLE window aggregates joined"),
    Q9("winning bids: join + ROW_NUMBER top 1", 0),
    Q11("user sessions: SESSION window aggregate"),
    Q12("bids per bidder in TUMBLE windows (event time; the suite uses processing time)"),
    Q14("calculation: filter, CASE, scalar UDF"),
    Q15("bidding statistics per day: COUNT DISTINCT with FILTER"),
    Q16("channel statistics per day: COUNT DISTINCT with FILTER"),
    Q17("auction statistics per day: group aggregate"),
    Q18("last bid per (bidder, auction): ROW_NUMBER dedup"),
    Q19("top 10 bids per auction: ROW_NUMBER TopN"),
    Q20("bids expanded with their auction: regular join"),
    Q21("channel id: CASE + REGEXP_EXTRACT"),
    Q22("url directories: SPLIT_INDEX");

    /** No field: the result's changelog retracts every row it replaces. */
    public static final int NO_UPSERT_KEY = -1;

    private final String description;
    private final int upsertKey;

    SqlQuery(String description) {
        this(description, NO_UPSERT_KEY);
    }

    SqlQuery(String description, int upsertKey) {
        this.description = description;
        this.upsertKey = upsertKey;
    }

    /** Command-line name, e.g. {@code sql-q5}. */
    @Override
    public String id() {
        return "sql-" + name().toLowerCase(Locale.ROOT);
    }

    public String description() {
        return description;
    }

    /**
     * The result field that keys its updates when the changelog replaces a row without retracting
     * it first, or {@link #NO_UPSERT_KEY}. q9: Flink 2.3's planner takes a ROW_NUMBER top 1 whose
     * ORDER BY has two columns for an insert-only deduplication, so it asks for no retractions,
     * while the operator (a top-1 rank) still replaces an auction's winning bid by a higher one, as
     * {@code +U} alone (FLINK-40368). Such a changelog is applied by key, as an upsert sink would.
     */
    public int upsertKey() {
        return upsertKey;
    }

    /** Whether {@code id} names a SQL query (starts with {@code sql-}). */
    public static boolean isSqlId(String id) {
        return id.toLowerCase(Locale.ROOT).startsWith("sql-");
    }

    public static SqlQuery of(String id) {
        for (SqlQuery q : values()) {
            if (q.id().equals(id.toLowerCase(Locale.ROOT))) {
                return q;
            }
        }
        throw new IllegalArgumentException(
                "Unknown SQL query '"
                        + id
                        + "' (allowed: "
                        + Arrays.stream(values()).map(SqlQuery::id).collect(Collectors.joining("|"))
                        + ")");
    }
}
