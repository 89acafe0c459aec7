package io.flowkv.flink.storage;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The verdicts of {@link WindowAlignment} on the window shapes Flink's assigners make. */
class WindowAlignmentTest {
    private static final int MANY = 1024;

    @Test
    void shouldCallATumblingWindowSharedByKeysAligned() {
        WindowAlignment a = new WindowAlignment(MANY);
        for (int key = 0; key < 3; key++) {
            assertThat(a.observe(key(key), window(0), 1))
                    .isEqualTo(WindowAlignment.Verdict.UNDECIDED);
        }
        assertThat(a.observe(key(3), window(0), 1)).isEqualTo(WindowAlignment.Verdict.ALIGNED);
    }

    @Test
    void shouldNotMistakeOneKeysSlidingWindowsForWindowsPerKey() {
        // Sliding windows of an hour every second: one element is in 3,600 windows.
        WindowAlignment a = new WindowAlignment(MANY);
        for (int w = 0; w < 3_600; w++) {
            assertThat(a.observe(key(0), window(w), w + 1))
                    .isEqualTo(WindowAlignment.Verdict.UNDECIDED);
        }
        WindowAlignment.Verdict verdict = WindowAlignment.Verdict.UNDECIDED;
        for (int key = 1; key < 100 && verdict == WindowAlignment.Verdict.UNDECIDED; key++) {
            for (int w = 0; w < 3_600; w++) {
                verdict = a.observe(key(key), window(w), 3_600);
            }
        }
        assertThat(verdict).isEqualTo(WindowAlignment.Verdict.ALIGNED);
    }

    @Test
    void shouldCallWindowsOfTheirOwnPerKeyOnceTheStoreHoldsMany() {
        WindowAlignment a = new WindowAlignment(MANY);
        for (int key = 0; key < MANY - 1; key++) {
            assertThat(a.observe(key(key), window(1_000 + key), key + 1))
                    .as("key %d, below the window threshold", key)
                    .isEqualTo(WindowAlignment.Verdict.UNDECIDED);
        }
        assertThat(a.observe(key(MANY), window(1_000 + MANY), MANY))
                .isEqualTo(WindowAlignment.Verdict.PER_KEY);
        assertThat(a.evidence(MANY)).startsWith("0 of 64 sampled windows shared by >= 4 keys");
    }

    @Test
    void shouldWaitForEnoughKeysBeforeCallingWindowsPerKey() {
        // 32 keys with windows of their own, each key appending to many windows: the sample is
        // full and the store holds many windows, but too few keys have been seen.
        WindowAlignment a = new WindowAlignment(MANY);
        for (int round = 0; round < 100; round++) {
            for (int key = 0; key < 32; key++) {
                assertThat(a.observe(key(key), window(key * 1_000 + round), 2 * MANY))
                        .isEqualTo(WindowAlignment.Verdict.UNDECIDED);
            }
        }
    }

    @Test
    void shouldSettleForAlignedWhenTheEvidenceStaysInconclusive() {
        // Three keys in one window: never shared by four, never many windows.
        WindowAlignment a = new WindowAlignment(MANY);
        WindowAlignment.Verdict verdict = WindowAlignment.Verdict.UNDECIDED;
        long n = 0;
        while (verdict == WindowAlignment.Verdict.UNDECIDED) {
            verdict = a.observe(key((int) (n % 3)), window(0), 1);
            n++;
        }
        assertThat(verdict).isEqualTo(WindowAlignment.Verdict.ALIGNED);
        assertThat(n).isEqualTo(WindowAlignment.MAX_OBSERVATIONS);
        assertThat(a.observe(key(0), window(99), MANY * 10))
                .as("a verdict does not change")
                .isEqualTo(WindowAlignment.Verdict.ALIGNED);
    }

    @Test
    void shouldRejectANonPositiveWindowThreshold() {
        assertThatThrownBy(() -> new WindowAlignment(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("manyWindows must be >= 1, was 0");
    }

    private static byte[] key(int key) {
        return ByteBuffer.allocate(5).put((byte) (key % 128)).putInt(key).array();
    }

    private static byte[] window(long start) {
        return ByteBuffer.allocate(16).putLong(start).putLong(start + 10).array();
    }
}
