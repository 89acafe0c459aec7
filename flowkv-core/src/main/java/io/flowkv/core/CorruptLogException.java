package io.flowkv.core;

import java.io.IOException;
import java.nio.file.Path;

/** A log, index or manifest file failed validation: bad header, checksum mismatch or truncation. */
public final class CorruptLogException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Path file;
    private final long offset;

    public CorruptLogException(Path file, long offset, String problem) {
        super("Corrupt FlowKV file " + file + " at offset " + offset + ": " + problem);
        this.file = file;
        this.offset = offset;
    }

    public Path file() {
        return file;
    }

    public long offset() {
        return offset;
    }
}
