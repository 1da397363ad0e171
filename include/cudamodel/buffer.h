/**
 * @file buffer.h
 * @brief Host and device memory: device buffers, pinned host buffers, checked copies, fills,
 *        the per-device memory pool, fast pageable copies, and out-of-memory reports.
 *
 * ## The model
 * A GPU has its own memory. Data moves between host memory and device memory by copies, and a
 * copy can go wrong in a few classic ways: the wrong size, the wrong direction, a pointer of
 * another device, memory freed while a kernel still uses it, or "out of memory" with no
 * numbers. Each object here closes one of these doors.
 *
 * - **cm_device_t** (device.h) owns the memory of one GPU as the library sees it: a memory pool
 *   for stream-ordered buffers, pinned staging buffers, and the list of live buffers. Closing a
 *   device with live buffers is refused with a leak report (how many, how many bytes, and the
 *   file:line or label that created each one).
 * - **cm_buffer_t** is device memory of a fixed size. Create it synchronously
 *   (cm_buffer_create(), memory straight from the driver like cudaMalloc) or stream-ordered on
 *   a library stream (cm_buffer_create_on_stream(), from the device's pool like
 *   cudaMallocFromPoolAsync). A stream-ordered buffer is destroyed in stream order: the memory
 *   is released after the work queued on its stream before the destroy. Zero-byte buffers are
 *   valid: they hold no memory and every copy of 0 bytes succeeds.
 * - **cm_host_buffer_t** is page-locked (pinned) host memory, allocated by the library
 *   (portable / mapped / write-combined options) or registered from memory the caller owns.
 *   Copies to and from pinned memory run at the full speed of the bus and can be asynchronous.
 * - **Copies** take an offset on each buffer side and a length. Every copy checks its ranges
 *   (offset + length <= size, without overflow), its direction (a device pointer passed where
 *   host memory is expected is refused) and its devices (a stream of another GPU is refused).
 *   A violation returns CM_ERROR_INVALID_ARGUMENT naming both sizes, and nothing is written.
 * - **Pageable copies are staged.** cudaMemcpy from ordinary (pageable) host memory is slow
 *   (6.9 GB/s host-to-device on an H200 against 55 GB/s pinned) because the driver copies it
 *   through its own small pinned buffer, one piece at a time. cm_buffer_copy_from_host() and
 *   cm_buffer_copy_to_host() detect pageable memory and run a pipeline instead: the range is cut
 *   in chunks, two or more pinned staging buffers of the device alternate, host threads copy
 *   chunk i+1 into one staging buffer while the DMA engine moves chunk i from the other.
 *   cm_device_staging_configure() tunes it (chunk size, buffers, host threads, threshold).
 * - **Out of memory.** When an allocation fails the library first trims its own pool and tries
 *   once more. If it still fails, the detail (cm_last_error()) says how much was asked, the
 *   device's free and total memory, what this process holds through the library (live buffers
 *   and cached pool memory), what is held outside it (other processes, CUDA contexts), the
 *   largest allocation that would succeed now when the request should have fit, and what to do
 *   about it. A request larger than the device's whole memory is reported the same way at
 *   once (cuda_error cudaErrorMemoryAllocation, "not attempted" in the message, "not called" in
 *   the call): CUDA is not asked, since the driver may hold most of the free memory for a
 *   moment before it refuses, and the pool is not trimmed for a retry that cannot succeed.
 *
 * An out-of-memory detail reads like this (numbers of an H200 shared with another process):
 * @code{.unparsed}
 * CM_ERROR_DEVICE_OUT_OF_MEMORY: out of memory: cannot allocate 40.00 GiB (42949672960 bytes)
 *   on device 0 (NVIDIA H200); the device has 140.00 GiB in total, 10.00 GiB free; this process
 *   holds 82.00 GiB through libcudamodel (80.00 GiB in 12 live buffers, 2.00 GiB cached in its
 *   pools after 1.00 GiB were released for a second attempt); 48.00 GiB is held outside the
 *   library (other processes, CUDA contexts, direct CUDA allocations)
 *   hint: ask for at most 10.00 GiB at once, the free memory now (smaller batches or tiles);
 *   destroy buffers you no longer need (12 live, 80.00 GiB; cm_device_leak_report() lists
 *   them); ...; 48.00 GiB is used outside the library: nvidia-smi
 *   --query-compute-apps=pid,process_name,used_memory --format=csv names the processes that
 *   hold it
 * @endcode
 * When the request was no larger than the free memory and still failed (fragmentation, or
 * memory another thread or process took meanwhile), the report adds "the largest allocation
 * that succeeds now is ...", measured by at most 8 probing cudaMalloc/cudaFree calls below the
 * request, on the failure path only. A request larger than the free memory is not probed: the
 * free memory bounds what fits, and a probe up to it would hold all of it for a moment and make
 * the allocations of other threads and processes fail meanwhile. No probe ever asks for more
 * than the failed request.
 *
 * ## Reports
 * cm_device_memory_report() (device.h) gives, at any time, the live buffers and bytes of a
 * device object, their high-water mark, the pool's reserved / used / peak memory and release
 * threshold, the pinned staging memory, and the device's free and total memory;
 * cm_memory_report_format() prints it. cm_device_leak_report() lists every live buffer with its
 * size and the file:line (or label) that created it.
 *
 * ## Ownership
 * Every create returns a handle the caller owns; destroy releases it; destroy(NULL) is a no-op.
 * Handles are checked on every call: a destroyed handle (use after destroy, double destroy) or
 * a pointer that is not a handle is reported as CM_ERROR_INVALID_ARGUMENT, never dereferenced.
 * With GCC or Clang, CM_SCOPED() releases a handle when it leaves its scope, early returns
 * included:
 * @code
 * cm_status_t scale_on_gpu(cm_device_t *dev, float *h_x, size_t n) {
 *     CM_SCOPED(cm_buffer) cm_buffer_t *d_x = NULL;            // destroyed at scope exit
 *     CM_TRY(cm_buffer_create(dev, n * sizeof(float), &d_x));
 *     CM_TRY(cm_buffer_copy_from_host(NULL, d_x, 0, h_x, n * sizeof(float)));
 *     // ... launch kernels on the pointer from cm_buffer_device_ptr() ...
 *     CM_TRY(cm_buffer_copy_to_host(NULL, d_x, 0, h_x, n * sizeof(float)));
 *     return CM_OK;
 * }
 * @endcode
 *
 * ## Streams, offsets
 * Every call that queues work takes the stream first: a library stream (stream.h: acquired
 * from the device's pool, or a CUDA stream of your own adopted with cm_stream_wrap() of
 * interop.h), or NULL. **NULL means synchronous**, everywhere in the library: the work is
 * queued on CUDA's legacy default stream of the device (so it is ordered after earlier work
 * there and on blocking streams, like cudaMemcpy) and is complete when the call returns; a fault
 * it causes is reported by that call. With a stream the call returns once the work is queued
 * (exceptions, where pageable host memory is involved, are given with each call). Offsets are
 * counted in **bytes** in every header.
 *
 * ## Threading
 * A cm_device_t is thread-safe (its pool, staging buffers and live-buffer list are locked).
 * A single cm_buffer_t or cm_host_buffer_t is used by one thread at a time; copies between
 * distinct buffers may run in several threads at once. Destroying a handle while another thread
 * uses it is a bug that the handle checks cannot always catch.
 *
 * The library never prints, never calls exit() or abort().
 */
#ifndef CUDAMODEL_BUFFER_H
#define CUDAMODEL_BUFFER_H

#include <stdbool.h>
#include <stddef.h>

#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/** @brief Device memory of a fixed size (opaque). See cm_buffer_create(). */
typedef struct cm_buffer cm_buffer_t;

/** @brief Pinned (page-locked) host memory (opaque). See cm_host_buffer_create(). */
typedef struct cm_host_buffer cm_host_buffer_t;

/** @brief A library stream (opaque; stream.h): acquired from a device's pool or wrapping a CUDA
 *         stream of the application (cm_stream_wrap() in interop.h). */
typedef struct cm_stream cm_stream_t;

/** @brief Element types, for the operations that interpret a buffer's bytes (kernels.h,
 *         multi.h). Each operation says which types it takes. */
typedef enum cm_dtype {
    CM_DTYPE_I8 = 0, CM_DTYPE_U8 = 1, CM_DTYPE_I32 = 2, CM_DTYPE_U32 = 3, CM_DTYPE_I64 = 4,
    CM_DTYPE_U64 = 5, CM_DTYPE_F16 = 6, CM_DTYPE_F32 = 7, CM_DTYPE_F64 = 8, CM_DTYPE_BF16 = 9
} cm_dtype_t;
/** @var CM_DTYPE_I8
 *  @brief int8_t */
/** @var CM_DTYPE_U8
 *  @brief uint8_t */
/** @var CM_DTYPE_I32
 *  @brief int32_t */
/** @var CM_DTYPE_U32
 *  @brief uint32_t */
/** @var CM_DTYPE_I64
 *  @brief int64_t */
/** @var CM_DTYPE_U64
 *  @brief uint64_t */
/** @var CM_DTYPE_F16
 *  @brief IEEE 754 half precision (binary16), 2 bytes */
/** @var CM_DTYPE_F32
 *  @brief float */
/** @var CM_DTYPE_F64
 *  @brief double */
/** @var CM_DTYPE_BF16
 *  @brief bfloat16 (cm_bf16_t of kernels.h), 2 bytes */

/**
 * @brief Bytes of one element of a type; 0 for a value outside the enum.
 * @param[in] dtype  any value.
 * @return 1, 2, 4 or 8; 0 for a value outside the enum. Pure function. Thread-safe.
 */
static inline size_t cm_dtype_size(cm_dtype_t dtype) {
    switch (dtype) {
    case CM_DTYPE_I8: case CM_DTYPE_U8: return 1;
    case CM_DTYPE_F16: case CM_DTYPE_BF16: return 2;
    case CM_DTYPE_I32: case CM_DTYPE_U32: case CM_DTYPE_F32: return 4;
    case CM_DTYPE_I64: case CM_DTYPE_U64: case CM_DTYPE_F64: return 8;
    }
    return 0;
}

/* ---------------------------------------------------------------------------- scoped cleanup */

#if defined(__GNUC__) || defined(__clang__)
/**
 * @brief Release a handle when its variable leaves scope (GCC/Clang cleanup attribute).
 *
 * Write the handle type without its _t: CM_SCOPED(cm_buffer) cm_buffer_t *b = NULL;
 * CM_SCOPED(cm_host_buffer) cm_host_buffer_t *h = NULL; CM_SCOPED(cm_device) cm_device_t *d = NULL;
 * Initialise the variable (NULL or a handle). Variables are released in reverse order of
 * declaration, so declare the device before its buffers. The status of the release is not
 * returned (the detail is recorded when it fails); call destroy yourself where you need it.
 * Not available with other compilers (the macro is then left undefined, so that code relying on
 * it fails to compile instead of leaking).
 */
#  ifndef CM_SCOPED
#    define CM_SCOPED(type) __attribute__((cleanup(type##_scope_exit)))
#  endif
#endif

/* ---------------------------------------------------------------------------- the memory pool */

/**
 * @brief Set how much memory the device's pool keeps cached when the device synchronizes
 *        (cudaMemPoolAttrReleaseThreshold). The default keeps everything (no limit), which makes
 *        stream-ordered allocation as cheap as it can be.
 * @param[in] dev    the device.
 * @param[in] bytes  bytes to keep; 0 returns every unused byte to the driver at each
 *                   synchronization; ~0ull keeps everything.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev; CM_ERROR_NOT_SUPPORTED when
 *         the device has no memory pools; CM_ERROR_CONTEXT_LOST; CUDA failures as recorded.
 * Thread-safe.
 */
CM_API cm_status_t cm_device_pool_set_release_threshold(cm_device_t *dev, unsigned long long bytes);

/**
 * @brief Return cached pool memory to the driver now, keeping at most keep_bytes of it
 *        (cudaMemPoolTrimTo). Memory of live buffers is never released.
 * @param[in] dev         the device.
 * @param[in] keep_bytes  unused bytes the pool may keep (0: release all it can).
 * @return CM_OK (also for a device without memory pools: nothing to trim);
 *         CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev; CM_ERROR_CONTEXT_LOST; CUDA
 *         failures as recorded. Thread-safe.
 */
CM_API cm_status_t cm_device_pool_trim(cm_device_t *dev, size_t keep_bytes);

/* ---------------------------------------------------------------------------- staging */

/** @brief Most staging buffers a device uses for pageable copies. */
#define CM_STAGING_MAX_BUFFERS 8
/** @brief Most host threads a staged copy uses. */
#define CM_STAGING_MAX_THREADS 16

/**
 * @brief How pageable copies are staged. Zero-initialise (CM_STAGING_CONFIG_INIT): 0 means
 *        the default of each field.
 */
typedef struct cm_staging_config {
    size_t chunk_bytes;        /**< bytes per chunk and per staging buffer; 0: 8 MiB; at least 4 KiB */
    unsigned buffers;          /**< staging buffers, 2 .. CM_STAGING_MAX_BUFFERS; 0: 3 */
    unsigned host_threads;     /**< threads copying into or out of staging (the caller's thread
                                    included), 1 .. CM_STAGING_MAX_THREADS; 0: min(8, CPUs / 2, 1+) */
    size_t min_bytes;          /**< copies shorter than this go straight to cudaMemcpy; 0: 1 MiB;
                                    1 stages every copy */
} cm_staging_config_t;

/** @brief A staging configuration with every field at its default. */
#define CM_STAGING_CONFIG_INIT {0u, 0u, 0u, 0u}

/**
 * @brief Change how a device stages pageable copies. The staging buffers are (re)allocated at
 *        the next staged copy; worker threads are (re)started then.
 * @param[in] dev  the device.
 * @param[in] cfg  the configuration (0 fields take their defaults); not modified.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a closed dev, or a field out of
 *         range (the message names the field, its value and the range); CM_ERROR_CONTEXT_LOST;
 *         a CUDA failure when the staging buffers to replace cannot be freed: when the device's
 *         context cannot be made current nothing is changed (call again), when a free fails the
 *         new configuration is in force and the message says what stays with the driver.
 * Thread-safe (waits for a staged copy in progress on the device).
 */
CM_API cm_status_t cm_device_staging_configure(cm_device_t *dev, const cm_staging_config_t *cfg);

/**
 * @brief The staging configuration in effect, with defaults resolved to their values.
 * @param[in]  dev  the device.
 * @param[out] out  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed dev.
 */
CM_API cm_status_t cm_device_staging_config(const cm_device_t *dev, cm_staging_config_t *out);

/* ---------------------------------------------------------------------------- device buffers */

/**
 * @brief Allocate a device buffer and count it in the device: synchronously (stream NULL) or
 *        stream-ordered on a library stream.
 *
 * Usually called through the macros cm_buffer_create(dev, bytes, &out) (synchronous),
 * cm_buffer_create_labeled(dev, bytes, "weights", &out) and
 * cm_buffer_create_on_stream(stream, dev, bytes, &out), which pass the caller's file and line.
 *
 * - **stream NULL:** the memory comes from the driver at once (like cudaMalloc) and is usable
 *   by any work of the device.
 * - **a stream of dev:** the memory comes from the device's memory pool in the order of that
 *   stream (cudaMallocFromPoolAsync): usable by work queued on the stream after this call (or
 *   on other streams after an event). cm_buffer_destroy() frees it on the same stream, after
 *   the work queued there; the stream must stay acquired (or wrapped) until then, or destroy
 *   the buffer on another stream with cm_buffer_destroy_on_stream(). A stream being captured
 *   into a graph records the allocation as a graph node.
 *
 * On out-of-memory the device's pool is trimmed and the allocation tried once more; if it
 * still fails the detail carries the out-of-memory report (see the file comment).
 *
 * @param[in]  stream NULL (synchronous) or an acquired or wrapped stream of dev (stream.h).
 * @param[in]  dev    the device.
 * @param[in]  bytes  size; 0 gives a valid empty buffer that holds no device memory.
 * @param[out] out    receives the new handle; left unchanged on failure.
 * @param[in]  label  optional name shown in leak reports (copied, up to 63 characters), or NULL.
 * @param[in]  file   optional source file of the caller, or NULL: a string of static storage
 *                    duration such as __FILE__ (the macros pass it), which the handle keeps a
 *                    pointer to for its leak and error reports (it is not copied).
 * @param[in]  line   its line.
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT for a NULL out, a NULL or closed dev, a released stream or
 *         a stream of another device (the message names both devices);
 *         CM_ERROR_NOT_SUPPORTED for a stream on a device without memory pools;
 *         CM_ERROR_DEVICE_OUT_OF_MEMORY with the out-of-memory report;
 *         CM_ERROR_HOST_OUT_OF_MEMORY when the handle itself cannot be allocated;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the buffer and releases it with cm_buffer_destroy().
 */
CM_API cm_status_t cm_buffer_create_at(cm_stream_t *stream, cm_device_t *dev, size_t bytes,
                                       cm_buffer_t **out, const char *label, const char *file,
                                       int line);

/** @brief A synchronous cm_buffer_create_at() with the caller's file:line and no label. */
#define cm_buffer_create(dev, bytes, out)                                                    \
    cm_buffer_create_at(NULL, (dev), (bytes), (out), NULL, __FILE__, __LINE__)

/** @brief A synchronous cm_buffer_create_at() with a label and the caller's file:line. */
#define cm_buffer_create_labeled(dev, bytes, label, out)                                     \
    cm_buffer_create_at(NULL, (dev), (bytes), (out), (label), __FILE__, __LINE__)

/** @brief A stream-ordered cm_buffer_create_at() on stream, with the caller's file:line. */
#define cm_buffer_create_on_stream(stream, dev, bytes, out)                                  \
    cm_buffer_create_at((stream), (dev), (bytes), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Release a device buffer. A stream-ordered buffer is freed on the stream it was created
 *        on (after the work queued there before this call); a synchronous one like cudaFree,
 *        which waits for the device's work.
 *
 * Two refusals release nothing, so the buffer stays alive and the destroy may be repeated:
 * a synchronous buffer while the calling thread captures a graph (CUDA refuses cudaFree during
 * a capture: destroy it after cm_graph_capture_end()), and a device whose context cannot be
 * made current. A stream-ordered free that CUDA refuses is retried synchronously; when that
 * cannot run now (the thread captures a graph) the memory is kept and freed later, at the end
 * of the thread's capture or when the device is closed, so that no memory leaks.
 *
 * @param[in] buf  the buffer, or NULL (a no-op returning CM_OK).
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT when buf was already destroyed or is not a buffer handle
 *         (nothing is touched);
 *         CM_ERROR_BUSY for a synchronous buffer while this thread captures a graph, or while a
 *         texture (memspace.h) reads the buffer (the message names the texture and where it was
 *         created); the buffer is still alive;
 *         a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain when the device's
 *         context cannot be made current (the buffer is still alive);
 *         CM_ERROR_CONTEXT_LOST or other CUDA failures of the free, as recorded: the handle is
 *         released all the same (the message says when the memory is freed later).
 * Ownership: the handle is gone after the call, whatever it returns, except for
 * CM_ERROR_INVALID_ARGUMENT, CM_ERROR_BUSY and a failure to make the context current, which
 * leave it as it was (cm_buffer_info() tells whether it is still alive).
 */
CM_API cm_status_t cm_buffer_destroy(cm_buffer_t *buf);

/**
 * @brief Release a device buffer in the order of another stream: its memory is freed after the
 *        work queued on stream before this call (cudaFreeAsync), whichever stream created it.
 *        A synchronous buffer is freed like cudaFree, which waits for the device's work.
 * @param[in] stream  an acquired or wrapped stream of the buffer's device; not NULL (to free
 *                    a buffer without a stream use cm_buffer_destroy()).
 * @param[in] buf     the buffer, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or released stream, a stream of another
 *         device or a destroyed buffer (the buffer is then left alive); CM_ERROR_BUSY (a
 *         capture of this thread, or a texture reading the buffer) and a failure to make the
 *         device's context current as for cm_buffer_destroy() (the buffer is left alive); CUDA
 *         failures of the free as recorded (the handle is released all the same).
 */
CM_API cm_status_t cm_buffer_destroy_on_stream(cm_stream_t *stream, cm_buffer_t *buf);

/**
 * @brief The device address of a buffer, for the application's own kernels
 *        (cm_launch() in launch.h) and CUDA calls.
 * @param[in]  buf  the buffer.
 * @param[out] ptr  receives the address (NULL for an empty buffer); valid until the buffer is
 *                  destroyed; owned by the buffer (never cudaFree it).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_buffer_device_ptr(const cm_buffer_t *buf, void **ptr);

/**
 * @brief Cleanup function of CM_SCOPED(cm_buffer): destroys *buf when it is not NULL and sets
 *        it to NULL. A failure is recorded in the detail (cm_last_error()), not returned.
 * @param[in,out] buf  address of the handle variable; NULL and *buf == NULL are no-ops.
 * Ownership: releases the buffer the variable owned.
 */
static inline void cm_buffer_scope_exit(cm_buffer_t **buf) {
    if (buf == NULL || *buf == NULL) return;
    (void)cm_buffer_destroy(*buf);
    *buf = NULL;
}

/** @brief What cm_buffer_info() tells about a device buffer. */
typedef struct cm_buffer_info {
    size_t bytes;            /**< size in bytes */
    cm_device_t *device;     /**< the device object it belongs to (owned by the caller of
                                  cm_device_open(), not by the buffer) */
    int ordinal;             /**< that device's CUDA ordinal */
    bool stream_ordered;     /**< created on a stream (cm_buffer_create_on_stream()) */
    cm_stream_t *stream;     /**< the stream it was created on, NULL for a synchronous buffer
                                  (the handle as it was passed: it may be released since) */
    void *device_ptr;        /**< its device address, as cm_buffer_device_ptr() gives it */
    char label[64];          /**< its label, or "" when it has none */
} cm_buffer_info_t;

/**
 * @brief Size, device, stream, address and label of a device buffer.
 * @param[in]  buf   the buffer.
 * @param[out] info  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_buffer_info(const cm_buffer_t *buf, cm_buffer_info_t *info);

/* ---------------------------------------------------------------------------- copies */

/**
 * @brief Copy bytes from host memory into a device buffer at dst_offset.
 *
 * Pinned source memory (cudaHostAlloc, cudaHostRegister, a cm_host_buffer_t's data) is copied
 * directly; pageable memory of at least the staging threshold goes through the device's
 * staging pipeline (see the file comment); managed memory is copied directly.
 *
 * @param[in] stream      NULL: synchronous (returns when the data is on the device); or a
 *                        stream of dst's device: queued there; with pinned src the call returns
 *                        once the copy is queued (keep src unchanged until it completes), with
 *                        pageable src once src has been read (like cudaMemcpyAsync). On a
 *                        stream being captured into a graph nothing is staged: the copy is
 *                        captured as one cudaMemcpyAsync that reads src at each graph launch.
 * @param[in] dst         destination buffer.
 * @param[in] dst_offset  byte offset in dst.
 * @param[in] src         host memory of at least bytes bytes; may be NULL when bytes is 0.
 * @param[in] bytes       bytes to copy; 0 does nothing (after the checks).
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed dst, a NULL src with bytes > 0,
 *         dst_offset + bytes beyond dst's size (the message names offset, length and size), a
 *         src that is device memory (wrong direction: use cm_buffer_copy()), or a released
 *         stream or one of another device; dst is untouched;
 *         CM_ERROR_HOST_OUT_OF_MEMORY when staging buffers cannot be allocated;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 */
CM_API cm_status_t cm_buffer_copy_from_host(cm_stream_t *stream, cm_buffer_t *dst,
                                            size_t dst_offset, const void *src, size_t bytes);

/**
 * @brief Copy bytes from a device buffer at src_offset into host memory. Pageable
 *        destinations are staged like cm_buffer_copy_from_host().
 * @param[in]  stream      NULL: synchronous (returns when the data is in dst); or a stream of
 *                         src's device: with pinned dst the call returns once the copy is
 *                         queued (read dst after synchronising the stream), with pageable dst
 *                         when the data is in dst. On a stream being captured into a graph the
 *                         copy is captured (not staged) and writes dst at each graph launch.
 * @param[in]  src         source buffer.
 * @param[in]  src_offset  byte offset in src.
 * @param[out] dst         host memory of at least bytes bytes; may be NULL when bytes is 0.
 * @param[in]  bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed src, a NULL dst with
 *         bytes > 0, a range beyond src's size, a dst that is device memory, or a bad stream;
 *         dst is untouched; CM_ERROR_HOST_OUT_OF_MEMORY; CM_ERROR_CONTEXT_LOST; other CUDA
 *         failures as recorded.
 */
CM_API cm_status_t cm_buffer_copy_to_host(cm_stream_t *stream, const cm_buffer_t *src,
                                          size_t src_offset, void *dst, size_t bytes);

/**
 * @brief Copy a range of a pinned host buffer into a device buffer (direct DMA, full speed).
 * @param[in] stream      NULL: synchronous; or a stream of dst's device: queued there, returns
 *                        at once (keep the source unchanged until the stream reaches the copy).
 * @param[in] dst         destination device buffer.
 * @param[in] dst_offset  byte offset in dst.
 * @param[in] src         source host buffer.
 * @param[in] src_offset  byte offset in src.
 * @param[in] bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed handles, a range beyond
 *         either size (the message names which side, the offset, the length and the size) or a
 *         bad stream; nothing is written; CM_ERROR_CONTEXT_LOST; other CUDA failures as
 *         recorded.
 */
CM_API cm_status_t cm_buffer_copy_from_host_buffer(cm_stream_t *stream, cm_buffer_t *dst,
                                                   size_t dst_offset, const cm_host_buffer_t *src,
                                                   size_t src_offset, size_t bytes);

/**
 * @brief Copy a range of a device buffer into a pinned host buffer (direct DMA, full speed).
 * @param[in]  stream      NULL: synchronous; or a stream of src's device: queued there,
 *                         returns at once (read the destination after synchronising).
 * @param[in]  src         source device buffer.
 * @param[in]  src_offset  byte offset in src.
 * @param[out] dst         destination host buffer.
 * @param[in]  dst_offset  byte offset in dst.
 * @param[in]  bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed handles, a range beyond
 *         either size (the message names which side, the offset, the length and the size) or a
 *         bad stream; nothing is written; CM_ERROR_CONTEXT_LOST; other CUDA failures as
 *         recorded.
 */
CM_API cm_status_t cm_buffer_copy_to_host_buffer(cm_stream_t *stream, const cm_buffer_t *src,
                                                 size_t src_offset, cm_host_buffer_t *dst,
                                                 size_t dst_offset, size_t bytes);

/**
 * @brief Copy between device buffers, on one device or across two (a peer copy).
 *
 * Across devices, the first copy between a pair checks whether the pair supports peer access
 * and, when it does, enables it in both directions (cudaDeviceEnablePeerAccess, and access to
 * both device objects' pools), so the copy goes over NVLink or PCIe directly; otherwise CUDA
 * stages it through host memory.
 *
 * @param[in] stream      NULL: synchronous (returns when the copy is complete); or a stream of
 *                        dst's device (across devices: of either device): queued there,
 *                        returns at once.
 * @param[in] dst         destination buffer.
 * @param[in] dst_offset  byte offset in dst.
 * @param[in] src         source buffer (may be dst itself when the ranges do not overlap).
 * @param[in] src_offset  byte offset in src.
 * @param[in] bytes       bytes to copy.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL or destroyed handles, a range beyond either
 *         size, overlapping ranges of the same buffer, or a bad stream; nothing is written;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 */
CM_API cm_status_t cm_buffer_copy(cm_stream_t *stream, cm_buffer_t *dst, size_t dst_offset,
                                  const cm_buffer_t *src, size_t src_offset, size_t bytes);

/**
 * @brief Set every byte of a range to value (cudaMemset).
 * @param[in] stream  NULL: synchronous (complete on return); or a stream of buf's device:
 *                    queued there, returns at once.
 * @param[in] buf     the buffer.
 * @param[in] offset  byte offset of the range.
 * @param[in] bytes   length of the range.
 * @param[in] value   the byte, 0 .. 255 (to write wider values use cm_buffer_fill()).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed buffer, a range beyond its
 *         size, a value outside 0 .. 255, or a bad stream; nothing is written;
 *         CM_ERROR_CONTEXT_LOST; CUDA failures as recorded.
 */
CM_API cm_status_t cm_buffer_set(cm_stream_t *stream, cm_buffer_t *buf, size_t offset,
                                 size_t bytes, int value);

/**
 * @brief Fill a range with a repeated pattern of 1, 2, 4 or 8 bytes (e.g. a float 1.0f).
 * @param[in] stream         NULL: synchronous (complete on return); or a stream of buf's
 *                           device: queued there, returns at once (the pattern is copied). The
 *                           fill is a library kernel: a later fault on the stream names it.
 * @param[in] buf            the buffer.
 * @param[in] offset         byte offset of the range; a multiple of pattern_bytes.
 * @param[in] bytes          length of the range; a multiple of pattern_bytes.
 * @param[in] pattern        the pattern (pattern_bytes bytes, copied); not NULL.
 * @param[in] pattern_bytes  1, 2, 4 or 8.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or destroyed buffer, a NULL pattern, a
 *         pattern size other than 1, 2, 4, 8, an offset or length that is not a multiple of it,
 *         a range beyond the size, or a bad stream; nothing is written;
 *         CM_ERROR_NO_KERNEL_IMAGE when the fill kernel has no image for the GPU;
 *         CM_ERROR_CONTEXT_LOST; CUDA failures as recorded.
 */
CM_API cm_status_t cm_buffer_fill(cm_stream_t *stream, cm_buffer_t *buf, size_t offset,
                                  size_t bytes, const void *pattern, size_t pattern_bytes);

/* ---------------------------------------------------------------------------- pinned host buffers */

/** @brief Options of cm_host_buffer_create() and cm_host_buffer_register(); OR them together. */
typedef enum cm_host_buffer_flags {
    CM_HOST_BUFFER_DEFAULT = 0,        /**< pinned memory for fast copies */
    CM_HOST_BUFFER_PORTABLE = 1,       /**< pinned for every CUDA context, not only this device's */
    CM_HOST_BUFFER_MAPPED = 2,         /**< also mapped into the device's address space: kernels
                                            can read and write it over the bus
                                            (cm_host_buffer_device_ptr()) */
    CM_HOST_BUFFER_WRITE_COMBINED = 4  /**< write-combined: faster host writes and transfers to
                                            the device, very slow host reads (create only) */
} cm_host_buffer_flags_t;

/**
 * @brief Allocate pinned host memory (cudaHostAlloc) and count it in the device.
 *
 * Usually called through cm_host_buffer_create(dev, bytes, flags, &out).
 *
 * @param[in]  dev    the device (the one a mapped buffer is mapped into).
 * @param[in]  bytes  size; 0 gives a valid empty buffer that holds no memory.
 * @param[in]  flags  OR of cm_host_buffer_flags_t.
 * @param[out] out    receives the new handle; left unchanged on failure.
 * @param[in]  label  optional name shown in leak reports (copied), or NULL.
 * @param[in]  file   optional source file of the caller, or NULL: a string of static storage
 *                    duration such as __FILE__ (the macros pass it), which the handle keeps a
 *                    pointer to for its leak and error reports (it is not copied).
 * @param[in]  line   its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL out, a NULL or closed dev, or unknown flag
 *         bits; CM_ERROR_HOST_OUT_OF_MEMORY when the memory cannot be pinned (the message names
 *         the size); CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the buffer and releases it with cm_host_buffer_destroy().
 */
CM_API cm_status_t cm_host_buffer_create_at(cm_device_t *dev, size_t bytes, unsigned flags,
                                            cm_host_buffer_t **out, const char *label,
                                            const char *file, int line);

/** @brief cm_host_buffer_create_at() with the caller's file:line and no label. */
#define cm_host_buffer_create(dev, bytes, flags, out)                                        \
    cm_host_buffer_create_at((dev), (bytes), (flags), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Pin memory the caller already owns (cudaHostRegister) so that copies from and to it
 *        run at full speed, and count it in the device.
 *
 * Usually called through cm_host_buffer_register(dev, ptr, bytes, flags, &out).
 *
 * @param[in]  dev    the device.
 * @param[in]  ptr    start of the memory; not NULL unless bytes is 0.
 * @param[in]  bytes  its size; 0 gives a valid empty buffer (nothing is registered).
 * @param[in]  flags  CM_HOST_BUFFER_PORTABLE and/or CM_HOST_BUFFER_MAPPED (write-combining
 *                    cannot be applied to existing memory).
 * @param[out] out    receives the new handle; left unchanged on failure.
 * @param[in]  label  optional name shown in leak reports (copied), or NULL.
 * @param[in]  file   optional source file of the caller, or NULL: a string of static storage
 *                    duration such as __FILE__ (the macros pass it), which the handle keeps a
 *                    pointer to for its leak and error reports (it is not copied).
 * @param[in]  line   its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL out, a NULL or closed dev, a NULL ptr with
 *         bytes > 0, CM_HOST_BUFFER_WRITE_COMBINED or unknown flag bits, or memory that is
 *         already registered; CM_ERROR_HOST_OUT_OF_MEMORY when it cannot be pinned;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the memory stays the caller's; cm_host_buffer_destroy() unregisters it and frees
 * only the handle. Keep the memory alive until then.
 */
CM_API cm_status_t cm_host_buffer_register_at(cm_device_t *dev, void *ptr, size_t bytes,
                                              unsigned flags, cm_host_buffer_t **out,
                                              const char *label, const char *file, int line);

/** @brief cm_host_buffer_register_at() with the caller's file:line and no label. */
#define cm_host_buffer_register(dev, ptr, bytes, flags, out)                                 \
    cm_host_buffer_register_at((dev), (ptr), (bytes), (flags), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Release a pinned host buffer: free it (cudaFreeHost), or unregister memory that was
 *        registered (cudaHostUnregister; the memory stays the caller's).
 * @param[in] buf  the buffer, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when buf was already destroyed or is not a host
 *         buffer handle; a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain when the
 *         device's context cannot be made current: nothing is released, the buffer is still
 *         alive and the destroy may be repeated; CUDA failures of the free as recorded (the
 *         handle is released all the same).
 */
CM_API cm_status_t cm_host_buffer_destroy(cm_host_buffer_t *buf);

/**
 * @brief The device address of a mapped pinned host buffer (CM_HOST_BUFFER_MAPPED), which the
 *        device's kernels can dereference.
 * @param[in]  buf  the host buffer.
 * @param[out] ptr  receives the address; owned by the buffer.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a destroyed buffer, or a buffer
 *         created without CM_HOST_BUFFER_MAPPED.
 */
CM_API cm_status_t cm_host_buffer_device_ptr(const cm_host_buffer_t *buf, void **ptr);

/**
 * @brief Cleanup function of CM_SCOPED(cm_host_buffer): destroys *buf when it is not NULL and
 *        sets it to NULL. A failure is recorded in the detail, not returned.
 * @param[in,out] buf  address of the handle variable; NULL and *buf == NULL are no-ops.
 * Ownership: releases the host buffer the variable owned.
 */
static inline void cm_host_buffer_scope_exit(cm_host_buffer_t **buf) {
    if (buf == NULL || *buf == NULL) return;
    (void)cm_host_buffer_destroy(*buf);
    *buf = NULL;
}

/**
 * @brief The host address of a pinned host buffer's memory.
 * @param[in]  buf  the buffer.
 * @param[out] ptr  receives the address (NULL for an empty buffer); valid until the buffer is
 *                  destroyed; owned by the buffer.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_host_buffer_data(const cm_host_buffer_t *buf, void **ptr);

/** @brief What cm_host_buffer_info() tells about a pinned host buffer. */
typedef struct cm_host_buffer_info {
    size_t bytes;            /**< size in bytes */
    unsigned flags;          /**< the OR of cm_host_buffer_flags_t it was created or registered with */
    bool registered;         /**< memory of the caller pinned by cm_host_buffer_register() */
    void *data;              /**< its host address (NULL for an empty buffer) */
    void *device_ptr;        /**< its device address when mapped (CM_HOST_BUFFER_MAPPED), else NULL */
    cm_device_t *device;     /**< the device object it is counted in */
    char label[64];          /**< its label, or "" when it has none */
} cm_host_buffer_info_t;

/**
 * @brief Size, flags, addresses, device and label of a pinned host buffer.
 * @param[in]  buf   the buffer.
 * @param[out] info  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_host_buffer_info(const cm_host_buffer_t *buf, cm_host_buffer_info_t *info);

CM_EXTERN_C_END

#endif /* CUDAMODEL_BUFFER_H */
