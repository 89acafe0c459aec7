package io.flowkv.core.memory;

/** A store needed memory that its budget cannot give even after flushing what it could. */
public final class MemoryBudgetExceededException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MemoryBudgetExceededException(
            String purpose, long requested, long available, long capacity) {
        super(
                "FlowKV memory budget exceeded for "
                        + purpose
                        + ": requested="
                        + requested
                        + " available="
                        + available
                        + " capacity="
                        + capacity
                        + " (raise managed memory, taskmanager.memory.managed.size or .fraction, or"
                        + " leave more of it to the rest: write buffers take half of it and index"
                        + " caches a quarter by default; set state.backend.flowkv.write-buffer-size"
                        + " and state.backend.flowkv.index-cache-size lower)");
    }
}
