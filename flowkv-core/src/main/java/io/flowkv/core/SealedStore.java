package io.flowkv.core;

import java.nio.file.Path;
import java.util.List;

/**
 * What {@code seal()} of a store returns: the manifest and every file it references, each with the
 * length the manifest relies on. These files are never modified again by the store (later writes go
 * to new files), so a checkpoint may hard-link, copy or upload them as they are. The store may
 * delete them later (window removed, compaction), so a caller that needs them must take its copy
 * before handing control back to the store.
 */
public record SealedStore(Path manifest, List<SealedFile> files) {
    public SealedStore {
        files = List.copyOf(files);
    }

    /** One immutable file of a sealed store. */
    public record SealedFile(Path path, long length) {}
}
