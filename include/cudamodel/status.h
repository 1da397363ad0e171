/**
 * @file status.h
 * @brief The checked-error layer: statuses, their names and texts, and the thread-local detail
 *        of the last failure.
 *
 * Every fallible libcudamodel call returns a cm_status_t. CM_OK is 0; results go through
 * out-parameters. When a call fails it also records, for the calling thread only, a
 * cm_error_t that says what failed (the CUDA error when there was one, the call, file:line,
 * the device), a message with the concrete numbers and a hint that says how to fix it.
 *
 * The library never calls exit() or abort() and never prints unless asked
 * (cm_error_format() writes into your buffer).
 *
 * Sticky CUDA errors (an illegal address, an unspecified launch failure, a device-side assert
 * and the others after which CUDA says the process must be restarted) are recognised: the
 * detail says the context is lost, and every later library call that uses that device fails
 * fast with CM_ERROR_CONTEXT_LOST and the original cause, instead of a confusing new error.
 *
 * Threading: all functions here are thread-safe. The last-error detail is per thread.
 */
#ifndef CUDAMODEL_STATUS_H
#define CUDAMODEL_STATUS_H

#include <stdbool.h>
#include <stddef.h>

#include <cudamodel/export.h>

CM_EXTERN_C_BEGIN

/** @brief What a libcudamodel call returns. 0 is success; the list is short on purpose. */
typedef enum cm_status {
    CM_OK = 0,                        /**< success */
    CM_ERROR_INVALID_ARGUMENT = 1,    /**< a bad argument, handle or range; nothing was changed */
    CM_ERROR_DEVICE_OUT_OF_MEMORY = 2,/**< the GPU could not provide the memory asked for */
    CM_ERROR_HOST_OUT_OF_MEMORY = 3,  /**< malloc or a pinned host allocation failed */
    CM_ERROR_NO_DRIVER = 4,           /**< no NVIDIA driver is installed (libcuda cannot be loaded) */
    CM_ERROR_DRIVER_TOO_OLD = 5,      /**< the driver is older than the CUDA runtime needs */
    CM_ERROR_NO_DEVICE = 6,           /**< a driver is there but no CUDA device is visible */
    CM_ERROR_NO_KERNEL_IMAGE = 7,     /**< no machine code or PTX in the binary runs on this GPU */
    CM_ERROR_INVALID_LAUNCH = 8,      /**< a launch configuration breaks a device limit */
    CM_ERROR_LAUNCH_OUT_OF_RESOURCES = 9, /**< registers or shared memory do not fit the launch */
    CM_ERROR_CONTEXT_LOST = 10,       /**< a kernel faulted; the CUDA context is unusable until restart */
    CM_ERROR_BUSY = 11,               /**< work still pending, a device in exclusive use, or live handles */
    CM_ERROR_NOT_SUPPORTED = 12,      /**< the device, driver or build does not support the operation */
    CM_ERROR_CUDA = 13                /**< any other CUDA error; the detail names it */
} cm_status_t;

/** @brief Number of statuses (one past the largest value), for tables and loops. */
#define CM_STATUS_COUNT 14

/* Capacities of the text fields in cm_error_t (including the terminating NUL). */
/** @brief Capacity of cm_error_t::call in bytes, NUL included (longer texts are cut). */
#define CM_ERROR_CALL_MAX 160
/** @brief Capacity of cm_error_t::file in bytes, NUL included (longer paths are cut). */
#define CM_ERROR_FILE_MAX 160
/** @brief Capacity of cm_error_t::message in bytes, NUL included (longer messages are cut). */
#define CM_ERROR_MESSAGE_MAX 768
/** @brief Capacity of cm_error_t::hint in bytes, NUL included (longer hints are cut). */
#define CM_ERROR_HINT_MAX 512

/**
 * @brief Detail of one failure. Strings are always NUL-terminated; empty when not known.
 */
typedef struct cm_error {
    cm_status_t status;                 /**< the status the failing call returned */
    int cuda_error;                     /**< the cudaError_t value, 0 when no CUDA call failed */
    const char *cuda_error_name;        /**< e.g. "cudaErrorInvalidValue" (static), "" when none */
    char call[CM_ERROR_CALL_MAX];       /**< the failing call, e.g. "cudaMalloc(&p, bytes)" */
    char file[CM_ERROR_FILE_MAX];       /**< source file of the failing call */
    int line;                           /**< its line, 0 when unknown */
    int device;                         /**< device ordinal, -1 when unknown or not device-bound */
    bool context_lost;                  /**< true for a sticky error: the process must restart */
    char message[CM_ERROR_MESSAGE_MAX]; /**< what happened, with the numbers */
    char hint[CM_ERROR_HINT_MAX];       /**< how to fix it */
} cm_error_t;

/**
 * @brief Stable identifier of a status, e.g. "CM_ERROR_NO_DRIVER".
 * @param s any value; values outside the enum give "CM_STATUS_UNKNOWN".
 * @return a static string, never NULL. Thread-safe. Allocates nothing.
 */
CM_API const char *cm_status_name(cm_status_t s);

/**
 * @brief One-sentence description of a status, e.g. "no NVIDIA driver is installed".
 * @param s any value; values outside the enum give "unknown status".
 * @return a static string, never NULL. Thread-safe. Allocates nothing.
 */
CM_API const char *cm_status_string(cm_status_t s);

/**
 * @brief The detail of the last failure on the calling thread.
 * @return a pointer to thread-local storage, never NULL, valid until this thread's next
 *         library call; its status is CM_OK when nothing has failed since the last
 *         cm_last_error_clear(). Successful calls do not clear it.
 */
CM_API const cm_error_t *cm_last_error(void);

/** @brief Reset the calling thread's last-error detail to CM_OK. Thread-safe. */
CM_API void cm_last_error_clear(void);

/**
 * @brief Write a human-readable report of an error detail into buf (snprintf rules).
 *
 * The report has the form
 * "CM_ERROR_...: message\n  at call (file:line), device N, cudaError... (number)\n  hint: ...".
 *
 * @param[in]  e     the detail to format; NULL formats cm_last_error().
 * @param[out] buf   destination; may be NULL when size is 0.
 * @param[in]  size  capacity of buf in bytes.
 * @return the length the full report needs, excluding the NUL (like snprintf). The output is
 *         truncated, still NUL-terminated, when size is too small. Never fails.
 */
CM_API size_t cm_error_format(const cm_error_t *e, char *buf, size_t size);

/**
 * @brief Whether a device's CUDA context was lost to a sticky error seen by the library.
 * @param device  ordinal, or -1 for "any device".
 * @return CM_OK when no sticky error was recorded for it; CM_ERROR_CONTEXT_LOST otherwise,
 *         with cm_last_error() set to a copy of the original cause (call, file:line, message);
 *         CM_ERROR_INVALID_ARGUMENT for a device below -1.
 * Thread-safe.
 */
CM_API cm_status_t cm_check_context(int device);

/**
 * @brief Turn the synchronous debug mode on or off for the whole process.
 *
 * In synchronous mode every launch the library makes, and every CM_LAUNCH_CHECK() of the
 * application (interop.h), is followed by a device synchronization, so an asynchronous kernel
 * fault is reported by the call that launched the kernel and names it. Slow: for debugging.
 * The environment variable CUDAMODEL_SYNC=1 turns it on at start-up; this call overrides it.
 * Thread-safe.
 * @param on  true to turn it on, false to turn it off.
 */
CM_API void cm_sync_mode_set(bool on);

/** @brief Whether the synchronous debug mode is on (CUDAMODEL_SYNC or cm_sync_mode_set()). */
CM_API bool cm_sync_mode(void);

/** @brief Evaluate a call returning cm_status_t; return its status from the enclosing function on failure. */
#define CM_TRY(expr)                                                                        \
    do {                                                                                    \
        cm_status_t cm__try_status_ = (expr);                                               \
        if (cm__try_status_ != CM_OK) return cm__try_status_;                               \
    } while (0)

/** @brief Evaluate a call returning cm_status_t; on failure store its status in var and goto label. */
#define CM_TRY_GOTO(expr, var, label)                                                       \
    do {                                                                                    \
        (var) = (expr);                                                                     \
        if ((var) != CM_OK) goto label;                                                     \
    } while (0)

CM_EXTERN_C_END

#endif /* CUDAMODEL_STATUS_H */
