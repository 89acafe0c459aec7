package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

class MachineTest {

    @Test
    void readsTheSelectedTransparentHugePageMode(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("enabled");
        Files.writeString(file, "always [madvise] never\n");
        assertThat(Machine.transparentHugePages(file)).isEqualTo("transparent madvise");
        Files.writeString(file, "[always] madvise never\n");
        assertThat(Machine.transparentHugePages(file)).isEqualTo("transparent always");
    }

    @Test
    void saysUnknownWithoutTheKernelsFile(@TempDir Path dir) throws IOException {
        assertThat(Machine.transparentHugePages(dir.resolve("missing"))).isEqualTo("unknown");
        Path file = dir.resolve("enabled");
        Files.writeString(file, "always madvise never\n");
        assertThat(Machine.transparentHugePages(file)).isEqualTo("unknown");
    }
}
