package io.flowkv.core.rmw;

import io.flowkv.core.CorruptLogException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * One value-log segment as the store sees it: its id (the segment part of every position into it),
 * its file, a channel for point reads, and how many bytes of it are valid. Only the active segment
 * grows; every other one is immutable until compaction deletes it.
 */
final class RmwSegment {
    final int id;
    final Path path;
    final FileChannel channel;

    /** Bytes of the file that hold complete frames (the header included). */
    long size;

    /** Whether every byte up to {@link #size} has been forced to the device. */
    boolean synced;

    RmwSegment(int id, Path path, FileChannel channel, long size) {
        this.id = id;
        this.path = path;
        this.channel = channel;
        this.size = size;
    }

    /** Reads exactly {@code dst.remaining()} bytes at {@code offset}, all within {@link #size}. */
    void readFully(long offset, ByteBuffer dst) throws IOException {
        if (offset + dst.remaining() > size) {
            throw new CorruptLogException(
                    path,
                    offset,
                    "read of " + dst.remaining() + " bytes past the end (" + size + ")");
        }
        long at = offset;
        while (dst.hasRemaining()) {
            int n = channel.read(dst, at);
            if (n < 0) {
                throw new CorruptLogException(path, at, "unexpected end of file");
            }
            at += n;
        }
    }

    @Override
    public String toString() {
        return "RmwSegment{" + id + ", " + path + ", size=" + size + "}";
    }
}
