/*
 * The memory part of the device object (core/device.h, memory_internal.h): live-buffer
 * accounting and the busy check of cm_device_close(), leak and memory reports, the memory pool
 * settings of buffer.h, holdings and trims across the device objects of one ordinal, peer
 * access, the stream check, and the library's copies of callers' file names.
 *
 * Every CUDA call here runs outside cm__core_lock(): a device object whose pool is used after
 * the lock is dropped is pinned (dev->pins) so that a concurrent close waits for it.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"
#include "memspace_internal.h"

/* ------------------------------------------------------------------ accounting */

void cm__describe_alloc(const cm__alloc_t *a, cm__text_t *t) {
    char size[32];
    cm__format_bytes(a->bytes, size, sizeof size);
    const char *what = "device buffer";
    char extra[64] = "";
    if (cm__memspace_kind(a->kind)) {
        cm__memspace_describe(a, t); /* pitched buffers, arrays, textures... (memspace_list.c) */
        return;
    }
    if (a->kind == CM__KIND_BUFFER) {
        const struct cm__buffer *b = (const struct cm__buffer *)a;
        if (b->stream_ordered) snprintf(extra, sizeof extra, ", stream-ordered");
    } else {
        const struct cm__host_buffer *h = (const struct cm__host_buffer *)a;
        what = h->registered ? "registered host buffer" : "pinned host buffer";
        snprintf(extra, sizeof extra, "%s%s%s", (h->flags & CM_HOST_BUFFER_PORTABLE) ? ", portable" : "",
                 (h->flags & CM_HOST_BUFFER_MAPPED) ? ", mapped" : "",
                 (h->flags & CM_HOST_BUFFER_WRITE_COMBINED) ? ", write-combined" : "");
    }
    cm__text_printf(t, "%s of %s (%zu bytes)%s, created at %s:%d", what, size, a->bytes, extra,
                    a->file != NULL && a->file[0] ? a->file : "?", a->line);
    if (a->has_label) cm__text_printf(t, " \"%s\"", a->label);
}

static cm_status_t cm__close_busy_locked(struct cm__device *dev);

void cm__alloc_set_label(cm__alloc_t *a, const char *label) {
    a->has_label = label != NULL && label[0] != '\0';
    if (a->has_label) cm__strlcpy(a->label, label, sizeof a->label);
}

cm_status_t cm__alloc_track(cm__alloc_t *a, const void *dev_handle, int ordinal,
                            const char *func) {
    struct cm__device *dev = a->dev;
    cm__epitaph_t ep = {.file = a->file, .line = a->line, .device = ordinal,
                        .bytes = (uint64_t)a->bytes};
    if (a->has_label) cm__strlcpy(ep.label, a->label, sizeof ep.label);
    bool open = true;
    cm__core_lock();
    /* closed by another thread meanwhile (a bug of the caller): refuse, without reading the
     * object, which that close may have freed */
    if (cm__handle_obj(dev_handle, CM__KIND_DEVICE) != dev) {
        open = false;
        a->handle = NULL;
    } else {
        a->handle = cm__handle_new_locked(a->kind, a, &ep);
    }
    if (a->handle != NULL) {
        if (dev->mem.busy_locked == NULL) dev->mem.busy_locked = cm__close_busy_locked;
        if (dev->mem.release == NULL) dev->mem.release = cm__memory_release;
        a->serial = ++dev->serial;
        a->link.prev = dev->live.prev;
        a->link.next = &dev->live;
        dev->live.prev->next = &a->link;
        dev->live.prev = &a->link;
        if (a->kind == CM__KIND_BUFFER) {
            ++dev->n_buffers;
            dev->buffer_bytes += a->bytes;
            if (dev->buffer_bytes > dev->peak_buffer_bytes)
                dev->peak_buffer_bytes = dev->buffer_bytes;
        } else if (a->kind == CM__KIND_HOST_BUFFER) {
            ++dev->n_host_buffers;
            dev->host_bytes += a->bytes;
        } else {
            cm__memspace_count_locked(dev, a, +1);
        }
    }
    cm__core_unlock();
    if (a->handle != NULL) return CM_OK;
    if (!open) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "do not close a device object while another thread creates buffers on it",
                        "dev (device %d) was closed while the buffer was being created",
                        ordinal);
    }
    return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                    "free host memory", "cannot grow the handle table: host malloc failed");
}

void cm__alloc_untrack_locked(cm__alloc_t *a) {
    struct cm__device *dev = a->dev;
    a->link.prev->next = a->link.next;
    a->link.next->prev = a->link.prev;
    a->link.prev = a->link.next = NULL;
    if (a->kind == CM__KIND_BUFFER) {
        --dev->n_buffers;
        dev->buffer_bytes -= a->bytes;
    } else if (a->kind == CM__KIND_HOST_BUFFER) {
        --dev->n_host_buffers;
        dev->host_bytes -= a->bytes;
    } else {
        cm__memspace_count_locked(dev, a, -1);
    }
}

/* The memory part's busy check of cm_device_close (dev->mem.busy_locked, core lock held): the
 * detail of a refused close names counts, bytes and the first buffers. */
static cm_status_t cm__close_busy_locked(struct cm__device *dev) {
    if (dev->n_buffers + dev->n_host_buffers + dev->n_spaces == 0) return CM_OK;
    char msg[CM_ERROR_MESSAGE_MAX];
    cm__text_t t = {msg, sizeof msg, 0};
    size_t count = dev->n_buffers + dev->n_host_buffers + dev->n_spaces;
    size_t bytes = dev->buffer_bytes + dev->host_bytes + dev->space_bytes;
    char size[32];
    cm__format_bytes(bytes, size, sizeof size);
    cm__text_printf(&t, "cannot close device %d (%s): %zu buffer%s still alive, %s (%zu bytes): ",
                    dev->ordinal, dev->name, count, count == 1 ? " is" : "s are", size, bytes);
    size_t shown = 0;
    for (const cm__link_t *l = dev->live.next; l != &dev->live; l = l->next) {
        const cm__alloc_t *a = (const cm__alloc_t *)((const char *)l - offsetof(cm__alloc_t, link));
        char one[320];
        cm__text_t o = {one, sizeof one, 0};
        cm__describe_alloc(a, &o);
        /* keep room for the tail "; and N more" */
        if (shown > 0 && t.len + o.len + 40 >= sizeof msg) break;
        cm__text_printf(&t, "%s%s", shown ? "; " : "", one);
        ++shown;
    }
    if (shown < count) cm__text_printf(&t, "; and %zu more", count - shown);
    return cm__fail(CM_ERROR_BUSY, dev->ordinal, __FILE__, __LINE__, "cm_device_close",
                    CM__HINT_CLOSE_WITH_BUFFERS,
                    "%s", msg);
}

/* ------------------------------------------------------------------ streams */

cm_status_t cm__copy_capturing(bool sync, cudaStream_t stream, const char *func,
                               bool *capturing) {
    *capturing = false;
    if (sync || stream == 0) return CM_OK;
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t err = cm__cuda.stream_is_capturing(stream, &cs);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamIsCapturing(stream) in %s", func);
    *capturing = cs != cudaStreamCaptureStatusNone;
    return CM_OK;
}

cm_status_t cm__check_stream_device_full(cudaStream_t stream, int ordinal, const char *what,
                                         const char *func) {
    /* asked first: a refused device query would invalidate a capture in progress */
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t err = cm__cuda.stream_is_capturing(stream, &cs);
    if (err == cudaSuccess && cs != cudaStreamCaptureStatusNone) return CM_OK;
    /* (a failed driver query leaves the runtime's last error alone; the device query says why) */
    int device = -1;
    err = cm__cuda.stream_get_device(stream, &device);
    if (err == cudaErrorStreamCaptureUnsupported) {
        /* capturing after all (another thread began it): CUDA checks the device at the copy */
        return CM_OK;
    }
    if (err != cudaSuccess) {
        cm_status_t s = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamGetDevice(stream) in %s",
                                      func);
        cm_error_t *e = cm__detail();
        if (!e->context_lost) {
            snprintf(e->message, sizeof e->message,
                     "the stream passed to %s is not a valid CUDA stream (%s: %s)", func,
                     cm__cuda.get_error_name(err), cm__cuda.get_error_string(err));
            cm__strlcpy(e->hint, "wrap a live stream from cudaStreamCreate() (a destroyed "
                        "stream cannot be used), or pass NULL for a synchronous call", sizeof e->hint);
        }
        return s;
    }
    if (device != ordinal) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "queue the work on a stream of device %d (create it after cudaSetDevice(%d)), or "
                 "use a %s of device %d",
                 ordinal, ordinal, what, device);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "the stream belongs to device %d but the %s to device %d", device, what,
                        ordinal);
    }
    return CM_OK;
}

cm_status_t cm__check_queue(const cm__queue_t *q, int ordinal, const char *func) {
    if (q == NULL || q->handle == NULL || q->ordinal == ordinal) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint,
             "pass a stream of device %d's device object (cm_stream_acquire() on it), or NULL "
             "for a synchronous call", ordinal);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                    "the stream belongs to device %d but the buffer to device %d", q->ordinal,
                    ordinal);
}

/* ------------------------------------------------------------------ reports */

cm_status_t cm_device_leak_report(const cm_device_t *h, char *buf, size_t size, size_t *length) {
    CM__REQUIRE(buf != NULL || size == 0, "pass a buffer, or size 0 to measure the report",
                "buf is NULL but size is %zu", size);
    const struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    cm__text_t t = {buf, size, 0};
    if (buf != NULL && size > 0) buf[0] = '\0';
    cm__core_lock();
    size_t count = dev->n_buffers + dev->n_host_buffers + dev->n_spaces;
    size_t bytes = dev->buffer_bytes + dev->host_bytes + dev->space_bytes;
    if (count == 0) {
        cm__text_printf(&t, "device %d (%s): no live buffers\n", dev->ordinal, dev->name);
    } else {
        char total[32];
        cm__format_bytes(bytes, total, sizeof total);
        cm__text_printf(&t, "device %d (%s): %zu live buffer%s, %s (%zu bytes): %zu on the device, "
                        "%zu pinned on the host", dev->ordinal, dev->name, count,
                        count == 1 ? "" : "s", total, bytes, dev->n_buffers, dev->n_host_buffers);
        if (dev->n_spaces > 0)
            cm__text_printf(&t, ", %zu of memspace.h (pitched, arrays, managed, textures, "
                            "surfaces)", dev->n_spaces);
        cm__text_printf(&t, "\n");
        for (const cm__link_t *l = dev->live.next; l != &dev->live; l = l->next) {
            const cm__alloc_t *a =
                (const cm__alloc_t *)((const char *)l - offsetof(cm__alloc_t, link));
            cm__text_printf(&t, "  #%llu ", (unsigned long long)a->serial);
            cm__describe_alloc(a, &t);
            cm__text_printf(&t, "\n");
        }
    }
    cm__core_unlock();
    if (length != NULL) *length = t.len;
    return CM_OK;
}

static cm_status_t cm__pool_attr(cudaMemPool_t pool, enum cudaMemPoolAttr attr, const char *name,
                                 size_t *out) {
    unsigned long long v = 0;
    cudaError_t err = cm__cuda.mem_pool_get_attribute(pool, attr, &v);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolGetAttribute(%s)", name);
    *out = (size_t)v;
    return CM_OK;
}

cm_status_t cm_device_memory_report(const cm_device_t *h, cm_memory_report_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_memory_report_t", "out is NULL");
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    CM_TRY(cm__context_guard(dev->ordinal));
    cm_memory_report_t r;
    memset(&r, 0, sizeof r);
    r.device = dev->ordinal;
    cm__core_lock();
    r.live_buffers = dev->n_buffers;
    r.live_bytes = dev->buffer_bytes;
    r.peak_live_bytes = dev->peak_buffer_bytes;
    r.live_host_buffers = dev->n_host_buffers;
    r.live_host_bytes = dev->host_bytes;
    r.pool_release_threshold = dev->release_threshold;
    cm__core_unlock();
    r.staging_bytes = cm__staging_bytes(dev);
    /* the pool's figures name this device; cudaMemGetInfo reads the current one */
    cm__scope_t sc;
    CM_TRY(cm__enter(dev->ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    if (dev->pool != NULL) {
        status = cm__pool_attr(dev->pool, cudaMemPoolAttrReservedMemCurrent,
                               "cudaMemPoolAttrReservedMemCurrent", &r.pool_reserved_bytes);
        if (status == CM_OK)
            status = cm__pool_attr(dev->pool, cudaMemPoolAttrUsedMemCurrent,
                                   "cudaMemPoolAttrUsedMemCurrent", &r.pool_used_bytes);
        if (status == CM_OK)
            status = cm__pool_attr(dev->pool, cudaMemPoolAttrReservedMemHigh,
                                   "cudaMemPoolAttrReservedMemHigh", &r.pool_peak_reserved_bytes);
    }
    if (status == CM_OK) {
        cudaError_t err = cm__cuda.mem_get_info(&r.device_free_bytes, &r.device_total_bytes);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemGetInfo(device %d)",
                                   dev->ordinal);
    }
    cm__leave(&sc);
    CM_TRY(status);
    *out = r;
    return CM_OK;
}

cm_status_t cm_memory_report_format(const cm_memory_report_t *r, char *buf, size_t size,
                                    size_t *length) {
    CM__REQUIRE(r != NULL, "pass a report filled by cm_device_memory_report()", "report is NULL");
    CM__REQUIRE(buf != NULL || size == 0, "pass a buffer, or size 0 to measure the text",
                "buf is NULL but size is %zu", size);
    if (buf != NULL && size > 0) buf[0] = '\0';
    cm__text_t t = {buf, size, 0};
    char a[32], b[32], c[32], d[32];
    cm__text_printf(&t, "device %d memory through libcudamodel:\n", r->device);
    cm__text_printf(&t, "  device buffers: %zu live, %s (peak %s)\n", r->live_buffers,
                    cm__format_bytes(r->live_bytes, a, sizeof a),
                    cm__format_bytes(r->peak_live_bytes, b, sizeof b));
    cm__text_printf(&t, "  pinned host buffers: %zu live, %s\n", r->live_host_buffers,
                    cm__format_bytes(r->live_host_bytes, a, sizeof a));
    cm__text_printf(&t, "  pool: %s reserved, %s in use, %s cached, peak reserved %s, release "
                    "threshold ", cm__format_bytes(r->pool_reserved_bytes, a, sizeof a),
                    cm__format_bytes(r->pool_used_bytes, b, sizeof b),
                    cm__format_bytes(r->pool_reserved_bytes > r->pool_used_bytes
                                         ? r->pool_reserved_bytes - r->pool_used_bytes
                                         : 0,
                                     c, sizeof c),
                    cm__format_bytes(r->pool_peak_reserved_bytes, d, sizeof d));
    if (r->pool_release_threshold == ~0ull) cm__text_printf(&t, "none (keeps all)\n");
    else cm__text_printf(&t, "%llu bytes\n", r->pool_release_threshold);
    cm__text_printf(&t, "  staging for pageable copies: %s pinned\n",
                    cm__format_bytes(r->staging_bytes, a, sizeof a));
    cm__text_printf(&t, "  device: %s free of %s (all processes)\n",
                    cm__format_bytes(r->device_free_bytes, a, sizeof a),
                    cm__format_bytes(r->device_total_bytes, b, sizeof b));
    if (length != NULL) *length = t.len;
    return CM_OK;
}

/* ------------------------------------------------------------------ pool settings */

cm_status_t cm_device_pool_set_release_threshold(cm_device_t *h, unsigned long long bytes) {
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    CM_TRY(cm__context_guard(dev->ordinal));
    if (dev->pool == NULL) {
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, dev->ordinal,
                        "use synchronous buffers (cm_buffer_create()) on this device",
                        "device %d (%s) has no memory pools (cudaDevAttrMemoryPoolsSupported is 0)",
                        dev->ordinal, dev->name);
    }
    unsigned long long v = bytes;
    cm__scope_t sc;
    CM_TRY(cm__enter(dev->ordinal, 0, &sc));
    cudaError_t err = cm__cuda.mem_pool_set_attribute(dev->pool, cudaMemPoolAttrReleaseThreshold, &v);
    cm_status_t st = CM_OK; /* recorded inside the scope: charged to the pool's device */
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__,
                           "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, %llu)", bytes);
    cm__leave(&sc);
    CM_TRY(st);
    cm__core_lock();
    dev->release_threshold = bytes;
    cm__core_unlock();
    return CM_OK;
}

cm_status_t cm_device_pool_trim(cm_device_t *h, size_t keep_bytes) {
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    CM_TRY(cm__context_guard(dev->ordinal));
    if (dev->pool == NULL) return CM_OK;
    cm__scope_t sc;
    CM_TRY(cm__enter(dev->ordinal, 0, &sc));
    cudaError_t err = cm__cuda.mem_pool_trim_to(dev->pool, keep_bytes);
    cm_status_t st = CM_OK; /* recorded inside the scope: charged to the pool's device */
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolTrimTo(pool, %zu)", keep_bytes);
    cm__leave(&sc);
    return st;
}

/* ------------------------------------------------------------------ across device objects */

/* Most device objects of one ordinal whose pools one trim or report reaches. */
#define CM__PIN_MAX 64

/* Pin the open device objects of ordinal that have a pool (at most CM__PIN_MAX); with sums
 * non-NULL also add up the live buffers of all of them. */
static size_t cm__pin_pools(int ordinal, struct cm__device **out, size_t *live_bytes,
                            size_t *live_buffers) {
    size_t n = 0, lb = 0, nb = 0;
    cm__core_lock();
    for (struct cm__device *d = cm__device_first_open_locked(); d != NULL; d = d->next_open) {
        if (d->ordinal != ordinal) continue;
        lb += d->buffer_bytes;
        nb += d->n_buffers;
        if (d->pool != NULL && n < CM__PIN_MAX) {
            ++d->pins;
            out[n++] = d;
        }
    }
    cm__core_unlock();
    if (live_bytes != NULL) *live_bytes = lb;
    if (live_buffers != NULL) *live_buffers = nb;
    return n;
}

static void cm__unpin(struct cm__device **devs, size_t n) {
    cm__core_lock();
    for (size_t i = 0; i < n; ++i) --devs[i]->pins;
    cm__core_unlock();
}

/* ------------------------------------------------------------------ deferred frees */

/* A free that could not happen when its buffer was destroyed (cm__defer_free): a list per device
 * object in dev->mem.state, under cm__core_lock(). */
typedef struct cm__deferred {
    struct cm__deferred *next;
    void *ptr;
    size_t bytes;
    bool host; /* pinned host memory (cudaFreeHost), else device memory (cudaFree) */
} cm__deferred_t;

/* Entries on every list: the capture end looks at the lists only when there are some. */
static atomic_size_t cm__n_deferred;

static bool cm__defer(struct cm__device *dev, void *ptr, size_t bytes, bool host) {
    cm__deferred_t *d = malloc(sizeof *d);
    if (d == NULL) return false;
    d->ptr = ptr;
    d->bytes = bytes;
    d->host = host;
    bool open = false;
    cm__core_lock();
    /* compared, not read, until found open: a close on another thread may have freed it */
    for (struct cm__device *o = cm__device_first_open_locked(); o != NULL && !open;
         o = o->next_open)
        open = o == dev;
    if (open) {
        d->next = dev->mem.state;
        dev->mem.state = d;
        /* the device's close frees the list (a device that never held a buffer has no memory
         * release registered yet: a set's result slots) */
        if (dev->mem.release == NULL) dev->mem.release = cm__memory_release;
        atomic_fetch_add_explicit(&cm__n_deferred, 1, memory_order_relaxed);
    }
    cm__core_unlock();
    if (!open) free(d);
    return open;
}

bool cm__defer_free(struct cm__device *dev, void *ptr, size_t bytes) {
    return cm__defer(dev, ptr, bytes, false);
}

bool cm__defer_free_host(struct cm__device *dev, void *ptr, size_t bytes) {
    return cm__defer(dev, ptr, bytes, true);
}

static void cm__deferred_forget(cm__deferred_t *d) {
    free(d);
    atomic_fetch_sub_explicit(&cm__n_deferred, 1, memory_order_relaxed);
}

/* cudaFree every entry of list in a scope of ordinal (a synchronous free: after the work queued
 * before it, as the buffer's stream-ordered free would have been). Returns the entries left
 * (no scope, or a failed cudaFree: still the driver's), *failed the first failure (recorded;
 * CM_OK when none). A lost context drops them all: the memory went with it. */
static cm__deferred_t *cm__deferred_free_list(int ordinal, cm__deferred_t *list,
                                              cm_status_t *failed) {
    *failed = CM_OK;
    cm_error_t first = {0};
    cm__scope_t sc;
    bool entered = false;
    cm__deferred_t *left = NULL;
    while (list != NULL) {
        cm__deferred_t *d = list;
        list = d->next;
        if (cm__context_guard(ordinal) != CM_OK) { /* lost, maybe by the free before */
            cm_last_error_clear();
            cm__deferred_forget(d);
            continue;
        }
        if (!entered) {
            cm_status_t st = cm__enter(ordinal, 1, &sc);
            if (st != CM_OK) { /* keep them all for later */
                *failed = st;
                d->next = list;
                list = d;
                while (list != NULL) {
                    d = list;
                    list = d->next;
                    d->next = left;
                    left = d;
                }
                return left;
            }
            entered = true;
        }
        cudaError_t err = d->host ? cm__cuda.free_host(d->ptr) : cm__cuda.device_free(d->ptr);
        if (err == cudaSuccess) {
            cm__deferred_forget(d);
            continue;
        }
        cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__,
                                       "%s(%zu bytes whose free was deferred)",
                                       d->host ? "cudaFreeHost" : "cudaFree", d->bytes);
        if (*failed == CM_OK) {
            *failed = st;
            first = *cm_last_error();
        }
        if (cm_cuda_error_is_sticky(err)) { /* the context is lost: so is the memory */
            cm__deferred_forget(d);
            continue;
        }
        d->next = left;
        left = d;
    }
    if (entered) cm__leave(&sc);
    if (*failed != CM_OK) *cm__detail() = first;
    return left;
}

void cm__deferred_free_drain(void) {
    if (atomic_load_explicit(&cm__n_deferred, memory_order_relaxed) == 0 ||
        cm__thread_captures > 0)
        return;
    const cm_error_t reported = *cm_last_error();
    struct cm__device *devs[CM__PIN_MAX];
    cm__deferred_t *lists[CM__PIN_MAX];
    size_t n = 0;
    cm__core_lock();
    for (struct cm__device *d = cm__device_first_open_locked(); d != NULL && n < CM__PIN_MAX;
         d = d->next_open) {
        if (d->mem.state == NULL) continue;
        ++d->pins; /* a close waits for the entries to be back */
        devs[n] = d;
        lists[n++] = d->mem.state;
        d->mem.state = NULL;
    }
    cm__core_unlock();
    for (size_t i = 0; i < n; ++i) {
        cm_status_t failed;
        cm__deferred_t *left = cm__deferred_free_list(devs[i]->ordinal, lists[i], &failed);
        cm__core_lock();
        while (left != NULL) { /* for the next capture end, or the close */
            cm__deferred_t *d = left;
            left = d->next;
            d->next = devs[i]->mem.state;
            devs[i]->mem.state = d;
        }
        --devs[i]->pins;
        cm__core_unlock();
    }
    *cm__detail() = reported;
}

cm_status_t cm__memory_release(struct cm__device *dev) {
    cm__core_lock();
    cm__deferred_t *list = dev->mem.state;
    dev->mem.state = NULL;
    cm__core_unlock();
    cm_status_t status = CM_OK;
    if (list != NULL) {
        cm__deferred_t *left = cm__deferred_free_list(dev->ordinal, list, &status);
        size_t count = 0, bytes = 0;
        while (left != NULL) {
            cm__deferred_t *d = left;
            left = d->next;
            ++count;
            bytes += d->bytes;
            cm__deferred_forget(d);
        }
        if (count > 0) {
            cm_error_t *e = cm__detail();
            char why[CM_ERROR_MESSAGE_MAX];
            cm__strlcpy(why, e->message, sizeof why);
            cm__text_t t = {e->message, sizeof e->message, 0};
            cm__text_printf(&t,
                            "%zu buffer%s of device %d whose free was deferred (%zu bytes) not "
                            "freed (%s)", count, count == 1 ? "" : "s", dev->ordinal, bytes, why);
        } else {
            status = CM_OK; /* a sticky failure: the memory went with the context */
            cm_last_error_clear();
        }
    }
    if (status == CM_OK) return cm__staging_release(dev);
    const cm_error_t first = *cm_last_error();
    cm_status_t staging = cm__staging_release(dev);
    if (staging != CM_OK) { /* both: one message */
        char more[CM_ERROR_MESSAGE_MAX];
        cm__strlcpy(more, cm_last_error()->message, sizeof more);
        *cm__detail() = first;
        cm_error_t *e = cm__detail();
        cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
        cm__text_printf(&t, "; %s", more);
    } else {
        *cm__detail() = first;
    }
    return status;
}

void cm__ordinal_holdings(int ordinal, size_t *live_bytes, size_t *live_buffers,
                          size_t *cached_bytes) {
    struct cm__device *devs[CM__PIN_MAX];
    size_t n = cm__pin_pools(ordinal, devs, live_bytes, live_buffers);
    size_t cached = 0;
    /* the pool queries are runtime calls: in a scope of ordinal (the caller's may have failed,
     * as in the out-of-memory report), never on a thread with no context (implicit binding);
     * a scope that cannot be entered leaves the cache unknown (0), as a failed query does */
    cm__scope_t sc;
    const bool in = n > 0 && cm__enter(ordinal, 1, &sc) == CM_OK;
    for (size_t i = 0; in && i < n; ++i) {
        unsigned long long reserved = 0, used = 0;
        if (cm__cuda.mem_pool_get_attribute(devs[i]->pool, cudaMemPoolAttrReservedMemCurrent,
                                             &reserved) == cudaSuccess &&
            cm__cuda.mem_pool_get_attribute(devs[i]->pool, cudaMemPoolAttrUsedMemCurrent,
                                             &used) == cudaSuccess) {
            if (reserved > used) cached += (size_t)(reserved - used);
        } else {
            (void)cm__cuda.get_last_error(); /* not the caller's failure */
        }
    }
    if (in) cm__leave(&sc);
    cm__unpin(devs, n);
    *cached_bytes = cached;
}

size_t cm__trim_ordinal(int ordinal) {
    struct cm__device *devs[CM__PIN_MAX];
    size_t n = cm__pin_pools(ordinal, devs, NULL, NULL);
    size_t released = 0;
    for (size_t i = 0; i < n; ++i) {
        cudaMemPool_t pool = devs[i]->pool;
        unsigned long long before = 0, after = 0;
        if (cm__cuda.mem_pool_get_attribute(pool, cudaMemPoolAttrReservedMemCurrent, &before) !=
            cudaSuccess)
            before = 0;
        if (cm__cuda.mem_pool_trim_to(pool, 0) != cudaSuccess) {
            (void)cm__cuda.get_last_error();
            continue;
        }
        if (cm__cuda.mem_pool_get_attribute(pool, cudaMemPoolAttrReservedMemCurrent, &after) ==
                cudaSuccess &&
            before > after)
            released += (size_t)(before - after);
    }
    cm__unpin(devs, n);
    return released;
}

/* Whether device's context holds a sticky error (cm__charge_to_other); a context that cannot
 * even be entered counts as lost when that failure marked it so. */
static bool cm__context_sticky(int device) {
    cm__scope_t sc;
    if (cm__enter(device, 1, &sc) != CM_OK) return cm__context_guard(device) != CM_OK;
    size_t free_b = 0, total_b = 0;
    const cudaError_t e = cm__cuda.mem_get_info(&free_b, &total_b);
    (void)cm__cuda.get_last_error();
    cm__leave(&sc);
    return cm_cuda_error_is_sticky(e);
}

bool cm__charge_to_other(cudaError_t err, int scope_dev, int other_dev, cm__scope_t *sc) {
    if (scope_dev == other_dev || !cm_cuda_error_is_sticky(err)) return false;
    if (!cm__context_sticky(other_dev) || cm__context_sticky(scope_dev)) return false;
    return cm__enter(other_dev, CM__CTX_NONE, sc) == CM_OK;
}

cm_status_t cm__peer_prepare(struct cm__device *a, struct cm__device *b) {
    if (a->ordinal == b->ordinal) return CM_OK;
    bool cacheable = a->ordinal < 64 && b->ordinal < 64;
    if (cacheable) {
        cm__core_lock();
        bool done = ((a->peer_ready >> b->ordinal) & 1u) && ((b->peer_ready >> a->ordinal) & 1u);
        cm__core_unlock();
        if (done) return CM_OK;
    }
    struct cm__device *pair[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
        struct cm__device *self = pair[i], *peer = pair[1 - i];
        int can = 0;
        cudaError_t err = cm__cuda.device_can_access_peer(&can, self->ordinal, peer->ordinal);
        if (err != cudaSuccess) {
            return cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceCanAccessPeer(%d, %d)",
                                 self->ordinal, peer->ordinal);
        }
        if (!can) continue; /* cudaMemcpyPeer stages through the host */
        cm__scope_t sc;
        CM_TRY(cm__enter(self->ordinal, 1, &sc));
        err = cm__cuda.device_enable_peer_access(peer->ordinal, 0);
        /* recorded inside the scope: charged to self's device, a sticky error only the peer's
         * context holds to the peer (cm__charge_to_other) */
        cm_status_t st = CM_OK;
        cm__scope_t sc_fault;
        if (err == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cm__cuda.get_last_error(); /* not an error here */
        } else if (err != cudaSuccess) {
            const bool other = cm__charge_to_other(err, self->ordinal, peer->ordinal, &sc_fault);
            st = cm__cuda_fail(err, __FILE__, __LINE__,
                               "cudaDeviceEnablePeerAccess(%d) on device %d", peer->ordinal,
                               self->ordinal);
            if (other) cm__leave(&sc_fault);
        }
        /* self may access peer's memory: let it reach the peer's pool allocations as well (in
         * the same scope: a runtime call needs a current context) */
        if (st == CM_OK && peer->pool != NULL) {
            struct cudaMemAccessDesc desc;
            memset(&desc, 0, sizeof desc);
            desc.location.type = cudaMemLocationTypeDevice;
            desc.location.id = self->ordinal;
            desc.flags = cudaMemAccessFlagsProtReadWrite;
            err = cm__cuda.mem_pool_set_access(peer->pool, &desc, 1);
            if (err != cudaSuccess) {
                const bool other =
                    cm__charge_to_other(err, self->ordinal, peer->ordinal, &sc_fault);
                st = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaMemPoolSetAccess(pool of device %d, device %d)",
                                   peer->ordinal, self->ordinal);
                if (other) cm__leave(&sc_fault);
            }
        }
        cm__leave(&sc);
        CM_TRY(st);
    }
    if (cacheable) {
        cm__core_lock();
        a->peer_ready |= UINT64_C(1) << b->ordinal;
        b->peer_ready |= UINT64_C(1) << a->ordinal;
        cm__core_unlock();
    }
    return CM_OK;
}
