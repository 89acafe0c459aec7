package io.flowkv.core;

/** Argument validation whose messages name the parameter, the bad value and the allowed range. */
public final class Checks {
    private Checks() {}

    public static long checkPositive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(
                    name
                            + " must be > 0 (allowed range: [1, "
                            + Long.MAX_VALUE
                            + "]), was "
                            + value);
        }
        return value;
    }

    public static int checkRange(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(
                    name + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    public static long checkRange(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(
                    name + " must be in [" + min + ", " + max + "], was " + value);
        }
        return value;
    }

    /** Checks {@code min < value <= max} (or {@code min <= value} when {@code minInclusive}). */
    public static double checkRange(
            String name, double value, double min, boolean minInclusive, double max) {
        boolean ok =
                (minInclusive ? value >= min : value > min) && value <= max && !Double.isNaN(value);
        if (!ok) {
            throw new IllegalArgumentException(
                    name
                            + " must be in "
                            + (minInclusive ? "[" : "(")
                            + min
                            + ", "
                            + max
                            + "], was "
                            + value);
        }
        return value;
    }

    public static <T> T checkNotNull(String name, T value) {
        if (value == null) {
            throw new NullPointerException(name + " must not be null");
        }
        return value;
    }
}
