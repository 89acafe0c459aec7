package io.flowkv.nexmark;

/** Record count and checksum of a query's output. */
record Fingerprint(long records, long checksum) {
    @Override
    public String toString() {
        return String.format("records=%d checksum=%016x", records, checksum);
    }
}
