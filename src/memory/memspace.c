/*
 * What the memory-space objects of memspace.h share (memspace_internal.h): destroying them
 * (refused while a texture or surface reads the memory), allocating them with the out-of-memory
 * report, formats, and the argument checks of the other files. Their accounting and leak-report
 * lines are in memspace_list.c, which the device object's list (device_memory.c) calls.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memspace_internal.h"

cm_status_t cm__memspace_refuse_destroy(const char *arg, cm__kind_t kind, int ordinal,
                                        const char *who, const char *func) {
    bool surface = strstr(who, "surface ") == who;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "%s, after the work that reads it has completed; then destroy the %s",
             surface ? CM__HINT_DESTROY_SURFACE : CM__HINT_DESTROY_TEXTURE, cm__kind_name(kind));
    return cm__fail(CM_ERROR_BUSY, ordinal, __FILE__, __LINE__, func, hint,
                    "%s (a %s) is read by %s, which would dangle; the %s was left alive", arg,
                    cm__kind_type(kind), who, cm__kind_name(kind));
}

/* ------------------------------------------------------------------ checks */

cm_status_t cm__ms_check_range(const char *arg, const char *type, size_t offset, size_t bytes,
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
                        "has %zu bytes); nothing was done", arg, offset, bytes, type, size);
    }
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "%s range out of bounds: offset %zu + %zu bytes = %zu is past the end of the "
                    "%zu-byte %s; nothing was done", arg, offset, bytes, offset + bytes, size,
                    type);
}

cm_status_t cm__ms_check_queue(const cm__queue_t *q, int ordinal, const char *what,
                               const char *func) {
    if (q == NULL || q->handle == NULL || q->ordinal == ordinal) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint,
             "pass a stream of device %d's device object (cm_stream_acquire() on it), or NULL "
             "for a synchronous call", ordinal);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                    "the stream belongs to device %d but the %s to device %d", q->ordinal, what,
                    ordinal);
}

cm_status_t cm__ms_attribute(int ordinal, enum cudaDeviceAttr attr, const char *name, int *out,
                             const char *func) {
    int v = 0;
    cudaError_t err = cm__cuda.device_get_attribute(&v, attr, ordinal);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceGetAttribute(%s, device %d) in %s",
                             name, ordinal, func);
    }
    *out = v;
    return CM_OK;
}

cm_status_t cm__ms_classify(const void *p, const char *arg, const char *func, cm__ms_mem_t *out,
                            int *device) {
    struct cudaPointerAttributes attr;
    memset(&attr, 0, sizeof attr);
    cudaError_t err = cm__cuda.pointer_get_attributes(&attr, p);
    /* memory CUDA does not know is cudaMemoryTypeUnregistered (CUDA 11 and later; drivers
     * before it said cudaErrorInvalidValue, which a CUDA 13 runtime never runs on): any error is
     * reported, never taken for pageable memory, which would copy device memory as host memory
     * in the wrong direction */
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaPointerGetAttributes(%s) in %s", arg, func);
    if (device != NULL) *device = attr.device;
    switch (attr.type) {
    case cudaMemoryTypeDevice: *out = CM__MS_DEVICE; return CM_OK;
    case cudaMemoryTypeHost: *out = CM__MS_PINNED; return CM_OK;
    case cudaMemoryTypeManaged: *out = CM__MS_MANAGED; return CM_OK;
    case cudaMemoryTypeUnregistered: break;
    }
    *out = CM__MS_PAGEABLE;
    return CM_OK;
}

bool cm__ms_thread_capturing(void) {
    return cm__thread_captures > 0;
}

/* ------------------------------------------------------------------ allocation */

static cudaError_t cm__ms_alloc_call(cm__ms_alloc_t *r) {
    switch (r->kind) {
    case CM__MS_ALLOC_PITCH: return cm__cuda.malloc_pitch(&r->ptr, &r->pitch, r->width_bytes, r->height);
    case CM__MS_ALLOC_ARRAY:
        return cm__cuda.malloc_array(&r->array, &r->desc, r->width, r->height, r->flags);
    case CM__MS_ALLOC_MANAGED: return cm__cuda.malloc_managed(&r->ptr, r->bytes, cudaMemAttachGlobal);
    }
    return cudaErrorInvalidValue;
}

static const char *cm__ms_alloc_name(const cm__ms_alloc_t *r) {
    return r->kind == CM__MS_ALLOC_PITCH   ? "cudaMallocPitch"
           : r->kind == CM__MS_ALLOC_ARRAY ? "cudaMallocArray"
                                           : "cudaMallocManaged";
}

/* The managed part of an out-of-memory report: whether managed memory can exceed the device's. */
static void cm__ms_managed_oom_text(cm_error_t *e, int ordinal, bool concurrent) {
    cm__text_t m = {e->message, sizeof e->message, strlen(e->message)};
    cm__text_t h = {e->hint, sizeof e->hint, strlen(e->hint)};
    if (concurrent) {
        cm__text_printf(&m, "; device %d has concurrentManagedAccess, so managed memory may "
                        "exceed its memory (pages migrate on demand): this failure is the host's "
                        "memory or address space running out, or a limit on them", ordinal);
        cm__text_printf(&h, "; for managed memory check the host's free memory and the "
                        "process's limits (ulimit -v, the container's memory limit)");
    } else {
        cm__text_printf(&m, "; device %d has no concurrentManagedAccess (as on WSL2, Windows and "
                        "GPUs before Pascal), so managed memory cannot oversubscribe it: every "
                        "managed allocation takes device memory at once", ordinal);
        cm__text_printf(&h, "; managed memory cannot exceed this device's free memory here: on "
                        "Linux with a Pascal or newer GPU it can (cudaDevAttrConcurrentManagedAccess "
                        "= 1)");
    }
}

cm_status_t cm__ms_allocate(struct cm__device *dev, cm__ms_alloc_t *r, size_t requested,
                            const char *func) {
    const char *call = cm__ms_alloc_name(r);
    if (r->kind != CM__MS_ALLOC_MANAGED) /* managed memory may exceed the device */
        CM_TRY(cm__oom_refuse_oversize(dev, requested, false, call, func, __FILE__, __LINE__));
    cudaError_t err = cm__ms_alloc_call(r);
    if (err == cudaSuccess) return CM_OK;
    if (err != cudaErrorMemoryAllocation)
        return cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes) in %s", call, requested, func);
    /* out of memory: release what the library's pools cache, and try once more */
    (void)cm__cuda.get_last_error();
    size_t released = cm__trim_ordinal(dev->ordinal);
    err = cm__ms_alloc_call(r);
    if (err == cudaSuccess) return CM_OK;
    char text[CM_ERROR_CALL_MAX];
    snprintf(text, sizeof text, "%s(%zu bytes) in %s", call, requested, func);
    if (err != cudaErrorMemoryAllocation) return cm_record_cuda_error(err, text, __FILE__, __LINE__);
    cm_status_t st = cm__oom_report(dev, requested, released, false, err, text, __FILE__, __LINE__);
    if (r->kind == CM__MS_ALLOC_MANAGED) cm__ms_managed_oom_text(cm__detail(), dev->ordinal, r->concurrent);
    return st;
}

/* ------------------------------------------------------------------ formats */

bool cm__ms_format_valid(cm_format_t f) {
    return (int)f >= 1 && (int)f <= (int)CM_FORMAT_LAST;
}

struct cudaChannelFormatDesc cm__ms_channel_desc(cm_format_t f) {
    struct cudaChannelFormatDesc d;
    memset(&d, 0, sizeof d);
    if (!cm__ms_format_valid(f)) return d;
    unsigned ch = cm_format_channels(f);
    int bits = (int)(cm_format_bytes(f) / ch) * 8;
    int scalar = ((int)f - 1) / 3; /* u8 i8 u16 i16 u32 i32 f16 f32 */
    d.f = scalar >= 6 ? cudaChannelFormatKindFloat
          : (scalar % 2) ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned;
    d.x = bits;
    d.y = ch >= 2 ? bits : 0;
    d.z = ch == 4 ? bits : 0;
    d.w = ch == 4 ? bits : 0;
    return d;
}

cm_status_t cm__ms_check_format(cm_format_t f, const char *func) {
    if (cm__ms_format_valid(f)) return CM_OK;
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "pass one of the cm_format_t values of memspace.h, e.g. CM_FORMAT_F32 or "
                    "CM_FORMAT_U8X4", "format %d is not a cm_format_t (1 .. %d)", (int)f,
                    (int)CM_FORMAT_LAST);
}

/* ------------------------------------------------------------------ destroy */

/* The memory of an object of kind, and the call that frees it (in a scope of its device). */
static cudaError_t cm__ms_free_memory(cm__kind_t kind, void *obj, const char **call) {
    switch (kind) {
    case CM__KIND_PITCHED: {
        struct cm__pitched *p = obj;
        *call = "cudaFree(pitched buffer)";
        return p->ptr != NULL ? cm__cuda.device_free(p->ptr) : cudaSuccess;
    }
    case CM__KIND_ARRAY: {
        struct cm__array *r = obj;
        *call = "cudaFreeArray(array)";
        return r->array != NULL ? cm__cuda.free_array(r->array) : cudaSuccess;
    }
    default: {
        struct cm__managed *m = obj;
        *call = "cudaFree(managed buffer)";
        return m->ptr != NULL ? cm__cuda.device_free(m->ptr) : cudaSuccess;
    }
    }
}

static bool cm__ms_holds_memory(cm__kind_t kind, const void *obj) {
    switch (kind) {
    case CM__KIND_PITCHED: return ((const struct cm__pitched *)obj)->ptr != NULL;
    case CM__KIND_ARRAY: return ((const struct cm__array *)obj)->array != NULL;
    default: return ((const struct cm__managed *)obj)->ptr != NULL;
    }
}

cm_status_t cm__ms_destroy(const void *h, cm__kind_t kind, const char *arg, const char *func) {
    if (h == NULL) return CM_OK;
    void *obj;
    CM_TRY(cm__handle_get(h, kind, arg, func, &obj));
    cm__alloc_t *a = obj;
    const int ordinal = a->dev->ordinal;
    const bool holds = cm__ms_holds_memory(kind, obj);
    /* CUDA refuses cudaFree / cudaFreeArray while this thread captures a graph: refuse before
     * anything is released, instead of ending the handle and losing the memory */
    if (holds && cm__ms_thread_capturing()) {
        return cm__fail(CM_ERROR_BUSY, ordinal, __FILE__, __LINE__, func,
                        "destroy it once the capture has ended",
                        "a %s cannot be freed while this thread captures a graph (CUDA refuses "
                        "the free during a capture); it is still alive", cm__kind_name(kind));
    }
    /* the device's scope is entered before anything is released: when it cannot be, the
     * object stays alive (the destroy may be repeated); a lost context skips it (the memory
     * went with the context, and the free reports the loss) */
    cm__scope_t sc;
    bool entered = false;
    if (holds && cm__context_guard(ordinal) == CM_OK) {
        CM_TRY(cm__enter(ordinal, 1, &sc));
        entered = true;
    }
    char viewer[CM__VIEWER_MAX];
    bool viewed = false;
    cm__core_lock();
    if (kind != CM__KIND_MANAGED && cm__memspace_viewer_locked(h, kind, viewer, sizeof viewer)) {
        viewed = true;
        obj = NULL;
    } else {
        obj = cm__handle_end_locked(h, kind);
        if (obj != NULL) cm__alloc_untrack_locked((cm__alloc_t *)obj);
    }
    cm__core_unlock();
    if (obj == NULL) {
        if (entered) cm__leave(&sc);
        if (viewed) return cm__memspace_refuse_destroy(arg, kind, ordinal, viewer, func);
        return cm__handle_fail(h, kind, arg, func); /* raced */
    }
    cm_status_t status = CM_OK;
    if (holds) {
        const char *call = "";
        cudaError_t err = entered ? cm__ms_free_memory(kind, obj, &call) : cudaSuccess;
        if (!entered) {
            /* the context was lost: report it, as the free would */
            status = cm__context_guard(ordinal);
        } else if (err != cudaSuccess) {
            status = cm__cuda_fail(err, __FILE__, __LINE__, "%s in %s", call, func);
        }
    }
    if (entered) cm__leave(&sc);
    free(obj);
    return status;
}
