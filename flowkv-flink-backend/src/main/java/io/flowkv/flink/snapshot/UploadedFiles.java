package io.flowkv.flink.snapshot;

import io.flowkv.flink.FlowKVOptions;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.filemerging.FileMergingSnapshotManager;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.util.HashMap;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Which store files earlier incremental checkpoints of one backend hold, so that a new checkpoint
 * uploads only the others and refers to these through placeholders that Flink's shared state
 * registry resolves to the handle it already has.
 *
 * <p>Only files of the last checkpoint the JobManager confirmed complete are offered for reuse: a
 * checkpoint that is still pending may yet fail, and its uploads are then deleted. A file that a
 * later pending checkpoint uploaded again (because the confirmation came late) is not offered
 * either: once that later checkpoint completes, it subsumes the confirmed one and the registry
 * deletes the older upload, which a placeholder would then point at.
 *
 * <p>Called from the task thread (base, completion) and from the asynchronous snapshot threads
 * (recording), hence synchronized.
 */
@Internal
public final class UploadedFiles {

    /**
     * One store file as a checkpoint holds it: {@code length} and {@code crc32c} are those of the
     * store file itself, {@code encoding} says how the upload behind {@code handle} holds it.
     */
    public record SharedFile(
            StreamStateHandle handle,
            long length,
            int crc32c,
            FlowKVOptions.CheckpointCompression encoding,
            boolean uploaded) {

        /** The reference a later checkpoint puts in its handle instead of uploading again. */
        StreamStateHandle placeholder() {
            return new PlaceholderStreamStateHandle(
                    handle.getStreamStateHandleID(),
                    handle.getStateSize(),
                    FileMergingSnapshotManager.isFileMergingHandle(handle));
        }

        /** The same file, referred to (not uploaded) by a later checkpoint. */
        SharedFile reused() {
            return new SharedFile(handle, length, crc32c, encoding, false);
        }
    }

    /** Files of each checkpoint not yet subsumed, by checkpoint id, then by local path. */
    private final SortedMap<Long, Map<String, SharedFile>> byCheckpoint = new TreeMap<>();

    private long lastCompleted = -1;

    /** The files a new checkpoint may refer to instead of uploading, by local path. */
    synchronized Map<String, SharedFile> base() {
        Map<String, SharedFile> confirmed = byCheckpoint.get(lastCompleted);
        if (confirmed == null) {
            return Map.of();
        }
        Map<String, SharedFile> base = new HashMap<>(confirmed);
        for (Map<String, SharedFile> later : byCheckpoint.tailMap(lastCompleted + 1).values()) {
            for (Map.Entry<String, SharedFile> file : later.entrySet()) {
                if (file.getValue().uploaded()) {
                    base.remove(file.getKey());
                }
            }
        }
        return base;
    }

    synchronized void recorded(long checkpointId, Map<String, SharedFile> files) {
        if (checkpointId > lastCompleted) {
            byCheckpoint.put(checkpointId, Map.copyOf(files));
        }
    }

    /** The files of a restored checkpoint, which is complete by definition. */
    public synchronized void restored(long checkpointId, Map<String, SharedFile> files) {
        byCheckpoint.clear();
        byCheckpoint.put(checkpointId, Map.copyOf(files));
        lastCompleted = checkpointId;
    }

    public synchronized void completed(long checkpointId) {
        // A savepoint or a checkpoint taken without this strategy has nothing recorded here.
        if (checkpointId > lastCompleted && byCheckpoint.containsKey(checkpointId)) {
            byCheckpoint.headMap(checkpointId).clear();
            lastCompleted = checkpointId;
        }
    }

    public synchronized void aborted(long checkpointId) {
        if (checkpointId != lastCompleted) {
            byCheckpoint.remove(checkpointId);
        }
    }
}
