package io.flowkv.bench.harness;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code --resume}: which planned runs a results CSV already holds, so a long run can be split
 * across several invocations (each adds the runs still missing, and the report covers them all).
 */
final class Resume {

    /** The columns that say which run a row is; the rest are what the run measured. */
    static final List<Column> IDENTITY =
            List.of(
                    Column.EXPERIMENT,
                    Column.QUERY,
                    Column.BACKEND,
                    Column.REP,
                    Column.PARALLELISM,
                    Column.SETTING,
                    Column.EVENTS,
                    Column.EVENT_RATE,
                    Column.WINDOW_MS,
                    Column.SLIDE_MS,
                    Column.GAP_MS,
                    Column.TARGET_RATE,
                    Column.MANAGED_BYTES);

    private Resume() {}

    /**
     * The planned runs that no row of {@code done} stands for, in plan order. A failed run counts
     * as done (a HashMap OOM is a result); delete its row to run it again.
     */
    static List<RunSpec> missing(List<RunSpec> planned, List<Row> done, long managedBytes) {
        Set<String> present = done.stream().map(Resume::identity).collect(Collectors.toSet());
        return planned.stream()
                .filter(spec -> !present.contains(identity(spec.baseRow(managedBytes))))
                .toList();
    }

    static String identity(Row row) {
        return IDENTITY.stream().map(row::get).collect(Collectors.joining("\u0000"));
    }
}
