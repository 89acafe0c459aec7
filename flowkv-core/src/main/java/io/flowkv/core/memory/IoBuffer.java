package io.flowkv.core.memory;

import java.nio.ByteBuffer;

/**
 * The staging buffer between off-heap memory and a file channel, charged to the budget like any
 * other buffer.
 *
 * <p>It is a heap buffer on purpose: resolving the native address of a direct {@link ByteBuffer}
 * needs {@code --add-exports java.base/sun.nio.ch}, and FlowKV must run with no JVM flags. The JDK
 * moves a heap buffer to the channel through its own cached direct buffer, which costs one more
 * memory copy per flushed byte; against the system call and the device that copy is small.
 */
public final class IoBuffer implements AutoCloseable {
    private final ByteBuffer buffer;
    private final MemoryBudget budget;
    private boolean closed;

    private IoBuffer(ByteBuffer buffer, MemoryBudget budget) {
        this.buffer = buffer;
        this.budget = budget;
    }

    public static IoBuffer allocate(MemoryBudget budget, int capacity, String purpose) {
        budget.reserve(capacity, purpose);
        return new IoBuffer(ByteBuffer.allocate(capacity), budget);
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int capacity() {
        return buffer.capacity();
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            budget.release(buffer.capacity());
        }
    }
}
