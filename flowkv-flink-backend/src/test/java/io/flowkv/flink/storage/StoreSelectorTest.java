package io.flowkv.flink.storage;

import org.apache.flink.api.common.state.StateDescriptor.Type;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store each state gets, from what Flink's DataStream window operator and Flink SQL's operators
 * register: operator identifiers and state names as Flink 2.3 writes them (the SQL ones as logged
 * by a run of sql-q8).
 */
class StoreSelectorTest {
    private static final String WINDOW_OPERATOR =
            "WindowOperator_3f79c1893739a894c722386d505eee49_(1/2)";
    private static final String SQL_WINDOW_JOIN =
            "WindowJoinOperator_77488af3255f9e58f7b02b09e314e295_(1/1)";
    private static final String SQL_WINDOW_AGG =
            "WindowAggOperator_3262ae6d3358ae0c2a3f8400ee4e663b_(1/1)";
    private static final String SQL_REGULAR_JOIN =
            "StreamingJoinOperator_21c8179f46ef788a136bf0c232d4e5e8_(2/2)";

    private final StoreSelector selector = new StoreSelector(null, true);

    @Test
    void shouldChooseByWindowShapeForTheDataStreamWindowOperator() {
        assertThat(pattern(WINDOW_OPERATOR, "window-contents", Type.LIST, time(), Set.of()))
                .isEqualTo(StorePattern.AAR);
        assertThat(
                        pattern(
                                WINDOW_OPERATOR,
                                "window-contents",
                                Type.LIST,
                                time(),
                                Set.of(StoreSelector.MERGING_WINDOW_SET)))
                .isEqualTo(StorePattern.AUR);
        assertThat(
                        pattern(
                                WINDOW_OPERATOR,
                                "window-contents",
                                Type.LIST,
                                new GlobalWindow.Serializer(),
                                Set.of()))
                .isEqualTo(StorePattern.AUR);
        assertThat(pattern(WINDOW_OPERATOR, "window-contents", Type.AGGREGATING, time(), Set.of()))
                .isEqualTo(StorePattern.RMW);
        assertThat(pattern(WINDOW_OPERATOR, "seen", Type.VALUE, time(), Set.of()))
                .isEqualTo(StorePattern.GENERIC);
    }

    @Test
    void shouldGiveSqlWindowJoinRowsAarAndWindowAccumulatorsRmw() {
        for (String side : List.of("left-records", "right-records")) {
            assertThat(pattern(SQL_WINDOW_JOIN, side, Type.LIST, LongSerializer.INSTANCE, Set.of()))
                    .as(side)
                    .isEqualTo(StorePattern.AAR);
            assertThat(
                            pattern(
                                    "AsyncStateWindowJoinOperator_77488af3255f9e58f7b02b09e314e295_(1/1)",
                                    side,
                                    Type.LIST,
                                    LongSerializer.INSTANCE,
                                    Set.of()))
                    .as("async " + side)
                    .isEqualTo(StorePattern.AAR);
        }
        assertThat(
                        pattern(
                                SQL_WINDOW_AGG,
                                "window-aggs",
                                Type.VALUE,
                                LongSerializer.INSTANCE,
                                Set.of()))
                .isEqualTo(StorePattern.RMW);
    }

    /**
     * Window TopN and window deduplication run on {@code WindowAggOperator} too (Flink 2.3's
     * WindowRankOperatorBuilder, RowTimeWindowDeduplicateOperatorBuilder), with a {@code
     * window_rank} map state and a {@code window_deduplicate} value state per slice end.
     */
    @Test
    void shouldRecogniseSqlWindowDeduplicationAndTopN() {
        StoreSelector.Choice dedup =
                selector.choose(
                        SQL_WINDOW_AGG,
                        "window_deduplicate",
                        Type.VALUE,
                        LongSerializer.INSTANCE,
                        Set.of());
        assertThat(dedup.pattern()).isEqualTo(StorePattern.RMW);
        assertThat(dedup.reason()).contains("window deduplication");
        StoreSelector.Choice rank =
                selector.choose(
                        SQL_WINDOW_AGG, "window_rank", Type.MAP, LongSerializer.INSTANCE, Set.of());
        assertThat(rank.pattern()).isEqualTo(StorePattern.GENERIC);
        assertThat(rank.reason()).contains("window TopN").contains("one record per map entry");
        // the same names outside the window operator are somebody else's state
        assertThat(
                        selector.choose(
                                        SQL_REGULAR_JOIN,
                                        "window_deduplicate",
                                        Type.VALUE,
                                        LongSerializer.INSTANCE,
                                        Set.of())
                                .reason())
                .doesNotContain("window deduplication");
    }

    @Test
    void shouldKeepOtherSqlStatesOnTheGeneralStore() {
        // A regular join's rows: same state names, no window namespace.
        assertThat(
                        pattern(
                                SQL_REGULAR_JOIN,
                                "left-records",
                                Type.MAP,
                                VoidNamespaceSerializer.INSTANCE,
                                Set.of()))
                .isEqualTo(StorePattern.GENERIC);
        assertThat(
                        pattern(
                                SQL_REGULAR_JOIN,
                                "left-records",
                                Type.LIST,
                                VoidNamespaceSerializer.INSTANCE,
                                Set.of()))
                .isEqualTo(StorePattern.GENERIC);
        // A window aggregate's other value states stay general.
        assertThat(
                        pattern(
                                SQL_WINDOW_AGG,
                                "previous-aggs",
                                Type.VALUE,
                                LongSerializer.INSTANCE,
                                Set.of()))
                .isEqualTo(StorePattern.GENERIC);
        // A user's operator that happens to use the same state name.
        assertThat(
                        pattern(
                                "KeyedProcessOperator_0123456789abcdef0123456789abcdef_(1/1)",
                                "left-records",
                                Type.LIST,
                                LongSerializer.INSTANCE,
                                Set.of()))
                .isEqualTo(StorePattern.GENERIC);
    }

    @Test
    void shouldLetAnOverrideWinForListStateOnly() {
        StoreSelector forced = new StoreSelector(StorePattern.AUR, true);
        assertThat(
                        forced.choose(
                                        SQL_WINDOW_JOIN,
                                        "left-records",
                                        Type.LIST,
                                        LongSerializer.INSTANCE,
                                        Set.of())
                                .pattern())
                .isEqualTo(StorePattern.AUR);
        assertThat(
                        forced.choose(
                                        SQL_WINDOW_AGG,
                                        "window-aggs",
                                        Type.VALUE,
                                        LongSerializer.INSTANCE,
                                        Set.of())
                                .pattern())
                .isEqualTo(StorePattern.GENERIC);
    }

    @Test
    void shouldReadTheOperatorClassFromTheIdentifier() {
        assertThat(StoreSelector.operatorClass(SQL_WINDOW_JOIN)).isEqualTo("WindowJoinOperator");
        assertThat(StoreSelector.operatorClass("test-operator")).isEqualTo("test-operator");
    }

    private StorePattern pattern(
            String operator,
            String state,
            Type type,
            TypeSerializer<?> namespace,
            Set<String> registered) {
        return selector.choose(operator, state, type, namespace, registered).pattern();
    }

    private static TypeSerializer<?> time() {
        return new TimeWindow.Serializer();
    }
}
