/*
 * Private parts of the execution module (stream.h): the CUDA calls it makes (hooks, so host
 * tests can simulate them), what launch.c and device_object.c call, and NVTX ranges.
 * Not installed.
 *
 * Locking: one process-wide mutex in stream.c guards the execution state of every device (the
 * handle set, the stream and event free lists). It is taken after cm__mem_lock when both are
 * held (cm__exec_close_check), never before it.
 */
#ifndef CUDAMODEL_SRC_STREAM_INTERNAL_H
#define CUDAMODEL_SRC_STREAM_INTERNAL_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "../core/calls.h"

/**
 * For cm_launch (launch.c): check that s is an acquired pooled stream of device `ordinal` (the
 * current device), remember kernel and file:line as its last launch (named when a later
 * synchronisation reports a fault), and give its CUDA stream. Records the failure otherwise.
 */
cm_status_t cm__stream_for_launch(cm_stream_t *s, int ordinal, const void *kernel,
                                  const char *file, int line, cudaStream_t *out);

/** Whether a CUDA stream is being captured into a graph (false on any error). */
bool cm__stream_capturing(cudaStream_t s);

/**
 * The CUDA stream of a library stream for work on device `ordinal` (NULL: the legacy default
 * stream, *cs = 0). A released or foreign handle, or a stream of another device, is refused
 * ("stream belongs to device 1 but the <operands> are on device 0", with the fix), recorded
 * under func. Shared by the kernels' and the GEMM's entry points.
 */
cm_status_t cm__stream_for_device(cm_stream_t *stream, int ordinal, const char *operands,
                                  const char *func, cudaStream_t *cs);

/**
 * Device scratch memory that only work queued on one stream uses: s's own (a pooled stream), or
 * for s == NULL the legacy default stream's of dev. At least `bytes`, zero when first handed out
 * (cudaMemsetAsync on cs, which must be that stream), allocated on first use with the stream's
 * device current, and freed when the device object closes. The stream orders every user, so a
 * kernel that leaves it as it found it (the reductions reset their counter) needs no memset per
 * call. *out is NULL (with CM_OK) when an existing scratch is smaller than bytes. Not for work
 * being captured into a graph (a graph may replay on another stream).
 */
cm_status_t cm__stream_scratch(cm_device_t *dev, cm_stream_t *s, cudaStream_t cs, size_t bytes,
                               void **out);

/**
 * For cm_device_close (device_object.c), with cm__mem_lock held: CM_ERROR_BUSY with the list
 * of acquired streams (file:line of each acquire) and lent events when there are any; CM_OK
 * otherwise (also for a device that never used a stream).
 */
cm_status_t cm__exec_close_check(const cm_device_t *dev);

/** For cm_device_close, after the close was decided (no lock held): destroy the device's
 *  streams, events and pool state. Never fails (CUDA errors are ignored, as for the pool). */
void cm__exec_close_release(const cm_device_t *dev);

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

#endif /* CUDAMODEL_SRC_STREAM_INTERNAL_H */
