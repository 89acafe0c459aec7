package io.flowkv.bench.harness;

import io.flowkv.nexmark.Query;
import io.flowkv.nexmark.sql.SqlQuery;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchOptionsTest {

    @Test
    void shouldDefaultToThroughputOfEverythingAtSmallScale() {
        BenchOptions o = BenchOptions.parse(new String[0]);
        assertThat(o.modes()).containsExactly("throughput");
        assertThat(o.scale()).isEqualTo("small");
        assertThat(o.reps()).isEqualTo(2);
        assertThat(o.queries()).containsExactlyElementsOf(Query.paperQueries());
        assertThat(o.backends()).containsExactly("flowkv", "rocksdb", "forst", "hashmap");
        assertThat(o.out()).isEqualTo(Path.of("docs", "benchmarks"));
        assertThat(o.jfr()).isTrue();
        assertThat(BenchOptions.parse(new String[] {"--scale", "large"}).reps()).isEqualTo(3);
    }

    @Test
    void shouldMakeQuickRunsSmallAndSeparate() {
        BenchOptions o = BenchOptions.parse(new String[] {"--quick"});
        assertThat(o.modes()).containsExactly("throughput");
        assertThat(o.backends()).containsExactly("flowkv", "rocksdb");
        assertThat(o.reps()).isEqualTo(2);
        assertThat(o.out()).isEqualTo(Path.of("target", "bench-quick"));
        assertThat(o.events()).isEqualTo(BenchOptions.QUICK_EVENTS);
        assertThat(BenchOptions.parse(new String[] {"--quick", "--reps", "1"}).reps()).isEqualTo(1);
    }

    @Test
    void shouldBoundThePageCacheOnlyWhenAsked() {
        assertThat(BenchOptions.parse(new String[0]).pageCacheBytes()).isZero();
        BenchOptions o = BenchOptions.parse(new String[] {"--page-cache", "256m"});
        assertThat(o.pageCacheBytes()).isEqualTo(256L << 20);
        MemoryBudget budget = MemoryBudget.forProcessSize("2g");
        assertThat(Bench.cgroupLimit(o, budget))
                .isEqualTo(
                        budget.processBytes()
                                + MemoryBudget.JOB_MANAGER_HEAP_ALLOWANCE
                                + (256L << 20));
        assertThat(Bench.cgroupLimit(BenchOptions.parse(new String[0]), budget)).isZero();
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--page-cache", "lots"}))
                .hasMessageContaining("--page-cache takes a size");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--page-cache", "0"}))
                .hasMessageContaining("--page-cache must be > 0");
    }

    @Test
    void shouldParseModesAndLists() {
        BenchOptions o =
                BenchOptions.parse(
                        new String[] {
                            "--all", "--queries", "q7, q11-median", "--backends", "RocksDB,flowkv",
                            "--checkpoint-interval", "10s", "--memory", "3g", "--no-jfr"
                        });
        assertThat(o.modes()).containsExactlyElementsOf(BenchOptions.MODES);
        assertThat(o.queries()).containsExactly(Query.Q7, Query.Q11_MEDIAN);
        assertThat(o.backends()).isEqualTo(List.of("rocksdb", "flowkv"));
        assertThat(
                        BenchOptions.parse(
                                        new String[] {
                                            "--backends",
                                            "flowkv,flowkv-storedtimers,rocksdb-heaptimers"
                                        })
                                .backends())
                .containsExactly("flowkv", "flowkv-storedtimers", "rocksdb-heaptimers");
        assertThat(o.checkpointIntervalMs()).isEqualTo(10_000);
        assertThat(o.memory()).isEqualTo("3g");
        assertThat(o.jfr()).isFalse();
        assertThat(BenchOptions.parse(new String[] {"--report-only"}).modes()).isEmpty();
    }

    @Test
    void shouldNameSuitesAndSqlQueries() {
        assertThat(BenchOptions.parse(new String[] {"--suite", "sql"}).queries())
                .containsExactly(SqlQuery.values());
        assertThat(BenchOptions.parse(new String[] {"--suite", "general"}).queries())
                .contains(Query.DEDUP, Query.CUSTOM)
                .doesNotContain(Query.Q7);
        assertThat(BenchOptions.parse(new String[] {"--queries", "q7,sql-q5"}).queries())
                .containsExactly(Query.Q7, SqlQuery.Q5);
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--suite", "tpch"}))
                .hasMessageContaining("paper, general or sql");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--queries", "sql-q10"}))
                .hasMessageContaining("sql-q10");
    }

    @Test
    void shouldTakeAnEventRateForSqlQueriesOnly() {
        assertThat(BenchOptions.parse(new String[0]).eventRate()).isZero();
        assertThat(
                        BenchOptions.parse(
                                        new String[] {
                                            "--queries", "sql-q5,sql-q7", "--event-rate", "1000000"
                                        })
                                .eventRate())
                .isEqualTo(1_000_000);
        assertThatThrownBy(
                        () ->
                                BenchOptions.parse(
                                        new String[] {
                                            "--queries", "sql-q5,q7", "--event-rate", "1000000"
                                        }))
                .hasMessageContaining("q7")
                .hasMessageContaining("--event-rate");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--event-rate", "0"}))
                .hasMessageContaining("--event-rate");
    }

    @Test
    void shouldQuoteTheCommandLineForAShell() {
        assertThat(
                        BenchOptions.commandLine(
                                new String[] {
                                    "--quick", "--note", "it's a smoke run", "--reps", "1"
                                }))
                .isEqualTo("scripts/bench.sh --quick --note 'it'\\''s a smoke run' --reps 1");
    }

    @Test
    void shouldExplainBadInput() {
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--scale", "medium"}))
                .hasMessageContaining("small or large");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--backends", "leveldb"}))
                .hasMessageContaining("leveldb")
                .hasMessageContaining("flowkv");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--reps", "0"}))
                .hasMessageContaining(">= 1");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--reps"}))
                .hasMessageContaining("missing value");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--frobnicate", "1"}))
                .hasMessageContaining("--frobnicate");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--queries", "q99"}))
                .hasMessageContaining("q99");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--checkpoint-interval", "soon"}))
                .hasMessageContaining("duration");
        assertThatThrownBy(
                        () -> BenchOptions.parse(new String[] {"--backends", "flowkv,flowkv-base"}))
                .hasMessageContaining("--base-rev");
        assertThatThrownBy(
                        () ->
                                BenchOptions.parse(
                                        new String[] {"--backends", "flowkv-base-storedtimers"}))
                .hasMessageContaining("--base-rev");
        assertThatThrownBy(
                        () ->
                                BenchOptions.parse(
                                        new String[] {
                                            "--backends", "flowkv-base-bogus", "--base-rev", "HEAD"
                                        }))
                .hasMessageContaining("flowkv-base-bogus");
        assertThat(
                        BenchOptions.parse(
                                        new String[] {
                                            "--backends",
                                            "flowkv-storedtimers,flowkv-base-storedtimers",
                                            "--base-rev",
                                            "HEAD~1"
                                        })
                                .baseRev())
                .isEqualTo("HEAD~1");
        assertThatThrownBy(() -> BenchOptions.parse(new String[] {"--base-rev", "HEAD~1"}))
                .hasMessageContaining("HEAD~1")
                .hasMessageContaining("flowkv-base");
    }

    @Test
    void shouldRunTheBaseBuildWhenGivenItsRevisionAlternatingTheOrder() {
        BenchOptions o =
                BenchOptions.parse(
                        new String[] {
                            "--queries", "q7,q8", "--backends", "flowkv,flowkv-base",
                            "--base-rev", "abc123", "--reps", "3"
                        });
        assertThat(o.baseRev()).isEqualTo("abc123");
        List<RunSpec> runs = Plans.throughput(o, MemoryBudget.forProcessSize(o.memory()));
        assertThat(runs)
                .extracting(r -> r.rep() + " " + r.query().id() + " " + r.backend())
                .containsExactly(
                        "1 q7 flowkv",
                        "1 q7 flowkv-base",
                        "1 q8 flowkv",
                        "1 q8 flowkv-base",
                        "2 q7 flowkv-base",
                        "2 q7 flowkv",
                        "2 q8 flowkv-base",
                        "2 q8 flowkv",
                        "3 q7 flowkv",
                        "3 q7 flowkv-base",
                        "3 q8 flowkv",
                        "3 q8 flowkv-base");
    }
}
