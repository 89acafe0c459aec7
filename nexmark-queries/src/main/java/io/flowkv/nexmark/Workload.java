package io.flowkv.nexmark;

import io.flowkv.nexmark.sql.SqlQuery;

/**
 * What {@link NexmarkRunner} can run: a DataStream {@link Query} (the paper's eight and the
 * general-state workloads) or a nexmark-flink {@link SqlQuery}.
 */
public interface Workload {

    /** Command-line name, e.g. {@code q7-session} or {@code sql-q5}. */
    String id();

    /** The workload {@code id} names: a SQL query for {@code sql-...}, else a DataStream query. */
    static Workload of(String id) {
        return SqlQuery.isSqlId(id) ? SqlQuery.of(id) : Query.of(id);
    }
}
