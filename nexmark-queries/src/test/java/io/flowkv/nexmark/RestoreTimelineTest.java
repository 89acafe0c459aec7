package io.flowkv.nexmark;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class RestoreTimelineTest {

    /**
     * 100 events per 100 ms sample up to the failure at 10 s, nothing until 12 s, then {@code
     * after} events per sample.
     */
    private static long[][] timeline(long after) {
        long[] times = new long[300];
        long[] counts = new long[300];
        long count = 0;
        for (int i = 0; i < times.length; i++) {
            times[i] = i * 100L;
            if (times[i] <= 10_000) {
                count += i == 0 ? 0 : 100;
            } else if (times[i] > 12_000) {
                count += after;
            }
            counts[i] = count;
        }
        return new long[][] {times, counts};
    }

    @Test
    void shouldMeasureTheRateBeforeTheRestoreAndWhenItIsReachedAgain() {
        long[][] t = timeline(95);
        RestoreTimeline.Recovery r =
                RestoreTimeline.analyze(
                        t[0], t[1], 10_000, 10_000, 100_000, 11_900, 7, 1 << 20, 1_500);
        assertThat(r.rateBefore()).isCloseTo(1000, within(1e-9));
        assertThat(r.restoreMs()).isEqualTo(1_900);
        // The first full second after the restore with >= 90% of the former rate starts at 12 s
        // (950 events); the one from 11.9 s holds only 855.
        assertThat(r.steadyMs()).isEqualTo(2_000);
        assertThat(r.checkpointId()).isEqualTo(7);
        assertThat(r.restoredBytes()).isEqualTo(1 << 20);
        assertThat(r.initStateMs()).isEqualTo(1_500);
        assertThat(r.fields())
                .isEqualTo(
                        " failed_at_events=100000 restored_checkpoint=7 restored_bytes=1048576"
                                + " restore_ms=1900 init_state_ms=1500 steady_ms=2000"
                                + " rate_before=1000");
    }

    @Test
    void shouldNotCountEventsFromBeforeTheFailureAsSteady() {
        // The restore ends at once, but the window from the failure holds nothing new for 2 s.
        long[][] t = timeline(95);
        RestoreTimeline.Recovery r =
                RestoreTimeline.analyze(t[0], t[1], 10_000, 10_000, 100_000, 10_000, 7, 0, 0);
        assertThat(r.steadyMs()).isEqualTo(2_000);
    }

    @Test
    void shouldReportNoSteadyStateWhenTheRateNeverComesBack() {
        long[][] t = timeline(80);
        RestoreTimeline.Recovery r =
                RestoreTimeline.analyze(t[0], t[1], 10_000, 10_000, 100_000, 11_900, 7, 0, 0);
        assertThat(r.steadyMs()).isEqualTo(-1);
        // The same rate, slower by less than the tolerance, is steady.
        long[][] u = timeline(91);
        assertThat(
                        RestoreTimeline.analyze(
                                        u[0], u[1], 10_000, 10_000, 100_000, 11_900, 7, 0, 0)
                                .steadyMs())
                .isEqualTo(2_000);
    }

    @Test
    void shouldTakeTheRateBeforeFromTheSamplesAroundTheWindow() {
        long[] times = {0, 1000, 2000, 3000};
        long[] counts = {0, 10, 30, 60};
        assertThat(RestoreTimeline.rate(times, counts, 1000, 3000)).isCloseTo(25, within(1e-9));
        assertThat(RestoreTimeline.rate(times, counts, 500, 2500)).isCloseTo(20, within(1e-9));
        assertThat(RestoreTimeline.rate(times, counts, 5000, 6000)).isZero();
    }
}
