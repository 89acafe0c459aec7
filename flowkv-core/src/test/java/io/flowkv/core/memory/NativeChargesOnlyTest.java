package io.flowkv.core.memory;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The memory rule, checked on the sources: Flink sizes managed memory off-heap, so the budget may
 * only be charged for native memory. {@link OffHeapBuffer} is the one class that allocates native
 * memory against the budget; any other class reserving from it would be charging for something else
 * (a Java array, a heap buffer).
 */
class NativeChargesOnlyTest {
    private static final Pattern RESERVE = Pattern.compile("\\.(tryReserve|reserve)\\(");

    @Test
    void shouldChargeTheBudgetOnlyWhereNativeMemoryIsAllocated() throws IOException {
        Path sources = Path.of("src/main/java");
        assertThat(sources).isDirectory();
        List<String> offenders;
        try (Stream<Path> files = Files.walk(sources)) {
            offenders =
                    files.filter(f -> f.toString().endsWith(".java"))
                            .filter(f -> !f.endsWith(Path.of("memory", "OffHeapBuffer.java")))
                            .filter(f -> !f.endsWith(Path.of("memory", "MemoryBudget.java")))
                            .filter(NativeChargesOnlyTest::reserves)
                            .map(Path::toString)
                            .collect(Collectors.toList());
        }
        assertThat(offenders)
                .as("classes that charge the budget without allocating native memory")
                .isEmpty();
    }

    private static boolean reserves(Path file) {
        try {
            return Files.readAllLines(file).stream()
                    .map(String::strip)
                    .filter(line -> !line.startsWith("*") && !line.startsWith("//"))
                    .anyMatch(line -> RESERVE.matcher(line).find());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
