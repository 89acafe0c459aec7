package io.flowkv.nexmark;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The eight window queries of the FlowKV paper, with the state pattern each one exercises. */
public enum Query {
    Q5("q5", "RMW -> RMW"),
    Q5_APPEND("q5-append", "RMW -> AAR"),
    Q7("q7", "AAR"),
    Q7_SESSION("q7-session", "AUR"),
    Q8("q8", "AAR"),
    Q11("q11", "RMW"),
    Q11_MEDIAN("q11-median", "AUR"),
    Q12("q12", "RMW");

    private final String id;
    private final String pattern;

    Query(String id, String pattern) {
        this.id = id;
        this.pattern = pattern;
    }

    /** Command-line name, e.g. {@code q7-session}. */
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
