package io.flowkv.core;

import java.nio.file.Path;
import java.util.List;

/**
 * What {@code seal()} of a store returns: the manifest and every file it references, each with the
 * length the manifest relies on. These files are never modified again by the store (later writes go
 * to new files), so a checkpoint may hard-link, copy or upload them as they are. The store may
 * delete them later (window removed, compaction), so a caller that needs them must take its copy
 * before handing control back to the store.
 *
 * <p>{@code seal()} fsyncs the files and the manifest. {@code seal(false)} fsyncs nothing: the
 * files are complete for readers (the operating system holds them) but may not survive a crash of
 * the machine. A checkpoint seals that way, since what must survive is the copy it uploads, and a
 * torn local file fails its checksum on a local restore, which Flink then retries from the uploaded
 * copy.
 */
public record SealedStore(Path manifest, List<SealedFile> files) {
    public SealedStore {
        files = List.copyOf(files);
    }

    /** One immutable file of a sealed store. */
    public record SealedFile(Path path, long length) {}
}
