/**
 * @file multi.h
 * @brief Several GPUs: device sets, peer access, arrays split over a set with the library's
 *        kernels run on every part at once, and collectives through NCCL (in one process or
 *        one process per GPU).
 *
 * ## The model
 * Each GPU has its own memory and its own context; a CUDA call acts on the *current* device
 * (cudaSetDevice), and memory of one GPU is reached from another only through peer access
 * (NVLink or PCIe, when the pair supports it) or through copies. The library does the
 * cudaSetDevice switches itself and **no function here leaves the caller's current device
 * changed**.
 *
 * - **Device set** (cm_device_set_t): a list of distinct GPUs, each with its own device object
 *   (cm_device_t, device.h: memory pool, streams, live buffers) and one stream of that device's
 *   pool, the set's stream for that member. Everything the set queues on a member goes to that
 *   stream, so one member's work runs in order and the members run at the same time. Members
 *   are numbered 0 .. count-1 in the order given (cm_device_set_open_all(): ordinal order).
 * - **Peer access**: cm_device_set_peer_matrix() says for every ordered pair whether the first
 *   device can read and write the second's memory (cudaDeviceCanAccessPeer), the pair's
 *   performance rank and, on request, the measured copy bandwidth.
 *   cm_device_set_enable_peer_access() turns it on for every pair that supports it.
 * - **Cross-device copies** are cm_buffer_copy() (buffer.h, synchronous or on a stream)
 *   between buffers of different devices, with their checks (live handles, ranges
 *   without overflow, a stream of either device). The first copy between two devices enables
 *   peer access when the pair supports it, so the copy goes over NVLink / PCIe directly;
 *   otherwise CUDA stages it through host memory. cm_buffer_copy_path() says which it will be.
 * - **Split arrays** (cm_split_t): an array of n elements cut into one contiguous part per
 *   member (cm_split_plan(): as even as possible, part boundaries on 256-byte multiples), each
 *   part a cm_buffer_t of its member's device. Scatter and gather move the whole array between
 *   the parts and host memory or one device buffer. The vector operations of kernels.h run on
 *   every part at once; reductions run on every part at once and their partial results are
 *   combined on the host: **deterministically**, in member order, float sums and dots in float64
 *   (each part's float64 accumulator, not a rounded float), min / max / argmin / argmax with
 *   the index of each part's first element. cm_split_for_each() runs code of your own on every part (the hook
 *   for operations the library does not split itself, e.g. a row-block GEMM).
 * - **Collectives** (cm_comm_t, NCCL): all-reduce, broadcast and all-gather of device buffers,
 *   either across the members of a set in one process (ncclCommInitAll; one rank per member,
 *   run from one thread, ncclGroupStart / ncclGroupEnd) or across processes, one GPU each
 *   (ncclCommInitRank). Across processes, one process makes a unique id (cm_comm_id_create(): an
 *   opaque 128-byte blob), turns it into text (cm_comm_id_to_hex()) and hands it to the others
 *   by any means (an environment variable, a file, a pipe, MPI); each turns it back
 *   (cm_comm_id_from_hex()) and calls cm_comm_create_rank(). The library builds no transport of
 *   its own. Collectives need a build with NCCL: otherwise each returns CM_ERROR_NOT_SUPPORTED
 *   and a message saying that this libcudamodel was built without NCCL and how to enable it
 *   (the nccl_built field of cm_version_info() of version.h tells in advance).
 *
 * ## Synchronous and queued calls
 * Scatter, gather, the split reductions (results in host memory), peer matrices and
 * cm_device_set_synchronize() return when their work is done. The split vector operations,
 * cm_split_for_each() and the collectives are queued on the set's (or the communicator's)
 * streams and return at once; cm_device_set_synchronize() / cm_comm_synchronize() wait for
 * them. Work is queued on every member before any is waited for, so the GPUs run concurrently
 * from the caller's single thread.
 *
 * ## Collectives that fail instead of hang
 * A collective finishes only when every rank joins it: a rank that died, hangs or called a
 * different collective leaves the others' NCCL kernels waiting forever. So every wait of the
 * collectives (cm_comm_synchronize(), cm_comm_destroy(), the synchronous debug mode) polls the
 * communicator's streams (cudaStreamQuery) together with NCCL's asynchronous error state
 * (ncclCommGetAsyncError) under a **collective timeout**: CM_COLLECTIVE_TIMEOUT_DEFAULT_MS
 * (10 minutes), or the environment variable CUDAMODEL_COLLECTIVE_TIMEOUT_MS (milliseconds, 0 for
 * no limit) read when the set or the rank's communicator is made, or
 * cm_device_set_set_collective_timeout() / cm_comm_set_timeout(). When the time runs out, or NCCL
 * reports an asynchronous error (e.g. ncclRemoteError: a peer exited), the library aborts every
 * local rank of the communicator (ncclCommAbort, which also ends NCCL's kernels in flight) and
 * returns a status naming the cause: CM_ERROR_BUSY "did not finish within the collective
 * timeout of N ms", or NCCL's error (usually CM_ERROR_CUDA) with NCCL's text. From then on the
 * communicator, and for a set's communicator the whole set, is **unusable**: collectives,
 * cm_comm_synchronize(), cm_device_set_synchronize(), new communicators and splits and every
 * split operation fail at once with the same status and a message that repeats the cause.
 * cm_comm_destroy(), cm_split_destroy() and cm_device_set_close() still work and release
 * everything without waiting longer than the timeout (a communicator already aborted is destroyed
 * at once and returns CM_OK). Recovery: destroy the communicator, close the set, open a new set
 * and make a new communicator on every rank.
 *
 * Not covered: ncclCommInitAll / ncclCommInitRank themselves (cm_comm_create(),
 * cm_comm_create_rank()) block until every rank has joined; a rank that never joins holds the
 * others there (NCCL's non-blocking initialisation is not used). The collectives return once
 * queued; only waits are bounded.
 *
 * ## Threading
 * The pure functions (cm_split_plan(), the id text helpers, the names) are thread-safe. A device
 * set, a split array and a communicator are used by one thread at a time (they share the set's
 * streams and a small pinned result area); distinct sets may be used from distinct threads. The
 * device objects of a set are ordinary cm_device_t handles: other threads may create buffers on
 * them while the set is in use.
 *
 * The library never prints, never calls exit() or abort(). NCCL itself may write warnings to
 * stderr when one of its calls fails (NCCL_DEBUG=VERSION / WARN / INFO controls how much); the
 * library's detail (cm_last_error()) carries NCCL's message as well.
 */
#ifndef CUDAMODEL_MULTI_H
#define CUDAMODEL_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/kernels.h> /* CM_REDUCE_NO_INDEX */
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

CM_EXTERN_C_BEGIN

/** @brief Most members of a device set (and most parts of a split plan). */
#define CM_DEVICE_SET_MAX 64

/* ============================================================================ device sets */

/** @brief A set of GPUs with one device object and one stream each (opaque). */
typedef struct cm_device_set cm_device_set_t;

/**
 * @brief Open every visible device as a set, in ordinal order (members 0 .. count-1 are
 *        ordinals 0 .. count-1; the first CM_DEVICE_SET_MAX on a larger machine).
 * @param[out] out  receives the set; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out; the statuses of cm_device_count()
 *         (CM_ERROR_NO_DRIVER, CM_ERROR_NO_DEVICE, ...); those of cm_device_open() and
 *         cm_stream_acquire(); CM_ERROR_HOST_OUT_OF_MEMORY. Nothing is left open on failure.
 * Ownership: the caller owns the set and closes it with cm_device_set_close().
 */
CM_API cm_status_t cm_device_set_open_all(cm_device_set_t **out);

/**
 * @brief Open a set of the given devices, in the given order.
 * @param[in]  ordinals  device ordinals, distinct, each 0 .. cm_device_count()-1.
 * @param[in]  count     1 .. CM_DEVICE_SET_MAX.
 * @param[out] out       receives the set; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL pointers, a count out of range, an ordinal
 *         that does not exist (the message names the device count) or one given twice (the
 *         message names both positions); the statuses of cm_device_open(), cm_stream_acquire()
 *         and of the pinned allocation (CM_ERROR_HOST_OUT_OF_MEMORY). Nothing is left open on
 *         failure: a member's device object that the failure leaves with no way to make its
 *         context current is closed all the same, and its streams and memory pool are
 *         released at the next cm_device_open() or cm_device_close() of that device.
 * Ownership: the caller owns the set and closes it with cm_device_set_close().
 */
CM_API cm_status_t cm_device_set_open(const int *ordinals, int count, cm_device_set_t **out);

/**
 * @brief Close a set: release its streams and close its device objects.
 *
 * Refused, with nothing released, while a split array or a communicator of the set is alive,
 * or while any member's device object still has live buffers, lent streams (other than the
 * set's own) or lent events: the call then returns CM_ERROR_BUSY and the message names the
 * member and what is still alive (cm_device_leak_report() on cm_device_set_device() lists the
 * buffers), or while the calling thread captures a graph (CUDA refuses the frees of the
 * members' closes during a capture). Work still queued on the set's streams is waited for
 * first.
 *
 * @param[in] set  the set, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_BUSY as above; CM_ERROR_INVALID_ARGUMENT for a closed set or a
 *         pointer that is not a set; the status of a fault in queued work, or of a member's
 *         close that could not release everything (its message lists what; the set is closed
 *         all the same). A member whose context could not be made current (cuCtxPushCurrent
 *         failed) is closed with its streams and memory pool released at the next
 *         cm_device_open() or cm_device_close() of that device; the status is the failure's.
 * Ownership: the handle is gone once the close went ahead, whatever it returns; only a refusal
 * leaves the set open: CM_ERROR_BUSY whose message says "nothing was closed", and
 * CM_ERROR_INVALID_ARGUMENT. A CM_ERROR_BUSY of the waits (the collective timeout ran out, or
 * a CUDA failure that reads as busy, cudaErrorNotReady) comes after the close went ahead:
 * cm_device_set_count() tells whether a set is still open (CM_ERROR_INVALID_ARGUMENT: closed).
 */
CM_API cm_status_t cm_device_set_close(cm_device_set_t *set);

/**
 * @brief Cleanup function of CM_SCOPED(cm_device_set) (buffer.h): closes *set when it is not
 *        NULL and sets it to NULL. A refused close leaves *set open and unchanged, with the
 *        reason in the detail (cm_last_error()).
 * @param[in,out] set  address of the handle variable; NULL and *set == NULL are no-ops.
 */
static inline void cm_device_set_scope_exit(cm_device_set_t **set) {
    if (set == NULL || *set == NULL) return;
    /* every status but BUSY ended the handle (or it was not a live set): never keep it */
    if (cm_device_set_close(*set) != CM_ERROR_BUSY) *set = NULL;
}

/**
 * @brief Number of members of a set.
 * @param[in]  set    the set.
 * @param[out] count  receives the number of members, 1 .. CM_DEVICE_SET_MAX; unchanged on
 *                    failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed set.
 */
CM_API cm_status_t cm_device_set_count(const cm_device_set_t *set, int *count);

/**
 * @brief The device object of a member (owned by the set: do not close it).
 * @param[in]  set    the set.
 * @param[in]  index  member, 0 .. count-1.
 * @param[out] dev    receives the device object; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a closed set or an index out of
 *         range (the message names the count).
 */
CM_API cm_status_t cm_device_set_device(const cm_device_set_t *set, int index, cm_device_t **dev);

/**
 * @brief The device ordinal of a member.
 * @param[in]  set      the set.
 * @param[in]  index    member, 0 .. count-1.
 * @param[out] ordinal  receives the member's device ordinal; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT as for cm_device_set_device().
 */
CM_API cm_status_t cm_device_set_ordinal(const cm_device_set_t *set, int index, int *ordinal);

/**
 * @brief The set's stream of a member: the stream everything the set queues on that member
 *        goes to. Queue work of your own on it to order it with the set's (owned by the set:
 *        do not release it).
 * @param[in]  set     the set.
 * @param[in]  index   member, 0 .. count-1.
 * @param[out] stream  receives the stream (a pooled stream of the member's device object);
 *                     unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT as for cm_device_set_device().
 */
CM_API cm_status_t cm_device_set_stream(const cm_device_set_t *set, int index,
                                        cm_stream_t **stream);

/**
 * @brief Wait until the work queued on every member's set stream has run.
 * @param[in] set  the set.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed set; the status of an
 *         asynchronous fault (the first member's in member order; every stream is waited for
 *         all the same), naming the last library launch on that stream; on a set made unusable
 *         by an aborted collective, the status of that failure (nothing is waited for).
 */
CM_API cm_status_t cm_device_set_synchronize(cm_device_set_t *set);

/** @brief The collective timeout when CUDAMODEL_COLLECTIVE_TIMEOUT_MS is not set: 10 minutes
 *         (as long as PyTorch's default for NCCL process groups: long collectives over slow
 *         links stay well inside it). */
#define CM_COLLECTIVE_TIMEOUT_DEFAULT_MS 600000u

/** @brief A collective timeout of 0 means no limit: waits block until the work ends. */
#define CM_COLLECTIVE_TIMEOUT_NONE 0u

/**
 * @brief Set how long a wait on the set's collectives may take before the communicator is
 *        aborted and the set made unusable ("Collectives that fail instead of hang" above).
 *
 * A set starts with CUDAMODEL_COLLECTIVE_TIMEOUT_MS when that variable holds a decimal number of
 * milliseconds (0: no limit; anything else is ignored), else CM_COLLECTIVE_TIMEOUT_DEFAULT_MS.
 * The setting applies to every communicator of the set, those alive now included, from their
 * next wait on; cm_comm_set_timeout() on a set's communicator changes this same setting.
 *
 * @param[in] set         the set.
 * @param[in] timeout_ms  milliseconds, or CM_COLLECTIVE_TIMEOUT_NONE (0) for no limit.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed set. No CUDA call.
 */
CM_API cm_status_t cm_device_set_set_collective_timeout(cm_device_set_t *set,
                                                        uint32_t timeout_ms);

/**
 * @brief The set's collective timeout (cm_device_set_set_collective_timeout()).
 * @param[in]  set         the set.
 * @param[out] timeout_ms  receives the milliseconds (0: no limit); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed set.
 */
CM_API cm_status_t cm_device_set_collective_timeout(const cm_device_set_t *set,
                                                    uint32_t *timeout_ms);

/**
 * @brief Whether the set can still run work: false once a collective of one of its
 *        communicators was aborted (timeout or NCCL error).
 * @param[in]  set     the set.
 * @param[out] usable  receives true while the set is usable; unchanged on failure.
 * @return CM_OK (the set's cause, when unusable, is recorded nowhere by this call: the next call
 *         that is refused reports it); CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed
 *         set.
 */
CM_API cm_status_t cm_device_set_usable(const cm_device_set_t *set, bool *usable);

/* ============================================================================ peer access */

/** @brief Flags of cm_device_set_peer_matrix(). */
#define CM_PEER_MEASURE_BANDWIDTH 1u

/** @brief What one device can do with another's memory. */
typedef struct cm_peer_info {
    int from_ordinal;        /**< the device that reads and writes */
    int to_ordinal;          /**< the device whose memory it accesses */
    bool can_access;         /**< cudaDeviceCanAccessPeer(from, to); true on the diagonal */
    int performance_rank;    /**< cudaDevP2PAttrPerformanceRank (lower is faster; 0 on the
                                  diagonal), -1 when there is no access */
    bool native_atomics;     /**< cudaDevP2PAttrNativeAtomicSupported */
    double bandwidth_gbs;    /**< measured copy bandwidth from `from`'s memory to `to`'s memory,
                                  GB/s (1e9 bytes/s); on the diagonal a copy within the device;
                                  0 when not measured */
} cm_peer_info_t;

/**
 * @brief The peer-access matrix of a set: matrix[i * count + j] describes member i accessing
 *        member j's memory.
 *
 * With CM_PEER_MEASURE_BANDWIDTH each entry also gets the median bandwidth of 5 copies of
 * 64 MiB (after one warm-up) from member i's memory to member j's, as the library's copies run
 * them: peer access is enabled first for the pairs that support it (as the first copy between
 * them would), other pairs are staged through host memory by CUDA. That takes two 64 MiB buffers
 * per member for the duration of the call and a few milliseconds per pair.
 *
 * @param[in]  set      the set.
 * @param[in]  flags    0 or CM_PEER_MEASURE_BANDWIDTH.
 * @param[out] matrix   count * count entries; unchanged on failure.
 * @param[in]  entries  capacity of matrix, at least count * count.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a closed set, unknown flag bits
 *         or too few entries (the message names the need); CM_ERROR_DEVICE_OUT_OF_MEMORY when
 *         the measuring buffers do not fit; CM_ERROR_CONTEXT_LOST; CUDA failures as recorded.
 */
CM_API cm_status_t cm_device_set_peer_matrix(cm_device_set_t *set, unsigned flags,
                                             cm_peer_info_t *matrix, size_t entries);

/**
 * @brief Enable peer access between every pair of members that supports it, in both directions
 *        (cudaDeviceEnablePeerAccess, and access to each other's memory pools). Pairs without
 *        support are left alone: copies between them are staged through host memory.
 * @param[in]  set           the set.
 * @param[out] pairs_enabled optional: the number of ordered pairs (i, j), i != j, that now
 *                           have peer access.
 * @return CM_OK (also when no pair supports peer access); CM_ERROR_INVALID_ARGUMENT for a NULL
 *         or closed set; CM_ERROR_CONTEXT_LOST; CUDA failures as recorded. Idempotent.
 */
CM_API cm_status_t cm_device_set_enable_peer_access(cm_device_set_t *set, int *pairs_enabled);

/**
 * @brief Write a peer matrix as text (snprintf rules): one row per member ("y" access, "-" no
 *        access, the bandwidth in GB/s when measured), ordinals as headings.
 * @param[in]  matrix  count * count entries from cm_device_set_peer_matrix().
 * @param[in]  count   members, 1 .. CM_DEVICE_SET_MAX.
 * @param[out] buf     destination; may be NULL when size is 0.
 * @param[in]  size    capacity of buf.
 * @param[out] length  optional: the length the full text needs, excluding the NUL.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL matrix, a count out of range, or a NULL
 *         buf with a non-zero size. Pure function. Thread-safe.
 */
CM_API cm_status_t cm_peer_matrix_format(const cm_peer_info_t *matrix, int count, char *buf,
                                         size_t size, size_t *length);

/** @brief How a copy between two device buffers runs (cm_buffer_copy_path()). */
typedef enum cm_copy_path {
    CM_COPY_SAME_DEVICE = 0,    /**< both on one device: a device-to-device copy */
    CM_COPY_PEER = 1,           /**< different devices with peer access: direct (NVLink / PCIe) */
    CM_COPY_STAGED_BY_HOST = 2  /**< different devices without peer access: CUDA stages the copy
                                     through host memory (slower, still correct) */
} cm_copy_path_t;

/**
 * @brief Name of a copy path: "same device", "peer", "staged through host"; "unknown" else.
 * @param[in] path  any value.
 * @return a static string, never NULL.
 */
CM_API const char *cm_copy_path_name(cm_copy_path_t path);

/**
 * @brief How cm_buffer_copy() between dst and src would run (asks cudaDeviceCanAccessPeer; does
 *        not enable anything).
 * @param[in]  dst   destination buffer.
 * @param[in]  src   source buffer.
 * @param[out] path  receives the path; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed handles; CUDA failures as
 *         recorded.
 */
CM_API cm_status_t cm_buffer_copy_path(const cm_buffer_t *dst, const cm_buffer_t *src,
                                       cm_copy_path_t *path);

/* ============================================================================ split arithmetic */

/** @brief One part of a split: elements [first, first + count) of the whole array (element
 *         indices, not byte offsets). */
typedef struct cm_split_part {
    size_t first;   /**< index of the part's first element in the whole array */
    size_t count;   /**< elements in the part (0 for an empty part) */
} cm_split_part_t;

/**
 * @brief Cut n elements into `parts` contiguous parts, in order, as evenly as possible with
 *        every boundary on a multiple of `granule` elements.
 *
 * The array is taken as U = ceil(n / granule) units of granule elements (the last may be
 * short); part k gets floor(U / parts) units, plus one more for the first U mod parts parts.
 * So part sizes differ by at most one unit, the earlier parts are the larger ones, the parts
 * cover [0, n) exactly in order, and parts beyond the units (more parts than units, n = 0) are
 * empty with their first index at n.
 *
 * @param[in]  n        elements, any (0 included).
 * @param[in]  parts    1 .. CM_DEVICE_SET_MAX.
 * @param[in]  granule  boundary multiple in elements; 0 is taken as 1.
 * @param[out] out      `parts` entries; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out or parts out of range.
 * Pure function: no CUDA call. Thread-safe. What cm_split_create() uses, with granule
 * max(1, 256 / elem_bytes) when elem_bytes divides 256, and 1 otherwise.
 */
CM_API cm_status_t cm_split_plan(size_t n, int parts, size_t granule, cm_split_part_t *out);

/* ============================================================================ split arrays */

/** @brief An array split over the members of a device set, one part per member (opaque). */
typedef struct cm_split cm_split_t;

/**
 * @brief Create a split array of n elements of elem_bytes each over a set: one device buffer
 *        per member with that member's part (cm_split_plan()), uninitialised.
 *
 * Usually called through cm_split_create(set, n, elem_bytes, &out), which passes the caller's
 * file and line: the part buffers are labelled "split part k/count" and show that file:line in
 * leak reports.
 *
 * @param[in]  set         the set.
 * @param[in]  n           elements; 0 gives a valid empty split (every part empty).
 * @param[in]  elem_bytes  bytes per element, at least 1 (4 for float, a row's bytes for rows).
 * @param[out] out         receives the split; unchanged on failure.
 * @param[in]  file, line  caller's file:line for leak reports (file may be NULL).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL pointers, a closed set, elem_bytes 0 or
 *         n * elem_bytes past SIZE_MAX; CM_ERROR_DEVICE_OUT_OF_MEMORY (the report names the
 *         member's device) and the other statuses of cm_buffer_create(); nothing is left
 *         allocated on failure.
 * Ownership: the caller owns the split and destroys it with cm_split_destroy() before closing
 * the set.
 */
CM_API cm_status_t cm_split_create_at(cm_device_set_t *set, size_t n, size_t elem_bytes,
                                      cm_split_t **out, const char *file, int line);

/** @brief cm_split_create_at() with the caller's file:line. */
#define cm_split_create(set, n, elem_bytes, out)                                             \
    cm_split_create_at((set), (n), (elem_bytes), (out), __FILE__, __LINE__)

/**
 * @brief Destroy a split array: wait for the set's streams, then destroy its part buffers.
 * @param[in] split  the split, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a destroyed split or a pointer that is not one;
 *         CM_ERROR_BUSY while the calling thread captures a graph (CUDA refuses the waits and
 *         frees during a capture): nothing is released, the split is still alive and may be
 *         destroyed once the capture has ended; the status of a fault in queued work or of a
 *         buffer destroy (the split is released all the same; memory whose free cannot run
 *         then is freed when its device is closed).
 */
CM_API cm_status_t cm_split_destroy(cm_split_t *split);

/**
 * @brief Cleanup function of CM_SCOPED(cm_split): destroys *split and sets it to NULL.
 * @param[in,out] split  address of the handle variable; NULL and *split == NULL are no-ops.
 */
static inline void cm_split_scope_exit(cm_split_t **split) {
    if (split == NULL || *split == NULL) return;
    (void)cm_split_destroy(*split);
    *split = NULL;
}

/**
 * @brief Length and element size of a split, and its set.
 * @param[in]  split       the split.
 * @param[out] n           optional: elements.
 * @param[out] elem_bytes  optional: bytes per element.
 * @param[out] set         optional: the set it lives on.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed split.
 */
CM_API cm_status_t cm_split_info(const cm_split_t *split, size_t *n, size_t *elem_bytes,
                                 cm_device_set_t **set);

/**
 * @brief One member's part: its buffer (owned by the split: do not destroy it) and which
 *        elements of the whole array it holds, from the buffer's start.
 * @param[in]  split   the split.
 * @param[in]  index   member, 0 .. count-1.
 * @param[out] buf     optional: the part's buffer (an empty buffer for an empty part).
 * @param[out] first   optional: the index of the part's first element in the whole array.
 * @param[out] count   optional: the part's elements.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed split or an index out of
 *         range.
 */
CM_API cm_status_t cm_split_part(const cm_split_t *split, int index, cm_buffer_t **buf,
                                 size_t *first, size_t *count);

/**
 * @brief Copy n elements of host memory into the parts (each member's range to its device, all
 *        members queued before any is waited for); returns when the data is on the devices.
 *        Pinned memory is copied directly; pageable memory goes through each device's staging
 *        pipeline (buffer.h).
 * @param[in] split  the destination.
 * @param[in] src    n * elem_bytes bytes of host memory; may be NULL when n is 0.
 * @param[in] n      elements: must equal the split's length (a check against a wrong size).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed split, a NULL src with n > 0,
 *         an n other than the split's length, or device memory as src; the statuses of
 *         cm_buffer_copy_from_host(); the status of a fault in queued work.
 */
CM_API cm_status_t cm_split_scatter_from_host(cm_split_t *split, const void *src, size_t n);

/**
 * @brief Copy the parts into n elements of host memory; returns when the data is in dst.
 * @param[in]  split  the source.
 * @param[out] dst    n * elem_bytes bytes of host memory; may be NULL when n is 0.
 * @param[in]  n      elements: must equal the split's length.
 * @return as for cm_split_scatter_from_host().
 */
CM_API cm_status_t cm_split_gather_to_host(const cm_split_t *split, void *dst, size_t n);

/**
 * @brief Copy the split's length of elements from byte src_offset of a device buffer (of any device,
 *        in the set or not) into the parts: peer-to-peer where the pair allows it, staged
 *        through the host by CUDA where not (cm_buffer_copy_path()); each part's copy is queued
 *        on its member's set stream; returns when every copy is done.
 * @param[in] split       the destination.
 * @param[in] src         the source buffer; not one of the split's parts.
 * @param[in] src_offset  byte offset in src; a multiple of the split's elem_bytes.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed handles or a source range past
 *         the end of src or an offset that is not a multiple of elem_bytes (the message names
 *         the numbers); the statuses of cm_buffer_copy(); the status of a fault in queued work.
 * Order: the copies follow the work queued on the set's streams; work of your own on src on
 * other streams must be complete (or waited for) before the call.
 */
CM_API cm_status_t cm_split_scatter(cm_split_t *split, const cm_buffer_t *src, size_t src_offset);

/**
 * @brief Copy the parts into a device buffer of any device, from byte dst_offset on; returns
 *        when every copy is done.
 * @param[in] split       the source.
 * @param[in] dst         the destination buffer; not one of the split's parts.
 * @param[in] dst_offset  byte offset in dst; a multiple of the split's elem_bytes.
 * @return as for cm_split_scatter().
 */
CM_API cm_status_t cm_split_gather(const cm_split_t *split, cm_buffer_t *dst, size_t dst_offset);

/* ---------------------------------------------------------------- vector operations, queued
 * kernels.h's operations on every part at once, each on its member's set stream; they return
 * once queued (cm_device_set_synchronize() waits). Every split operand must have the same set,
 * length and element size as the output (so the same parts), and elem_bytes must be the
 * operation's type (4 for f32, 8 for f64). An input may be the output itself (in place).
 * Return: CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed splits, splits of different
 * sets, lengths or element sizes (the message names both), or the wrong element size; the
 * statuses of the kernels.h call on a part (its detail names the member's device). */

/**
 * @brief kernels.h's cm_vector() on every part of the splits at once, each part on its
 *        member's set stream; returns once queued.
 *
 * Operands as for cm_vector() (NULL for one the operation does not read), with one difference:
 * CM_VECTOR_AXPY works in place, so out must be y (y = alpha x + y). Types: CM_DTYPE_F32,
 * CM_DTYPE_F64 (the splits' elem_bytes must match).
 *
 * @param[in]     op     the operation (cm_vector_op_t says which operands it reads).
 * @param[in]     dtype  CM_DTYPE_F32 or CM_DTYPE_F64.
 * @param[in]     alpha  the address of a value of the element type (float or double): the
 *                       scalar of AXPY and SCALE, the value of FILL; NULL for ADD and COPY.
 * @param[in,out] out    the result split (y itself for CM_VECTOR_AXPY).
 * @param[in]     x      the first input (NULL for FILL).
 * @param[in]     y      the second input of ADD and AXPY (NULL for the others).
 * @return as described above for the split vector operations.
 */
CM_API cm_status_t cm_split_vector(cm_vector_op_t op, cm_dtype_t dtype, const void *alpha,
                                   cm_split_t *out, const cm_split_t *x, const cm_split_t *y);

/* Typed forms (inline: no exported symbols). */

/** @brief out = a + b (float). */
static inline cm_status_t cm_split_add_f32(cm_split_t *out, const cm_split_t *a, const cm_split_t *b) {
    return cm_split_vector(CM_VECTOR_ADD, CM_DTYPE_F32, NULL, out, a, b);
}
/** @brief out = a + b (double). */
static inline cm_status_t cm_split_add_f64(cm_split_t *out, const cm_split_t *a, const cm_split_t *b) {
    return cm_split_vector(CM_VECTOR_ADD, CM_DTYPE_F64, NULL, out, a, b);
}
/** @brief y = alpha * x + y (float). */
static inline cm_status_t cm_split_axpy_f32(float alpha, const cm_split_t *x, cm_split_t *y) {
    return cm_split_vector(CM_VECTOR_AXPY, CM_DTYPE_F32, &alpha, y, x, y);
}
/** @brief y = alpha * x + y (double). */
static inline cm_status_t cm_split_axpy_f64(double alpha, const cm_split_t *x, cm_split_t *y) {
    return cm_split_vector(CM_VECTOR_AXPY, CM_DTYPE_F64, &alpha, y, x, y);
}
/** @brief out = alpha * x (float). */
static inline cm_status_t cm_split_scale_f32(float alpha, cm_split_t *out, const cm_split_t *x) {
    return cm_split_vector(CM_VECTOR_SCALE, CM_DTYPE_F32, &alpha, out, x, NULL);
}
/** @brief out = alpha * x (double). */
static inline cm_status_t cm_split_scale_f64(double alpha, cm_split_t *out, const cm_split_t *x) {
    return cm_split_vector(CM_VECTOR_SCALE, CM_DTYPE_F64, &alpha, out, x, NULL);
}
/** @brief out = value (float). */
static inline cm_status_t cm_split_fill_f32(cm_split_t *out, float value) {
    return cm_split_vector(CM_VECTOR_FILL, CM_DTYPE_F32, &value, out, NULL, NULL);
}
/** @brief out = value (double). */
static inline cm_status_t cm_split_fill_f64(cm_split_t *out, double value) {
    return cm_split_vector(CM_VECTOR_FILL, CM_DTYPE_F64, &value, out, NULL, NULL);
}

/* ---------------------------------------------------------------- reductions, synchronous
 * Each part is reduced on its member's set stream (all members queued before any is waited
 * for) into a pinned result slot, then the partial results are combined on the host in member
 * order; returns when the result is in *out. Same results as kernels.h on the whole array:
 * - sum / dot (f32, f64): each part's float64 accumulator (not rounded to float), added in
 *   member order in float64, rounded once to float for f32: |result - exact| <= 2^-24 |exact|
 *   (f32 only) + (K + P) * 2^-53 * sum|x_i| (dot: sum|x_i y_i|), K of kernels.h for the largest
 *   part, P the number of parts;
 * - sum (i32): exact in int64; min / max: exact, NaN when any element is NaN;
 * - argmin / argmax: the first index in the whole array (each part's index plus its first index;
 *   ties go to the earlier part), NaN counts as the extreme; n = 0 gives CM_REDUCE_NO_INDEX;
 * - n = 0: the identities of kernels.h (0, +inf / -inf, INT32_MAX / INT32_MIN).
 * Deterministic: the same set of devices, n and elem_bytes give the same bits run to run.
 * Return: CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, NULL or destroyed splits, the wrong
 * element size, or (dot) splits of different layouts; the statuses of the kernels.h reduction
 * on a part; the status of a fault in queued work. */

/**
 * @brief One reduction of a split (or, CM_REDUCE_DOT, of two splits of the same layout) into
 *        host memory, as described above.
 *
 * @param op      the reduction (cm_reduce_op_t of kernels.h)
 * @param dtype   element type, matching the splits' elem_bytes: CM_DTYPE_F32 or CM_DTYPE_F64,
 *                and CM_DTYPE_I32 for sum, min and max
 * @param x       the split to reduce
 * @param y       the second split of CM_REDUCE_DOT, of the same layout as x; NULL for the others
 * @param result  the value (float / double; int64_t for an I32 sum, int32_t for I32 min / max),
 *                or for argmin / argmax the uint64_t index; not NULL
 * @param value   argmin / argmax only: where to store the element at the index, or NULL; must
 *                be NULL for the other operations
 */
CM_API cm_status_t cm_split_reduce(cm_reduce_op_t op, cm_dtype_t dtype, const cm_split_t *x,
                                   const cm_split_t *y, void *result, void *value);

/* Typed forms (inline: no exported symbols). */
#define CM__SPLIT_RED_INLINE(name, OP, DT, R)                                                   \
    static inline cm_status_t cm_split_##name(const cm_split_t *x, R *out) {                    \
        return cm_split_reduce(OP, DT, x, NULL, out, NULL);                                     \
    }
/** @brief Sum of a float split into *out (each part's float64 accumulator, added in member
 *         order, rounded once). */
CM__SPLIT_RED_INLINE(sum_f32, CM_REDUCE_SUM, CM_DTYPE_F32, float)
/** @brief Sum of a double split into *out. */
CM__SPLIT_RED_INLINE(sum_f64, CM_REDUCE_SUM, CM_DTYPE_F64, double)
/** @brief Sum of an int32 split into *out, exact in int64. */
CM__SPLIT_RED_INLINE(sum_i32, CM_REDUCE_SUM, CM_DTYPE_I32, int64_t)
/** @brief Minimum of a float split into *out (NaN if any element is NaN, +inf for n = 0). */
CM__SPLIT_RED_INLINE(min_f32, CM_REDUCE_MIN, CM_DTYPE_F32, float)
/** @brief Minimum of a double split into *out (NaN if any element is NaN, +inf for n = 0). */
CM__SPLIT_RED_INLINE(min_f64, CM_REDUCE_MIN, CM_DTYPE_F64, double)
/** @brief Minimum of an int32 split into *out (INT32_MAX for n = 0). */
CM__SPLIT_RED_INLINE(min_i32, CM_REDUCE_MIN, CM_DTYPE_I32, int32_t)
/** @brief Maximum of a float split into *out (NaN if any element is NaN, -inf for n = 0). */
CM__SPLIT_RED_INLINE(max_f32, CM_REDUCE_MAX, CM_DTYPE_F32, float)
/** @brief Maximum of a double split into *out (NaN if any element is NaN, -inf for n = 0). */
CM__SPLIT_RED_INLINE(max_f64, CM_REDUCE_MAX, CM_DTYPE_F64, double)
/** @brief Maximum of an int32 split into *out (INT32_MIN for n = 0). */
CM__SPLIT_RED_INLINE(max_i32, CM_REDUCE_MAX, CM_DTYPE_I32, int32_t)
#undef CM__SPLIT_RED_INLINE
#define CM__SPLIT_ARG_INLINE(name, OP, DT, T)                                                   \
    static inline cm_status_t cm_split_##name(const cm_split_t *x, uint64_t *index, T *value) { \
        return cm_split_reduce(OP, DT, x, NULL, index, value);                                  \
    }
/** @brief First index of the minimum in the whole array, and (value not NULL) the element
 *         (float split; CM_REDUCE_NO_INDEX for n = 0). */
CM__SPLIT_ARG_INLINE(argmin_f32, CM_REDUCE_ARGMIN, CM_DTYPE_F32, float)
/** @brief First index of the minimum in the whole array, and (value not NULL) the element
 *         (double split; CM_REDUCE_NO_INDEX for n = 0). */
CM__SPLIT_ARG_INLINE(argmin_f64, CM_REDUCE_ARGMIN, CM_DTYPE_F64, double)
/** @brief First index of the maximum in the whole array, and (value not NULL) the element
 *         (float split; CM_REDUCE_NO_INDEX for n = 0). */
CM__SPLIT_ARG_INLINE(argmax_f32, CM_REDUCE_ARGMAX, CM_DTYPE_F32, float)
/** @brief First index of the maximum in the whole array, and (value not NULL) the element
 *         (double split; CM_REDUCE_NO_INDEX for n = 0). */
CM__SPLIT_ARG_INLINE(argmax_f64, CM_REDUCE_ARGMAX, CM_DTYPE_F64, double)
#undef CM__SPLIT_ARG_INLINE
/** @brief Dot product of two splits of the same layout (float). */
static inline cm_status_t cm_split_dot_f32(const cm_split_t *x, const cm_split_t *y, float *out) {
    return cm_split_reduce(CM_REDUCE_DOT, CM_DTYPE_F32, x, y, out, NULL);
}
/** @brief Dot product of two splits of the same layout (double). */
static inline cm_status_t cm_split_dot_f64(const cm_split_t *x, const cm_split_t *y, double *out) {
    return cm_split_reduce(CM_REDUCE_DOT, CM_DTYPE_F64, x, y, out, NULL);
}

/* ---------------------------------------------------------------- your own work on each part */

/**
 * @brief Work on one part, queued by cm_split_for_each(). Called on the caller's thread with the
 *        member's device current; queue the work on `stream` (cm_stream_cuda() in interop.h
 *        gives its CUDA stream) and return without waiting.
 * @param user   the pointer given to cm_split_for_each().
 * @param index  member, 0 .. count-1.
 * @param stream the member's set stream.
 * @param part   the part's buffer (elements `first` .. `first + count` of the whole array).
 * @param first  the index of the part's first element in the whole array.
 * @param count  the part's elements (may be 0).
 * @return CM_OK, or a status to stop the loop with.
 */
typedef cm_status_t (*cm_split_part_fn_t)(void *user, int index, cm_stream_t *stream,
                                          cm_buffer_t *part, size_t first, size_t count);

/**
 * @brief Call fn for every part, in member order, and return without waiting (the hook for
 *        work the library does not split itself).
 *
 * A row-block GEMM C = A B over a set, for example: A and C split by rows (elem_bytes = one
 * row's bytes, so parts are whole row blocks), B copied to every member (cm_split_part() of the
 * other splits gives their buffers; the same layout gives the same row blocks), and fn runs the
 * GEMM of its row block on its stream. The library's own GEMM is not wired in here.
 *
 * @param[in] split  the split.
 * @param[in] fn     the work; not NULL.
 * @param[in] user   passed to fn.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL fn or a NULL or destroyed split; the first
 *         status other than CM_OK that fn returns (the later parts are not called).
 * The caller's current device is restored after each call of fn.
 */
CM_API cm_status_t cm_split_for_each(cm_split_t *split, cm_split_part_fn_t fn, void *user);

/**
 * @brief C = alpha A op(B) + beta C over a device set by row blocks: every member multiplies the
 *        rows of A it holds by its own copy of B into the same rows of C (cm_gemm() on its part).
 *
 * Row-major throughout. A (m x k) and C (m x n) are split arrays of the same set with one row per
 * element, so that each member holds a block of whole rows, packed:
 *   cm_split_create(set, m, k * in_bytes, &a);   cm_split_create(set, m, n * out_bytes, &c);
 * with in_bytes 4 (float) for CM_GEMM_FP32, CM_GEMM_TF32 and CM_GEMM_FP32_3XTF32 and 2
 * (cm_bf16_t) for CM_GEMM_BF16 and CM_GEMM_BF16_OUT_BF16, out_bytes 2 for CM_GEMM_BF16_OUT_BF16
 * and 4 otherwise. Both must hold the same rows on every member (cm_split_part(): the same first
 * and count; two splits of m elements get the same parts when both elements are at least 256
 * bytes, or of one size). B is k x n (op_b CM_GEMM_OP_N, ldb >= n) or stored n x k (op_b
 * CM_GEMM_OP_T, ldb >= k), one copy per member: b[i] is a buffer of member i's device
 * (cm_device_set_device()) holding B from byte 0, e.g. written with cm_buffer_copy_from_host().
 *
 * Every argument is checked before anything is queued; then member i's GEMM is queued on the
 * set's stream of member i (members with no rows are skipped) and the call returns without
 * waiting: cm_device_set_synchronize() waits for all. Two members run their halves at once, so
 * the product takes about half the time of one GPU (the B copies are the caller's).
 *
 * @param[in]     precision  as cm_gemm().
 * @param[in]     op_b       CM_GEMM_OP_N or CM_GEMM_OP_T.
 * @param[in]     n, k       columns of C and of A; each >= 1.
 * @param[in]     alpha      scale of the product.
 * @param[in]     a          the split of A's rows.
 * @param[in]     b          the set's member count of buffers, b[i] on member i's device.
 * @param[in]     ldb        B's leading dimension (elements).
 * @param[in]     beta       scale of C's old value (0: C is not read, may hold NaN).
 * @param[in,out] c          the split of C's rows.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT (nothing queued) for an unknown precision or op, a
 *         NULL or destroyed split, splits of different sets or lengths, an element size that is
 *         not a row (k * in_bytes for a, n * out_bytes for c), different parts, n or k 0, a
 *         NULL b or b[i], a b[i] of another device, too small for B or that is c's own part, or
 *         ldb below B's stored row; the status of a set made unusable by an aborted collective;
 *         a member's GEMM failure as cm_gemm() reports it, with the part and device added (the
 *         members before it are queued).
 */
CM_API cm_status_t cm_split_gemm(cm_gemm_precision_t precision, cm_gemm_op_t op_b, size_t n,
                                 size_t k, float alpha, const cm_split_t *a,
                                 cm_buffer_t *const *b, size_t ldb, float beta, cm_split_t *c);

/* ============================================================================ collectives (NCCL) */

/** @brief Bytes of a communicator id (NCCL_UNIQUE_ID_BYTES). */
#define CM_COMM_ID_BYTES 128
/** @brief Bytes of a communicator id as hex text, NUL included. */
#define CM_COMM_ID_HEX_SIZE (2 * CM_COMM_ID_BYTES + 1)

/** @brief The id that ties the processes of one communicator together (opaque bytes). */
typedef struct cm_comm_id {
    unsigned char bytes[CM_COMM_ID_BYTES]; /**< NCCL's unique id, as cm_comm_id_create() made it */
} cm_comm_id_t;

/** @brief A communicator: one or more ranks, each a GPU, that run collectives together (opaque). */
typedef struct cm_comm cm_comm_t;

/* Element types of collectives: cm_dtype_t (buffer.h). */

/** @brief Reduction operators of collectives. */
typedef enum cm_comm_op {
    CM_COMM_SUM = 0, CM_COMM_PROD = 1, CM_COMM_MIN = 2, CM_COMM_MAX = 3,
    CM_COMM_AVG = 4 /**< sum divided by the number of ranks */
} cm_comm_op_t;
/** @var CM_COMM_SUM
 *  @brief sum over the ranks (ncclSum) */
/** @var CM_COMM_PROD
 *  @brief product over the ranks (ncclProd) */
/** @var CM_COMM_MIN
 *  @brief minimum over the ranks (ncclMin) */
/** @var CM_COMM_MAX
 *  @brief maximum over the ranks (ncclMax) */

/**
 * @brief Make a new communicator id (ncclGetUniqueId) on the process that hands it out.
 * @param[out] out  receives the id; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out; CM_ERROR_NOT_SUPPORTED without NCCL;
 *         NCCL failures (e.g. no network interface for its bootstrap) as CM_ERROR_CUDA with
 *         NCCL's message.
 */
CM_API cm_status_t cm_comm_id_create(cm_comm_id_t *out);

/**
 * @brief Write an id as 256 lower-case hex digits and a NUL (for an environment variable or a
 *        file).
 * @param[in]  id    the id.
 * @param[out] buf   at least CM_COMM_ID_HEX_SIZE bytes.
 * @param[in]  size  capacity of buf.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a size below
 *         CM_COMM_ID_HEX_SIZE (nothing is written). Pure function (works without NCCL).
 */
CM_API cm_status_t cm_comm_id_to_hex(const cm_comm_id_t *id, char *buf, size_t size);

/**
 * @brief Read an id from its hex text: exactly 256 hex digits (either case), optionally
 *        surrounded by white space (a trailing newline from a file is fine).
 * @param[in]  hex  the text.
 * @param[out] out  receives the id; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a character that is not a hex
 *         digit (the message names its position) or a wrong length (the message names it).
 *         Pure function (works without NCCL).
 */
CM_API cm_status_t cm_comm_id_from_hex(const char *hex, cm_comm_id_t *out);

/**
 * @brief A communicator over the members of a set in this process (ncclCommInitAll): rank i is
 *        member i. Its collectives take one buffer per member and run on the set's streams.
 * @param[in]  set  the set (it must outlive the communicator).
 * @param[out] out  receives the communicator; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed set;
 *         CM_ERROR_NOT_SUPPORTED without NCCL; NCCL failures with NCCL's message;
 *         CM_ERROR_CONTEXT_LOST; on a set made unusable by an aborted collective, the status of
 *         that failure.
 * The communicator uses the set's collective timeout (cm_device_set_set_collective_timeout()).
 * Ownership: the caller owns it and destroys it with cm_comm_destroy() before closing the set.
 */
CM_API cm_status_t cm_comm_create(cm_device_set_t *set, cm_comm_t **out);

/**
 * @brief One rank of a communicator spread over processes (ncclCommInitRank): every rank calls
 *        this with the same id and nranks and its own rank; it returns when all have joined.
 * @param[in]  dev     this rank's device object (it must outlive the communicator); the
 *                     communicator acquires one stream of it for its collectives.
 * @param[in]  id      the id from cm_comm_id_create() on one of the processes.
 * @param[in]  nranks  ranks in total, at least 1.
 * @param[in]  rank    this rank, 0 .. nranks-1.
 * @param[out] out     receives the communicator; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a closed dev or a rank out of
 *         range; CM_ERROR_NOT_SUPPORTED without NCCL; NCCL failures with NCCL's message
 *         (e.g. two ranks on one GPU); CM_ERROR_CONTEXT_LOST.
 * Ownership: the caller owns it and destroys it with cm_comm_destroy().
 */
CM_API cm_status_t cm_comm_create_rank(cm_device_t *dev, const cm_comm_id_t *id, int nranks,
                                       int rank, cm_comm_t **out);

/**
 * @brief Destroy a communicator: wait for its streams (within the collective timeout), then
 *        free NCCL's resources (ncclCommDestroy; ncclCommAbort for a rank that failed or timed
 *        out, so that destroy never blocks on a dead peer).
 * @param[in] comm  the communicator, or NULL (a no-op returning CM_OK).
 * @return CM_OK (also for a communicator an earlier failure aborted: it is released at once);
 *         CM_ERROR_INVALID_ARGUMENT for a destroyed communicator or a pointer that is not one;
 *         the status of a fault in queued work, of a timeout (CM_ERROR_BUSY) or of NCCL
 *         (released all the same).
 */
CM_API cm_status_t cm_comm_destroy(cm_comm_t *comm);

/**
 * @brief Cleanup function of CM_SCOPED(cm_comm): destroys *comm and sets it to NULL.
 * @param[in,out] comm  address of the handle variable; NULL and *comm == NULL are no-ops.
 */
static inline void cm_comm_scope_exit(cm_comm_t **comm) {
    if (comm == NULL || *comm == NULL) return;
    (void)cm_comm_destroy(*comm);
    *comm = NULL;
}

/**
 * @brief Ranks of a communicator.
 * @param[in]  comm        the communicator.
 * @param[out] nranks      optional: ranks in total.
 * @param[out] local       optional: ranks in this process (members of the set, or 1).
 * @param[out] first_rank  optional: the rank of local rank 0 (0 for a set's communicator).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed communicator.
 */
CM_API cm_status_t cm_comm_size(const cm_comm_t *comm, int *nranks, int *local, int *first_rank);

/**
 * @brief The stream the collectives of local rank `local` run on (the set's stream of that
 *        member, or the stream the rank acquired).
 * @param[in]  comm    the communicator.
 * @param[in]  local   local rank, 0 .. local ranks - 1 (cm_comm_size()).
 * @param[out] stream  receives the stream (owned by the set or the communicator: do not release
 *                     it); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a destroyed communicator or a
 *         local rank out of range; CM_ERROR_NOT_SUPPORTED in a build without NCCL.
 */
CM_API cm_status_t cm_comm_stream(const cm_comm_t *comm, int local, cm_stream_t **stream);

/**
 * @brief Wait for the collectives queued on the communicator's streams, polling the streams
 *        (cudaStreamQuery) and NCCL's asynchronous error state (ncclCommGetAsyncError), for at
 *        most the collective timeout (cm_comm_timeout()).
 *
 * On a timeout or an NCCL error every local rank is aborted (ncclCommAbort) and the
 * communicator (and its set) becomes unusable: see "Collectives that fail instead of hang".
 *
 * @param[in] comm  the communicator.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed communicator;
 *         CM_ERROR_NOT_SUPPORTED without NCCL; CM_ERROR_BUSY when the collectives did not
 *         finish within the timeout (the message names the rank, device and milliseconds); the
 *         status of a fault or of an NCCL error (NCCL's text); on a communicator aborted before,
 *         or one whose set was made unusable, the status of that failure again.
 */
CM_API cm_status_t cm_comm_synchronize(cm_comm_t *comm);

/**
 * @brief Set the collective timeout of a communicator. A set's communicator shares its set's
 *        setting (this is cm_device_set_set_collective_timeout() on its set); a rank's
 *        communicator (cm_comm_create_rank()) starts with CUDAMODEL_COLLECTIVE_TIMEOUT_MS or
 *        CM_COLLECTIVE_TIMEOUT_DEFAULT_MS, as a set does.
 * @param[in] comm        the communicator.
 * @param[in] timeout_ms  milliseconds, or CM_COLLECTIVE_TIMEOUT_NONE (0) for no limit.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed communicator;
 *         CM_ERROR_NOT_SUPPORTED without NCCL. No CUDA call.
 */
CM_API cm_status_t cm_comm_set_timeout(cm_comm_t *comm, uint32_t timeout_ms);

/**
 * @brief The collective timeout of a communicator (cm_comm_set_timeout()).
 * @param[in]  comm        the communicator.
 * @param[out] timeout_ms  receives the milliseconds (0: no limit); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed communicator;
 *         CM_ERROR_NOT_SUPPORTED without NCCL.
 */
CM_API cm_status_t cm_comm_timeout(const cm_comm_t *comm, uint32_t *timeout_ms);

/*
 * The collectives. Each takes one buffer per local rank (arrays of `local` entries, in local
 * rank order: member order for a set's communicator), counts in elements of dtype from the
 * start of each buffer, is queued on the communicator's streams (all local ranks in one
 * ncclGroupStart / ncclGroupEnd) and returns once queued. Buffers are checked before anything
 * is queued: live handles on the right device (local rank i's device), large enough for the
 * count (the message names the numbers).
 * Return: CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed communicator, NULL arrays or
 * entries, a buffer of the wrong device or too small, an unknown dtype or op, or a root out of
 * range; CM_ERROR_NOT_SUPPORTED without NCCL (the message says how to build with it); NCCL
 * failures with NCCL's message; CM_ERROR_CONTEXT_LOST; on a communicator aborted by an earlier
 * timeout or NCCL error (or whose set was made unusable), the status of that failure, with
 * nothing queued.
 */

/**
 * @brief recv[i][0..count) = op over all ranks of send[r][0..count). send[i] may be recv[i]
 *        (in place).
 * @param[in] comm   the communicator.
 * @param[in] send   array of one buffer per local rank (not NULL, no NULL entry), each with at
 *                   least count elements of dtype from its start.
 * @param[in] recv   array of one buffer per local rank (not NULL, no NULL entry) that receive
 *                   the result, count elements each; an entry may be the same as send's.
 * @param[in] count  elements per rank (0: checked, nothing queued).
 * @param[in] dtype  element type, any cm_dtype_t.
 * @param[in] op     the reduction operator.
 * @return CM_OK once queued; the statuses listed above for every collective.
 */
CM_API cm_status_t cm_comm_all_reduce(cm_comm_t *comm, cm_buffer_t *const *send,
                                      cm_buffer_t *const *recv, size_t count, cm_dtype_t dtype,
                                      cm_comm_op_t op);

/**
 * @brief recv[i][0..count) = the root rank's send[0..count) on every rank. send is read on the
 *        root only: other entries may be NULL; the root's send may be its recv (in place).
 * @param[in] comm   the communicator.
 * @param[in] send   array of one buffer per local rank (not NULL); only the root's entry is
 *                   read (count elements of dtype from its start), the others may be NULL.
 * @param[in] recv   array of one buffer per local rank (not NULL, no NULL entry) that receive
 *                   the root's count elements.
 * @param[in] count  elements to broadcast (0: checked, nothing queued).
 * @param[in] dtype  element type, any cm_dtype_t.
 * @param[in] root   the rank that sends, 0 .. nranks-1 (a global rank across processes).
 * @return CM_OK once queued; the statuses listed above for every collective.
 */
CM_API cm_status_t cm_comm_broadcast(cm_comm_t *comm, cm_buffer_t *const *send,
                                     cm_buffer_t *const *recv, size_t count, cm_dtype_t dtype,
                                     int root);

/**
 * @brief recv[i][r * count .. (r + 1) * count) = rank r's send[0..count) for every rank r:
 *        recv holds nranks * count elements. send[i] == recv[i] means in place: rank r's data
 *        is already at element r * count of its recv.
 * @param[in] comm   the communicator.
 * @param[in] send   array of one buffer per local rank (not NULL, no NULL entry), each with at
 *                   least count elements of dtype from its start (or recv itself, in place).
 * @param[in] recv   array of one buffer per local rank (not NULL, no NULL entry), each with at
 *                   least nranks * count elements.
 * @param[in] count  elements each rank contributes (0: checked, nothing queued).
 * @param[in] dtype  element type, any cm_dtype_t.
 * @return CM_OK once queued; the statuses listed above for every collective.
 */
CM_API cm_status_t cm_comm_all_gather(cm_comm_t *comm, cm_buffer_t *const *send,
                                      cm_buffer_t *const *recv, size_t count, cm_dtype_t dtype);

CM_EXTERN_C_END

#endif /* CUDAMODEL_MULTI_H */
