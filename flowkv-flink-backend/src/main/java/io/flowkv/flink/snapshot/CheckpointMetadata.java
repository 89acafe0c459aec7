package io.flowkv.flink.snapshot;

import io.flowkv.flink.FlowKVOptions;
import io.flowkv.flink.storage.MapStateStorage;
import io.flowkv.flink.storage.StorePattern;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The metadata stream of one incremental checkpoint of a keyed backend: what Flink needs to
 * re-register the states, which store holds each state and how to reopen it, every store file the
 * checkpoint consists of with its checksum, and the timers. Big-endian (Java data streams):
 *
 * <pre>
 *   [magic "FKVM":int][version:int][body length:int][body][CRC32C of body:int]
 *
 *   body:
 *   [Flink's KeyedBackendSerializationProxy: key serializer, meta info of every state, then timers]
 *   [first key group:int][last key group:int]          range the stores were written for
 *   [key-value states:int]                               in meta info order, then per state:
 *     [bound:byte] if 1: [pattern:UTF][list:byte][directory:UTF][instances:int]
 *                          per instance: [manifest path:UTF][manifest length:int][manifest bytes]
 *   [files:int]  per store file: [path:UTF][length:long][CRC32C of the file:int]
 *                                  [encoding:byte]  0: uploaded as is, 1: as one LZ4 frame
 *                                                   (length and CRC32C are the store file's)
 *   [timer queues:int]  in meta info order, per queue:
 *     [timers:int] >= 0: per timer: [key group:int][length:int][serialized timer]  (heap queue)
 *     [-1:int][timer file path:UTF]  (a queue FlowKV stores: its timers are in that file, one
 *                                     of the files above; FileType.TIMER_SNAPSHOT, FORMAT.md)
 * </pre>
 *
 * Paths are relative to the backend's working directory, '/'-separated. The store files travel as
 * the shared state of Flink's {@code IncrementalRemoteKeyedStateHandle}, keyed by that path; the
 * manifests are small and ride inside this stream.
 */
@Internal
public final class CheckpointMetadata {
    static final int MAGIC = 0x464B564D;

    /**
     * 2: map state is stored one record per entry ({@link MapStateStorage}); 1 is refused. 3: list
     * state in chunks. 4: a stored timer queue's timers in a file; 3 is still read (it has none).
     * 5: each file's encoding in the checkpoint storage; 3 and 4 are still read (uploaded as is).
     * 6: small maps inline in their header record ({@link MapStateStorage}); the stream is version
     * 5's, and 3 to 5 are still read (their maps are all chunked, which this build reads too).
     */
    static final int VERSION = 6;

    /** The oldest version this build reads. */
    static final int OLDEST_READ_VERSION = 3;

    /** One store instance's manifest, by path, with its bytes. */
    public record Manifest(String path, byte[] bytes) {}

    /** How a bound state's storage is reopened. */
    public record StoredState(
            StorePattern pattern, boolean list, String directory, List<Manifest> manifests) {}

    /**
     * One store file with the length and checksum it must have on restore, and how its upload
     * encodes it.
     */
    public record FileEntry(
            String path, long length, int crc32c, FlowKVOptions.CheckpointCompression encoding) {}

    private static final byte ENCODING_NONE = 0;
    private static final byte ENCODING_LZ4 = 1;

    /** One serialized timer. */
    public record Timer(int keyGroup, byte[] bytes) {}

    /** A decoded stream; {@code states} holds null for a state that was never bound. */
    public record Decoded(
            KeyedBackendSerializationProxy<?> proxy,
            KeyGroupRange range,
            List<StoredState> states,
            List<FileEntry> files,
            List<List<Timer>> queues,
            List<String> timerFiles) {}

    private CheckpointMetadata() {}

    static <K> byte[] encode(
            TypeSerializer<K> keySerializer,
            List<StateMetaInfoSnapshot> metaInfos,
            KeyGroupRange range,
            List<StoredState> states,
            List<FileEntry> files,
            List<List<Timer>> queues,
            List<String> timerFiles)
            throws IOException {
        DataOutputSerializer body = new DataOutputSerializer(4096);
        new KeyedBackendSerializationProxy<>(keySerializer, metaInfos, false).write(body);
        body.writeInt(range.getStartKeyGroup());
        body.writeInt(range.getEndKeyGroup());
        body.writeInt(states.size());
        for (StoredState state : states) {
            body.writeBoolean(state != null);
            if (state == null) {
                continue;
            }
            body.writeUTF(state.pattern().name());
            body.writeBoolean(state.list());
            body.writeUTF(state.directory());
            body.writeInt(state.manifests().size());
            for (Manifest manifest : state.manifests()) {
                body.writeUTF(manifest.path());
                body.writeInt(manifest.bytes().length);
                body.write(manifest.bytes());
            }
        }
        body.writeInt(files.size());
        for (FileEntry file : files) {
            body.writeUTF(file.path());
            body.writeLong(file.length());
            body.writeInt(file.crc32c());
            body.writeByte(
                    file.encoding() == FlowKVOptions.CheckpointCompression.LZ4
                            ? ENCODING_LZ4
                            : ENCODING_NONE);
        }
        body.writeInt(queues.size());
        for (int q = 0; q < queues.size(); q++) {
            if (timerFiles.get(q) != null) {
                body.writeInt(-1);
                body.writeUTF(timerFiles.get(q));
                continue;
            }
            List<Timer> queue = queues.get(q);
            body.writeInt(queue.size());
            for (Timer timer : queue) {
                body.writeInt(timer.keyGroup());
                body.writeInt(timer.bytes().length);
                body.write(timer.bytes());
            }
        }
        DataOutputSerializer out = new DataOutputSerializer(body.length() + 16);
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(body.length());
        out.write(body.getSharedBuffer(), 0, body.length());
        out.writeInt(crc32c(body.getSharedBuffer(), 0, body.length()));
        return out.getCopyOfBuffer();
    }

    /**
     * Decodes a stream read from {@code source} (named in every error). Checks magic, version and
     * checksum before it interprets anything.
     */
    public static Decoded decode(byte[] bytes, ClassLoader userCodeClassLoader, String source)
            throws IOException {
        if (bytes.length < 16) {
            throw new IOException(
                    "FlowKV checkpoint metadata "
                            + source
                            + " is truncated: "
                            + bytes.length
                            + " bytes");
        }
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(
                    String.format(
                            "%s is not FlowKV checkpoint metadata (magic 0x%08x, expected 0x%08x);"
                                    + " an incremental checkpoint of another state backend cannot"
                                    + " be restored on FlowKV, use a canonical savepoint",
                            source, magic, MAGIC));
        }
        int version = in.readInt();
        if (version < OLDEST_READ_VERSION || version > VERSION) {
            throw new IOException(
                    "FlowKV checkpoint metadata "
                            + source
                            + " has version "
                            + version
                            + ", this build reads versions "
                            + OLDEST_READ_VERSION
                            + " to "
                            + VERSION
                            + " (version 1 stored map state, version 2 list state outside windows"
                            + " in another layout: restore such a job from a canonical"
                            + " savepoint)");
        }
        int length = in.readInt();
        if (length < 0 || length != bytes.length - 16) {
            throw new IOException(
                    "FlowKV checkpoint metadata "
                            + source
                            + " is truncated: body length "
                            + length
                            + ", "
                            + (bytes.length - 16)
                            + " bytes present");
        }
        int expected =
                ((bytes[12 + length] & 0xFF) << 24)
                        | ((bytes[13 + length] & 0xFF) << 16)
                        | ((bytes[14 + length] & 0xFF) << 8)
                        | (bytes[15 + length] & 0xFF);
        int actual = crc32c(bytes, 12, length);
        if (expected != actual) {
            throw new IOException(
                    String.format(
                            "FlowKV checkpoint metadata %s is corrupt: CRC32C 0x%08x, expected 0x%08x",
                            source, actual, expected));
        }
        DataInputDeserializer body = new DataInputDeserializer(bytes, 12, length);
        KeyedBackendSerializationProxy<?> proxy =
                new KeyedBackendSerializationProxy<>(userCodeClassLoader);
        proxy.read(body);
        KeyGroupRange range = KeyGroupRange.of(body.readInt(), body.readInt());
        int stateCount = body.readInt();
        List<StoredState> states = new ArrayList<>(stateCount);
        for (int i = 0; i < stateCount; i++) {
            if (!body.readBoolean()) {
                states.add(null);
                continue;
            }
            StorePattern pattern = StorePattern.valueOf(body.readUTF());
            boolean list = body.readBoolean();
            String directory = body.readUTF();
            int instances = body.readInt();
            List<Manifest> manifests = new ArrayList<>(instances);
            for (int m = 0; m < instances; m++) {
                String path = body.readUTF();
                byte[] manifest = new byte[body.readInt()];
                body.readFully(manifest);
                manifests.add(new Manifest(path, manifest));
            }
            states.add(new StoredState(pattern, list, directory, manifests));
        }
        int fileCount = body.readInt();
        List<FileEntry> files = new ArrayList<>(fileCount);
        for (int i = 0; i < fileCount; i++) {
            String path = body.readUTF();
            long fileLength = body.readLong();
            int crc = body.readInt();
            FlowKVOptions.CheckpointCompression encoding = FlowKVOptions.CheckpointCompression.NONE;
            if (version >= 5) {
                byte code = body.readByte();
                if (code == ENCODING_LZ4) {
                    encoding = FlowKVOptions.CheckpointCompression.LZ4;
                } else if (code != ENCODING_NONE) {
                    throw new IOException(
                            "FlowKV checkpoint metadata "
                                    + source
                                    + " gives store file "
                                    + path
                                    + " the unknown encoding "
                                    + code);
                }
            }
            files.add(new FileEntry(path, fileLength, crc, encoding));
        }
        int queueCount = body.readInt();
        List<List<Timer>> queues = new ArrayList<>(queueCount);
        List<String> timerFiles = new ArrayList<>(queueCount);
        for (int q = 0; q < queueCount; q++) {
            int timerCount = body.readInt();
            if (timerCount == -1 && version >= 4) {
                queues.add(List.of());
                timerFiles.add(body.readUTF());
                continue;
            }
            if (timerCount < 0) {
                throw new IOException(
                        "FlowKV checkpoint metadata "
                                + source
                                + " has a bad timer count "
                                + timerCount);
            }
            timerFiles.add(null);
            List<Timer> timers = new ArrayList<>(timerCount);
            for (int t = 0; t < timerCount; t++) {
                timers.add(readTimer(body));
            }
            queues.add(timers);
        }
        if (body.available() != 0) {
            throw new IOException(
                    "FlowKV checkpoint metadata "
                            + source
                            + " has "
                            + body.available()
                            + " unexpected trailing bytes");
        }
        return new Decoded(proxy, range, states, files, queues, timerFiles);
    }

    /**
     * One timer of a queue. A method of its own so that the JIT compiles it after a few hundred
     * timers: a restore decodes its metadata once per JVM, too few loop iterations for the loop
     * itself to be compiled before it ends.
     */
    private static Timer readTimer(DataInputDeserializer body) throws IOException {
        int keyGroup = body.readInt();
        byte[] timer = new byte[body.readInt()];
        body.readFully(timer);
        return new Timer(keyGroup, timer);
    }

    static int crc32c(byte[] bytes, int offset, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }
}
