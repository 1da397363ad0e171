/*
 * Device buffers (buffer.h): create and destroy (synchronous and stream-ordered), accessors,
 * checked copies host <-> device and device <-> device, set and fill. The entry points that take
 * a library stream are in the exec layer (src/exec/buffer_ops.c): they resolve the stream into a
 * cm__queue_t and call the cm__buffer_* bodies here.
 *
 * Every entry point checks all of its arguments before it touches any memory, so a call that
 * returns CM_ERROR_INVALID_ARGUMENT has written nothing.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"
#include "memspace_internal.h"

/* ------------------------------------------------------------------ checks */

/* What a checked buffer argument resolves to. */
typedef struct cm__view {
    struct cm__device *dev;
    unsigned char *ptr;
    size_t size;
    int ordinal;
} cm__view_t;

static cm_status_t cm__buffer_view(const cm_buffer_t *h, const char *arg, const char *func,
                                   cm__view_t *v) {
    struct cm__buffer *b;
    CM_TRY(cm__buffer_get(h, arg, func, &b));
    v->dev = b->a.dev;
    v->ptr = b->ptr;
    v->size = b->a.bytes;
    v->ordinal = b->a.dev->ordinal;
    return CM_OK;
}

/* offset + bytes <= size, without overflow; the message names the side and both sizes. */
static cm_status_t cm__check_range(const char *arg, const char *type, size_t offset, size_t bytes,
                                   size_t size, const char *func) {
    if (offset <= size && bytes <= size - offset) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    if (offset > size) {
        snprintf(hint, sizeof hint, "offsets into %s run from 0 to its size, %zu", arg, size);
    } else {
        snprintf(hint, sizeof hint, "from offset %zu at most %zu bytes fit in %s; copy fewer bytes "
                 "or use a larger %s", offset, size - offset, arg, type);
    }
    if (bytes > SIZE_MAX - offset) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s range out of bounds: offset %zu + %zu bytes overflows size_t (the %s "
                        "has %zu bytes); nothing was copied", arg, offset, bytes, type, size);
    }
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "%s range out of bounds: offset %zu + %zu bytes = %zu is past the end of the "
                    "%zu-byte %s; nothing was copied", arg, offset, bytes, offset + bytes, size, type);
}

static cm_status_t cm__check_host_ptr(const void *p, size_t bytes, const char *arg,
                                      const char *func) {
    if (p != NULL || bytes == 0) return CM_OK;
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "pass host memory of at least that many bytes", "%s is NULL but bytes is %zu",
                    arg, bytes);
}

/* Classify host memory (cm__ms_classify); device memory is a wrong-direction error. The device
 * is current. */
static cm_status_t cm__classify_host(const void *p, const char *arg, const char *func,
                                     const char *instead, cm__ms_mem_t *out) {
    int device = -1;
    CM_TRY(cm__ms_classify(p, arg, func, out, &device));
    if (*out != CM__MS_DEVICE) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "%s expects host memory; %s", func, instead);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, device, __FILE__, __LINE__, func, hint,
                    "%s (%p) is device memory of device %d, not host memory: wrong direction; "
                    "nothing was copied", arg, p, device);
}

/* ------------------------------------------------------------------ create, destroy */

/* Allocate bytes for a buffer of dev, in the caller's scope of dev's device (cm__memory_scope). */
static cm_status_t cm__alloc_memory(struct cm__device *dev, size_t bytes, bool on_stream,
                                    cudaStream_t stream, void **ptr, const char *func) {
    const char *call = on_stream ? "cudaMallocFromPoolAsync" : "cudaMalloc";
    CM_TRY(cm__oom_refuse_oversize(dev, bytes, on_stream, call, func, __FILE__, __LINE__));
    cudaError_t err = on_stream ? cm__cuda.malloc_from_pool_async(ptr, bytes, dev->pool, stream)
                                : cm__cuda.device_malloc(ptr, bytes);
    if (err == cudaSuccess) return CM_OK;
    if (err != cudaErrorMemoryAllocation) {
        return cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes) in %s", call, bytes, func);
    }
    /* out of memory: release what the library's pools cache, and try once more (with the
     * device current: the pool calls of the trim are runtime calls) */
    (void)cm__cuda.get_last_error();
    cm__scope_t sc;
    CM_TRY(cm__enter(dev->ordinal, 1, &sc));
    size_t released = cm__trim_ordinal(dev->ordinal);
    err = on_stream ? cm__cuda.malloc_from_pool_async(ptr, bytes, dev->pool, stream)
                    : cm__cuda.device_malloc(ptr, bytes);
    cm__leave(&sc);
    if (err == cudaSuccess) return CM_OK;
    char text[CM_ERROR_CALL_MAX];
    snprintf(text, sizeof text, "%s(%zu bytes) in %s", call, bytes, func);
    if (err != cudaErrorMemoryAllocation) return cm_record_cuda_error(err, text, __FILE__, __LINE__);
    return cm__oom_report(dev, bytes, released, on_stream, err, text, __FILE__, __LINE__);
}

/* What a stream-ordered call of a buffer of ordinal needs current: cudaMalloc, cudaFree and the
 * default streams (0, legacy, per-thread, whichever device's is current) need the device's
 * context; the driver's pool allocation and free on another stream need none (the stream names
 * its context). */
static int cm__memory_scope(bool on_stream, cudaStream_t stream) {
    return !on_stream || cm__stream_is_default(stream) ? 1 : CM__CTX_NONE;
}

/* Memory whose free cannot happen now: kept on the device's deferred-free list (cm__defer_free),
 * which the detail of the failure being reported says. */
static void cm__free_later(struct cm__device *dev, void *ptr, size_t bytes) {
    const bool kept = cm__defer_free(dev, ptr, bytes);
    cm_error_t *e = cm__detail();
    const size_t len = strlen(e->message);
    cm__strlcpy(e->message + len,
                kept ? "; the buffer is gone and its memory is freed later (when this thread "
                       "captures no graph any more, or when the device is closed)"
                     : "; the buffer is gone and its memory stays with the driver (no host "
                       "memory to keep it for later)",
                sizeof e->message - len);
}

/* Free a buffer's memory (cudaFreeAsync on stream, or cudaFree) inside a scope of the buffer's
 * device that the caller entered (cm__memory_scope). What cannot be freed now goes on the
 * device's deferred-free list. */
static cm_status_t cm__free_in_scope(struct cm__device *dev, int ordinal, void *ptr, size_t bytes,
                                     bool ordered, cudaStream_t stream, const char *func) {
    if (ordered) {
        cudaError_t err = cm__cuda.free_async(ptr, stream);
        if (err == cudaSuccess) return CM_OK;
        cm_status_t status = cm__cuda_fail(err, __FILE__, __LINE__,
                                           "cudaFreeAsync(buffer, stream) in %s", func);
        if (cm_cuda_error_is_sticky(err)) return status; /* the memory went with the context */
        /* do not leak the memory: free it synchronously, unless this thread captures a graph
         * (CUDA would refuse the cudaFree and invalidate the capture) or the device cannot be
         * made current: then later */
        if (cm__thread_captures == 0) {
            const cm_error_t reported = *cm_last_error();
            cm__scope_t cur;
            cm_status_t st = cm__enter(ordinal, 1, &cur);
            if (st == CM_OK) {
                cudaError_t ferr = cm__cuda.device_free(ptr);
                if (ferr != cudaSuccess) /* recorded: a sticky one loses the device */
                    (void)cm__cuda_fail(ferr, __FILE__, __LINE__,
                                        "cudaFree(buffer) after a failed cudaFreeAsync in %s",
                                        func);
                cm__leave(&cur);
                *cm__detail() = reported;
                if (ferr != cudaSuccess) {
                    cm_error_t *e = cm__detail();
                    const size_t len = strlen(e->message);
                    cm__strlcpy(e->message + len,
                                "; the synchronous free failed too: the memory stays with the "
                                "driver", sizeof e->message - len);
                }
                return status;
            }
            *cm__detail() = reported;
        }
        cm__free_later(dev, ptr, bytes);
        return status;
    }
    if (cm__thread_captures > 0) {
        /* a buffer of the library's own (cm_buffer_destroy refuses this): CUDA would refuse the
         * cudaFree and invalidate the capture */
        if (cm__defer_free(dev, ptr, bytes)) return CM_OK;
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                        "free host memory",
                        "cannot keep a buffer's free for after the capture (host malloc failed): "
                        "its %zu bytes stay with the driver", bytes);
    }
    cudaError_t err = cm__cuda.device_free(ptr);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaFree(buffer) in %s", func);
    return CM_OK;
}

/* Free a buffer's memory, in a scope of the buffer's device (cm__memory_scope); a scope that
 * cannot be entered defers the free. */
static cm_status_t cm__free_memory(struct cm__device *dev, int ordinal, void *ptr, size_t bytes,
                                   bool ordered, cudaStream_t stream, const char *func) {
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    cm_status_t status = cm__enter(ordinal, cm__memory_scope(ordered, stream), &sc);
    if (status != CM_OK) {
        cm__free_later(dev, ptr, bytes);
        return status;
    }
    status = cm__free_in_scope(dev, ordinal, ptr, bytes, ordered, stream, func);
    cm__leave(&sc);
    return status;
}

/*
 * One spare buffer object, kept by the last destroy for the next create: a create + destroy pair
 * then costs no host malloc/free. A single slot taken and filled by atomic exchange (no lock, no
 * ABA: a slot holds one object or none); a destroy that finds the slot full frees its object.
 * The slot's object is reachable until the process ends.
 */
static _Atomic(struct cm__buffer *) cm__spare_buffer;

static struct cm__buffer *cm__buffer_obj_new(void) {
    struct cm__buffer *b = atomic_exchange_explicit(&cm__spare_buffer, NULL, memory_order_acquire);
    return b != NULL ? b : malloc(sizeof *b);
}

static void cm__buffer_obj_free(struct cm__buffer *b) {
    struct cm__buffer *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&cm__spare_buffer, &none, b, memory_order_release,
                                                 memory_order_relaxed))
        free(b);
}

/*
 * The fast path: a lock-free look-up of the device object, the CUDA allocation in a scope of
 * the device (outside any lock), then one core-lock section that gives the buffer its handle and
 * links it into the device's list (cm__alloc_track).
 */
cm_status_t cm__buffer_create_q(const cm__queue_t *q, cm_device_t *dev_h, size_t bytes,
                                cm_buffer_t **out, const char *label, const char *file, int line,
                                const char *func) {
    const bool on_stream = q->handle != NULL;
    const cudaStream_t stream = q->cs;
    if (out == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of a cm_buffer_t * to receive the buffer", "out is NULL");
    }
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    int ordinal = dev->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    if (on_stream) {
        if (dev->pool == NULL) {
            return cm__fail(CM_ERROR_NOT_SUPPORTED, ordinal, __FILE__, __LINE__, func,
                            "create the buffer synchronously (cm_buffer_create()) on this device",
                            "device %d (%s) has no memory pools (cudaDevAttrMemoryPoolsSupported "
                            "is 0), so stream-ordered buffers are not available", ordinal,
                            dev->name);
        }
        CM_TRY(cm__check_queue(q, ordinal, func));
    }
    void *ptr = NULL;
    if (bytes > 0) {
        cm__scope_t sc;
        CM_TRY(cm__enter(ordinal, cm__memory_scope(on_stream, stream), &sc));
        cm_status_t status = cm__alloc_memory(dev, bytes, on_stream, stream, &ptr, func);
        cm__leave(&sc);
        CM_TRY(status);
    }
    struct cm__buffer *b = cm__buffer_obj_new();
    cm_status_t status = CM_OK;
    if (b == NULL) {
        status = cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                          "free host memory", "cannot allocate the buffer object (%zu bytes)",
                          sizeof *b);
    } else {
        b->a.dev = dev;
        b->a.kind = CM__KIND_BUFFER;
        b->a.bytes = bytes;
        b->a.file = file;
        b->a.line = line;
        cm__alloc_set_label(&b->a, label);
        b->ptr = ptr;
        b->stream_ordered = on_stream;
        b->stream = on_stream ? stream : 0;
        b->stream_handle = q->handle;
        status = cm__alloc_track(&b->a, dev_h, ordinal, func);
    }
    if (status != CM_OK) {
        if (b != NULL) cm__buffer_obj_free(b);
        if (ptr != NULL) {
            const cm_error_t reported = *cm_last_error();
            (void)cm__free_memory(dev, ordinal, ptr, bytes, on_stream, stream, func);
            *cm__detail() = reported;
        }
        return status;
    }
    *out = (cm_buffer_t *)b->a.handle;
    return CM_OK;
}

/* keep: refuse (the buffer stays alive, the destroy may be repeated) what would lose the memory
 * once the handle is ended, a capture of this thread or a device scope that cannot be entered;
 * without it (the library's own buffers, which no caller could destroy again) the handle ends
 * whatever happens, the failure reported. */
static cm_status_t cm__buffer_destroy_impl(const cm__queue_t *q, cm_buffer_t *buf,
                                           const char *func, bool keep) {
    const bool on_stream = q != NULL && q->handle != NULL;
    const cudaStream_t stream = on_stream ? q->cs : 0;
    if (buf == NULL) return CM_OK;
    struct cm__buffer *b;
    CM_TRY(cm__buffer_get(buf, "buf", func, &b));
    /* a stream of another device is refused before anything is released (the stream the
     * buffer was created on was checked then) */
    if (on_stream) CM_TRY(cm__check_queue(q, b->a.dev->ordinal, func));
    /* cudaFree is refused while this thread captures a graph (thread-local capture mode): refuse
     * before anything is released, instead of ending the handle and losing the memory */
    if (keep && !b->stream_ordered && b->ptr != NULL && cm__thread_captures > 0) {
        return cm__fail(CM_ERROR_BUSY, b->a.dev->ordinal, __FILE__, __LINE__, func,
                        "destroy the buffer once the capture has ended, or create buffers that "
                        "live and die inside a capture stream-ordered",
                        "a synchronous buffer cannot be freed while this thread captures a graph "
                        "(CUDA refuses cudaFree during a capture); the buffer is still alive");
    }
    /* the memory's device scope is entered before anything is released: when the device's
     * context cannot be made current the buffer stays alive (the destroy may be repeated)
     * instead of its memory becoming unreachable; a lost context skips it (the memory went
     * with the context, and the free reports the loss) */
    const int scope_ordinal = b->a.dev->ordinal;
    const cudaStream_t scope_stream = on_stream ? stream : b->stream;
    cm__scope_t sc;
    bool entered = false;
    if (keep && b->ptr != NULL && cm__context_guard(scope_ordinal) == CM_OK) {
        CM_TRY(cm__enter(scope_ordinal, cm__memory_scope(b->stream_ordered, scope_stream), &sc));
        entered = true;
    }
    /* one locked step: end the handle, leave the device's list; refused while a texture
     * reads the buffer (memspace.h), which then stays alive */
    int ordinal = -1;
    char viewer[CM__VIEWER_MAX];
    bool viewed = false;
    cm__core_lock();
    if (cm__memspace_viewer_locked(buf, CM__KIND_BUFFER, viewer, sizeof viewer)) {
        viewed = true;
        ordinal = b->a.dev->ordinal;
        b = NULL;
    } else {
        b = cm__handle_end_locked(buf, CM__KIND_BUFFER);
    }
    if (b != NULL) {
        ordinal = b->a.dev->ordinal; /* read while the device object is surely alive */
        cm__alloc_untrack_locked(&b->a);
    }
    cm__core_unlock();
    if (b == NULL) {
        if (entered) cm__leave(&sc);
        if (viewed)
            return cm__memspace_refuse_destroy("buf", CM__KIND_BUFFER, ordinal, viewer, func);
        return cm__handle_fail(buf, CM__KIND_BUFFER, "buf", func); /* raced */
    }
    void *ptr = b->ptr;
    struct cm__device *dev = b->a.dev;
    size_t bytes = b->a.bytes;
    bool ordered = b->stream_ordered;
    cudaStream_t free_stream = on_stream ? stream : b->stream;
    cm__buffer_obj_free(b);
    cm_status_t status = CM_OK;
    if (ptr != NULL) {
        status = entered
                     ? cm__free_in_scope(dev, ordinal, ptr, bytes, ordered, free_stream, func)
                     : cm__free_memory(dev, ordinal, ptr, bytes, ordered, free_stream, func);
    }
    if (entered) cm__leave(&sc);
    return status;
}

cm_status_t cm__buffer_destroy_q(const cm__queue_t *q, cm_buffer_t *buf, const char *func) {
    return cm__buffer_destroy_impl(q, buf, func, true);
}

cm_status_t cm__buffer_release(cm_buffer_t *buf, const char *func) {
    return cm__buffer_destroy_impl(NULL, buf, func, false);
}

cm_status_t cm_buffer_destroy(cm_buffer_t *buf) {
    return cm__buffer_destroy_q(NULL, buf, __func__);
}

/* ------------------------------------------------------------------ accessors */

cm_status_t cm_buffer_info(const cm_buffer_t *buf, cm_buffer_info_t *info) {
    CM__REQUIRE(info != NULL, "pass the address of a cm_buffer_info_t", "info is NULL");
    struct cm__buffer *b;
    CM_TRY(cm__buffer_get(buf, "buf", __func__, &b));
    cm_buffer_info_t r;
    memset(&r, 0, sizeof r);
    r.bytes = b->a.bytes;
    r.device = (cm_device_t *)b->a.dev->handle;
    r.ordinal = b->a.dev->ordinal;
    r.stream_ordered = b->stream_ordered;
    r.stream = (cm_stream_t *)(uintptr_t)b->stream_handle;
    r.device_ptr = b->ptr;
    if (b->a.has_label) cm__strlcpy(r.label, b->a.label, sizeof r.label);
    *info = r;
    return CM_OK;
}

cm_status_t cm_buffer_device_ptr(const cm_buffer_t *buf, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    struct cm__buffer *b;
    CM_TRY(cm__buffer_get(buf, "buf", __func__, &b));
    *ptr = b->ptr;
    return CM_OK;
}

/* ------------------------------------------------------------------ host <-> device */

cm_status_t cm__buffer_h2d(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                           const void *src, size_t bytes, const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t d;
    CM_TRY(cm__buffer_view(dst, "dst", func, &d));
    CM_TRY(cm__check_host_ptr(src, bytes, "src", func));
    CM_TRY(cm__check_range("dst", "cm_buffer_t", dst_offset, bytes, d.size, func));
    if (!sync) CM_TRY(cm__check_queue(q, d.ordinal, func));
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(d.ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(d.ordinal, 1, &sc));
    cm__ms_mem_t kind = CM__MS_PAGEABLE;
    cm_status_t status = cm__classify_host(src, "src", func,
                                           CM__HINT_COPY_BETWEEN_BUFFERS,
                                           &kind);
    if (status != CM_OK) goto out;
    unsigned char *to = d.ptr + dst_offset;
    size_t min_bytes = cm__staging_config(d.dev).min_bytes;
    if (kind == CM__MS_PAGEABLE && bytes >= min_bytes) {
        bool capturing = false; /* a captured copy is direct (cm__copy_capturing) */
        status = cm__copy_capturing(sync, stream, func, &capturing);
        if (status != CM_OK) goto out;
        if (!capturing) {
            status = cm__staged_h2d(d.dev, to, src, bytes, stream, sync);
            goto out;
        }
    }
    enum cudaMemcpyKind k = kind == CM__MS_MANAGED ? cudaMemcpyDefault : cudaMemcpyHostToDevice;
    cudaError_t err = sync ? cm__cuda.memcpy_sync(to, src, bytes, k)
                           : cm__cuda.memcpy_async(to, src, bytes, k, stream);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes, host to device) in %s",
                               sync ? "cudaMemcpy" : "cudaMemcpyAsync", bytes, func);
    } else if (sync) {
        /* cudaMemcpy from pageable memory returns once the bytes are staged, possibly before the
         * DMA lands, and work on non-blocking streams is not ordered after it: finish it on the
         * legacy stream so that the data is in place for work on any stream (a two-GPU test
         * read stale bytes through a peer copy on a pooled stream without this) */
        err = cm__cuda.stream_synchronize(0);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize(0) in %s", func);
    }
out:
    cm__leave(&sc);
    return status;
}

cm_status_t cm__buffer_d2h(const cm__queue_t *q, const cm_buffer_t *src, size_t src_offset,
                           void *dst, size_t bytes, const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t s;
    CM_TRY(cm__buffer_view(src, "src", func, &s));
    CM_TRY(cm__check_host_ptr(dst, bytes, "dst", func));
    CM_TRY(cm__check_range("src", "cm_buffer_t", src_offset, bytes, s.size, func));
    if (!sync) CM_TRY(cm__check_queue(q, s.ordinal, func));
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(s.ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(s.ordinal, 1, &sc));
    cm__ms_mem_t kind = CM__MS_PAGEABLE;
    cm_status_t status = cm__classify_host(dst, "dst", func,
                                           CM__HINT_COPY_BETWEEN_BUFFERS,
                                           &kind);
    if (status != CM_OK) goto out;
    const unsigned char *from = s.ptr + src_offset;
    size_t min_bytes = cm__staging_config(s.dev).min_bytes;
    bool capturing = false; /* then neither staged nor waited for (cm__copy_capturing) */
    if (kind == CM__MS_PAGEABLE) {
        status = cm__copy_capturing(sync, stream, func, &capturing);
        if (status != CM_OK) goto out;
    }
    if (kind == CM__MS_PAGEABLE && bytes >= min_bytes && !capturing) {
        status = cm__staged_d2h(s.dev, dst, from, bytes, stream, sync);
        goto out;
    }
    enum cudaMemcpyKind k = kind == CM__MS_MANAGED ? cudaMemcpyDefault : cudaMemcpyDeviceToHost;
    cudaError_t err = sync ? cm__cuda.memcpy_sync(dst, from, bytes, k)
                           : cm__cuda.memcpy_async(dst, from, bytes, k, stream);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes, device to host) in %s",
                               sync ? "cudaMemcpy" : "cudaMemcpyAsync", bytes, func);
    } else if (!sync && kind == CM__MS_PAGEABLE && !capturing) {
        /* a pageable destination is promised complete on return (outside a capture: there the
         * copy only runs when the graph is launched, and a wait would invalidate the capture) */
        err = cm__cuda.stream_synchronize(stream);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize(stream) in %s",
                                   func);
    }
out:
    cm__leave(&sc);
    return status;
}

/* ------------------------------------------------------------------ pinned host buffers <-> device */

static cm_status_t cm__host_view(const cm_host_buffer_t *hb, const char *arg, const char *func,
                                 unsigned char **ptr, size_t *size) {
    struct cm__host_buffer *h;
    CM_TRY(cm__host_buffer_get(hb, arg, func, &h));
    *ptr = h->ptr;
    *size = h->a.bytes;
    return CM_OK;
}

static cm_status_t cm__copy_pinned(unsigned char *to, const unsigned char *from, size_t bytes,
                                   enum cudaMemcpyKind kind, int ordinal, bool sync,
                                   cudaStream_t stream, const char *func) {
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    cudaError_t err = sync ? cm__cuda.memcpy_sync(to, from, bytes, kind)
                           : cm__cuda.memcpy_async(to, from, bytes, kind, stream);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes, %s, pinned) in %s",
                               sync ? "cudaMemcpy" : "cudaMemcpyAsync", bytes,
                               kind == cudaMemcpyHostToDevice ? "host to device" : "device to host",
                               func);
    }
    cm__leave(&sc);
    return status;
}

cm_status_t cm__buffer_from_host_buffer(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                                        const cm_host_buffer_t *src, size_t src_offset,
                                        size_t bytes, const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t d;
    CM_TRY(cm__buffer_view(dst, "dst", func, &d));
    unsigned char *hp = NULL;
    size_t hsize = 0;
    CM_TRY(cm__host_view(src, "src", func, &hp, &hsize));
    CM_TRY(cm__check_range("dst", "cm_buffer_t", dst_offset, bytes, d.size, func));
    CM_TRY(cm__check_range("src", "cm_host_buffer_t", src_offset, bytes, hsize, func));
    if (!sync) CM_TRY(cm__check_queue(q, d.ordinal, func));
    if (bytes == 0) return CM_OK;
    return cm__copy_pinned(d.ptr + dst_offset, hp + src_offset, bytes, cudaMemcpyHostToDevice,
                           d.ordinal, sync, stream, func);
}

cm_status_t cm__buffer_to_host_buffer(const cm__queue_t *q, const cm_buffer_t *src,
                                      size_t src_offset, cm_host_buffer_t *dst, size_t dst_offset,
                                      size_t bytes, const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t s;
    CM_TRY(cm__buffer_view(src, "src", func, &s));
    unsigned char *hp = NULL;
    size_t hsize = 0;
    CM_TRY(cm__host_view(dst, "dst", func, &hp, &hsize));
    CM_TRY(cm__check_range("src", "cm_buffer_t", src_offset, bytes, s.size, func));
    CM_TRY(cm__check_range("dst", "cm_host_buffer_t", dst_offset, bytes, hsize, func));
    if (!sync) CM_TRY(cm__check_queue(q, s.ordinal, func));
    if (bytes == 0) return CM_OK;
    return cm__copy_pinned(hp + dst_offset, s.ptr + src_offset, bytes, cudaMemcpyDeviceToHost,
                           s.ordinal, sync, stream, func);
}

/* ------------------------------------------------------------------ device <-> device */

cm_status_t cm__buffer_d2d(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                           const cm_buffer_t *src, size_t src_offset, size_t bytes,
                           const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t d, s;
    CM_TRY(cm__buffer_view(dst, "dst", func, &d));
    CM_TRY(cm__buffer_view(src, "src", func, &s));
    CM_TRY(cm__check_range("dst", "cm_buffer_t", dst_offset, bytes, d.size, func));
    CM_TRY(cm__check_range("src", "cm_buffer_t", src_offset, bytes, s.size, func));
    if (dst == src && bytes > 0 && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, d.ordinal, __FILE__, __LINE__, func,
                        "copy through a second buffer, or split the copy into parts that do not "
                        "overlap",
                        "the ranges overlap within one buffer: %zu bytes from offset %zu to offset "
                        "%zu; nothing was copied", bytes, src_offset, dst_offset);
    }
    if (!sync && q->ordinal != d.ordinal && q->ordinal != s.ordinal) {
        /* across devices the stream may be either one's */
        (void)cm__check_queue(q, d.ordinal, func);
        cm_error_t *e = cm__detail();
        if (s.ordinal != d.ordinal) {
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (a copy from device %d to device %d takes a stream of either)",
                            s.ordinal, d.ordinal);
        }
        return e->status;
    }
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(d.ordinal));
    CM_TRY(cm__context_guard(s.ordinal));
    if (d.ordinal != s.ordinal) CM_TRY(cm__peer_prepare(d.dev, s.dev));
    cm__scope_t sc;
    CM_TRY(cm__enter(d.ordinal, 1, &sc));
    cudaError_t err;
    unsigned char *to = d.ptr + dst_offset;
    const unsigned char *from = s.ptr + src_offset;
    if (d.ordinal == s.ordinal) {
        err = sync ? cm__cuda.memcpy_sync(to, from, bytes, cudaMemcpyDeviceToDevice)
                   : cm__cuda.memcpy_async(to, from, bytes, cudaMemcpyDeviceToDevice, stream);
    } else {
        err = sync ? cm__cuda.memcpy_peer(to, d.ordinal, from, s.ordinal, bytes)
                   : cm__cuda.memcpy_peer_async(to, d.ordinal, from, s.ordinal, bytes, stream);
    }
    cm_status_t status = CM_OK;
    if (err != cudaSuccess) {
        /* charged to the scope's device (a sticky error marks it lost), a peer copy's sticky
         * error to the context that holds it (cm__charge_to_other) */
        cm__scope_t sc_fault;
        const bool on_src = cm__charge_to_other(err, d.ordinal, s.ordinal, &sc_fault);
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes, device %d to device %d) in %s",
                               d.ordinal == s.ordinal ? (sync ? "cudaMemcpy" : "cudaMemcpyAsync")
                                                      : (sync ? "cudaMemcpyPeer"
                                                              : "cudaMemcpyPeerAsync"),
                               bytes, s.ordinal, d.ordinal, func);
        if (on_src) cm__leave(&sc_fault);
    } else if (sync) {
        /* cudaMemcpy device to device and cudaMemcpyPeer may return before the copy ends (and
         * do not order themselves with non-blocking streams): finish it on the legacy stream of
         * the destination's device, and for a peer copy of the source's device too */
        err = cm__cuda.stream_synchronize(0);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize(0) in %s", func);
        if (status == CM_OK && d.ordinal != s.ordinal) {
            cm__scope_t sc_src;
            status = cm__enter(s.ordinal, 1, &sc_src);
            if (status == CM_OK) {
                err = cm__cuda.stream_synchronize(0);
                if (err != cudaSuccess)
                    status = cm__cuda_fail(err, __FILE__, __LINE__,
                                           "cudaStreamSynchronize(0) on device %d in %s", s.ordinal,
                                           func);
                cm__leave(&sc_src);
            }
        }
    }
    cm__leave(&sc);
    return status;
}

/* ------------------------------------------------------------------ set, fill */

cm_status_t cm__buffer_fill_q(const cm__queue_t *q, cm_buffer_t *buf, size_t offset, size_t bytes,
                              const void *pattern, size_t pattern_bytes, const char *func) {
    const bool sync = q->handle == NULL;
    const cudaStream_t stream = q->cs;
    cm__view_t v;
    CM_TRY(cm__buffer_view(buf, "buf", func, &v));
    if (pattern == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of the value to repeat", "pattern is NULL");
    }
    if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "patterns of 1, 2, 4 or 8 bytes are supported (e.g. sizeof(float))",
                        "pattern_bytes is %zu", pattern_bytes);
    }
    if (offset % pattern_bytes != 0 || bytes % pattern_bytes != 0) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "fill whole %zu-byte elements: offset and bytes must be "
                 "multiples of %zu", pattern_bytes, pattern_bytes);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "offset %zu and bytes %zu must both be multiples of the %zu-byte pattern",
                        offset, bytes, pattern_bytes);
    }
    CM_TRY(cm__check_range("buf", "cm_buffer_t", offset, bytes, v.size, func));
    if (!sync) CM_TRY(cm__check_queue(q, v.ordinal, func));
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(v.ordinal));
    unsigned char p[8];
    memcpy(p, pattern, pattern_bytes);
    bool bytewise = true;
    for (size_t i = 1; i < pattern_bytes; ++i) bytewise = bytewise && p[i] == p[0];
    cudaStream_t s = sync ? 0 : stream;
    cm__scope_t sc;
    CM_TRY(cm__enter(v.ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    cudaError_t err;
    const char *call;
    if (bytewise) {
        call = "cudaMemsetAsync";
        err = cm__cuda.memset_async(v.ptr + offset, p[0], bytes, s);
    } else {
        call = "fill kernel";
        err = cm__cuda.fill_async(v.ptr + offset, bytes, p, pattern_bytes, s);
    }
    if (err == cudaSuccess && sync) {
        call = "cudaStreamSynchronize(0) after the fill";
        err = cm__cuda.stream_synchronize(0);
    }
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes) in %s", call, bytes, func);
    cm__leave(&sc);
    return status;
}

cm_status_t cm__buffer_set_q(const cm__queue_t *q, cm_buffer_t *buf, size_t offset, size_t bytes,
                             int value, const char *func) {
    if (value < 0 || value > 255) {
        struct cm__buffer *obj;
        CM_TRY(cm__buffer_get(buf, "buf", func, &obj));
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        CM__HINT_SET_ONE_BYTE,
                        "value %d is not a byte (0 .. 255)", value);
    }
    unsigned char b = (unsigned char)value;
    return cm__buffer_fill_q(q, buf, offset, bytes, &b, 1, func);
}
