package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;

/** Byte-array identity for hash sets. */
@Internal
public record ByteArray(byte[] bytes) {
    @Override
    public boolean equals(Object o) {
        return o instanceof ByteArray && java.util.Arrays.equals(bytes, ((ByteArray) o).bytes);
    }

    @Override
    public int hashCode() {
        return java.util.Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return java.util.Arrays.toString(bytes);
    }
}
