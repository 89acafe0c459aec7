package io.flowkv.nexmark;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class EventSerializersTest {
    private static final List<String> SAMPLES =
            List.of(
                    "",
                    "a",
                    "https://nexmark.com/abcde",
                    "x".repeat(5000),
                    "with\0zero",
                    "caf\u00e9",
                    "\u20ac and \ud83d\ude00",
                    "\u007f\u0080");

    @Test
    void writesTheBytesWriteUtfWrites() throws IOException {
        for (String s : SAMPLES) {
            DataOutputSerializer ours = new DataOutputSerializer(16);
            EventSerializers.writeString(ours, s);
            DataOutputSerializer jdk = new DataOutputSerializer(16);
            jdk.writeUTF(s);
            assertThat(ours.getCopyOfBuffer())
                    .as("bytes of %s", s)
                    .isEqualTo(jdk.getCopyOfBuffer());
        }
    }

    @Test
    void readsWhatItAndWriteUtfWrote() throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(16);
        for (String s : SAMPLES) {
            EventSerializers.writeString(out, s);
            out.writeUTF(s);
        }
        DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
        for (String s : SAMPLES) {
            assertThat(EventSerializers.readString(in)).isEqualTo(s);
            assertThat(EventSerializers.readString(in)).isEqualTo(s);
        }
        assertThat(in.available()).isZero();
    }

    @Test
    void roundTripsGeneratedEvents() throws IOException {
        EventGenerator generator = new EventGenerator(GeneratorConfig.of(500, 10_000));
        var serializer = EventSerializers.EventSerializer.INSTANCE;
        DataOutputSerializer out = new DataOutputSerializer(256);
        for (long n = 0; n < 500; n++) {
            Event e = generator.event(n);
            out.clear();
            serializer.serialize(e, out);
            Event back = serializer.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
            assertThat(back).isEqualTo(e);
        }
    }
}
