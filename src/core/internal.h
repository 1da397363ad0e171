/*
 * The core's private interface to every module of src/: failure recording, explicit-device
 * scopes, the CUDA-call table, text formatting, NVTX ranges. Not installed.
 * Naming: cm__ for internal symbols. Every function declared here is thread-safe.
 */
#ifndef CUDAMODEL_SRC_INTERNAL_H
#define CUDAMODEL_SRC_INTERNAL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
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

/* Small per-thread variables of the hot paths (a few bytes each): the initial-exec model reads
 * them with one instruction instead of a __tls_get_addr call per access, which the shared
 * library's default model costs. The bytes come from the static TLS surplus glibc reserves, so
 * a dlopen of the library still works; large per-thread state keeps the default model. */
#if defined(__GNUC__)
#  define CM__TLS_SMALL _Thread_local __attribute__((tls_model("initial-exec")))
#else
#  define CM__TLS_SMALL _Thread_local
#endif

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

/** Fail fast when the device's context was lost to a sticky error (device -1: any). Inline: on
 *  every call of the library, and nothing is lost in the common case. */
extern atomic_int cm__lost_any;
cm_status_t cm__context_guard_slow(int device);
static inline cm_status_t cm__context_guard(int device) {
    if (atomic_load_explicit(&cm__lost_any, memory_order_acquire) == 0) return CM_OK;
    return cm__context_guard_slow(device);
}

/** Fail unless ordinal names a visible device (the message names the count) whose context is
 *  not lost. */
cm_status_t cm__check_ordinal(int ordinal);

/* Versions and build facts (device_info.c), read by cm_version_info() (diag). None records a
 * failure: a version that cannot be read is 0. */

/** cudaDriverGetVersion (1000*major + 10*minor); 0 when no driver is installed or it fails. */
int cm__driver_version(void);
/** cudaRuntimeGetVersion of the runtime loaded (1000*major + 10*minor); 0 when it fails. */
int cm__runtime_version(void);
/** CUDART_VERSION the library was compiled against. */
int cm__runtime_version_built(void);
/** CMAKE_CUDA_ARCHITECTURES this build of the library carries (static text). */
const char *cm__build_cuda_architectures(void);

/*
 * Explicit device, always: the enter/leave pair of every library call that acts on a device.
 *
 * cm__enter(ordinal, make_current, &sc) names `ordinal` as the device of this call: until the
 * matching cm__leave, failures recorded on this thread name that device (not whatever device
 * the thread has current), and sticky errors mark that device lost. With make_current, the
 * device's primary context is also made the thread's current context: pushed on the thread's
 * context stack only when it is not current already, and popped by cm__leave, so the caller
 * gets back exactly what it had, including "no current context" (the runtime's own notion of
 * the current device is never changed, and no context is ever created on a device the caller
 * did not name). Without make_current (0), some context is made current only when the thread
 * has none, or when cuCtxGetCurrent cannot tell (a runtime call would bind one for good
 * otherwise). CM__CTX_NONE names the device and touches no context: for driver calls that need
 * none because their stream names it. Calls nest; a failed cm__enter records the failure and
 * leaves nothing to undo.
 */
#define CM__CTX_NONE 2
typedef struct cm__scope {
    int prev_device; /* the thread's library device before this scope (-1: none) */
    int pushed;      /* 1 when cm__enter pushed a context that cm__leave pops */
} cm__scope_t;

/** The device named by the innermost scope of this thread, -1 outside any (status.c). */
extern CM__TLS_SMALL int cm__thread_device;
static inline int cm__scope_device(void) {
    return cm__thread_device;
}
/** Graph captures this thread began through the library and has not ended (exec's
 *  cm_graph_capture_begin / _end; status.c). CUDA refuses synchronising calls of a capturing
 *  thread (cudaFree...), so the layers below ask before making one they cannot take back. */
extern CM__TLS_SMALL int cm__thread_captures;

/** Set the thread's scope device, returning the one before (cm__enter / cm__leave only). */
static inline int cm__scope_device_swap(int device) {
    int before = cm__thread_device;
    cm__thread_device = device;
    return before;
}

/* The part of cm__enter / cm__leave that touches contexts (current.c). */
cm_status_t cm__enter_context(int ordinal, int make_current, cm__scope_t *sc);
void cm__leave_pop(cm__scope_t *sc);

/* Inline: the CM__CTX_NONE scopes of the stream-ordered memory calls only name the device. */
static inline cm_status_t cm__enter(int ordinal, int make_current, cm__scope_t *sc) {
    if (make_current == CM__CTX_NONE && ordinal >= 0 && ordinal < CM__MAX_DEVICES) {
        sc->pushed = 0;
        sc->prev_device = cm__scope_device_swap(ordinal);
        return CM_OK;
    }
    return cm__enter_context(ordinal, make_current, sc);
}
static inline void cm__leave(cm__scope_t *sc) {
    if (sc->pushed) cm__leave_pop(sc);
    (void)cm__scope_device_swap(sc->prev_device);
}

/** The primary context of ordinal as the library retained it, NULL before the first scope of
 * that device (a CUcontext as void *; current.c keeps them). */
extern void *_Atomic cm__primary[CM__MAX_DEVICES];
static inline void *cm__primary_ctx(int ordinal) {
    if (ordinal < 0 || ordinal >= CM__MAX_DEVICES) return NULL;
    return atomic_load_explicit(&cm__primary[ordinal], memory_order_acquire);
}

/** Forget the cached primary contexts (tests that swap the call table's driver calls). */
void cm__primary_reset_for_tests(void);

/** A kernel's name as a person reads it: the C++ symbol cudaFuncGetName gives
 *  ("_Z12saxpy_kernelfPKfPfm") demangled into buf ("saxpy_kernel(float, float const*, float*,
 *  unsigned long)"); a C name, or one the demangler refuses, is returned as it is. */
const char *cm__kernel_name(const char *name, char *buf, size_t size);

/** Copy src into dst (capacity size), always NUL-terminating; NULL src gives "". */
void cm__strlcpy(char *dst, const char *src, size_t size);

/* Every CUDA call goes through the table of core/calls.h (fault injection in host tests). */

/** Record a CUDA error like cm_record_cuda_error, with the call text formatted. */
cm_status_t cm__cuda_fail(cudaError_t err, const char *file, int line, const char *fmt, ...)
    CM__PRINTF(4, 5);

/** Writable view of the calling thread's detail (cm_last_error() points at non-const storage). */
cm_error_t *cm__detail(void);

/** A text being built snprintf-style: len counts the full length even past size. */
typedef struct cm__text {
    char *buf;
    size_t size;
    size_t len;
} cm__text_t;

/** Append to t (truncating, always NUL-terminated when size > 0). */
void cm__text_printf(cm__text_t *t, const char *fmt, ...) CM__PRINTF(2, 3);

/** "1.50 GiB", "512 B", ... into buf (binary units, two decimals above 1 KiB). Returns buf. */
char *cm__format_bytes(size_t bytes, char *buf, size_t size);

/** Forget every recorded sticky error (tests only; a real lost context never comes back). */
void cm__context_reset_for_tests(void);

/** Free the device objects that closes parked for a later open or close without releasing
 *  their CUDA objects (tests only: the simulated CUDA they belonged to is reinstalled). */
void cm__parked_devices_forget_for_tests(void);

/** Forget every cached kernel attribute and device limit of cm_launch (tests only). */
void cm__launch_cache_reset_for_tests(void);

/** Re-read CUDAMODEL_SYNC from the environment (tests only). */
void cm__sync_mode_reload_for_tests(void);

/* ---------------------------------------------------------------- NVTX */

/** Whether NVTX ranges are on (CUDAMODEL_NVTX=1, read once). */
bool cm__nvtx_enabled(void);
/** Open / close an NVTX range named `name` (a string literal); no-ops when off. */
void cm__nvtx_push_slow(const char *name);
void cm__nvtx_pop_slow(void);

#define CM__NVTX_PUSH(name)                                                                   \
    do {                                                                                      \
        if (cm__nvtx_enabled()) cm__nvtx_push_slow(name);                                     \
    } while (0)
#define CM__NVTX_POP()                                                                        \
    do {                                                                                      \
        if (cm__nvtx_enabled()) cm__nvtx_pop_slow();                                          \
    } while (0)

/** Forget the cached CUDAMODEL_NVTX value (tests). */
void cm__nvtx_reload_for_tests(void);

#endif /* CUDAMODEL_SRC_INTERNAL_H */
