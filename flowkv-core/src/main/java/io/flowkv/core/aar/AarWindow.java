package io.flowkv.core.aar;

/** One window of the store: its serialized bytes and its partitions. */
final class AarWindow {
    final byte[] bytes;
    final long hash;
    final int id;
    private final AarPartition[] partitions;

    AarWindow(byte[] bytes, long hash, int id, int partitionCount) {
        this.bytes = bytes;
        this.hash = hash;
        this.id = id;
        this.partitions = new AarPartition[partitionCount];
        for (int i = 0; i < partitionCount; i++) {
            partitions[i] = new AarPartition(this, i);
        }
    }

    AarPartition partition(int index) {
        return partitions[index];
    }

    int partitionCount() {
        return partitions.length;
    }

    boolean isEmpty() {
        for (AarPartition p : partitions) {
            if (!p.isEmpty()) {
                return false;
            }
        }
        return true;
    }
}
