package io.flowkv.core.memory;

import net.openhft.chronicle.bytes.BytesStore;
import net.openhft.chronicle.core.io.SingleThreadedChecked;

import java.nio.ByteBuffer;

/**
 * A direct {@link ByteBuffer} for file I/O, with its native address resolved once, so that bytes
 * move between an {@link OffHeapBuffer} and a file channel with a single memory copy. Its capacity
 * is reserved from the budget like any other buffer.
 */
public final class IoBuffer implements AutoCloseable {
    private final ByteBuffer buffer;
    // Kept reachable so the address stays valid; chronicle's view does not own the memory.
    private final BytesStore<?, ByteBuffer> view;
    private final long address;
    private final MemoryBudget budget;
    private boolean closed;

    private IoBuffer(ByteBuffer buffer, MemoryBudget budget) {
        this.buffer = buffer;
        this.view = BytesStore.wrap(buffer);
        if (this.view instanceof SingleThreadedChecked) {
            ((SingleThreadedChecked) this.view).singleThreadedCheckDisabled(true);
        }
        this.address = view.addressForRead(0);
        this.budget = budget;
    }

    public static IoBuffer allocate(MemoryBudget budget, int capacity, String purpose) {
        budget.reserve(capacity, purpose);
        try {
            return new IoBuffer(ByteBuffer.allocateDirect(capacity), budget);
        } catch (RuntimeException | Error e) {
            budget.release(capacity);
            throw e;
        }
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    long address() {
        return address;
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
