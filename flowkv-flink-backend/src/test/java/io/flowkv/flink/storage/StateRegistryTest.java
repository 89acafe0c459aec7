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

        assertThat(first.id).isZero();
        assertThat(second.id).isEqualTo(1);
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
}
