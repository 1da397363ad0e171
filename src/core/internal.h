/*
 * Private helpers shared by the modules in src/. Not installed.
 * Naming: cm__ for internal symbols. Every helper here is thread-safe.
 */
#ifndef CUDAMODEL_SRC_INTERNAL_H
#define CUDAMODEL_SRC_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "calls.h"

#if defined(__GNUC__) || defined(__clang__)
#  define CM__PRINTF(fmt_idx, arg_idx) __attribute__((format(printf, fmt_idx, arg_idx)))
#else
#  define CM__PRINTF(fmt_idx, arg_idx)
#endif

/** Most device ordinals whose context state the library tracks. */
#define CM__MAX_DEVICES 64

/**
 * Record a failure that is not a CUDA error (bad argument, limit broken...) in the calling
 * thread's detail and return status. hint may be NULL; the message is printf-formatted.
 */
cm_status_t cm__fail(cm_status_t status, int device, const char *file, int line, const char *call,
                     const char *hint, const char *fmt, ...) CM__PRINTF(7, 8);

/** cm__fail with this file, line and function. */
#define CM__FAIL(status, device, hint, ...)                                                  \
    cm__fail((status), (device), __FILE__, __LINE__, __func__, (hint), __VA_ARGS__)

/** Point the calling thread's last failure at file:line (a public entry point's caller). */
void cm__error_set_location(const char *file, int line);

/** Return CM_ERROR_INVALID_ARGUMENT with a message when cond is false. */
#define CM__REQUIRE(cond, hint, ...)                                                         \
    do {                                                                                     \
        if (!(cond)) return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, (hint), __VA_ARGS__);    \
    } while (0)

/** Library-internal checked CUDA call: record and return on failure. */
#define CM__CUDA(call) CM_CUDA_TRY(call)

/** Fail fast when the device's context was lost to a sticky error (device -1: any). */
cm_status_t cm__context_guard(int device);

/** Fail unless ordinal names a visible device (the message names the count) whose context is
 *  not lost. */
cm_status_t cm__check_ordinal(int ordinal);

/** Make ordinal current, remembering the caller's device in *saved (-1 when none was set). */
cm_status_t cm__device_enter(int ordinal, int *saved);
/** Restore the device remembered by cm__device_enter (no-op for -1). Never fails. */
void cm__device_leave(int saved);

/** Copy src into dst (capacity size), always NUL-terminating; NULL src gives "". */
void cm__strlcpy(char *dst, const char *src, size_t size);

/* Every CUDA call goes through the table of core/calls.h (fault injection in host tests). */

/** Forget every recorded sticky error (tests only; a real lost context never comes back). */
void cm__context_reset_for_tests(void);

/** Forget every cached kernel attribute and device limit of cm_launch (tests only). */
void cm__launch_cache_reset_for_tests(void);

/** Re-read CUDAMODEL_SYNC from the environment (tests only). */
void cm__sync_mode_reload_for_tests(void);

#endif /* CUDAMODEL_SRC_INTERNAL_H */
