/*
 * Private parts of the memory-space objects (memspace.h): pitched buffers, CUDA arrays,
 * texture and surface objects, managed memory and symbol copies. Not installed.
 *
 * Every object is a handle of the core's table (core/handle.h) whose struct begins with the
 * memory module's cm__alloc_t (memory_internal.h), so it lives in its device object's list of
 * live allocations like a buffer: counted there (dev->n_spaces, dev->space_bytes), listed by
 * cm_device_leak_report() (cm__memspace_describe) and refusing cm_device_close() while alive.
 *
 * Textures and surfaces ("views") read memory by address. A view keeps the handle of the
 * memory it reads (a cm_buffer_t, cm_pitched_t or cm_array_t) and is counted in the device's
 * dev->n_views; destroying memory looks, in the same cm__core_lock() section that would end its
 * handle, for a live view of it in the device's list (cm__memspace_viewer_locked) and refuses
 * with CM_ERROR_BUSY naming the view. The look-up costs nothing while the device has no view.
 *
 * Stream-ordered entry points (copies, prefetch) resolve their library stream in the exec layer
 * (src/exec/memspace_ops.c) and call the cm__*_q bodies here with a cm__queue_t.
 */
#ifndef CUDAMODEL_SRC_MEMSPACE_INTERNAL_H
#define CUDAMODEL_SRC_MEMSPACE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <cudamodel/memspace.h>

#include "memory_internal.h"

/* ------------------------------------------------------------------ objects */

struct cm__pitched {
    cm__alloc_t a;              /* first member; a.bytes = pitch x height */
    void *ptr;
    size_t width, height, pitch;
    cm_format_t format;
};

struct cm__array {
    cm__alloc_t a;              /* first member; a.bytes = width x height x element bytes */
    cudaArray_t array;
    size_t width, height;
    cm_format_t format;
    unsigned flags;             /* cm_array_flags_t */
};

struct cm__managed {
    cm__alloc_t a;              /* first member */
    void *ptr;                  /* NULL for an empty buffer */
    bool concurrent;            /* the device's concurrentManagedAccess at creation */
};

/* A texture or surface object (a.kind CM__KIND_TEXTURE or CM__KIND_SURFACE; a.bytes 0). */
struct cm__texobj {
    cm__alloc_t a;              /* first member */
    unsigned long long object;  /* cudaTextureObject_t / cudaSurfaceObject_t */
    const void *memory;         /* the handle of the memory it reads */
    cm__kind_t memory_kind;     /* CM__KIND_BUFFER, CM__KIND_PITCHED or CM__KIND_ARRAY */
    uint64_t memory_serial;     /* that memory's number in the leak report */
    cm_format_t format;
    size_t width, height;       /* elements (height 1 for a 1-D texture) */
    cm_texture_desc_t desc;     /* textures */
};

/** A checked handle of a memory-space kind (cm__handle_get with the struct type). */
#define CM__MS_GET(type, h, kind, arg, func, out)                                            \
    cm__ms_get_((h), (kind), (arg), (func), (void **)(out))
static inline cm_status_t cm__ms_get_(const void *h, cm__kind_t kind, const char *arg,
                                      const char *func, void **out) {
    return cm__handle_get(h, kind, arg, func, out);
}

/** Whether a kind is one of memspace.h's (counted in dev->n_spaces). */
static inline bool cm__memspace_kind(cm__kind_t k) {
    return k == CM__KIND_PITCHED || k == CM__KIND_ARRAY || k == CM__KIND_MANAGED ||
           k == CM__KIND_TEXTURE || k == CM__KIND_SURFACE;
}

/* ------------------------------------------------------------------ accounting (core lock held) */

/** Add (+1) or remove (-1) a memory-space allocation in its device's counters. */
void cm__memspace_count_locked(struct cm__device *dev, const cm__alloc_t *a, int sign);

/** The leak-report line of a memory-space allocation (cm__describe_alloc's for these kinds). */
void cm__memspace_describe(const cm__alloc_t *a, cm__text_t *t);

/**
 * With cm__core_lock() held: whether a live texture or surface reads the memory of handle h
 * (of kind), and if so a description of the first one into who ("texture over ... created at
 * a.c:12"). False at once when h is not live or its device has no view.
 */
#define CM__VIEWER_MAX 256
bool cm__memspace_viewer_locked(const void *h, cm__kind_t kind, char *who, size_t size);

/** Record the refusal of destroying memory that a view reads (CM_ERROR_BUSY under func). */
cm_status_t cm__memspace_refuse_destroy(const char *arg, cm__kind_t kind, int ordinal,
                                        const char *who, const char *func);

/* ------------------------------------------------------------------ checks shared by the files */

/** offset + bytes <= size without overflow; the message names the side, both sizes and type. */
cm_status_t cm__ms_check_range(const char *arg, const char *type, size_t offset, size_t bytes,
                               size_t size, const char *func);

/** A stream of another device than the memory's `what` (ordinal) is refused, both named. */
cm_status_t cm__ms_check_queue(const cm__queue_t *q, int ordinal, const char *what,
                               const char *func);

/** A device attribute of ordinal into *out; a failure is recorded naming attribute and func. */
cm_status_t cm__ms_attribute(int ordinal, enum cudaDeviceAttr attr, const char *name, int *out,
                             const char *func);

/** How memory behind a pointer given as host memory is backed (the device is current), from
 *  cudaPointerGetAttributes (any failure of it recorded, naming arg and func); *device (may be
 *  NULL): the device of device memory, else the attribute's device. The buffer copies and the
 *  2-D copies share it. */
typedef enum { CM__MS_PAGEABLE, CM__MS_PINNED, CM__MS_MANAGED, CM__MS_DEVICE } cm__ms_mem_t;
cm_status_t cm__ms_classify(const void *p, const char *arg, const char *func, cm__ms_mem_t *out,
                            int *device);

/** Whether the calling thread captures a graph (a synchronous free would be refused by CUDA). */
bool cm__ms_thread_capturing(void);

/** Whether f is a value of cm_format_t other than CM_FORMAT_NONE. */
bool cm__ms_format_valid(cm_format_t f);
/** CUDA's channel description of a valid format (bits per channel and kind). */
struct cudaChannelFormatDesc cm__ms_channel_desc(cm_format_t f);
/** Refuse (under func) a format that is not a valid cm_format_t. */
cm_status_t cm__ms_check_format(cm_format_t f, const char *func);

/**
 * Destroy a pitched buffer, array or managed buffer (kind): refused (CM_ERROR_BUSY, alive) while
 * this thread captures a graph or, for pitched buffers and arrays, while a texture or surface
 * reads it; otherwise the handle ends and the memory is freed in a scope of its device (a
 * failed free is reported, the handle gone all the same). NULL is a no-op.
 */
cm_status_t cm__ms_destroy(const void *h, cm__kind_t kind, const char *arg, const char *func);

/** An allocation of memspace.h's kinds, made by cm__ms_allocate(). */
typedef enum { CM__MS_ALLOC_PITCH, CM__MS_ALLOC_ARRAY, CM__MS_ALLOC_MANAGED } cm__ms_alloc_kind_t;
typedef struct cm__ms_alloc {
    cm__ms_alloc_kind_t kind;
    size_t width_bytes, height;           /* pitch: the row in bytes; pitch and array: rows */
    struct cudaChannelFormatDesc desc;    /* array */
    size_t width;                         /* array: elements */
    unsigned flags;                       /* array: cudaArray* flags */
    size_t bytes;                         /* managed */
    bool concurrent;                      /* managed: the device's concurrentManagedAccess */
    void *ptr;                            /* out: pitch, managed */
    size_t pitch;                         /* out: pitch */
    cudaArray_t array;                    /* out: array */
} cm__ms_alloc_t;

/**
 * Make the allocation r describes, in the caller's scope of dev's device (made current). On
 * out-of-memory the library's pools are trimmed and the call tried once more; then the
 * out-of-memory report is recorded (for managed memory with whether it may oversubscribe the
 * device). requested is the bytes the report names.
 */
cm_status_t cm__ms_allocate(struct cm__device *dev, cm__ms_alloc_t *r, size_t requested,
                            const char *func);

/* ------------------------------------------------------------------ bodies of the exec entry points */

cm_status_t cm__symbol_copy_q(const cm__queue_t *q, cm_device_t *dev, const void *symbol,
                              size_t offset, void *host, size_t bytes, bool to_symbol,
                              const char *func);
cm_status_t cm__copy_2d_q(const cm__queue_t *q, const cm_place_t *dst, const cm_place_t *src,
                          size_t width, size_t height, const char *func);
cm_status_t cm__managed_prefetch_q(const cm__queue_t *q, cm_managed_t *m, size_t offset,
                                   size_t bytes, int location, const char *func);
cm_status_t cm__managed_copy_q(const cm__queue_t *q, const cm_managed_t *m, size_t offset,
                               void *host, size_t bytes, bool to_managed, const char *func);

/* ------------------------------------------------------------------ texture rules (pure) */

/** What a texture would read, and the device's limits it must fit (texture.c). */
typedef struct cm__tex_target {
    cm__kind_t kind;            /* CM__KIND_BUFFER (1-D linear), CM__KIND_PITCHED or CM__KIND_ARRAY */
    cm_format_t format;         /* the memory's format (NONE for a buffer) */
    size_t width, height;       /* elements; for a buffer: the range's bytes in width, height 1 */
    size_t pitch;               /* pitched: bytes */
    uintptr_t base;             /* address of element (0, 0) (buffer: of the range) */
    size_t range_bytes;         /* buffer: the range's length */
    /* the device's limits (cudaDeviceGetAttribute) */
    int texture_alignment, texture_pitch_alignment;
    int max_1d_linear, max_2d_linear_width, max_2d_linear_height, max_2d_linear_pitch;
    int max_2d_width, max_2d_height;
} cm__tex_target_t;

/**
 * Check a texture descriptor against its target: every broken rule is appended to msg ("; "
 * between them) and counted; the hint of the first one goes to hint. Returns the count (0: the
 * texture would be valid). The effective format is written to *format. Pure function.
 */
unsigned cm__texture_check(const cm__tex_target_t *t, const cm_texture_desc_t *desc,
                           cm_format_t *format, char *msg, size_t msg_size, char *hint,
                           size_t hint_size);

/* Hints that name public calls of other files (text for the user, not calls). */
#define CM__HINT_DESTROY_TEXTURE "destroy the texture first (cm_texture_destroy())"
#define CM__HINT_DESTROY_SURFACE "destroy the surface first (cm_surface_destroy())"
#define CM__HINT_ARRAY_TO_ARRAY                                                              \
    "copy the rectangle through a pitched buffer: two cm_copy_2d() calls"
#define CM__HINT_HOST_TO_HOST "copy host memory to host memory with memcpy(), row by row"

#endif /* CUDAMODEL_SRC_MEMSPACE_INTERNAL_H */
