package io.flowkv.flink.snapshot;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static io.flowkv.flink.FlowKVOptions.CheckpointCompression.LZ4;
import static io.flowkv.flink.FlowKVOptions.CheckpointCompression.NONE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The metadata stream's file entries: their encodings, and the versions before encodings. */
class CheckpointMetadataTest {
    private static final List<CheckpointMetadata.FileEntry> FILES =
            List.of(
                    new CheckpointMetadata.FileEntry("s/aur-data-00000001.log", 4096, 0x1234, LZ4),
                    new CheckpointMetadata.FileEntry("s/aur-index-00000002.log", 512, -7, NONE));

    private static byte[] encode(List<CheckpointMetadata.FileEntry> files) throws IOException {
        return CheckpointMetadata.encode(
                IntSerializer.INSTANCE,
                List.of(),
                KeyGroupRange.of(0, 3),
                List.of(),
                files,
                List.of(),
                List.of());
    }

    private static CheckpointMetadata.Decoded decode(byte[] bytes) throws IOException {
        return CheckpointMetadata.decode(bytes, CheckpointMetadataTest.class.getClassLoader(), "m");
    }

    @Test
    void shouldKeepEachFilesEncoding() throws IOException {
        assertThat(decode(encode(FILES)).files()).isEqualTo(FILES);
    }

    @Test
    void shouldReadAVersion4StreamAsUploadedAsIs() throws IOException {
        CheckpointMetadata.FileEntry file = FILES.get(1);
        byte[] v5 = encode(List.of(file));
        // Version 4 is version 5 without the encoding byte, which the one file entry ends with,
        // just before the (empty) timer queue count.
        int length = ByteBuffer.wrap(v5, 8, 4).getInt();
        int encodingAt = 12 + length - 4 - 1;
        assertThat(v5[encodingAt]).isZero();
        byte[] body = new byte[length - 1];
        System.arraycopy(v5, 12, body, 0, encodingAt - 12);
        System.arraycopy(v5, encodingAt + 1, body, encodingAt - 12, length - (encodingAt - 12) - 1);
        ByteBuffer v4 = ByteBuffer.allocate(body.length + 16);
        v4.putInt(CheckpointMetadata.MAGIC).putInt(4).putInt(body.length).put(body);
        v4.putInt(CheckpointMetadata.crc32c(body, 0, body.length));

        assertThat(decode(v4.array()).files())
                .containsExactly(
                        new CheckpointMetadata.FileEntry(
                                file.path(), file.length(), file.crc32c(), NONE));
    }

    @Test
    void shouldReadAVersion5StreamWhoseMapsAreAllChunked() throws IOException {
        byte[] v6 = encode(FILES);
        assertThat(ByteBuffer.wrap(v6, 4, 4).getInt()).isEqualTo(6);
        ByteBuffer.wrap(v6, 4, 4).putInt(5);
        assertThat(decode(v6).files()).isEqualTo(FILES);
        ByteBuffer.wrap(v6, 4, 4).putInt(7);
        assertThatThrownBy(() -> decode(v6))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("has version 7")
                .hasMessageContaining("versions 3 to 6");
    }

    @Test
    void shouldRefuseAnUnknownEncodingNamingTheFile() throws IOException {
        byte[] bytes = encode(List.of(FILES.get(1)));
        int length = ByteBuffer.wrap(bytes, 8, 4).getInt();
        int encodingAt = 12 + length - 4 - 1;
        bytes[encodingAt] = 9;
        int crc = CheckpointMetadata.crc32c(bytes, 12, length);
        ByteBuffer.wrap(bytes, 12 + length, 4).putInt(crc);

        assertThatThrownBy(() -> decode(Arrays.copyOf(bytes, bytes.length)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("aur-index-00000002.log")
                .hasMessageContaining("unknown encoding 9");
    }
}
