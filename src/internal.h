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

/**
 * Fault-injection hooks (internal; used by host tests labelled "fault injection").
 * Each defaults to the real CUDA runtime function; tests swap one in and restore it.
 */
typedef struct cm__hooks {
    cudaError_t (*driver_get_version)(int *version);
    cudaError_t (*runtime_get_version)(int *version);
    cudaError_t (*get_device_count)(int *count);
    cudaError_t (*get_device)(int *device);

    /* ---- memory (issue 3: device object, buffers, pinned host buffers, copies, pools).
     * Tests labelled "fault-injection" replace them to make a call fail, or to simulate a
     * device with host memory (tests/host/test_buffer_fake.h). */
    cudaError_t (*set_device)(int device);
    cudaError_t (*get_device_properties)(struct cudaDeviceProp *prop, int device);
    cudaError_t (*device_get_attribute)(int *value, enum cudaDeviceAttr attr, int device);
    cudaError_t (*mem_get_info)(size_t *free_bytes, size_t *total_bytes);
    cudaError_t (*device_malloc)(void **ptr, size_t size);
    cudaError_t (*device_free)(void *ptr);
    cudaError_t (*mem_pool_create)(cudaMemPool_t *pool, const struct cudaMemPoolProps *props);
    cudaError_t (*mem_pool_destroy)(cudaMemPool_t pool);
    cudaError_t (*mem_pool_set_attribute)(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value);
    cudaError_t (*mem_pool_get_attribute)(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *value);
    cudaError_t (*mem_pool_trim_to)(cudaMemPool_t pool, size_t min_bytes_to_keep);
    cudaError_t (*mem_pool_set_access)(cudaMemPool_t pool, const struct cudaMemAccessDesc *desc,
                                       size_t count);
    cudaError_t (*malloc_from_pool_async)(void **ptr, size_t size, cudaMemPool_t pool,
                                          cudaStream_t stream);
    cudaError_t (*free_async)(void *ptr, cudaStream_t stream);
    cudaError_t (*host_alloc)(void **ptr, size_t size, unsigned int flags);
    cudaError_t (*free_host)(void *ptr);
    cudaError_t (*host_register)(void *ptr, size_t size, unsigned int flags);
    cudaError_t (*host_unregister)(void *ptr);
    cudaError_t (*host_get_device_pointer)(void **device_ptr, void *host_ptr, unsigned int flags);
    cudaError_t (*pointer_get_attributes)(struct cudaPointerAttributes *attr, const void *ptr);
    cudaError_t (*memcpy_sync)(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
    cudaError_t (*memcpy_async)(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                cudaStream_t stream);
    cudaError_t (*memcpy_peer)(void *dst, int dst_device, const void *src, int src_device,
                               size_t count);
    cudaError_t (*memcpy_peer_async)(void *dst, int dst_device, const void *src, int src_device,
                                     size_t count, cudaStream_t stream);
    cudaError_t (*memset_async)(void *ptr, int value, size_t count, cudaStream_t stream);
    cudaError_t (*fill_async)(void *ptr, size_t count, const void *pattern, size_t pattern_bytes,
                              cudaStream_t stream);
    cudaError_t (*stream_get_device)(cudaStream_t stream, int *device);
    cudaError_t (*stream_synchronize)(cudaStream_t stream);
    cudaError_t (*event_create)(cudaEvent_t *event, unsigned int flags);
    cudaError_t (*event_record)(cudaEvent_t event, cudaStream_t stream);
    cudaError_t (*event_synchronize)(cudaEvent_t event);
    cudaError_t (*event_destroy)(cudaEvent_t event);
    cudaError_t (*device_can_access_peer)(int *can_access, int device, int peer);
    cudaError_t (*device_enable_peer_access)(int peer, unsigned int flags);
} cm__hooks_t;
extern cm__hooks_t cm__hooks;

/** Forget every recorded sticky error (tests only; a real lost context never comes back). */
void cm__context_reset_for_tests(void);

/** Forget every cached kernel attribute and device limit of cm_launch (tests only). */
void cm__launch_cache_reset_for_tests(void);

/** Re-read CUDAMODEL_SYNC from the environment (tests only). */
void cm__sync_mode_reload_for_tests(void);

#endif /* CUDAMODEL_SRC_INTERNAL_H */
