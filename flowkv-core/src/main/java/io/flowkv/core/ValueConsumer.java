package io.flowkv.core;

/**
 * Receives one stored value. The array is owned by the store and is only valid for the duration of
 * the call: copy what must outlive it.
 */
@FunctionalInterface
public interface ValueConsumer {
    void accept(byte[] buffer, int offset, int length);
}
