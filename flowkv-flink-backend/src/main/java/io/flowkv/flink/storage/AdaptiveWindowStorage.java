package io.flowkv.flink.storage;

import io.flowkv.core.EntryVisitor;
import io.flowkv.core.SealedStore;
import io.flowkv.core.StoreStats;
import io.flowkv.core.TriggerTimes;
import io.flowkv.core.ValueConsumer;

import org.apache.flink.util.FileUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * The window contents of a non-merging {@code TimeWindow} assigner, which FlowKV cannot classify
 * from the state's shape: tumbling and sliding windows fire for all keys at once (AAR), a custom
 * assigner may give every key windows of its own that fire per key (AUR). It starts on AAR, judges
 * from the appends ({@link WindowAlignment}) and, if the windows are per key, moves every element
 * to an AUR storage in a directory of its own, deletes the AAR files and carries on there. The
 * decision is logged with its evidence; a checkpoint after it records AUR, so a restore reopens AUR
 * directly.
 */
final class AdaptiveWindowStorage implements ListStateStorage {
    private static final Logger LOG = LoggerFactory.getLogger(AdaptiveWindowStorage.class);

    /** Opens the AUR storage the elements move to. */
    interface AurOpener {
        ListStateStorage open(Path directory) throws IOException;
    }

    private final String description;
    private final AurOpener aurOpener;
    private AarStateStorage aar;
    private ListStateStorage current;
    private final Runnable afterMove;
    private WindowAlignment alignment;

    /**
     * {@code afterMove} runs once the elements are on AUR, e.g. to hand the AUR store the windows'
     * pending timers.
     */
    AdaptiveWindowStorage(
            String description,
            AarStateStorage aar,
            int manyWindows,
            AurOpener aurOpener,
            Runnable afterMove) {
        this.description = description;
        this.aar = aar;
        this.current = aar;
        this.alignment = new WindowAlignment(manyWindows);
        this.aurOpener = aurOpener;
        this.afterMove = afterMove;
    }

    /** The storage the entries are in now. */
    ListStateStorage current() {
        return current;
    }

    /** Whether the store is still being judged. */
    boolean judging() {
        return alignment != null;
    }

    @Override
    public StorePattern pattern() {
        return current.pattern();
    }

    @Override
    public void append(int keyGroup, byte[] key, byte[] namespace, byte[] element)
            throws IOException {
        current.append(keyGroup, key, namespace, element);
        if (alignment == null) {
            return;
        }
        WindowAlignment.Verdict verdict = alignment.observe(key, namespace, aar.windowCount());
        if (verdict == WindowAlignment.Verdict.ALIGNED) {
            LOG.info(
                    "FlowKV {}: stays on AAR, windows aligned ({})",
                    description,
                    alignment.evidence(aar.windowCount()));
            alignment = null;
        } else if (verdict == WindowAlignment.Verdict.PER_KEY) {
            String evidence = alignment.evidence(aar.windowCount());
            alignment = null;
            moveToAur(evidence);
        }
    }

    private void moveToAur(String evidence) throws IOException {
        long start = System.nanoTime();
        Path from = aar.directory();
        Path to = from.resolveSibling(from.getFileName() + "-aur");
        if (Files.exists(to)) {
            FileUtils.deleteDirectory(to.toFile());
        }
        Files.createDirectories(to);
        ListStateStorage aur = aurOpener.open(to);
        AarStateStorage source = aar;
        long[] moved = new long[2];
        try {
            IOException[] failure = new IOException[1];
            aar.forEach(
                    (key, window, value, offset, length) -> {
                        if (failure[0] != null) {
                            return;
                        }
                        try {
                            aur.append(
                                    source.keyGroupOf(key),
                                    key,
                                    window,
                                    Arrays.copyOfRange(value, offset, offset + length));
                            moved[0]++;
                            moved[1] += length;
                        } catch (IOException e) {
                            failure[0] = e;
                        }
                    });
            if (failure[0] != null) {
                throw failure[0];
            }
        } catch (IOException | RuntimeException e) {
            // The AAR store is untouched: stay on it, and do not try again.
            try {
                aur.close();
                FileUtils.deleteDirectory(to.toFile());
            } catch (IOException cleanup) {
                e.addSuppressed(cleanup);
            }
            LOG.warn(
                    "FlowKV {}: windows fire per key ({}), but moving them to AUR failed; they"
                            + " stay on AAR",
                    description,
                    evidence,
                    e);
            return;
        }
        current = aur;
        AarStateStorage old = aar;
        aar = null;
        try {
            old.close();
            FileUtils.deleteDirectory(from.toFile());
        } catch (IOException e) {
            LOG.warn("FlowKV {}: could not delete the AAR files in {}", description, from, e);
        }
        afterMove.run();
        LOG.info(
                "FlowKV {}: -> AUR, windows fire per key ({}); moved {} elements ({} bytes) in"
                        + " {} ms",
                description,
                evidence,
                moved[0],
                moved[1],
                (System.nanoTime() - start) / 1_000_000);
    }

    @Override
    public boolean getElements(int keyGroup, byte[] key, byte[] namespace, ValueConsumer out)
            throws IOException {
        return current.getElements(keyGroup, key, namespace, out);
    }

    @Override
    public void remove(int keyGroup, byte[] key, byte[] namespace) throws IOException {
        current.remove(keyGroup, key, namespace);
    }

    @Override
    public void forEach(EntryVisitor visitor) throws IOException {
        current.forEach(visitor);
    }

    @Override
    public TriggerTimes triggerTimes(int keyGroup) throws IOException {
        return current.triggerTimes(keyGroup);
    }

    @Override
    public void flush() throws IOException {
        current.flush();
    }

    @Override
    public int parts() {
        return current.parts();
    }

    @Override
    public void flushPart(int part) throws IOException {
        current.flushPart(part);
    }

    @Override
    public List<SealedStore> seal() throws IOException {
        return current.seal();
    }

    @Override
    public Path directory() {
        return current.directory();
    }

    @Override
    public List<StoreStats> stats() {
        return current.stats();
    }

    @Override
    public long memoryUsed() {
        return current.memoryUsed();
    }

    @Override
    public void close() throws IOException {
        current.close();
    }
}
