package io.flowkv.core.memory;

import net.openhft.chronicle.core.UnsafeMemory;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The staging buffer between off-heap memory and a file channel: native memory reserved from the
 * budget (an {@link OffHeapBuffer}), seen through a direct {@link ByteBuffer} that file channels
 * read and write without a copy.
 *
 * <p>The view is made the way Flink makes its managed memory segments visible as byte buffers: a
 * {@code DirectByteBuffer} instance created without a constructor, its address and capacity set to
 * the native block. {@code ByteBuffer.allocateDirect} is not used because its memory is counted
 * against {@code -XX:MaxDirectMemorySize} (Flink's network and task off-heap pool), not against
 * managed memory, which is what the budget stands for; a heap buffer would put charged bytes on the
 * Java heap. Neither needs a JVM flag.
 *
 * <p>The view does not own the memory: it must not be used after {@link #close}.
 */
public final class IoBuffer implements AutoCloseable {
    private static final Class<?> DIRECT_BUFFER_CLASS = ByteBuffer.allocateDirect(1).getClass();
    private static final long ADDRESS_OFFSET = fieldOffset("address");
    private static final long CAPACITY_OFFSET = fieldOffset("capacity");

    private final OffHeapBuffer memory;
    private final ByteBuffer buffer;

    private IoBuffer(OffHeapBuffer memory, ByteBuffer buffer) {
        this.memory = memory;
        this.buffer = buffer;
    }

    /** Reserves {@code capacity} bytes of native memory for {@code purpose}, or throws. */
    public static IoBuffer allocate(MemoryBudget budget, int capacity, String purpose) {
        OffHeapBuffer memory = OffHeapBuffer.allocate(budget, capacity, purpose);
        try {
            return new IoBuffer(memory, view(memory.address(0), capacity));
        } catch (RuntimeException | Error e) {
            memory.close();
            throw e;
        }
    }

    /** The direct view; big-endian when handed out, like any new buffer. */
    public ByteBuffer buffer() {
        return buffer;
    }

    public int capacity() {
        return buffer.capacity();
    }

    /** The native memory behind the view, for copies from and to other native memory. */
    OffHeapBuffer memory() {
        return memory;
    }

    /** Frees the native memory and returns it to the budget. Idempotent. */
    @Override
    public void close() {
        memory.close();
    }

    private static ByteBuffer view(long address, int capacity) {
        ByteBuffer view;
        try {
            view =
                    UnsafeMemory.MEMORY.allocateInstance(
                            DIRECT_BUFFER_CLASS.asSubclass(ByteBuffer.class));
        } catch (InstantiationException e) {
            throw new IllegalStateException("cannot create a direct view of native memory", e);
        }
        UnsafeMemory.MEMORY.writeLong(view, ADDRESS_OFFSET, address);
        UnsafeMemory.MEMORY.writeInt(view, CAPACITY_OFFSET, capacity);
        // No constructor ran: set every field the constructor would have set.
        view.clear();
        return view.order(ByteOrder.BIG_ENDIAN);
    }

    private static long fieldOffset(String name) {
        try {
            Field field = Buffer.class.getDeclaredField(name);
            return UnsafeMemory.MEMORY.getFieldOffset(field);
        } catch (NoSuchFieldException e) {
            throw new ExceptionInInitializerError(
                    "java.nio.Buffer has no field '" + name + "' on this JVM: " + e);
        }
    }
}
