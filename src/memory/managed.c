/*
 * Managed (unified) memory (memspace.h): create, destroy, accessors, checked copies, prefetch
 * and advice. Whether a device can use managed memory concurrently with the host (and so
 * prefetch, take device advice and oversubscribe its memory) is its concurrentManagedAccess
 * attribute, read at creation for the buffer's device and at each call for another location.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memspace_internal.h"

/* The hint of a refusal for want of concurrent managed access. */
#define CM__HINT_NO_CONCURRENT                                                               \
    "managed memory still works here, migrating whole allocations when kernels launch and "  \
    "synchronize: leave out prefetch and device advice, or run on Linux with a Pascal or "    \
    "newer GPU (cudaDevAttrConcurrentManagedAccess = 1; WSL2 and Windows report 0)"

static cm_status_t cm__managed_obj(const cm_managed_t *h, const char *arg, const char *func,
                                   struct cm__managed **out) {
    void *o;
    cm_status_t s = cm__handle_get(h, CM__KIND_MANAGED, arg, func, &o);
    *out = o;
    return s;
}

cm_status_t cm_managed_create_at(cm_device_t *dev_h, size_t bytes, cm_managed_t **out,
                                 const char *label, const char *file, int line) {
    const char *func = __func__;
    if (out == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of a cm_managed_t * to receive the handle",
                        "out is NULL");
    }
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    const int ordinal = dev->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    int managed = 0, concurrent = 0;
    CM_TRY(cm__ms_attribute(ordinal, cudaDevAttrManagedMemory, "cudaDevAttrManagedMemory",
                            &managed, func));
    if (!managed) {
        return cm__fail(CM_ERROR_NOT_SUPPORTED, ordinal, __FILE__, __LINE__, func,
                        "use device buffers (cm_buffer_create()) and explicit copies",
                        "device %d (%s) cannot allocate managed memory on this system "
                        "(cudaDevAttrManagedMemory is 0)", ordinal, dev->name);
    }
    CM_TRY(cm__ms_attribute(ordinal, cudaDevAttrConcurrentManagedAccess,
                            "cudaDevAttrConcurrentManagedAccess", &concurrent, func));
    struct cm__managed *m = calloc(1, sizeof *m);
    if (m == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the managed buffer object");
    }
    m->concurrent = concurrent != 0;
    cm_status_t status = CM_OK;
    if (bytes > 0) {
        cm__ms_alloc_t r;
        memset(&r, 0, sizeof r);
        r.kind = CM__MS_ALLOC_MANAGED;
        r.bytes = bytes;
        r.concurrent = m->concurrent;
        cm__scope_t sc;
        status = cm__enter(ordinal, 1, &sc);
        if (status == CM_OK) {
            status = cm__ms_allocate(dev, &r, bytes, func);
            cm__leave(&sc);
        }
        m->ptr = r.ptr;
    }
    if (status == CM_OK) {
        m->a.dev = dev;
        m->a.kind = CM__KIND_MANAGED;
        m->a.bytes = bytes;
        m->a.file = file;
        m->a.line = line;
        cm__alloc_set_label(&m->a, label);
        status = cm__alloc_track(&m->a, dev->handle, ordinal, func);
        if (status != CM_OK && m->ptr != NULL) {
            cm__scope_t fs;
            if (cm__enter(ordinal, 1, &fs) == CM_OK) {
                (void)cm__cuda.device_free(m->ptr);
                cm__leave(&fs);
            }
        }
    }
    if (status != CM_OK) {
        free(m);
        return status;
    }
    *out = (cm_managed_t *)m->a.handle;
    return CM_OK;
}

cm_status_t cm_managed_destroy(cm_managed_t *m) {
    return cm__ms_destroy(m, CM__KIND_MANAGED, "m", __func__);
}

cm_status_t cm_managed_data(const cm_managed_t *h, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    struct cm__managed *m;
    CM_TRY(cm__managed_obj(h, "m", __func__, &m));
    *ptr = m->ptr;
    return CM_OK;
}

cm_status_t cm_managed_info(const cm_managed_t *h, cm_managed_info_t *info) {
    CM__REQUIRE(info != NULL, "pass the address of a cm_managed_info_t", "info is NULL");
    struct cm__managed *m;
    CM_TRY(cm__managed_obj(h, "m", __func__, &m));
    cm_managed_info_t r;
    memset(&r, 0, sizeof r);
    r.bytes = m->a.bytes;
    r.data = m->ptr;
    r.device = (cm_device_t *)m->a.dev->handle;
    r.ordinal = m->a.dev->ordinal;
    r.concurrent_access = m->concurrent;
    if (m->a.has_label) cm__strlcpy(r.label, m->a.label, sizeof r.label);
    *info = r;
    return CM_OK;
}

/* ------------------------------------------------------------------ locations */

/* CM_LOCATION_HOST or a visible device ordinal, as CUDA's location. */
static cm_status_t cm__location(int location, const char *func, struct cudaMemLocation *out) {
    memset(out, 0, sizeof *out);
    if (location == CM_LOCATION_HOST) {
        out->type = cudaMemLocationTypeHost;
        out->id = 0;
        return CM_OK;
    }
    int n = 0;
    CM_TRY(cm_device_count(&n));
    if (location < 0 || location >= n) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass a device ordinal (0 .. count - 1) or CM_LOCATION_HOST",
                        "location %d is neither CM_LOCATION_HOST (%d) nor a device: %d device%s "
                        "visible", location, CM_LOCATION_HOST, n, n == 1 ? " is" : "s are");
    }
    out->type = cudaMemLocationTypeDevice;
    out->id = location;
    return CM_OK;
}

/* A device location needs concurrentManagedAccess on that device. */
static cm_status_t cm__location_concurrent(int location, const char *what, const char *func) {
    if (location == CM_LOCATION_HOST) return CM_OK;
    int concurrent = 0;
    CM_TRY(cm__ms_attribute(location, cudaDevAttrConcurrentManagedAccess,
                            "cudaDevAttrConcurrentManagedAccess", &concurrent, func));
    if (concurrent) return CM_OK;
    return cm__fail(CM_ERROR_NOT_SUPPORTED, location, __FILE__, __LINE__, func,
                    CM__HINT_NO_CONCURRENT,
                    "%s device %d needs concurrent managed access, and device %d has none "
                    "(cudaDevAttrConcurrentManagedAccess is 0); nothing was done", what,
                    location, location);
}

/* ------------------------------------------------------------------ prefetch, advise */

cm_status_t cm__managed_prefetch_q(const cm__queue_t *q, cm_managed_t *h, size_t offset,
                                   size_t bytes, int location, const char *func) {
    const bool sync = q->handle == NULL;
    struct cm__managed *m;
    CM_TRY(cm__managed_obj(h, "m", func, &m));
    const int ordinal = m->a.dev->ordinal;
    CM_TRY(cm__ms_check_range("m", "managed buffer", offset, bytes, m->a.bytes, func));
    struct cudaMemLocation loc;
    CM_TRY(cm__location(location, func, &loc));
    if (!sync) CM_TRY(cm__ms_check_queue(q, ordinal, "managed buffer", func));
    if (!m->concurrent) {
        return cm__fail(CM_ERROR_NOT_SUPPORTED, ordinal, __FILE__, __LINE__, func,
                        CM__HINT_NO_CONCURRENT,
                        "prefetching needs concurrent managed access on the buffer's device %d, "
                        "which has none (cudaDevAttrConcurrentManagedAccess is 0); nothing was "
                        "queued", ordinal);
    }
    CM_TRY(cm__location_concurrent(location, "prefetching to", func));
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cudaStream_t stream = sync ? 0 : q->cs;
    const char *call = "cudaMemPrefetchAsync";
    cudaError_t err = cm__cuda.mem_prefetch_async((const unsigned char *)m->ptr + offset, bytes,
                                                  loc, 0, stream);
    if (err == cudaSuccess && sync) {
        call = "cudaStreamSynchronize(0) after the prefetch";
        err = cm__cuda.stream_synchronize(0);
    }
    cm_status_t status = CM_OK;
    if (err != cudaSuccess) {
        char where[32];
        if (location == CM_LOCATION_HOST) snprintf(where, sizeof where, "the host");
        else snprintf(where, sizeof where, "device %d", location);
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes to %s) in %s", call, bytes,
                               where, func);
    }
    cm__leave(&sc);
    return status;
}

static const char *cm__advice_call_name(cm_advice_t a) {
    switch (a) {
    case CM_ADVISE_READ_MOSTLY: return "cudaMemAdviseSetReadMostly";
    case CM_ADVISE_UNSET_READ_MOSTLY: return "cudaMemAdviseUnsetReadMostly";
    case CM_ADVISE_PREFERRED_LOCATION: return "cudaMemAdviseSetPreferredLocation";
    case CM_ADVISE_UNSET_PREFERRED_LOCATION: return "cudaMemAdviseUnsetPreferredLocation";
    case CM_ADVISE_ACCESSED_BY: return "cudaMemAdviseSetAccessedBy";
    case CM_ADVISE_UNSET_ACCESSED_BY: return "cudaMemAdviseUnsetAccessedBy";
    }
    return "?";
}

cm_status_t cm_managed_advise(cm_managed_t *h, size_t offset, size_t bytes, cm_advice_t advice,
                              int location) {
    const char *func = __func__;
    struct cm__managed *m;
    CM_TRY(cm__managed_obj(h, "m", func, &m));
    const int ordinal = m->a.dev->ordinal;
    CM_TRY(cm__ms_check_range("m", "managed buffer", offset, bytes, m->a.bytes, func));
    enum cudaMemoryAdvise ca;
    bool uses_location = false;
    switch (advice) {
    case CM_ADVISE_READ_MOSTLY: ca = cudaMemAdviseSetReadMostly; break;
    case CM_ADVISE_UNSET_READ_MOSTLY: ca = cudaMemAdviseUnsetReadMostly; break;
    case CM_ADVISE_PREFERRED_LOCATION: ca = cudaMemAdviseSetPreferredLocation; uses_location = true; break;
    case CM_ADVISE_UNSET_PREFERRED_LOCATION: ca = cudaMemAdviseUnsetPreferredLocation; break;
    case CM_ADVISE_ACCESSED_BY: ca = cudaMemAdviseSetAccessedBy; uses_location = true; break;
    case CM_ADVISE_UNSET_ACCESSED_BY: ca = cudaMemAdviseUnsetAccessedBy; uses_location = true; break;
    default:
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "pass a cm_advice_t: CM_ADVISE_READ_MOSTLY, CM_ADVISE_PREFERRED_LOCATION, "
                        "CM_ADVISE_ACCESSED_BY or their UNSET forms",
                        "advice %d is not a cm_advice_t", (int)advice);
    }
    struct cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = cudaMemLocationTypeHost; /* ignored by the hints without a location */
    if (uses_location) {
        CM_TRY(cm__location(location, func, &loc));
        if (advice != CM_ADVISE_UNSET_ACCESSED_BY)
            CM_TRY(cm__location_concurrent(location, advice == CM_ADVISE_PREFERRED_LOCATION
                                                         ? "a preferred location on"
                                                         : "access by",
                                           func));
    }
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cudaError_t err = cm__cuda.mem_advise((const unsigned char *)m->ptr + offset, bytes, ca, loc);
    cm_status_t status = CM_OK;
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemAdvise(%zu bytes, %s, location %d)",
                               bytes, cm__advice_call_name(advice), location);
    cm__leave(&sc);
    return status;
}

/* ------------------------------------------------------------------ copies */

cm_status_t cm__managed_copy_q(const cm__queue_t *q, const cm_managed_t *h, size_t offset,
                               void *host, size_t bytes, bool to_managed, const char *func) {
    const bool sync = q->handle == NULL;
    const char *arg = to_managed ? "dst" : "src";
    struct cm__managed *m;
    CM_TRY(cm__managed_obj(h, arg, func, &m));
    const int ordinal = m->a.dev->ordinal;
    if (host == NULL && bytes > 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "pass memory of at least that many bytes", "%s is NULL but bytes is %zu",
                        to_managed ? "src" : "dst", bytes);
    }
    CM_TRY(cm__ms_check_range(arg, "managed buffer", offset, bytes, m->a.bytes, func));
    if (!sync) CM_TRY(cm__ms_check_queue(q, ordinal, "managed buffer", func));
    if (bytes == 0) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    unsigned char *mp = (unsigned char *)m->ptr + offset;
    cudaStream_t stream = sync ? 0 : q->cs;
    const char *call = "cudaMemcpyAsync";
    cudaError_t err = to_managed ? cm__cuda.memcpy_async(mp, host, bytes, cudaMemcpyDefault, stream)
                                 : cm__cuda.memcpy_async(host, mp, bytes, cudaMemcpyDefault, stream);
    if (err == cudaSuccess && sync) {
        call = "cudaStreamSynchronize(0) after the copy";
        err = cm__cuda.stream_synchronize(0);
    }
    cm_status_t status = CM_OK;
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes, %s managed memory) in %s",
                               call, bytes, to_managed ? "into" : "out of", func);
    cm__leave(&sc);
    return status;
}
