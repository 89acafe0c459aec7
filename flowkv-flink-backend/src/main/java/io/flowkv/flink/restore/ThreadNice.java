package io.flowkv.flink.restore;

import org.apache.flink.annotation.Internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Linux nice value of the calling thread, read from {@code /proc/thread-self/stat} and lowered
 * with {@code renice}: Java has no call for it, and HotSpot ignores thread priorities unless run as
 * root. Linux schedules each thread on its own, so a thread can yield the cores to the other
 * threads of its JVM without lowering them.
 */
@Internal
final class ThreadNice {
    static final int MAX = 19;

    private static final Path STAT = Path.of("/proc/thread-self/stat");

    private ThreadNice() {}

    /** {@code nice} if it is a nice value a thread can be lowered to (0 to {@link #MAX}). */
    static int check(int nice) {
        if (nice < 0 || nice > MAX) {
            throw new IllegalArgumentException("nice must be in [0, " + MAX + "]: " + nice);
        }
        return nice;
    }

    /**
     * True where {@link #lowerCurrentThread} can work: /proc/thread-self and renice on the PATH.
     */
    static boolean lowerCurrentThreadPossible() {
        if (!Files.exists(STAT)) {
            return false;
        }
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "renice"))) {
                return true;
            }
        }
        return false;
    }

    /** The calling thread's nice value. */
    static int current() throws IOException {
        // Latin-1 decodes any byte: a thread's name may hold any.
        return parseNice(Files.readString(STAT, StandardCharsets.ISO_8859_1));
    }

    /**
     * The nice value in a {@code /proc/.../stat} line: its 19th field. The second, the thread's
     * name in parentheses, may hold spaces and parentheses itself, so fields count from the last
     * ')'.
     */
    static int parseNice(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc stat line: " + stat);
        }
        String[] fields = stat.substring(close + 1).trim().split(" +");
        // fields[0] is field 3 (state), so field 19 (nice) is fields[16].
        if (fields.length < 17) {
            throw new IllegalArgumentException("not a /proc stat line: " + stat);
        }
        return Integer.parseInt(fields[16]);
    }

    /**
     * Makes the calling thread's nice value at least {@code nice} (0 to {@link #MAX}); a thread
     * already at that or lower priority is left alone. Returns null when done, or why it could not
     * be (not Linux, no {@code renice}, refused).
     */
    static String lowerCurrentThread(int nice) {
        check(nice);
        String tid;
        int before;
        try {
            // "<pid>/task/<tid>"
            tid = Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString();
            before = current();
        } catch (NoSuchFileException | UnsupportedOperationException e) {
            return "no /proc/thread-self (not Linux, or a kernel older than 3.17)";
        } catch (IOException | RuntimeException e) {
            return "could not read this thread's priority: " + e;
        }
        if (before >= nice) {
            return null;
        }
        Process renice;
        try {
            renice =
                    // --priority: util-linux's name for the value itself (POSIX makes -n an
                    // increment); a renice without it fails, and the check below says so.
                    new ProcessBuilder("renice", "--priority", Integer.toString(nice), "-p", tid)
                            .redirectErrorStream(true)
                            .start();
        } catch (IOException e) {
            return "could not run renice: " + e.getMessage();
        }
        try (InputStream out = renice.getInputStream()) {
            String said = new String(out.readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!renice.waitFor(10, TimeUnit.SECONDS)) {
                renice.destroyForcibly();
                return "renice did not finish within 10 s";
            }
            int after = current();
            if (after != nice) {
                return "renice --priority "
                        + nice
                        + " -p "
                        + tid
                        + " left the thread at nice "
                        + after
                        + " (exit "
                        + renice.exitValue()
                        + (said.isEmpty() ? "" : ": " + said)
                        + ")";
            }
            return null;
        } catch (InterruptedException e) {
            renice.destroyForcibly();
            Thread.currentThread().interrupt();
            return "interrupted while renice ran";
        } catch (IOException | RuntimeException e) {
            return "renice failed: " + e;
        }
    }
}
