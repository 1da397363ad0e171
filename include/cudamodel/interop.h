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

#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/launch.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/**
 * @brief The status a CUDA error maps to (pure table lookup; records nothing).
 * @return CM_OK for cudaSuccess; CM_ERROR_CUDA for values CUDA 13 does not define.
 * Note: cudaErrorInsufficientDriver maps to CM_ERROR_DRIVER_TOO_OLD here; only
 * cm_record_cuda_error(), which can ask for the driver version, tells "no driver" apart.
 */
CM_API cm_status_t cm_status_from_cuda(cudaError_t err);

/** @brief A static hint that says how to fix a CUDA error; never NULL. */
CM_API const char *cm_cuda_error_hint(cudaError_t err);

/** @brief Whether a CUDA error loses the context (the process must restart to use CUDA again). */
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
 * @param kernel_name  name shown in the detail (e.g. "vector_add<<<grid, block>>>").
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
 *        stream; cfg->stream must be NULL). Same checks, cache and debug mode as cm_launch().
 * @return the statuses of cm_launch().
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

CM_EXTERN_C_END

#endif /* CUDAMODEL_INTEROP_H */
