package io.flowkv.core.aur;

import io.flowkv.core.CorruptLogException;
import io.flowkv.core.log.FrameDescriptor;
import io.flowkv.core.log.LogFileHeader;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * Little-endian encoding of the AUR manifest payload (layout in docs/FORMAT.md). The reader checks
 * every field against the payload's end and reports the file offset of a bad one.
 */
final class ManifestCodec {
    /** Where the payload starts in a manifest file: after the file header and frame header. */
    static final int PAYLOAD_FILE_OFFSET = LogFileHeader.LENGTH + FrameDescriptor.HEADER_LENGTH;

    private ManifestCodec() {}

    static final class Writer {
        private byte[] buf = new byte[256];
        private int size;

        void putInt(int v) {
            ensure(4);
            FrameDescriptor.writeIntLE(buf, size, v);
            size += 4;
        }

        void putLong(long v) {
            ensure(8);
            FrameDescriptor.writeLongLE(buf, size, v);
            size += 8;
        }

        /** Length-prefixed bytes. */
        void putBytes(byte[] b) {
            putInt(b.length);
            ensure(b.length);
            System.arraycopy(b, 0, buf, size, b.length);
            size += b.length;
        }

        private void ensure(int n) {
            if (size + n > buf.length) {
                buf = Arrays.copyOf(buf, Math.max(size + n, buf.length * 2));
            }
        }

        byte[] toByteArray() {
            return Arrays.copyOf(buf, size);
        }
    }

    static final class Reader {
        private final Path file;
        private final byte[] buf;
        private int at;

        Reader(Path file, byte[] buf) {
            this.file = file;
            this.buf = buf;
        }

        Path file() {
            return file;
        }

        int getInt(String field) throws CorruptLogException {
            need(4, field);
            int v = FrameDescriptor.readIntLE(buf, at);
            at += 4;
            return v;
        }

        long getLong(String field) throws CorruptLogException {
            need(8, field);
            long v = FrameDescriptor.readLongLE(buf, at);
            at += 8;
            return v;
        }

        /** A count of records that must be non-negative (each record takes at least 4 bytes). */
        int getCount(String field) throws CorruptLogException {
            int offset = at;
            int n = getInt(field);
            if (n < 0 || n > (buf.length - at) / 4) {
                throw new CorruptLogException(
                        file, PAYLOAD_FILE_OFFSET + offset, "bad " + field + " " + n);
            }
            return n;
        }

        byte[] getBytes(String field) throws CorruptLogException {
            int offset = at;
            if (buf.length - at < 4) {
                // the label is built only here: a manifest reads two byte fields per window
                need(4, field + " length");
            }
            int n = FrameDescriptor.readIntLE(buf, at);
            at += 4;
            if (n < 0 || n > buf.length - at) {
                throw new CorruptLogException(
                        file, PAYLOAD_FILE_OFFSET + offset, "bad " + field + " length " + n);
            }
            byte[] b = Arrays.copyOfRange(buf, at, at + n);
            at += n;
            return b;
        }

        private void need(int n, String field) throws CorruptLogException {
            if (buf.length - at < n) {
                throw new CorruptLogException(
                        file,
                        PAYLOAD_FILE_OFFSET + at,
                        "manifest payload ends inside field '" + field + "'");
            }
        }
    }
}
