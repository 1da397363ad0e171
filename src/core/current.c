/*
 * Explicit device: the enter/leave pair of core/internal.h.
 *
 * The switch uses the driver's context stack (cuCtxPushCurrent / cuCtxPopCurrent of the
 * device's primary context, the one the runtime uses) rather than cudaSetDevice: a push and a
 * pop restore exactly the caller's state, including a thread with no current context, where
 * "restoring" through cudaSetDevice(0) would create a context on GPU 0 in a process that never
 * named it. The primary context of each device is retained once per process, on the first
 * call that names the device.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "internal.h"

void *_Atomic cm__primary[CM__MAX_DEVICES];

void cm__primary_reset_for_tests(void) {
    for (int d = 0; d < CM__MAX_DEVICES; ++d) atomic_store(&cm__primary[d], NULL);
}

/* cm__enter for every mode but a CM__CTX_NONE scope of a valid ordinal (inline in internal.h). */
cm_status_t cm__enter_context(int ordinal, int make_current, cm__scope_t *sc) {
    sc->pushed = 0;
    if (ordinal < 0 || ordinal >= CM__MAX_DEVICES) {
        sc->prev_device = cm__scope_device();
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal, "pass the ordinal of a visible device",
                        "device %d is outside 0..%d", ordinal, CM__MAX_DEVICES - 1);
    }
    sc->prev_device = cm__scope_device_swap(ordinal);
    /* Even a call that CUDA routes by its handle (stream or event synchronize) needs some
     * context current: on a thread with none, the runtime would bind its current device's
     * primary context for good. So "no current context" always gets the device's pushed. */
    void *cur = NULL;
    const cudaError_t got = cm__cuda.ctx_get_current(&cur);
    int known = got == cudaSuccess;
    if (!known && cm_cuda_error_is_sticky(got)) {
        /* the context is lost: recorded (charged to ordinal, the scope's device) like any
         * other call's sticky error, instead of pushing into it */
        cm_status_t st = cm__cuda_fail(got, __FILE__, __LINE__,
                                       "cuCtxGetCurrent (entering device %d)", ordinal);
        (void)cm__scope_device_swap(sc->prev_device);
        return st;
    }
    /* some context is current: enough without make_current; when that cannot be known, push
     * (a balanced push and pop change nothing; a missing context would be bound for good) */
    if (!make_current && known && cur != NULL) return CM_OK;
    void *ctx = atomic_load_explicit(&cm__primary[ordinal], memory_order_acquire);
    cudaError_t err;
    if (ctx == NULL) {
        err = cm__cuda.primary_ctx_retain(&ctx, ordinal);
        if (err != cudaSuccess || ctx == NULL) {
            cm_status_t st = cm__cuda_fail(err != cudaSuccess ? err : cudaErrorDeviceUninitialized,
                                           __FILE__, __LINE__,
                                           "cuDevicePrimaryCtxRetain(device %d)", ordinal);
            (void)cm__scope_device_swap(sc->prev_device);
            return st;
        }
        /* two threads may both retain: each retain is the same context; keep one pointer */
        atomic_store_explicit(&cm__primary[ordinal], ctx, memory_order_release);
    }
    if (known && cur == ctx) return CM_OK;
    err = cm__cuda.ctx_push_current(ctx);
    if (err != cudaSuccess) {
        cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__,
                                       "cuCtxPushCurrent(primary context of device %d)", ordinal);
        (void)cm__scope_device_swap(sc->prev_device);
        return st;
    }
    sc->pushed = 1;
    return CM_OK;
}

void cm__leave_pop(cm__scope_t *sc) {
    void *popped = NULL;
    (void)cm__cuda.ctx_pop_current(&popped);
    sc->pushed = 0;
}
