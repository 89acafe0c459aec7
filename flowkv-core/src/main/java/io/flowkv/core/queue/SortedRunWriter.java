package io.flowkv.core.queue;

import io.flowkv.core.log.FileIo;
import io.flowkv.core.log.FileType;
import io.flowkv.core.log.IoFailures;
import io.flowkv.core.log.LogWriter;
import io.flowkv.core.memory.IoBuffer;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Writes one sorted run file ({@link SortedRunDescriptor}) from entries (element, record) given in
 * strictly ascending order of element. Not synced: a run is scratch space of one running store,
 * never read after a restart.
 */
final class SortedRunWriter implements AutoCloseable {
    private final FileIo io;
    private final LogWriter writer;
    private final byte[] varint = new byte[SortedRunDescriptor.MAX_RECORD_BYTES];
    private byte[] last;
    private int blockBytes = -1;
    private long elements;
    private boolean finished;

    private SortedRunWriter(FileIo io, LogWriter writer) {
        this.io = io;
        this.writer = writer;
    }

    /** Creates {@code file}, which must not exist; {@code staging} is used until close. */
    static SortedRunWriter create(FileIo io, Path file, long runId, IoBuffer staging)
            throws IOException {
        try {
            return new SortedRunWriter(
                    io, LogWriter.create(io, file, FileType.SORTED_RUN, runId, staging));
        } catch (FileAlreadyExistsException e) {
            throw e; // not ours to delete
        } catch (IOException e) {
            IoFailures.deleteQuietly(io, file, e);
            throw e;
        }
    }

    /** Appends {@code element} with its {@code record} ({@link SortedRunDescriptor#record}). */
    void add(byte[] element, long record) throws IOException {
        if (last != null && Arrays.compareUnsigned(last, element) >= 0) {
            throw new IllegalStateException(
                    "elements of run " + writer.file() + " must ascend strictly");
        }
        if (record < 0) {
            throw new IllegalArgumentException(
                    "record=" + record + " of run " + writer.file() + ", must be >= 0");
        }
        if (blockBytes < 0) {
            writer.beginFrame();
            blockBytes = 0;
        }
        int n = SortedRunDescriptor.writeVarint(element.length, varint, 0);
        writer.putBytes(varint, 0, n);
        writer.putBytes(element, 0, element.length);
        int r = SortedRunDescriptor.writeVarint(record, varint, 0);
        writer.putBytes(varint, 0, r);
        blockBytes += n + element.length + r;
        if (blockBytes >= SortedRunDescriptor.BLOCK_BYTES) {
            writer.endFrame();
            blockBytes = -1;
        }
        last = element;
        elements++;
    }

    long elements() {
        return elements;
    }

    /** Closes the last block and the file; returns the file's size. */
    long finish() throws IOException {
        if (blockBytes >= 0) {
            writer.endFrame();
            blockBytes = -1;
        }
        long size = writer.size();
        writer.close();
        finished = true;
        return size;
    }

    /** After {@link #finish()} a no-op; before it, abandons the run and deletes its file. */
    @Override
    public void close() throws IOException {
        if (finished) {
            return;
        }
        finished = true;
        IOException failure = null;
        try {
            writer.close();
        } catch (IOException e) {
            failure = e;
        }
        try {
            io.delete(writer.file());
        } catch (IOException e) {
            failure = IoFailures.chain(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }
}
