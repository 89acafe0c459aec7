package io.flowkv.core;

/**
 * Visits stored entries during a full scan (snapshots, key iteration). The value bytes are valid
 * only during the call; key and window arrays may be reused by the store after the call too.
 */
@FunctionalInterface
public interface EntryVisitor {
    void visit(byte[] key, byte[] window, byte[] value, int valueOffset, int valueLength);
}
