/*
 * 2-D pitched buffers and CUDA arrays (memspace.h): create, destroy, info, and the checked 2-D
 * copies between host memory, pitched buffers and arrays (the body of cm_copy_2d, whose entry
 * point resolves its stream in the exec layer).
 *
 * Every check of a copy runs before any CUDA call that writes, so a refused copy wrote nothing.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memspace_internal.h"

/* ------------------------------------------------------------------ shared by the creates */

static cm_status_t cm__check_out(const void *out, const char *type, const char *func) {
    if (out != NULL) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "pass the address of a %s * to receive the handle", type);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint, "out is NULL");
}

static cm_status_t cm__check_extent(size_t width, size_t height, const char *what,
                                    const char *func) {
    if (width > 0 && height > 0) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "a %s has at least one element per row and one row", what);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "a %s of %zu x %zu elements is empty", what, width, height);
}

/* Fill the allocation part of a new object and give it its handle in its device's list. */
static cm_status_t cm__ms_track(cm__alloc_t *a, struct cm__device *dev, cm__kind_t kind,
                                size_t bytes, const char *label, const char *file, int line,
                                const char *func) {
    a->dev = dev;
    a->kind = kind;
    a->bytes = bytes;
    a->file = file;
    a->line = line;
    cm__alloc_set_label(a, label);
    return cm__alloc_track(a, dev->handle, dev->ordinal, func);
}

/* ------------------------------------------------------------------ pitched buffers */

cm_status_t cm_pitched_create_at(cm_device_t *dev_h, size_t width, size_t height,
                                 cm_format_t format, cm_pitched_t **out, const char *label,
                                 const char *file, int line) {
    const char *func = __func__;
    CM_TRY(cm__check_out(out, "cm_pitched_t", func));
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    CM_TRY(cm__ms_check_format(format, func));
    CM_TRY(cm__check_extent(width, height, "pitched buffer", func));
    const size_t elem = cm_format_bytes(format);
    if (width > SIZE_MAX / elem) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, dev->ordinal, __FILE__, __LINE__, func,
                        "ask for a width that fits the device's memory",
                        "a row of %zu elements of %zu bytes overflows size_t", width, elem);
    }
    CM_TRY(cm__context_guard(dev->ordinal));
    struct cm__pitched *p = calloc(1, sizeof *p);
    if (p == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, dev->ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the pitched buffer object");
    }
    cm__ms_alloc_t r;
    memset(&r, 0, sizeof r);
    r.kind = CM__MS_ALLOC_PITCH;
    r.width_bytes = width * elem;
    r.height = height;
    size_t requested = height <= SIZE_MAX / r.width_bytes ? r.width_bytes * height : SIZE_MAX;
    cm__scope_t sc;
    cm_status_t status = cm__enter(dev->ordinal, 1, &sc);
    if (status == CM_OK) {
        status = cm__ms_allocate(dev, &r, requested, func);
        cm__leave(&sc);
    }
    if (status == CM_OK && (r.pitch < r.width_bytes || r.height > SIZE_MAX / r.pitch)) {
        /* the driver's answer must describe the rows it was asked for */
        status = cm__fail(CM_ERROR_CUDA, dev->ordinal, __FILE__, __LINE__, func,
                          "report this as a driver issue",
                          "cudaMallocPitch returned pitch %zu for rows of %zu bytes", r.pitch,
                          r.width_bytes);
        cm__scope_t fs;
        if (cm__enter(dev->ordinal, 1, &fs) == CM_OK) {
            (void)cm__cuda.device_free(r.ptr);
            cm__leave(&fs);
        }
    }
    if (status != CM_OK) {
        free(p);
        return status;
    }
    p->ptr = r.ptr;
    p->width = width;
    p->height = height;
    p->pitch = r.pitch;
    p->format = format;
    status = cm__ms_track(&p->a, dev, CM__KIND_PITCHED, r.pitch * height, label, file, line, func);
    if (status != CM_OK) {
        cm__scope_t fs;
        if (cm__enter(dev->ordinal, 1, &fs) == CM_OK) {
            (void)cm__cuda.device_free(p->ptr);
            cm__leave(&fs);
        }
        free(p);
        return status;
    }
    *out = (cm_pitched_t *)p->a.handle;
    return CM_OK;
}

cm_status_t cm_pitched_destroy(cm_pitched_t *img) {
    return cm__ms_destroy(img, CM__KIND_PITCHED, "img", __func__);
}

cm_status_t cm_pitched_info(const cm_pitched_t *img, cm_pitched_info_t *info) {
    CM__REQUIRE(info != NULL, "pass the address of a cm_pitched_info_t", "info is NULL");
    void *o;
    CM_TRY(cm__handle_get(img, CM__KIND_PITCHED, "img", __func__, &o));
    const struct cm__pitched *p = o;
    cm_pitched_info_t r;
    memset(&r, 0, sizeof r);
    r.width = p->width;
    r.height = p->height;
    r.format = p->format;
    r.element_bytes = cm_format_bytes(p->format);
    r.row_bytes = p->width * r.element_bytes;
    r.pitch = p->pitch;
    r.bytes = p->a.bytes;
    r.device_ptr = p->ptr;
    r.device = (cm_device_t *)p->a.dev->handle;
    r.ordinal = p->a.dev->ordinal;
    if (p->a.has_label) cm__strlcpy(r.label, p->a.label, sizeof r.label);
    *info = r;
    return CM_OK;
}

/* ------------------------------------------------------------------ arrays */

cm_status_t cm_array_create_at(cm_device_t *dev_h, size_t width, size_t height, cm_format_t format,
                               unsigned flags, cm_array_t **out, const char *label,
                               const char *file, int line) {
    const char *func = __func__;
    CM_TRY(cm__check_out(out, "cm_array_t", func));
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    CM_TRY(cm__ms_check_format(format, func));
    if ((flags & ~(unsigned)CM_ARRAY_SURFACE_LOAD_STORE) != 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, dev->ordinal, __FILE__, __LINE__, func,
                        "pass 0 or CM_ARRAY_SURFACE_LOAD_STORE",
                        "flags 0x%x has unknown bits 0x%x", flags,
                        flags & ~(unsigned)CM_ARRAY_SURFACE_LOAD_STORE);
    }
    CM_TRY(cm__check_extent(width, height, "CUDA array", func));
    const int ordinal = dev->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    /* the device's 2-D limits: CUDA's own refusal says only "invalid value" */
    const bool surface = (flags & CM_ARRAY_SURFACE_LOAD_STORE) != 0;
    int max_w = 0, max_h = 0;
    CM_TRY(cm__ms_attribute(ordinal, surface ? cudaDevAttrMaxSurface2DWidth
                                             : cudaDevAttrMaxTexture2DWidth,
                            surface ? "cudaDevAttrMaxSurface2DWidth" : "cudaDevAttrMaxTexture2DWidth",
                            &max_w, func));
    CM_TRY(cm__ms_attribute(ordinal, surface ? cudaDevAttrMaxSurface2DHeight
                                             : cudaDevAttrMaxTexture2DHeight,
                            surface ? "cudaDevAttrMaxSurface2DHeight"
                                    : "cudaDevAttrMaxTexture2DHeight",
                            &max_h, func));
    if (width > (size_t)max_w || height > (size_t)max_h) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "split the image into tiles of at most %d x %d elements, or "
                 "keep it in a pitched buffer (cm_pitched_create())", max_w, max_h);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "a CUDA array of %zu x %zu elements exceeds device %d's 2-D %s limit of "
                        "%d x %d", width, height, ordinal, surface ? "surface" : "texture",
                        max_w, max_h);
    }
    const size_t elem = cm_format_bytes(format);
    struct cm__array *a = calloc(1, sizeof *a);
    if (a == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the array object");
    }
    cm__ms_alloc_t r;
    memset(&r, 0, sizeof r);
    r.kind = CM__MS_ALLOC_ARRAY;
    r.desc = cm__ms_channel_desc(format);
    r.width = width;
    r.height = height;
    r.flags = surface ? cudaArraySurfaceLoadStore : cudaArrayDefault;
    const size_t bytes = width * height * elem; /* at most 2^17 x 2^16 x 16 on any GPU */
    cm__scope_t sc;
    cm_status_t status = cm__enter(ordinal, 1, &sc);
    if (status == CM_OK) {
        status = cm__ms_allocate(dev, &r, bytes, func);
        cm__leave(&sc);
    }
    if (status != CM_OK) {
        free(a);
        return status;
    }
    a->array = r.array;
    a->width = width;
    a->height = height;
    a->format = format;
    a->flags = flags;
    status = cm__ms_track(&a->a, dev, CM__KIND_ARRAY, bytes, label, file, line, func);
    if (status != CM_OK) {
        cm__scope_t fs;
        if (cm__enter(ordinal, 1, &fs) == CM_OK) {
            (void)cm__cuda.free_array(a->array);
            cm__leave(&fs);
        }
        free(a);
        return status;
    }
    *out = (cm_array_t *)a->a.handle;
    return CM_OK;
}

cm_status_t cm_array_destroy(cm_array_t *arr) {
    return cm__ms_destroy(arr, CM__KIND_ARRAY, "arr", __func__);
}

cm_status_t cm_array_info(const cm_array_t *arr, cm_array_info_t *info) {
    CM__REQUIRE(info != NULL, "pass the address of a cm_array_info_t", "info is NULL");
    void *o;
    CM_TRY(cm__handle_get(arr, CM__KIND_ARRAY, "arr", __func__, &o));
    const struct cm__array *a = o;
    cm_array_info_t r;
    memset(&r, 0, sizeof r);
    r.width = a->width;
    r.height = a->height;
    r.format = a->format;
    r.element_bytes = cm_format_bytes(a->format);
    r.flags = a->flags;
    r.cuda_array = (void *)a->array;
    r.device = (cm_device_t *)a->a.dev->handle;
    r.ordinal = a->a.dev->ordinal;
    if (a->a.has_label) cm__strlcpy(r.label, a->a.label, sizeof r.label);
    *info = r;
    return CM_OK;
}

/* ------------------------------------------------------------------ 2-D copies */

/* One side of a copy, resolved and checked. */
typedef struct cm__side {
    const char *name;            /* "dst" or "src" */
    cm_place_kind_t kind;
    const struct cm__pitched *p; /* CM_PLACE_PITCHED */
    const struct cm__array *r;   /* CM_PLACE_ARRAY */
    const void *host;            /* CM_PLACE_HOST */
    size_t host_pitch;
    size_t elem;                 /* element bytes (handle sides) */
    size_t x, y, width, height;  /* handle sides: the handle's size in width, height */
    int ordinal;                 /* handle sides */
    cm_format_t format;
} cm__side_t;

static cm_status_t cm__side_resolve(const cm_place_t *pl, const char *name, const char *func,
                                    cm__side_t *s) {
    memset(s, 0, sizeof *s);
    s->name = name;
    s->kind = pl->kind;
    s->x = pl->x;
    s->y = pl->y;
    char arg[32];
    void *o;
    switch (pl->kind) {
    case CM_PLACE_HOST:
        s->host = pl->host;
        s->host_pitch = pl->host_pitch;
        return CM_OK;
    case CM_PLACE_PITCHED:
        snprintf(arg, sizeof arg, "%s.pitched", name);
        CM_TRY(cm__handle_get(pl->pitched, CM__KIND_PITCHED, arg, func, &o));
        s->p = o;
        s->width = s->p->width;
        s->height = s->p->height;
        s->format = s->p->format;
        s->ordinal = s->p->a.dev->ordinal;
        break;
    case CM_PLACE_ARRAY:
        snprintf(arg, sizeof arg, "%s.array", name);
        CM_TRY(cm__handle_get(pl->array, CM__KIND_ARRAY, arg, func, &o));
        s->r = o;
        s->width = s->r->width;
        s->height = s->r->height;
        s->format = s->r->format;
        s->ordinal = s->r->a.dev->ordinal;
        break;
    default:
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "build the place with cm_place_host(), cm_place_pitched() or "
                        "cm_place_array()",
                        "%s.kind is %d: not a place (CM_PLACE_HOST, CM_PLACE_PITCHED or "
                        "CM_PLACE_ARRAY)", name, (int)pl->kind);
    }
    s->elem = cm_format_bytes(s->format);
    return CM_OK;
}

/* The rectangle lies within a handle side: x + width <= its width, y + height <= its height. */
static cm_status_t cm__side_bounds(const cm__side_t *s, size_t width, size_t height,
                                   const char *func) {
    if (s->kind == CM_PLACE_HOST) return CM_OK;
    const char *what = s->kind == CM_PLACE_PITCHED ? "pitched buffer" : "CUDA array";
    bool cols = s->x <= s->width && width <= s->width - s->x;
    bool rows = s->y <= s->height && height <= s->height - s->y;
    if (cols && rows) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "the %s has %zu x %zu elements: from (%zu, %zu) at most %zu x %zu "
             "fit; copy a smaller rectangle or move its corner", what, s->width, s->height,
             s->x, s->y, s->x <= s->width ? s->width - s->x : 0,
             s->y <= s->height ? s->height - s->y : 0);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, s->ordinal, __FILE__, __LINE__, func, hint,
                    "%s rectangle out of bounds: %zu x %zu elements at column %zu, row %zu %s "
                    "the %s's %zu x %zu; nothing was copied", s->name, width, height, s->x, s->y,
                    !cols && !rows ? "run past both the width and the height of"
                    : !cols        ? "run past the width of"
                                   : "run past the height of",
                    what, s->width, s->height);
}

/* A host side: a pointer unless the rectangle is empty, and a pitch of at least a row. */
static cm_status_t cm__side_host(cm__side_t *s, size_t row_bytes, bool empty, const char *func) {
    if (s->kind != CM_PLACE_HOST) return CM_OK;
    if (s->host == NULL && !empty) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass host memory that holds the rectangle (cm_place_host(ptr, pitch))",
                        "%s.host is NULL", s->name);
    }
    if (s->host_pitch == 0) s->host_pitch = row_bytes;
    if (s->host_pitch < row_bytes) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "the pitch is the distance between row starts in bytes: at "
                 "least the row's %zu bytes (0 means rows packed)", row_bytes);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s.host_pitch %zu is smaller than a row of the rectangle (%zu bytes): "
                        "rows would overlap; nothing was copied", s->name, s->host_pitch,
                        row_bytes);
    }
    return CM_OK;
}

/* Device address of a pitched side's corner. */
static unsigned char *cm__pitched_at(const cm__side_t *s) {
    return (unsigned char *)s->p->ptr + s->y * s->p->pitch + s->x * s->elem;
}

cm_status_t cm__copy_2d_q(const cm__queue_t *q, const cm_place_t *dst_pl, const cm_place_t *src_pl,
                          size_t width, size_t height, const char *func) {
    const bool sync = q->handle == NULL;
    cm__side_t d, s;
    CM_TRY(cm__side_resolve(dst_pl, "dst", func, &d));
    CM_TRY(cm__side_resolve(src_pl, "src", func, &s));
    if (d.kind == CM_PLACE_HOST && s.kind == CM_PLACE_HOST) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        CM__HINT_HOST_TO_HOST,
                        "both dst and src are host memory: a 2-D copy goes to or from a pitched "
                        "buffer or an array");
    }
    if (d.kind != CM_PLACE_HOST && s.kind != CM_PLACE_HOST) {
        if (d.elem != s.elem) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, d.ordinal, __FILE__, __LINE__, func,
                            "copy between memory of elements of one size (formats may differ in "
                            "type but not in size)",
                            "dst has %zu-byte elements (%s) but src %zu-byte ones (%s): a width "
                            "in elements is ambiguous; nothing was copied", d.elem,
                            cm_format_name(d.format), s.elem, cm_format_name(s.format));
        }
        if (d.ordinal != s.ordinal) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, d.ordinal, __FILE__, __LINE__, func,
                            "copy through host memory, or create both on one device",
                            "dst is on device %d but src on device %d: a 2-D copy stays within "
                            "one device; nothing was copied", d.ordinal, s.ordinal);
        }
    }
    const cm__side_t *dev_side = d.kind != CM_PLACE_HOST ? &d : &s;
    const size_t elem = dev_side->elem;
    const int ordinal = dev_side->ordinal;
    if (width > SIZE_MAX / elem) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "copy a narrower rectangle", "a row of %zu elements of %zu bytes "
                        "overflows size_t", width, elem);
    }
    const size_t row_bytes = width * elem;
    const bool empty = width == 0 || height == 0;
    CM_TRY(cm__side_bounds(&d, width, height, func));
    CM_TRY(cm__side_bounds(&s, width, height, func));
    CM_TRY(cm__side_host(&d, row_bytes, empty, func));
    CM_TRY(cm__side_host(&s, row_bytes, empty, func));
    if (d.kind == CM_PLACE_ARRAY && s.kind == CM_PLACE_ARRAY) {
        return cm__fail(CM_ERROR_NOT_SUPPORTED, ordinal, __FILE__, __LINE__, func,
                        CM__HINT_ARRAY_TO_ARRAY,
                        "2-D copies from an array to an array are not supported; nothing was "
                        "copied");
    }
    if (!sync) CM_TRY(cm__ms_check_queue(q, ordinal, dev_side->kind == CM_PLACE_PITCHED
                                                      ? "pitched buffer" : "array", func));
    if (empty) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    /* the host side: not device memory (a wrong direction); pageable or pinned or managed */
    cm__side_t *host = d.kind == CM_PLACE_HOST ? &d : s.kind == CM_PLACE_HOST ? &s : NULL;
    cm__ms_mem_t hk = CM__MS_PAGEABLE;
    if (host != NULL) {
        status = cm__ms_classify(host->host, host == &d ? "dst.host" : "src.host", func, &hk,
                                 NULL);
        if (status == CM_OK && hk == CM__MS_DEVICE) {
            status = cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                              "a host place holds host memory; to copy device memory of your "
                              "own, wrap it in a pitched buffer you create instead",
                              "%s.host (%p) is device memory, not host memory: wrong direction; "
                              "nothing was copied", host->name, host->host);
        }
        if (status != CM_OK) goto out;
    }
    enum cudaMemcpyKind kind = host == NULL            ? cudaMemcpyDeviceToDevice
                               : hk == CM__MS_MANAGED  ? cudaMemcpyDefault
                               : host == &d            ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyHostToDevice;
    cudaStream_t stream = sync ? 0 : q->cs;
    cudaError_t err;
    const char *call;
    /* a pageable destination is complete on return, except in a capture (cm__copy_capturing) */
    bool capturing = false;
    if (host == &d && hk == CM__MS_PAGEABLE) {
        status = cm__copy_capturing(sync, stream, func, &capturing);
        if (status != CM_OK) goto out;
    }
    const bool wait_dst = host == &d && hk == CM__MS_PAGEABLE && !sync && !capturing;
    if (d.kind == CM_PLACE_ARRAY) {
        call = "cudaMemcpy2DToArrayAsync";
        const void *from = s.kind == CM_PLACE_HOST ? s.host : cm__pitched_at(&s);
        size_t from_pitch = s.kind == CM_PLACE_HOST ? s.host_pitch : s.p->pitch;
        err = cm__cuda.memcpy_2d_to_array_async(d.r->array, d.x * elem, d.y, from, from_pitch,
                                                row_bytes, height, kind, stream);
    } else if (s.kind == CM_PLACE_ARRAY) {
        call = "cudaMemcpy2DFromArrayAsync";
        void *to = d.kind == CM_PLACE_HOST ? (void *)(uintptr_t)d.host : cm__pitched_at(&d);
        size_t to_pitch = d.kind == CM_PLACE_HOST ? d.host_pitch : d.p->pitch;
        err = cm__cuda.memcpy_2d_from_array_async(to, to_pitch, s.r->array, s.x * elem, s.y,
                                                  row_bytes, height, kind, stream);
    } else {
        call = "cudaMemcpy2DAsync";
        void *to = d.kind == CM_PLACE_HOST ? (void *)(uintptr_t)d.host : cm__pitched_at(&d);
        size_t to_pitch = d.kind == CM_PLACE_HOST ? d.host_pitch : d.p->pitch;
        const void *from = s.kind == CM_PLACE_HOST ? s.host : cm__pitched_at(&s);
        size_t from_pitch = s.kind == CM_PLACE_HOST ? s.host_pitch : s.p->pitch;
        err = cm__cuda.memcpy_2d_async(to, to_pitch, from, from_pitch, row_bytes, height, kind,
                                       stream);
    }
    if (err == cudaSuccess && (sync || wait_dst)) {
        /* synchronous, or a pageable destination promised complete on return */
        call = sync ? "cudaStreamSynchronize(0) after the 2-D copy"
                    : "cudaStreamSynchronize(stream) after the 2-D copy";
        err = cm__cuda.stream_synchronize(stream);
    }
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu x %zu elements of %zu bytes) in %s",
                               call, width, height, elem, func);
out:
    cm__leave(&sc);
    return status;
}
