/*
 * Private parts of the execution module (stream.h): what launch.c, the compute module and the
 * device object use of streams. NVTX ranges are in core/internal.h. Not installed.
 *
 * Streams, events, timers and graphs are handles of the core's table (core/handle.h): struct
 * cm__stream, cm__event, cm__timer, cm__graph (stream.c). Pooled streams and events get a new
 * handle at each acquire, ended at release, so a released handle is stale forever, even after
 * the same pooled object is lent again.
 *
 * The execution state of a device (its stream and event pools, per-stream scratch) is the exec
 * part of its device object (dev->exec, core/device.h), created on first use; its busy check and
 * release are registered there for cm_device_close().
 *
 * Locking (core/lock.h): the core spin lock guards the pools (no CUDA call inside it), so the
 * close check reads which streams are lent, where they were acquired, the lent counts and the
 * pool arrays under the same lock.
 */
#ifndef CUDAMODEL_SRC_STREAM_INTERNAL_H
#define CUDAMODEL_SRC_STREAM_INTERNAL_H

#include <stdbool.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "../core/calls.h"
#include "../memory/memory_internal.h" /* cm__queue_t */

struct cm__device;

/**
 * For cm_launch (launch.c): check that s is an acquired stream, remember kernel and file:line
 * as its last launch (named when a later synchronisation reports a fault), and give its CUDA
 * stream and its device's ordinal (the launch runs with that device current, whatever device
 * the caller has current). Records the failure under func (the launching entry point)
 * otherwise.
 */
cm_status_t cm__stream_for_launch(cm_stream_t *s, const void *kernel, const char *file, int line,
                                  const char *func, cudaStream_t *out, int *ordinal);

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
 * Device scratch memory that only work queued on one stream uses: s's own (an acquired stream
 * of dev's ordinal), or for s == NULL the legacy default stream's of the device object dev. At
 * least `bytes`, zero when first handed out (cudaMemsetAsync on cs, which must be that stream),
 * allocated once on first use with the stream's device current (two threads racing for the first
 * allocation both allocate; one keeps its block, the other frees its own), freed when the pool
 * is resized (cm_stream_pool_configure) or the device object closes. The stream orders every
 * user, so a kernel that leaves it as it found it (the reductions reset their counter) needs no
 * memset per call. *out is NULL (with CM_OK) when an existing scratch is smaller than bytes.
 * Not for work being captured into a graph (a graph may replay on another stream).
 */
cm_status_t cm__stream_scratch(struct cm__device *dev, cm_stream_t *s, cudaStream_t cs,
                               size_t bytes, void **out);


/**
 * Where buffer work on `stream` goes (buffer_ops.c): NULL gives the synchronous queue; a library
 * stream its CUDA stream and device. A released or foreign handle is refused under func.
 */
cm_status_t cm__stream_queue(cm_stream_t *stream, const char *func, cm__queue_t *q);

/** Name `op` as the last library operation on stream (a later fault there names it); a stream
 *  released meanwhile is left alone. NULL stream: nothing. */
void cm__stream_note_op(cm_stream_t *stream, const char *op);

#endif /* CUDAMODEL_SRC_STREAM_INTERNAL_H */
