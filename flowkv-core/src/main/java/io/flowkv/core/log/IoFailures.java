package io.flowkv.core.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;

/**
 * How the stores collect I/O failures: the first failure is the one reported, every later one rides
 * along as suppressed, so none is swallowed and none hides the cause. Clean-up done while a failure
 * is already on its way up ({@code *Quietly}) adds its own I/O errors to that failure instead of
 * throwing.
 */
public final class IoFailures {
    private IoFailures() {}

    /** Returns {@code first} with {@code next} added as suppressed, or {@code next} if first. */
    public static IOException chain(IOException first, IOException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }

    /** Deletes {@code file} if it exists; an I/O error doing so is added to {@code cause}. */
    public static void deleteQuietly(FileIo io, Path file, Throwable cause) {
        try {
            io.delete(file);
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /** Closes {@code closeable}; an I/O error doing so is added to {@code cause}. */
    public static void closeQuietly(Closeable closeable, Throwable cause) {
        try {
            closeable.close();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }

    /** Closes {@code writer}; an I/O error doing so is added to {@code cause}. */
    public static void closeQuietly(LogWriter writer, Throwable cause) {
        try {
            writer.close();
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }
}
