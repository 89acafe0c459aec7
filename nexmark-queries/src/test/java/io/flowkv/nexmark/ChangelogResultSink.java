package io.flowkv.nexmark;

import io.flowkv.nexmark.sql.ChangelogApplier;
import io.flowkv.nexmark.sql.SqlQuery;

import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An exactly-once sink for a SQL query's changelog: the final table it describes (rows with their
 * multiplicity, retractions applied) per run id. A changelog cannot be made idempotent row by row
 * (an insert replayed after a restore would count twice), so the writer stages its rows and hands
 * them over as one batch per checkpoint; the committer applies a batch only once the checkpoint has
 * completed, and only once even if it is committed again after a failure. Rows written after the
 * last completed checkpoint are dropped with the failed attempt and come again from the replay.
 *
 * <p>The committer applies the changes with a {@link ChangelogApplier}: by key for a query with an
 * upsert key ({@link SqlQuery#upsertKey}).
 */
final class ChangelogResultSink implements Sink<Row>, SupportsCommitter<ChangelogResultSink.Batch> {
    private static final long serialVersionUID = 1L;

    /** Per run id: each row of the final table (its fields as text) and how often it is in it. */
    private static final Map<String, Map<String, Long>> TABLES = new ConcurrentHashMap<>();

    /** Per run id: how its changes reach its table (an upsert-keyed one keeps each key's row). */
    private static final Map<String, ChangelogApplier<String>> APPLIERS = new ConcurrentHashMap<>();

    /** Batches already applied, by id: a commit retried after a restore changes nothing. */
    private static final Set<String> APPLIED = ConcurrentHashMap.newKeySet();

    private final String runId;
    private final int upsertKey;

    /** {@code upsertKey}: {@link SqlQuery#upsertKey} of the query whose changelog this takes. */
    ChangelogResultSink(String runId, int upsertKey) {
        this.runId = runId;
        this.upsertKey = upsertKey;
    }

    /** The final table of run {@code runId}: rows with a count above zero. */
    static Map<String, Long> table(String runId) {
        return Map.copyOf(TABLES.getOrDefault(runId, Map.of()));
    }

    /**
     * The rows staged between two checkpoints of one writer, each {@code kind|fields}; with an
     * upsert key (not {@link SqlQuery#NO_UPSERT_KEY}), {@code keys} holds each row's key field.
     */
    record Batch(String id, String runId, int upsertKey, List<String> changes, List<String> keys) {}

    @Override
    public CommittingSinkWriter<Row, Batch> createWriter(WriterInitContext context) {
        return new CommittingSinkWriter<>() {
            private List<String> staged = new ArrayList<>();
            private List<String> keys = new ArrayList<>();

            @Override
            public void write(Row row, Context context) {
                staged.add(encode(row));
                if (upsertKey != SqlQuery.NO_UPSERT_KEY) {
                    keys.add(String.valueOf(row.getField(upsertKey)));
                }
            }

            @Override
            public Collection<Batch> prepareCommit() {
                if (staged.isEmpty()) {
                    return List.of();
                }
                Batch batch =
                        new Batch(UUID.randomUUID().toString(), runId, upsertKey, staged, keys);
                staged = new ArrayList<>();
                keys = new ArrayList<>();
                return List.of(batch);
            }

            @Override
            public void flush(boolean endOfInput) {}

            @Override
            public void close() {}
        };
    }

    /** The row's kind, then its fields: "+I|a,b,c". */
    private static String encode(Row row) {
        StringBuilder fields = new StringBuilder();
        for (int i = 0; i < row.getArity(); i++) {
            fields.append(i == 0 ? "" : ",").append(row.getField(i));
        }
        return row.getKind().shortString() + "|" + fields;
    }

    @Override
    public Committer<Batch> createCommitter(CommitterInitContext context) {
        return new Committer<>() {
            @Override
            public void commit(Collection<CommitRequest<Batch>> requests) {
                for (CommitRequest<Batch> request : requests) {
                    Batch batch = request.getCommittable();
                    if (APPLIED.add(batch.id())) {
                        apply(batch);
                    } else {
                        request.signalAlreadyCommitted();
                    }
                }
            }

            @Override
            public void close() {}
        };
    }

    private static void apply(Batch batch) {
        Map<String, Long> table =
                TABLES.computeIfAbsent(batch.runId(), id -> new ConcurrentHashMap<>());
        ChangelogApplier<String> applier =
                APPLIERS.computeIfAbsent(
                        batch.runId(),
                        id ->
                                new ChangelogApplier<>(
                                        batch.upsertKey(),
                                        (fields, delta) ->
                                                table.merge(
                                                        fields,
                                                        (long) delta,
                                                        (a, b) -> a + b == 0 ? null : a + b)));
        // The committers of one run may commit at once (their keys differ).
        synchronized (applier) {
            for (int i = 0; i < batch.changes().size(); i++) {
                String change = batch.changes().get(i);
                int bar = change.indexOf('|');
                String key =
                        batch.upsertKey() == SqlQuery.NO_UPSERT_KEY ? null : batch.keys().get(i);
                applier.apply(kindOf(change.substring(0, bar)), key, change.substring(bar + 1));
            }
        }
    }

    private static RowKind kindOf(String shortString) {
        for (RowKind kind : RowKind.values()) {
            if (kind.shortString().equals(shortString)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown row kind " + shortString);
    }

    @Override
    public SimpleVersionedSerializer<Batch> getCommittableSerializer() {
        return new BatchSerializer();
    }

    private static final class BatchSerializer implements SimpleVersionedSerializer<Batch> {
        @Override
        public int getVersion() {
            return 2;
        }

        @Override
        public byte[] serialize(Batch batch) throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            try (DataOutputStream out = new DataOutputStream(bytes)) {
                out.writeUTF(batch.id());
                out.writeUTF(batch.runId());
                out.writeInt(batch.upsertKey());
                writeList(out, batch.changes());
                writeList(out, batch.keys());
            }
            return bytes.toByteArray();
        }

        @Override
        public Batch deserialize(int version, byte[] serialized) throws IOException {
            if (version != 2) {
                throw new IOException("unknown batch version " + version);
            }
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
                String id = in.readUTF();
                String runId = in.readUTF();
                int upsertKey = in.readInt();
                return new Batch(id, runId, upsertKey, readList(in), readList(in));
            }
        }

        private static void writeList(DataOutputStream out, List<String> list) throws IOException {
            out.writeInt(list.size());
            for (String s : list) {
                out.writeUTF(s);
            }
        }

        private static List<String> readList(DataInputStream in) throws IOException {
            int n = in.readInt();
            List<String> list = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                list.add(in.readUTF());
            }
            return list;
        }
    }
}
