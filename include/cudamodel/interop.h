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
 * Memory (buffer.h): the CUDA objects behind the library's memory, for the application's own
 * CUDA calls. Buffer operations on a CUDA stream of the application take it wrapped as a
 * library stream (cm_stream_wrap() below).
 * ============================================================================================== */

/**
 * @brief The memory pool behind a device's stream-ordered buffers (NULL when the device has
 *        none), e.g. for cudaMemPoolGetAttribute.
 * @param[in]  dev   the device.
 * @param[out] pool  receives the pool; owned by the device (do not destroy it, do not use it
 *                   after cm_device_close()); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed device.
 */
CM_API cm_status_t cm_device_memory_pool(const cm_device_t *dev, cudaMemPool_t *pool);

/* ==============================================================================================
 * Execution (stream.h): the CUDA handles behind the library's pooled streams and events, for
 * the application's own CUDA calls (cudaMemcpyAsync, <<<...>>>, cuBLAS's cublasSetStream...).
 * Threading: as in stream.h. The CUDA handles stay owned by the pool: never destroy them.
 * ============================================================================================== */

/**
 * @brief The CUDA stream behind a library stream: an acquired one's (a non-blocking stream of
 *        its device, owned by the pool) or a wrapped one's (the application's own).
 * @param[in]  stream  an acquired or wrapped stream (stream.h, cm_stream_wrap()).
 * @param[out] out     receives the CUDA stream; never cudaStreamDestroy a pooled one, and stop
 *                     using it when the library stream is released.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, or a stream that is released, of a
 *         closed device, or not a stream handle.
 */
CM_API cm_status_t cm_stream_cuda(const cm_stream_t *stream, cudaStream_t *out);

/**
 * @brief Adopt a CUDA stream of the application as a library stream (non-owning), so that every
 *        call that takes a cm_stream_t * (buffer.h's creates, copies, sets and fills,
 *        kernels.h, cm_gemm, cm_launch, stream.h's waits, events and synchronisation) queues its
 *        work on it.
 *
 * The stream must belong to dev's device (checked: its context, then its device). The library
 * never destroys the CUDA stream: cm_stream_release() ends the handle only (and frees the
 * reduction scratch the library may have attached to it, after the stream's work). Release the
 * wrapper before destroying the CUDA stream. A device object with wrapped streams alive refuses
 * to close (CM_ERROR_BUSY), as with acquired ones.
 * @param[in]  dev   the device object the stream belongs to.
 * @param[in]  cs    a stream from cudaStreamCreate*() (not 0, cudaStreamLegacy or
 *                   cudaStreamPerThread: pass NULL as the cm_stream_t * for synchronous work
 *                   on the legacy default stream).
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
