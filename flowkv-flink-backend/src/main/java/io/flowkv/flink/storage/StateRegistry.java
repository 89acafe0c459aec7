package io.flowkv.flink.storage;

import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The key-value states of one backend, by name, in registration order: what the job registers, what
 * a restore brings back, what a snapshot writes. A state's id is its place in that order. Only
 * {@link #register} adds a state, so the ids stay dense whoever registers first, the job or a
 * restore.
 */
@Internal
public final class StateRegistry {
    private final Map<String, RegisteredState> byName = new LinkedHashMap<>();

    /** The state named {@code name}, or null. */
    public RegisteredState get(String name) {
        return byName.get(name);
    }

    public boolean contains(String name) {
        return byName.containsKey(name);
    }

    /** Registers a new state under {@code metaInfo}'s name; the name must not be registered. */
    public RegisteredState register(RegisteredKeyValueStateBackendMetaInfo<?, ?> metaInfo) {
        String name = metaInfo.getName();
        if (byName.containsKey(name)) {
            throw new IllegalStateException("State " + name + " is registered already");
        }
        RegisteredState registered = new RegisteredState(byName.size(), metaInfo);
        byName.put(name, registered);
        return registered;
    }

    /** Every state, in registration order; a view. */
    public Collection<RegisteredState> all() {
        return Collections.unmodifiableCollection(byName.values());
    }

    /** Every state's name, in registration order; a view. */
    public Set<String> names() {
        return Collections.unmodifiableSet(byName.keySet());
    }

    int size() {
        return byName.size();
    }

    /** Forgets every state (the backend is disposed). */
    public void clear() {
        byName.clear();
    }
}
