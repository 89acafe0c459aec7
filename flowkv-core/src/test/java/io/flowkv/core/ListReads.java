package io.flowkv.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Reads a list store's values as UTF-8 strings, for assertions. */
public final class ListReads {
    private ListReads() {}

    /**
     * The values of (key, window), or null when {@code get} returned false. Fails when {@code
     * get}'s answer and the values it passed disagree.
     */
    public static List<String> read(ListStore store, byte[] key, byte[] window) throws IOException {
        List<String> out = new ArrayList<>();
        boolean found =
                store.get(
                        key,
                        window,
                        (buf, off, len) ->
                                out.add(new String(buf, off, len, StandardCharsets.UTF_8)));
        if (found == out.isEmpty()) {
            throw new AssertionError("get returned " + found + " with values " + out);
        }
        return found ? out : null;
    }

    /** The values of (key, window) as strings; empty when there are none. */
    public static List<String> values(ListStore store, String key, String window)
            throws IOException {
        List<String> out =
                read(
                        store,
                        key.getBytes(StandardCharsets.UTF_8),
                        window.getBytes(StandardCharsets.UTF_8));
        return out == null ? List.of() : out;
    }
}
