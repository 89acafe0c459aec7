package io.flowkv.flink;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.ValueConsumer;
import io.flowkv.core.memory.MemoryBudget;
import io.flowkv.core.rmw.RmwStore;
import io.flowkv.core.rmw.RmwStoreOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;

/**
 * Replays a sql-q19-like AppendOnlyTopN state pattern (per in-range record: put of a new user key,
 * and once the top 10 is full a remove of the last one; iterator on TopN-cache miss) against one
 * RmwStore, in two map layouts: (A) FlowKV's MapStateStorage (entry + chunk + header records) and
 * (B) a whole-map "inline" record for small maps (one get + one put per operation).
 * usage: TopNLayoutBench chunked|inline [records]
 */
public final class TopNLayoutBench {
    /** StateStorage over one RmwStore, just the point operations. */
    static final class Rmw implements StateStorage {
        final RmwStore s;
        Rmw(RmwStore s) { this.s = s; }
        public StorePattern pattern() { return StorePattern.GENERIC; }
        public boolean isList() { return false; }
        public void append(byte[] k, byte[] n, byte[] e) { throw new UnsupportedOperationException(); }
        public boolean getElements(byte[] k, byte[] n, ValueConsumer o) { throw new UnsupportedOperationException(); }
        public byte[] get(byte[] k, byte[] n) throws IOException { return s.get(k, n); }
        public void put(byte[] k, byte[] n, byte[] v) throws IOException { s.put(k, n, v); }
        public void remove(byte[] k, byte[] n) throws IOException { s.remove(k, n); }
        public void forEach(EntryVisitor v) { throw new UnsupportedOperationException(); }
        public void flush() throws IOException { s.flush(); }
        public List<SealedStore> seal() { throw new UnsupportedOperationException(); }
        public Path directory() { return null; }
        public void close() throws IOException { s.close(); }
    }

    interface Layout {
        void put(byte[] key, byte[] ns, byte[] uk, byte[] v) throws IOException;
        void remove(byte[] key, byte[] ns, byte[] uk) throws IOException;
        int iterate(byte[] key, byte[] ns) throws IOException; // returns entries seen
    }

    static final class Chunked implements Layout {
        final MapStateStorage m;
        Chunked(StateStorage inner) { m = new MapStateStorage(inner); }
        public void put(byte[] k, byte[] n, byte[] uk, byte[] v) throws IOException { m.putEntry(k, n, uk, v); }
        public void remove(byte[] k, byte[] n, byte[] uk) throws IOException { m.removeEntry(k, n, uk); }
        public int iterate(byte[] k, byte[] n) throws IOException {
            int seen = 0;
            for (int c = m.firstChunk(k, n); c != MapStateStorage.NONE; ) {
                MapStateStorage.Chunk ch = m.chunkOrNull(k, n, c);
                if (ch == null) break;
                for (byte[] uk : ch.keys) if (m.getEntry(k, n, uk) != null) seen++;
                c = ch.next;
            }
            return seen;
        }
    }

    /** Whole map in one record: [count] n x [uk len][uk][v len][v]  (FlowKVMapState's raw layout). */
    static final class Inline implements Layout {
        final StateStorage s;
        Inline(StateStorage s) { this.s = s; }
        static byte[] name(byte[] ns) { byte[] b = Arrays.copyOf(ns, ns.length + 1); b[ns.length] = 'S'; return b; }
        /** offset of the entry of uk in blob, or -1 */
        static int find(byte[] b, byte[] uk) {
            int n = MapStateStorage.readInt(b, 0), at = 4;
            for (int i = 0; i < n; i++) {
                int kl = MapStateStorage.readInt(b, at);
                int vl = MapStateStorage.readInt(b, at + 4 + kl);
                if (kl == uk.length && Arrays.equals(b, at + 4, at + 4 + kl, uk, 0, kl)) return at;
                at += 8 + kl + Math.max(0, vl);
            }
            return -1;
        }
        static int entryLen(byte[] b, int at) { int kl = MapStateStorage.readInt(b, at); return 8 + kl + Math.max(0, MapStateStorage.readInt(b, at + 4 + kl)); }
        public void put(byte[] k, byte[] n, byte[] uk, byte[] v) throws IOException {
            byte[] name = name(n);
            byte[] b = s.get(k, name);
            if (b == null) { b = new byte[4]; }
            int at = find(b, uk);
            int cut = at < 0 ? 0 : entryLen(b, at);
            int add = 8 + uk.length + v.length;
            byte[] out = new byte[b.length - cut + add];
            int count = MapStateStorage.readInt(b, 0) + (at < 0 ? 1 : 0);
            int from = at < 0 ? b.length : at;
            System.arraycopy(b, 0, out, 0, from);
            System.arraycopy(b, from + cut, out, from, b.length - from - cut);
            int w = b.length - cut;
            MapStateStorage.writeInt(out, w, uk.length); System.arraycopy(uk, 0, out, w + 4, uk.length);
            MapStateStorage.writeInt(out, w + 4 + uk.length, v.length); System.arraycopy(v, 0, out, w + 8 + uk.length, v.length);
            MapStateStorage.writeInt(out, 0, count);
            s.put(k, name, out);
        }
        public void remove(byte[] k, byte[] n, byte[] uk) throws IOException {
            byte[] name = name(n);
            byte[] b = s.get(k, name);
            if (b == null) return;
            int at = find(b, uk);
            if (at < 0) return;
            int cut = entryLen(b, at);
            int count = MapStateStorage.readInt(b, 0) - 1;
            if (count == 0) { s.remove(k, name); return; }
            byte[] out = new byte[b.length - cut];
            System.arraycopy(b, 0, out, 0, at);
            System.arraycopy(b, at + cut, out, at, b.length - at - cut);
            MapStateStorage.writeInt(out, 0, count);
            s.put(k, name, out);
        }
        public int iterate(byte[] k, byte[] n) throws IOException {
            byte[] b = s.get(k, name(n));
            return b == null ? 0 : MapStateStorage.readInt(b, 0);
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        int records = args.length > 1 ? Integer.parseInt(args[1]) : 920_000;
        Path dir = Files.createTempDirectory("topnbench");
        MemoryBudget budget = new MemoryBudget(32L << 20);
        RmwStore store = RmwStore.open(RmwStoreOptions.builder(dir).writeBufferBytes(4L << 20)
                .indexCacheBytes(8L << 20).build(), budget);
        Rmw inner = new Rmw(store);
        Layout l = mode.equals("inline") ? new Inline(inner) : new Chunked(inner);
        Random r = new Random(42);
        byte[] ns = new byte[] {0};
        Map<Long, TreeMap<Long, Integer>> model = new HashMap<>(); // auction -> price set (the heap TopN buffer)
        LinkedHashMap<Long, Boolean> lru = new LinkedHashMap<>(1024, 0.75f, true) {
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> e) { return size() > 1000; }
        };
        byte[] value = new byte[4 + 4 + 190];
        long puts = 0, removes = 0, iters = 0;
        long t0 = System.nanoTime();
        for (int i = 0; i < records; i++) {
            long newest = i / 15 + 1;
            long auction = r.nextBoolean() ? Math.max(1, newest - r.nextInt(100)) : Math.max(1, newest - r.nextInt(10_000));
            byte[] key = new byte[22];
            key[0] = (byte) (auction % 128); // key group prefix
            for (int j = 0; j < 8; j++) key[14 + j] = (byte) (auction >>> (8 * j));
            if (lru.get(auction) == null) { lru.put(auction, true); l.iterate(key, ns); iters++; }
            TreeMap<Long, Integer> top = model.computeIfAbsent(auction, a -> new TreeMap<>());
            long price = 1 + r.nextInt(1_000_000);
            if (top.size() >= 10 && price <= top.firstKey()) continue;
            top.merge(price, 1, Integer::sum);
            byte[] uk = new byte[21];
            for (int j = 0; j < 8; j++) uk[13 + j] = (byte) (price >>> (8 * j));
            r.nextBytes(value);
            l.put(key, ns, uk, value); puts++;
            if (top.size() > 10) {
                long last = top.firstKey(); top.remove(last);
                byte[] luk = new byte[21];
                for (int j = 0; j < 8; j++) luk[13 + j] = (byte) (last >>> (8 * j));
                l.remove(key, ns, luk); removes++;
            }
        }
        long ns_ = System.nanoTime() - t0;
        System.out.printf("%s: %d records, %d puts, %d removes, %d iterators: %.2f s, %.0f ns/record; stats %s%n",
                mode, records, puts, removes, iters, ns_ / 1e9, (double) ns_ / records, store.stats());
        store.close();
    }
}
