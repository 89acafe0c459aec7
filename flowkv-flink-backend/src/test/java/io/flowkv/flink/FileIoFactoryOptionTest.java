package io.flowkv.flink;

import io.flowkv.core.log.FileIo;
import io.flowkv.flink.snapshot.PreFlushScheduleTest;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code state.backend.flowkv.file-io-factory}: the stores' files go through the named FileIo. */
class FileIoFactoryOptionTest {
    @TempDir Path localDir;

    /** Counts the files the stores create; the count is static because Flink makes the instance. */
    public static final class CountingFileIoFactory implements FileIoFactory {
        static final AtomicInteger CREATED = new AtomicInteger();

        @Override
        public FileIo create() {
            return new FileIo() {
                @Override
                public FileChannel openForAppend(Path file) throws IOException {
                    CREATED.incrementAndGet();
                    return FileIo.super.openForAppend(file);
                }
            };
        }
    }

    /** Not a FileIoFactory. */
    public static final class NotAFactory {}

    private KeyedOneInputStreamOperatorTestHarness<Long, Long, Long> harness(String factory)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.LOCAL_DIRECTORIES, List.of(localDir.toString()));
        conf.set(FlowKVOptions.FILE_IO_FACTORY, factory);
        KeyedOneInputStreamOperatorTestHarness<Long, Long, Long> h =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new KeyedProcessOperator<>(new PreFlushScheduleTest.Remember()),
                        k -> k,
                        Types.LONG,
                        128,
                        1,
                        0);
        h.setStateBackend(new FlowKVStateBackend().configure(conf, getClass().getClassLoader()));
        return h;
    }

    @Test
    void shouldWriteTheStoresFilesThroughTheConfiguredFileIo() throws Exception {
        CountingFileIoFactory.CREATED.set(0);
        KeyedOneInputStreamOperatorTestHarness<Long, Long, Long> h =
                harness(CountingFileIoFactory.class.getName());
        try {
            h.open();
            for (long i = 0; i < 1_000; i++) {
                h.processElement(i, i);
            }
            h.snapshot(1, 1);
        } finally {
            h.close();
        }
        assertThat(CountingFileIoFactory.CREATED.get())
                .as("store files created through the configured FileIo")
                .isPositive();
    }

    @Test
    void shouldNameTheOptionWhenTheClassIsNoFactory() throws Exception {
        KeyedOneInputStreamOperatorTestHarness<Long, Long, Long> h =
                harness(NotAFactory.class.getName());
        try {
            assertThatThrownBy(h::open)
                    .hasStackTraceContaining("state.backend.flowkv.file-io-factory")
                    .hasStackTraceContaining("does not implement " + FileIoFactory.class.getName());
        } finally {
            h.close();
        }
    }

    @Test
    void shouldRejectAValueThatIsNoClassName() {
        Configuration conf = new Configuration();
        conf.set(FlowKVOptions.FILE_IO_FACTORY, "not a class");
        assertThatThrownBy(
                        () -> new FlowKVStateBackend().configure(conf, getClass().getClassLoader()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.flowkv.file-io-factory")
                .hasMessageContaining("not a class");
    }
}
