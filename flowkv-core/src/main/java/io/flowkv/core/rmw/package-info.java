/**
 * The read-modify-write store: one value per (key, namespace), read, changed and written back on
 * every record (aggregating and reducing window state), and the general store for every other keyed
 * state of a job.
 *
 * <pre>
 *   get/put/remove(key, namespace)
 *          |
 *          v
 *  +-------------------------------+   hit: value copied out of the arena
 *  | RmwWriteBuffer                |
 *  |  LongHashIndex: hash -> arena |   put overwrites in place while the value fits,
 *  |  OffHeapArena: records        |   else appends a new record (old one superseded)
 *  +-------------------------------+
 *          | miss                       | full (jittered write-buffer limit) -> flush:
 *          v                            v  one frame per record, appended
 *  +-------------------------------+   +-------------------------------------------------+
 *  | hash index (PagedHashIndex)   |-->| RmwValueLog: rmw-00000007.log rmw-00000008.log  |
 *  | hash(key, ns) -> segment|off  |   | [hdr][frame][frame]...      [hdr][frame]...      |
 *  +-------------------------------+   +-------------------------------------------------+
 *     key checked against the frame       |  point reads: RmwFrameReader (last frame read,
 *     RmwFrameReader loads anyway         |  verified, reused by the put that follows a get)
 *                                         |  (live + dead) / live > MSA (jittered)
 *                                         v
 *                                      RmwCompactor: runs of live frames -> transferTo ->
 *                                      new segments; index rewritten; old segments deleted
 *
 *  seal(): flush, close + fsync segments, write rmw-NNNNNNNN.manifest (segments and lengths)
 *  restore(): scan the listed segments in order, checksums verified; later records win
 * </pre>
 *
 * {@link io.flowkv.core.rmw.RmwStore} ties the parts together: point operations, flush, seal and
 * restore. The file format is described in {@code docs/FORMAT.md}.
 */
package io.flowkv.core.rmw;
