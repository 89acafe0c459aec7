package io.flowkv.flink.storage;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class StateRegistryTest {

    private static RegisteredKeyValueStateBackendMetaInfo<String, Long> meta(String name) {
        return new RegisteredKeyValueStateBackendMetaInfo<>(
                StateDescriptor.Type.VALUE,
                name,
                StringSerializer.INSTANCE,
                LongSerializer.INSTANCE,
                StateSnapshotTransformFactory.noTransform());
    }

    @Test
    void shouldNumberStatesInRegistrationOrder() {
        StateRegistry registry = new StateRegistry();
        RegisteredState first = registry.register(meta("first"));
        RegisteredState second = registry.register(meta("second"));

        assertThat(first.id()).isZero();
        assertThat(second.id()).isEqualTo(1);
        assertThat(registry.get("second")).isSameAs(second);
        assertThat(registry.contains("third")).isFalse();
        assertThat(registry.names()).containsExactly("first", "second");
        assertThat(registry.all()).containsExactly(first, second);
    }

    @Test
    void shouldRefuseANameTwiceAndChangesThroughItsViews() {
        StateRegistry registry = new StateRegistry();
        registry.register(meta("only"));

        assertThatThrownBy(() -> registry.register(meta("only")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("only");
        assertThatThrownBy(() -> registry.names().clear())
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> registry.all().clear())
                .isInstanceOf(UnsupportedOperationException.class);
        registry.clear();
        assertThat(registry.size()).isZero();
    }

    @Test
    void shouldBindStorageAndStateOnceAndKeepNameAndTypeAcrossUpdates() throws Exception {
        StateRegistry registry = new StateRegistry();
        RegisteredState registered = registry.register(meta("value"));
        assertThat(registered.storage()).isNull();
        assertThat(registered.pattern()).isNull();
        assertThat(registered.isList()).isFalse();

        RegisteredKeyValueStateBackendMetaInfo<String, Long> upgraded = meta("value");
        registered.updateMetaInfo(upgraded);
        assertThat(registered.metaInfo()).isSameAs(upgraded);
        assertThatThrownBy(() -> registered.updateMetaInfo(meta("other")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("value");
        assertThatThrownBy(
                        () ->
                                registered.updateMetaInfo(
                                        new RegisteredKeyValueStateBackendMetaInfo<>(
                                                StateDescriptor.Type.LIST,
                                                "value",
                                                StringSerializer.INSTANCE,
                                                LongSerializer.INSTANCE,
                                                StateSnapshotTransformFactory.noTransform())))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("LIST");

        StateStorage first = new FixedPatternStorage(StorePattern.RMW);
        registered.bindStorage(first);
        assertThat(registered.storage()).isSameAs(first);
        assertThat(registered.pattern()).isEqualTo(StorePattern.RMW);
        assertThatThrownBy(() -> registered.bindStorage(first))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("value");
    }

    /** A storage that holds nothing: only its pattern is asked for. */
    private static final class FixedPatternStorage implements StateStorage {
        private final StorePattern pattern;

        FixedPatternStorage(StorePattern pattern) {
            this.pattern = pattern;
        }

        @Override
        public StorePattern pattern() {
            return pattern;
        }

        @Override
        public void remove(int keyGroup, byte[] key, byte[] namespace) {}

        @Override
        public void forEach(io.flowkv.core.EntryVisitor visitor) {}

        @Override
        public void flush() {}

        @Override
        public java.util.List<io.flowkv.core.SealedStore> seal() {
            return java.util.List.of();
        }

        @Override
        public java.nio.file.Path directory() {
            return java.nio.file.Path.of(".");
        }

        @Override
        public void close() {}
    }
}
