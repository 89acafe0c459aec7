package io.flowkv.flink.restore;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@link ThreadNice}: reading and lowering one thread's priority, not its neighbours'. */
class ThreadNiceTest {

    @Test
    void shouldReadTheNiceValueAfterANameWithSpacesAndParentheses() {
        String stat =
                "4242 (flowkv (fetch) 1) S 4200 4200 4200 0 -1 1077936192 61 0 0 0 3 1 0 0 39 19"
                        + " 31 0 1234 567 89";
        assertThat(ThreadNice.parseNice(stat)).isEqualTo(19);
        assertThat(ThreadNice.parseNice("7 (java) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 6 7"))
                .isZero();
        assertThatThrownBy(() -> ThreadNice.parseNice("no stat here"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ThreadNice.parseNice("1 (x) S 2 3"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void shouldLowerTheCallingThreadOnly() throws Exception {
        assumeTrue(
                ThreadNice.lowerCurrentThreadPossible(),
                "per-thread nice values need Linux's /proc/thread-self and renice");
        int own = ThreadNice.current();
        int target = Math.max(own, 11);
        AtomicReference<String> problem = new AtomicReference<>("not run");
        AtomicReference<Integer> after = new AtomicReference<>();
        Thread t =
                new Thread(
                        () -> {
                            problem.set(ThreadNice.lowerCurrentThread(11));
                            try {
                                after.set(ThreadNice.current());
                                // Lowering again to a higher priority is a no-op, not a failure.
                                if (problem.get() == null) {
                                    problem.set(ThreadNice.lowerCurrentThread(3));
                                    if (ThreadNice.current() != target) {
                                        problem.set("raised to " + ThreadNice.current());
                                    }
                                }
                            } catch (Exception e) {
                                problem.set(e.toString());
                            }
                        });
        t.start();
        t.join();
        assertThat(problem.get()).isNull();
        assertThat(after.get()).isEqualTo(target);
        assertThat(ThreadNice.current()).as("the calling thread's neighbour").isEqualTo(own);
    }

    @Test
    void shouldRejectANiceValueOutOfRange() {
        assertThatThrownBy(() -> ThreadNice.lowerCurrentThread(20))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ThreadNice.lowerCurrentThread(-1))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
