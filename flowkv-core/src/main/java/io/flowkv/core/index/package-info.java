/**
 * Primitive hash indexes: {@code long[]} hashes and {@code long[]} packed positions, with key
 * equality decided by the caller against the bytes the position points at.
 */
package io.flowkv.core.index;
