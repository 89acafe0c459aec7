package io.flowkv.nexmark;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The eight window queries of the FlowKV paper, with the state pattern each one exercises, and five
 * workloads beyond them ({@link GeneralWorkloads}), with the state they use.
 */
public enum Query implements Workload {
    Q5("q5", "RMW -> RMW"),
    Q5_APPEND("q5-append", "RMW -> AAR"),
    Q7("q7", "AAR"),
    Q7_SESSION("q7-session", "AUR"),
    Q8("q8", "AAR"),
    Q11("q11", "RMW"),
    Q11_MEDIAN("q11-median", "AUR"),
    Q12("q12", "RMW"),
    DEDUP("dedup", "value state"),
    MAP_JOIN("map-join", "map state + timers"),
    TIMERS("timers", "timers + value state"),
    COUNT("count", "AUR, count windows"),
    CUSTOM("custom", "custom assigner, windows fire per key");

    private final String id;
    private final String pattern;

    Query(String id, String pattern) {
        this.id = id;
        this.pattern = pattern;
    }

    /** The FlowKV paper's eight window queries, in paper order. */
    public static List<Query> paperQueries() {
        return Arrays.stream(values()).filter(Query::isPaperQuery).toList();
    }

    /** Whether this is one of the paper's window queries (else a general-state workload). */
    public boolean isPaperQuery() {
        return ordinal() <= Q12.ordinal();
    }

    /** Command-line name, e.g. {@code q7-session}. */
    @Override
    public String id() {
        return id;
    }

    public String pattern() {
        return pattern;
    }

    public static Query of(String id) {
        for (Query q : values()) {
            if (q.id.equals(id.toLowerCase(Locale.ROOT))) {
                return q;
            }
        }
        throw new IllegalArgumentException(
                "Unknown query '"
                        + id
                        + "' (allowed: "
                        + Arrays.stream(values()).map(Query::id).collect(Collectors.joining("|"))
                        + ")");
    }
}
