package io.flowkv.bench.harness;

import io.flowkv.nexmark.GeneratorConfig;
import io.flowkv.nexmark.Query;
import io.flowkv.nexmark.sql.SqlQuery;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScalePlanTest {

    static final long MANAGED = 635L << 20;

    @Test
    void shouldSizeTheAppendQueriesToTheStateFactorAtLarge() {
        for (Query q : new Query[] {Query.Q7, Query.Q7_SESSION, Query.Q8, Query.Q11_MEDIAN}) {
            ScalePlan.QueryPlan p = ScalePlan.plan(q, "large", MANAGED, 4, 0);
            assertThat(p.stateEstimateBytes()).as(q.id()).isGreaterThanOrEqualTo(4 * MANAGED);
            // not wildly more than asked: the runs stay as short as the factor allows
            assertThat(p.stateEstimateBytes()).as(q.id()).isLessThan(9 * MANAGED / 2);
        }
        // tumbling windows start with the stream (Flink aligns them to the epoch)
        for (Query q : new Query[] {Query.Q7, Query.Q8}) {
            long w = ScalePlan.plan(q, "large", MANAGED, 4, 0).windowMs();
            assertThat(GeneratorConfig.DEFAULT_BASE_TIME % w).as(q.id()).isZero();
        }
        assertThat(ScalePlan.alignedWindowSeconds(28_900_000)).isEqualTo(300);
        assertThat(ScalePlan.plan(Query.Q7, "large", MANAGED, 1, 0).events())
                .isLessThan(ScalePlan.plan(Query.Q7, "large", MANAGED, 4, 0).events());
    }

    @Test
    void shouldEstimateFromTheGeneratorsEventSizes() {
        GeneratorConfig g = GeneratorConfig.of(1, ScalePlan.EVENT_RATE);
        assertThat((double) g.avgBidBytes()).isEqualTo(ScalePlan.BID_BYTES);
        assertThat(ScalePlan.Q8_BYTES_PER_EVENT)
                .isEqualTo((g.avgPersonBytes() + 1 + 3 * (g.avgAuctionBytes() + 1)) / 50.0);
        // Q7: 10 s window at 100k/s holds 1M events' bids, 92 MB
        assertThat(ScalePlan.estimate(Query.Q7, 4_000_000, 100_000, 10_000, 5_000, 10_000))
                .isEqualTo(92_000_000);
        // fewer events than the window: all of them
        assertThat(ScalePlan.estimate(Query.Q7, 500_000, 100_000, 10_000, 5_000, 10_000))
                .isEqualTo(46_000_000);
        assertThat(ScalePlan.estimate(Query.Q11_MEDIAN, 4_000_000, 100_000, 10_000, 5_000, 2_000))
                .isEqualTo(18_400_000);
    }

    @Test
    void shouldKeepSmallRunsSmall() {
        ScalePlan.QueryPlan p = ScalePlan.plan(Query.Q7, "small", MANAGED, 4, 0);
        assertThat(p.events()).isEqualTo(1_000_000);
        assertThat(p.windowMs()).isEqualTo(10_000);
        assertThat(ScalePlan.plan(Query.Q7, "small", MANAGED, 4, 5_000).events()).isEqualTo(5_000);
        assertThat(p.describe(MANAGED)).contains("q7").contains("x managed");
        assertThatThrownBy(() -> ScalePlan.plan(Query.Q7, "huge", MANAGED, 4, 0))
                .hasMessageContaining("huge");
    }

    @Test
    void shouldRunSqlQueriesForTheirEventsWithoutAnEstimate() {
        ScalePlan.QueryPlan large = ScalePlan.plan(SqlQuery.Q20, "large", MANAGED, 4, 0);
        assertThat(large.events()).isEqualTo(ScalePlan.SQL_EVENTS);
        assertThat(large.stateEstimateBytes()).isZero();
        assertThat(large.describe(MANAGED)).contains("sql-q20").contains("state measured");
        assertThat(ScalePlan.plan(SqlQuery.Q20, "small", MANAGED, 4, 0).events())
                .isEqualTo(1_000_000);
        assertThat(ScalePlan.plan(SqlQuery.Q20, "large", MANAGED, 4, 7_000).events())
                .isEqualTo(7_000);
        assertThatThrownBy(() -> ScalePlan.plan(SqlQuery.Q20, "huge", MANAGED, 4, 0))
                .hasMessageContaining("huge");
    }

    @Test
    void shouldRunSqlQueriesAtTheEventRateGiven() {
        assertThat(ScalePlan.plan(SqlQuery.Q5, "large", MANAGED, 4, 0).eventRate())
                .isEqualTo(ScalePlan.EVENT_RATE);
        ScalePlan.QueryPlan dense =
                ScalePlan.plan(SqlQuery.Q5, "large", MANAGED, 4, 2_000_000, 1_000_000);
        assertThat(dense.eventRate()).isEqualTo(1_000_000);
        assertThat(dense.events()).isEqualTo(2_000_000);
        assertThat(dense.describe(MANAGED)).contains("rate=1,000,000/s");
    }
}
