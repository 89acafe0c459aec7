package io.flowkv.flink;

import io.flowkv.core.log.FileIo;

/**
 * Supplies the {@link FileIo} through which the stores of a FlowKV backend open, write, sync and
 * delete their files ({@code state.backend.flowkv.file-io-factory}). The class needs a public
 * no-argument constructor; one instance is made per keyed backend, on the TaskManager, from the
 * job's class path. Fault-injection tests use it to play a full or failing disk, instrumentation to
 * count or throttle I/O. Unset, the stores use {@link FileIo#DEFAULT}.
 */
public interface FileIoFactory {
    /** The file I/O of one keyed backend's stores; called once per keyed backend. */
    FileIo create();
}
