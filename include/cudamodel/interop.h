/**
 * @file interop.h
 * @brief Bridge between libcudamodel and the application's own CUDA code.
 *
 * The only public header that includes CUDA's headers. It gives:
 *  - checked-call macros for the application's own CUDA runtime calls that record the
 *    library's detail (message, hint, file:line, device) and return or jump, never exit;
 *  - CM_LAUNCH_CHECK() after the application's own <<<...>>> launches, which honours the
 *    synchronous debug mode (CUDAMODEL_SYNC=1) so a kernel fault names its launch;
 *  - conversions between CUDA's types and ours.
 *
 * Link with the shared CUDA runtime (libcudart.so; nvcc -cudart shared, or CMake's
 * CUDA_RUNTIME_LIBRARY Shared), which is what libcudamodel uses: two copies of cudart in one
 * process keep separate error states and kernel registrations.
 *
 * Example:
 * @code
 * cm_status_t upload(float **d, const float *h, size_t n) {
 *     CM_CUDA_TRY(cudaMalloc((void **)d, n * sizeof(float)));
 *     CM_CUDA_TRY(cudaMemcpy(*d, h, n * sizeof(float), cudaMemcpyHostToDevice));
 *     return CM_OK;
 * }
 * @endcode
 *
 * Threading: all functions are thread-safe; details are recorded for the calling thread.
 */
#ifndef CUDAMODEL_INTEROP_H
#define CUDAMODEL_INTEROP_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/launch.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

CM_EXTERN_C_BEGIN

/**
 * @brief The status a CUDA error maps to (pure table lookup; records nothing).
 * @param err  any cudaError_t value.
 * @return CM_OK for cudaSuccess; CM_ERROR_CUDA for values CUDA 13 does not define.
 * Note: cudaErrorInsufficientDriver maps to CM_ERROR_DRIVER_TOO_OLD here; only
 * cm_record_cuda_error(), which can ask for the driver version, tells "no driver" apart.
 */
CM_API cm_status_t cm_status_from_cuda(cudaError_t err);

/**
 * @brief A static hint that says how to fix a CUDA error; never NULL.
 * @param err  any cudaError_t value.
 * @return a static string, never NULL.
 */
CM_API const char *cm_cuda_error_hint(cudaError_t err);

/**
 * @brief Whether a CUDA error loses the context (the process must restart to use CUDA again).
 * @param err  any cudaError_t value.
 * @return true for the sticky errors (an illegal address, an unspecified launch failure, a
 *         device-side assert ...), false for the others and for cudaSuccess.
 */
CM_API bool cm_cuda_error_is_sticky(cudaError_t err);

/**
 * @brief Record a failed CUDA call in the calling thread's detail and return its status.
 *
 * Maps the error, writes the message (CUDA's own text plus what it means here) and the hint,
 * notes the current device, and for a sticky error marks the device's context as lost so that
 * later library calls fail fast (cm_check_context()). Tells "no driver installed" (driver
 * version 0) from "driver too old" for cudaErrorInsufficientDriver, and names
 * CUDA_VISIBLE_DEVICES for cudaErrorNoDevice when it is set. Clears CUDA's own last error
 * (cudaGetLastError) for non-sticky errors, so the next call is not blamed for this one.
 *
 * @param err   the error; cudaSuccess records nothing and returns CM_OK.
 * @param call  text of the call (e.g. "#call" of a macro); NULL is allowed.
 * @param file  source file; NULL is allowed.
 * @param line  source line.
 * @return the mapped status (see cm_status_from_cuda()), refined as above.
 */
CM_API cm_status_t cm_record_cuda_error(cudaError_t err, const char *call, const char *file,
                                        int line);

/**
 * @brief Check the application's own kernel launch: cudaGetLastError(), and in synchronous
 *        debug mode also cudaDeviceSynchronize(), attributing any fault to this launch.
 * @param kernel_name  name shown in the detail (e.g. "vector_add<<<grid, block>>>"); NULL
 *                     shows "kernel".
 * @param file         source file of the launch (CM_LAUNCH_CHECK() passes __FILE__); NULL is
 *                     allowed.
 * @param line         source line of the launch.
 * @return CM_OK; CM_ERROR_INVALID_LAUNCH / CM_ERROR_NO_KERNEL_IMAGE / ... for launch errors;
 *         CM_ERROR_CONTEXT_LOST when the kernel faulted (sync mode), naming kernel_name.
 */
CM_API cm_status_t cm_check_launch(const char *kernel_name, const char *file, int line);

/**
 * @brief Fill our limits from a cudaDeviceProp (what cm_device_get_limits() does after
 *        cudaGetDeviceProperties); usable with a properties struct from anywhere.
 * @param[in]  props    the properties; not modified.
 * @param[in]  ordinal  ordinal to record (-1 when not a real device).
 * @param[out] out      filled on success.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL pointers or a props with no compute
 *         capability (major 0), which means it was never filled.
 */
CM_API cm_status_t cm_device_limits_from_props(const struct cudaDeviceProp *props, int ordinal,
                                               cm_device_limits_t *out);

/**
 * @brief Fill our kernel attributes from CUDA's (what cm_kernel_attrs_get() does).
 * @param[in]  attr  from cudaFuncGetAttributes; not modified.
 * @param[in]  name  the kernel's name for messages, or NULL.
 * @param[out] out   filled on success.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL attr or out.
 */
CM_API cm_status_t cm_kernel_attrs_from_cuda(const struct cudaFuncAttributes *attr, const char *name,
                                             cm_kernel_attrs_t *out);

/**
 * @brief cm_launch_at() on a CUDA stream of the application's own (0: the legacy default
 *        stream, or cfg->stream when that is set). Same checks, cache and debug mode as
 *        cm_launch().
 * @param kernel  the __global__ function, as for cm_launch().
 * @param cfg     the configuration, as for cm_launch(); cfg->stream must be NULL when stream
 *                is not 0.
 * @param args    the argument pointers, as for cm_launch().
 * @param stream  a CUDA stream of the application on the current device, or 0; without
 *                cfg->stream the launch runs on the caller's current device.
 * @param file    the caller's source file, or NULL (a string of static storage duration such
 *                as __FILE__).
 * @param line    the caller's line.
 * @return the statuses of cm_launch(); CM_ERROR_INVALID_ARGUMENT also when both cfg->stream
 *         and a non-zero CUDA stream are given.
 */
CM_API cm_status_t cm_launch_on_cuda_stream(const void *kernel, const cm_launch_config_t *cfg,
                                            void **args, cudaStream_t stream, const char *file,
                                            int line);

/** @brief Run a CUDA runtime call; on failure record the detail and return its status. */
#define CM_CUDA_TRY(call)                                                                   \
    do {                                                                                    \
        cudaError_t cm__cuda_err_ = (call);                                                 \
        if (cm__cuda_err_ != cudaSuccess)                                                   \
            return cm_record_cuda_error(cm__cuda_err_, #call, __FILE__, __LINE__);          \
    } while (0)

/** @brief Run a CUDA runtime call; on failure record the detail, store the status in var and goto label. */
#define CM_CUDA_TRY_GOTO(call, var, label)                                                  \
    do {                                                                                    \
        cudaError_t cm__cuda_err_ = (call);                                                 \
        if (cm__cuda_err_ != cudaSuccess) {                                                 \
            (var) = cm_record_cuda_error(cm__cuda_err_, #call, __FILE__, __LINE__);         \
            goto label;                                                                     \
        }                                                                                   \
    } while (0)

/** @brief After the application's own launch: check it (and synchronize in debug mode); return on failure. */
#define CM_LAUNCH_CHECK(kernel_name)                                                        \
    do {                                                                                    \
        cm_status_t cm__launch_status_ = cm_check_launch((kernel_name), __FILE__, __LINE__);\
        if (cm__launch_status_ != CM_OK) return cm__launch_status_;                         \
    } while (0)

/* ==============================================================================================
 * Memory (buffer.h): raw pointers, and stream-ordered variants on a CUDA stream of the
 * application (the library's own stream handles come with stream.h).
 *
 * Every stream below must belong to the buffer's device (0, cudaStreamLegacy and
 * cudaStreamPerThread mean the buffer's device); a stream of another device is refused with
 * CM_ERROR_INVALID_ARGUMENT naming both devices. Stream-ordered calls return once the work is
 * queued, except where a pageable host pointer is involved (see each call).
 * Threading: as in buffer.h (a device object is thread-safe; one buffer, one thread at a time).
 * ============================================================================================== */

/**
 * @brief Allocate a stream-ordered device buffer on stream, from the device's memory pool
 *        (cudaMallocFromPoolAsync): usable by work queued on stream after this call (or on other
 *        streams after an event). Destroying it frees it on the same stream.
 *
 * Usually called through cm_buffer_create_on_cuda_stream(dev, bytes, stream, &out). On
 * out-of-memory the pool is trimmed and the allocation tried once more; if it still fails the
 * detail carries the out-of-memory report. The stream must stay alive until the buffer is
 * destroyed (or destroy it with cm_buffer_destroy_on_cuda_stream() on another stream).
 *
 * @param[in]  dev     the device.
 * @param[in]  bytes   size; 0 gives a valid empty buffer.
 * @param[in]  stream  a stream of the device.
 * @param[out] out     receives the new handle; left unchanged on failure.
 * @param[in]  label   optional name shown in leak reports (copied), or NULL.
 * @param[in]  file    optional source file of the caller (copied), or NULL.
 * @param[in]  line    its line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL out, a NULL or closed dev, or a stream of
 *         another device; CM_ERROR_NOT_SUPPORTED when the device has no memory pools;
 *         CM_ERROR_DEVICE_OUT_OF_MEMORY with the report; CM_ERROR_HOST_OUT_OF_MEMORY;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * Ownership: the caller owns the buffer and releases it with cm_buffer_destroy().
 */
CM_API cm_status_t cm_buffer_create_on_cuda_stream_at(cm_device_t *dev, size_t bytes,
                                                      cudaStream_t stream, cm_buffer_t **out,
                                                      const char *label, const char *file,
                                                      int line);

/** @brief cm_buffer_create_on_cuda_stream_at() with the caller's file:line and no label. */
#define cm_buffer_create_on_cuda_stream(dev, bytes, stream, out)                            \
    cm_buffer_create_on_cuda_stream_at((dev), (bytes), (stream), (out), NULL, __FILE__, __LINE__)

/**
 * @brief Destroy a buffer in the order of another stream: its memory is released after the
 *        work queued on stream before this call. A synchronous buffer (cm_buffer_create()) is
 *        freed with cudaFree, which waits for all of the device's work.
 * @param[in] buf     the buffer, or NULL (a no-op returning CM_OK).
 * @param[in] stream  a stream of the buffer's device.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a destroyed buffer or a stream of another device
 *         (the buffer is then left alive); CUDA failures of the free as recorded (the handle is
 *         released all the same).
 */
CM_API cm_status_t cm_buffer_destroy_on_cuda_stream(cm_buffer_t *buf, cudaStream_t stream);

/* cm_buffer_device_ptr() and cm_host_buffer_device_ptr() are in buffer.h: a launch of your own
 * kernel on a buffer (launch.h) needs no CUDA header. */


/**
 * @brief The stream a stream-ordered buffer belongs to (0 for a synchronous buffer).
 * @param[in]  buf     the buffer.
 * @param[out] stream  receives the stream (owned by the application, as it was); unchanged on
 *                     failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed buffer.
 */
CM_API cm_status_t cm_buffer_cuda_stream(const cm_buffer_t *buf, cudaStream_t *stream);


/**
 * @brief The memory pool behind a device's stream-ordered buffers (NULL when the device has
 *        none), e.g. for cudaMemPoolGetAttribute.
 * @param[in]  dev   the device.
 * @param[out] pool  receives the pool; owned by the device (do not destroy it, do not use it
 *                   after cm_device_close()); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed device.
 */
CM_API cm_status_t cm_device_memory_pool(const cm_device_t *dev, cudaMemPool_t *pool);

/**
 * @brief cm_buffer_copy_from_host() ordered on stream. With pinned source memory the call
 *        returns once the copy is queued (keep src unchanged until it completes); with pageable
 *        memory the data goes through the staging pipeline on stream and the call returns once
 *        src has been read (like cudaMemcpyAsync from pageable memory).
 * @param[in] dst         destination buffer.
 * @param[in] dst_offset  byte offset in dst.
 * @param[in] src         host memory; may be NULL when bytes is 0.
 * @param[in] bytes       bytes to copy.
 * @param[in] stream      a stream of dst's device.
 * @return the statuses of cm_buffer_copy_from_host(); CM_ERROR_INVALID_ARGUMENT also for a
 *         stream of another device.
 */
CM_API cm_status_t cm_buffer_copy_from_host_on_cuda_stream(cm_buffer_t *dst, size_t dst_offset,
                                                           const void *src, size_t bytes,
                                                           cudaStream_t stream);

/**
 * @brief cm_buffer_copy_to_host() ordered on stream. With pinned destination memory the call
 *        returns once the copy is queued (read dst after synchronizing); with pageable memory
 *        it returns once the data is in dst.
 * @param[in]  src         source buffer.
 * @param[in]  src_offset  byte offset in src.
 * @param[out] dst         host memory; may be NULL when bytes is 0.
 * @param[in]  bytes       bytes to copy.
 * @param[in]  stream      a stream of src's device.
 * @return the statuses of cm_buffer_copy_to_host(); CM_ERROR_INVALID_ARGUMENT also for a stream
 *         of another device.
 */
CM_API cm_status_t cm_buffer_copy_to_host_on_cuda_stream(const cm_buffer_t *src, size_t src_offset,
                                                         void *dst, size_t bytes,
                                                         cudaStream_t stream);

/**
 * @brief cm_buffer_copy_from_host_buffer() queued on stream (cudaMemcpyAsync); returns at once.
 * @param[in] dst, dst_offset, src, src_offset, bytes  as for cm_buffer_copy_from_host_buffer().
 * @param[in] stream  a stream of dst's device.
 * @return its statuses; CM_ERROR_INVALID_ARGUMENT also for a stream of another device.
 */
CM_API cm_status_t cm_buffer_copy_from_host_buffer_on_cuda_stream(cm_buffer_t *dst,
                                                                  size_t dst_offset,
                                                                  const cm_host_buffer_t *src,
                                                                  size_t src_offset, size_t bytes,
                                                                  cudaStream_t stream);

/**
 * @brief cm_buffer_copy_to_host_buffer() queued on stream (cudaMemcpyAsync); returns at once.
 * @param[in] src, src_offset, dst, dst_offset, bytes  as for cm_buffer_copy_to_host_buffer().
 * @param[in] stream  a stream of src's device.
 * @return its statuses; CM_ERROR_INVALID_ARGUMENT also for a stream of another device.
 */
CM_API cm_status_t cm_buffer_copy_to_host_buffer_on_cuda_stream(const cm_buffer_t *src,
                                                                size_t src_offset,
                                                                cm_host_buffer_t *dst,
                                                                size_t dst_offset, size_t bytes,
                                                                cudaStream_t stream);

/**
 * @brief cm_buffer_copy() queued on stream (cudaMemcpyAsync, or cudaMemcpyPeerAsync across
 *        devices); returns at once.
 * @param[in] dst, dst_offset, src, src_offset, bytes  as for cm_buffer_copy().
 * @param[in] stream  a stream of dst's device (across devices: of either device).
 * @return its statuses; CM_ERROR_INVALID_ARGUMENT also for a stream of another device.
 */
CM_API cm_status_t cm_buffer_copy_on_cuda_stream(cm_buffer_t *dst, size_t dst_offset,
                                                 const cm_buffer_t *src, size_t src_offset,
                                                 size_t bytes, cudaStream_t stream);

/**
 * @brief cm_buffer_set() queued on stream (cudaMemsetAsync); returns at once.
 * @param[in] buf, offset, bytes, value  as for cm_buffer_set().
 * @param[in] stream  a stream of buf's device.
 * @return its statuses; CM_ERROR_INVALID_ARGUMENT also for a stream of another device.
 */
CM_API cm_status_t cm_buffer_set_on_cuda_stream(cm_buffer_t *buf, size_t offset, size_t bytes,
                                                int value, cudaStream_t stream);

/**
 * @brief cm_buffer_fill() queued on stream; returns at once (the pattern is copied).
 * @param[in] buf, offset, bytes, pattern, pattern_bytes  as for cm_buffer_fill().
 * @param[in] stream  a stream of buf's device.
 * @return its statuses; CM_ERROR_INVALID_ARGUMENT also for a stream of another device.
 */
CM_API cm_status_t cm_buffer_fill_on_cuda_stream(cm_buffer_t *buf, size_t offset, size_t bytes,
                                                 const void *pattern, size_t pattern_bytes,
                                                 cudaStream_t stream);

/* ==============================================================================================
 * Execution (stream.h): the CUDA handles behind the library's pooled streams and events, for
 * the application's own CUDA calls (cudaMemcpyAsync, <<<...>>>, cuBLAS's cublasSetStream...).
 * Threading: as in stream.h. The CUDA handles stay owned by the pool: never destroy them.
 * ============================================================================================== */

/**
 * @brief The CUDA stream of an acquired pooled stream (a non-blocking stream of its device).
 * @param[in]  stream  an acquired stream (stream.h).
 * @param[out] out     receives the CUDA stream; owned by the pool (never cudaStreamDestroy it;
 *                     stop using it when the library stream is released).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, or a stream that is released, of a
 *         closed device, or not a pooled stream.
 */
CM_API cm_status_t cm_stream_cuda(const cm_stream_t *stream, cudaStream_t *out);

/**
 * @brief Adopt a CUDA stream of the application as a library stream (non-owning), so that every
 *        call that takes a cm_stream_t * (kernels.h, cm_gemm, cm_launch through
 *        cm_launch_config_t::stream, stream.h's waits, events and synchronisation) queues its
 *        work on it.
 *
 * The stream must belong to dev's device (checked: its context, then its device). The library
 * never destroys the CUDA stream: cm_stream_release() ends the handle only (and frees the
 * reduction scratch the library may have attached to it, after the stream's work). Release the
 * wrapper before destroying the CUDA stream. A device object with wrapped streams alive refuses
 * to close (CM_ERROR_BUSY), as with acquired ones.
 * @param[in]  dev   the device object the stream belongs to.
 * @param[in]  cs    a stream from cudaStreamCreate*() (not 0, cudaStreamLegacy or
 *                   cudaStreamPerThread: pass NULL as the cm_stream_t * for the legacy default
 *                   stream).
 * @param[out] out   receives the library stream; NULL on failure.
 * @param[in]  file, line  where it was wrapped, for leak and stale-handle reports.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a default stream, a stream of
 *         another device (the message names it) or an invalid stream; CM_ERROR_CONTEXT_LOST;
 *         CM_ERROR_HOST_OUT_OF_MEMORY.
 */
CM_API cm_status_t cm_stream_wrap_at(cm_device_t *dev, cudaStream_t cs, cm_stream_t **out,
                                     const char *file, int line);

/** @brief cm_stream_wrap_at() with the caller's file:line. */
#define cm_stream_wrap(dev, cs, out) cm_stream_wrap_at((dev), (cs), (out), __FILE__, __LINE__)

/**
 * @brief The CUDA event of an acquired pooled event (stream.h).
 * @param[in]  event  an acquired event.
 * @param[out] out    receives the CUDA event; owned by the pool (never cudaEventDestroy it).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out or an event that is not acquired.
 */
CM_API cm_status_t cm_event_cuda(const cm_event_t *event, cudaEvent_t *out);

CM_EXTERN_C_END

#endif /* CUDAMODEL_INTEROP_H */
