/**
 * Append-only files: a 32-byte header, then CRC32C frames.
 *
 * <pre>
 *   +--------+---------------------+---------------------+----
 *   | header | len | crc | payload | len | crc | payload | ...
 *   +--------+---------------------+---------------------+----
 *            ^ frame offset = what a Positions long points at
 * </pre>
 *
 * {@link io.flowkv.core.log.LogWriter} appends (and rolls back a failed append), {@link
 * io.flowkv.core.log.LogReader} verifies and reads, {@link io.flowkv.core.log.FileIo} is the seam
 * tests use to inject I/O failures.
 */
package io.flowkv.core.log;
