package io.flowkv.nexmark;

import java.io.Serializable;
import java.time.Duration;

/**
 * Window parameters of the queries.
 *
 * @param window tumbling window size (Q7, Q8), sliding window size (Q5), Q12's emit period
 * @param slide slide of Q5's sliding windows; Q5's second stage collects each slide's windows
 * @param gap session gap (Q7-Session, Q11, Q11-Median)
 * @param outOfOrderness watermark lag behind the largest timestamp seen by a reader
 */
public record QueryParams(Duration window, Duration slide, Duration gap, Duration outOfOrderness)
        implements Serializable {

    public QueryParams {
        if (window.toMillis() <= 0 || slide.toMillis() <= 0 || gap.toMillis() <= 0) {
            throw new IllegalArgumentException(
                    "window, slide and gap must be at least 1 ms, got " + this);
        }
        if (outOfOrderness.isNegative()) {
            throw new IllegalArgumentException("out-of-orderness must be >= 0: " + this);
        }
    }

    public static QueryParams defaults() {
        return new QueryParams(
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofMillis(100));
    }
}
