package io.flowkv.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ProcStatsTest {

    @Test
    void shouldReadCpuTimeAfterACommandNameWithSpaces() {
        String stat =
                "4242 (java (main) x) S 1 4242 4242 0 -1 4194560 12345 0 0 0 250 75 3 4 20 0 40 0"
                        + " 1000 1000 1000";
        assertThat(ProcStats.cpuSecondsOfStat(stat)).isEqualTo(3.25);
    }

    @Test
    void shouldReadDiskBytes() {
        String io =
                "rchar: 100\nwchar: 200\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n"
                        + "write_bytes: 8192\ncancelled_write_bytes: 0\n";
        assertThat(ProcStats.ioField(io, "read_bytes")).isEqualTo(4096);
        assertThat(ProcStats.ioField(io, "write_bytes")).isEqualTo(8192);
    }

    @Test
    void shouldReadPeakRssInBytes() {
        String status = "Name:\tjava\nVmPeak:\t 9000000 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 100 kB\n";
        assertThat(ProcStats.peakRssOfStatus(status)).isEqualTo(123456L * 1024);
    }

    @Test
    void shouldReadItsOwnProcess() throws Exception {
        ProcStats self = ProcStats.read(ProcessHandle.current().pid());
        assertThat(self.cpuSeconds()).isPositive();
        assertThat(self.readBytes()).isNotNegative();
        // A running JVM holds tens of MB resident; a kB-for-bytes slip would read far less.
        assertThat(self.peakRssBytes()).isGreaterThan(16L << 20);
    }
}
