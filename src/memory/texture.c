/*
 * Texture and surface objects (memspace.h). A texture descriptor is validated like a launch
 * configuration: cm__texture_check() is a pure function of the descriptor, the memory and the
 * device's limits that names every broken rule, including the settings CUDA would ignore or
 * change without a word (filtering of a linear texture, wrap without normalised coordinates,
 * normalised-float reads of 32-bit integers). Textures and surfaces are counted in their
 * memory's device object as views of that memory, which cannot be destroyed before them
 * (memspace.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memspace_internal.h"

/* ------------------------------------------------------------------ the rules (pure) */

typedef struct cm__rules {
    char text[CM_ERROR_MESSAGE_MAX];
    cm__text_t t;
    char *hint;
    size_t hint_size;
    unsigned n;
} cm__rules_t;

static void cm__rule(cm__rules_t *r, const char *hint, const char *fmt, ...) CM__PRINTF(3, 4);
static void cm__rule(cm__rules_t *r, const char *hint, const char *fmt, ...) {
    if (r->n++ > 0) cm__text_printf(&r->t, "; ");
    char one[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    cm__text_printf(&r->t, "%s", one);
    if (r->n == 1 && r->hint != NULL && r->hint_size > 0) cm__strlcpy(r->hint, hint, r->hint_size);
}

static const char *cm__address_text(cm_address_mode_t m) {
    return m == CM_ADDRESS_WRAP ? "CM_ADDRESS_WRAP" : m == CM_ADDRESS_MIRROR ? "CM_ADDRESS_MIRROR"
           : m == CM_ADDRESS_BORDER ? "CM_ADDRESS_BORDER" : "CM_ADDRESS_CLAMP";
}

/* Bits of one channel of a valid format. */
static size_t cm__channel_bits(cm_format_t f) {
    return cm_format_bytes(f) / cm_format_channels(f) * 8;
}

static const char *cm__memory_name(cm__kind_t k) {
    return k == CM__KIND_BUFFER ? "cm_buffer_t" : k == CM__KIND_PITCHED ? "pitched buffer"
                                                                        : "CUDA array";
}

unsigned cm__texture_check(const cm__tex_target_t *t, const cm_texture_desc_t *desc,
                           cm_format_t *format, char *msg, size_t msg_size, char *hint,
                           size_t hint_size) {
    cm__rules_t r;
    memset(&r, 0, sizeof r);
    r.t = (cm__text_t){r.text, sizeof r.text, 0};
    r.hint = hint;
    r.hint_size = hint_size;
    if (hint != NULL && hint_size > 0) hint[0] = '\0';
    const bool linear_1d = t->kind == CM__KIND_BUFFER;
    const char *mem = cm__memory_name(t->kind);

    /* each field a value of its enum */
    const bool address_ok = (unsigned)desc->address_mode <= (unsigned)CM_ADDRESS_BORDER;
    const bool filter_ok = (unsigned)desc->filter_mode <= (unsigned)CM_FILTER_LINEAR;
    const bool read_ok = (unsigned)desc->read_mode <= (unsigned)CM_READ_NORMALIZED_FLOAT;
    if (!address_ok)
        cm__rule(&r, "use CM_ADDRESS_CLAMP, CM_ADDRESS_WRAP, CM_ADDRESS_MIRROR or CM_ADDRESS_BORDER",
                 "desc.address_mode %d is not a cm_address_mode_t", (int)desc->address_mode);
    if (!filter_ok)
        cm__rule(&r, "use CM_FILTER_POINT or CM_FILTER_LINEAR",
                 "desc.filter_mode %d is not a cm_filter_mode_t", (int)desc->filter_mode);
    if (!read_ok)
        cm__rule(&r, "use CM_READ_ELEMENT_TYPE or CM_READ_NORMALIZED_FLOAT",
                 "desc.read_mode %d is not a cm_read_mode_t", (int)desc->read_mode);

    /* the format: required for a buffer, the memory's own otherwise */
    cm_format_t f = CM_FORMAT_NONE;
    if (desc->format != CM_FORMAT_NONE && !cm__ms_format_valid(desc->format)) {
        cm__rule(&r, "pass one of the cm_format_t values of memspace.h, e.g. CM_FORMAT_F32",
                 "desc.format %d is not a cm_format_t", (int)desc->format);
    } else if (linear_1d) {
        if (desc->format == CM_FORMAT_NONE)
            cm__rule(&r, "set desc.format to the element type the kernel reads, e.g. "
                     "CM_FORMAT_F32 for tex1Dfetch<float>",
                     "a texture over a cm_buffer_t needs desc.format: a buffer has no element "
                     "format");
        f = desc->format;
    } else {
        f = t->format;
        if (desc->format != CM_FORMAT_NONE && desc->format != t->format)
            cm__rule(&r, "leave desc.format at CM_FORMAT_NONE to read the memory's own format",
                     "desc.format %s differs from the %s's %s", cm_format_name(desc->format),
                     mem, cm_format_name(t->format));
    }
    *format = f;

    /* what the format allows */
    if (cm__ms_format_valid(f) && filter_ok && read_ok && !linear_1d) {
        const bool integer = cm_format_is_integer(f);
        const size_t bits = cm__channel_bits(f);
        if (desc->filter_mode == CM_FILTER_LINEAR && integer && bits == 32) {
            cm__rule(&r, "filter a float format (CM_FORMAT_F32...), or an 8- or 16-bit integer "
                     "format read with CM_READ_NORMALIZED_FLOAT",
                     "linear filtering of 32-bit integer format %s is not possible: filtering "
                     "interpolates floats, and 32-bit integers are never converted", cm_format_name(f));
        } else if (desc->filter_mode == CM_FILTER_LINEAR && integer &&
                   desc->read_mode != CM_READ_NORMALIZED_FLOAT) {
            cm__rule(&r, "set desc.read_mode = CM_READ_NORMALIZED_FLOAT (the kernel then reads "
                     "floats in [0, 1] or [-1, 1]), or use CM_FILTER_POINT",
                     "linear filtering of integer format %s needs read_mode "
                     "CM_READ_NORMALIZED_FLOAT: filtering interpolates floats", cm_format_name(f));
        }
    }
    if (cm__ms_format_valid(f) && read_ok && desc->read_mode == CM_READ_NORMALIZED_FLOAT &&
        cm_format_is_integer(f) && cm__channel_bits(f) == 32) {
        cm__rule(&r, "use CM_READ_ELEMENT_TYPE for 32-bit integers (or store 8- or 16-bit ones "
                 "to read them as normalised floats)",
                 "read_mode CM_READ_NORMALIZED_FLOAT applies to 8- and 16-bit integer formats: "
                 "CUDA would silently read %s unconverted", cm_format_name(f));
    }

    if (linear_1d) {
        /* CUDA ignores filtering, addressing and normalisation of linear textures: refuse them
         * rather than let the kernel read something else than it asked for */
        const char *fix = "read a cm_buffer_t by index (tex1Dfetch); for filtering or address "
                          "modes put the data in a pitched buffer or an array (height 1) and use "
                          "cm_texture_create_from_pitched() or cm_texture_create_from_array()";
        if (filter_ok && desc->filter_mode == CM_FILTER_LINEAR)
            cm__rule(&r, fix, "a texture over a cm_buffer_t is read by index (tex1Dfetch), and "
                     "CUDA ignores its filter_mode: CM_FILTER_LINEAR would silently point-sample");
        if (address_ok && desc->address_mode != CM_ADDRESS_CLAMP)
            cm__rule(&r, fix, "a texture over a cm_buffer_t ignores address_mode (%s): an index "
                     "outside it reads zero", cm__address_text(desc->address_mode));
        if (desc->normalized_coords)
            cm__rule(&r, fix, "a texture over a cm_buffer_t takes integer indices: "
                     "normalized_coords does not apply");
        if (cm__ms_format_valid(f)) {
            const size_t elem = cm_format_bytes(f);
            if (t->range_bytes == 0 || t->range_bytes % elem != 0) {
                char h[160];
                snprintf(h, sizeof h, "pass a length that is a non-zero multiple of %zu bytes",
                         elem);
                cm__rule(&r, h, "the range of %zu bytes is not a whole, non-zero number of "
                         "%zu-byte %s elements", t->range_bytes, elem, cm_format_name(f));
            }
            if (t->max_1d_linear > 0 && t->range_bytes / elem > (size_t)t->max_1d_linear) {
                char h[200];
                snprintf(h, sizeof h, "read at most %d elements per texture: split the range "
                         "into several textures", t->max_1d_linear);
                cm__rule(&r, h, "%zu elements exceed the device's maxTexture1DLinear of %d",
                         t->range_bytes / elem, t->max_1d_linear);
            }
        }
    } else if (address_ok && !desc->normalized_coords &&
               (desc->address_mode == CM_ADDRESS_WRAP || desc->address_mode == CM_ADDRESS_MIRROR)) {
        cm__rule(&r, "set desc.normalized_coords = true (coordinates in [0, 1)), or use "
                 "CM_ADDRESS_CLAMP or CM_ADDRESS_BORDER",
                 "address_mode %s needs normalized_coords: with unnormalised coordinates CUDA "
                 "silently clamps instead", cm__address_text(desc->address_mode));
    }

    /* the memory against the device's limits */
    if ((t->kind == CM__KIND_BUFFER || t->kind == CM__KIND_PITCHED) && t->texture_alignment > 0 &&
        t->base % (uintptr_t)t->texture_alignment != 0) {
        char h[200];
        snprintf(h, sizeof h, "start the texture at an address that is a multiple of %d bytes "
                 "(buffers start aligned: use an offset that is a multiple of %d)",
                 t->texture_alignment, t->texture_alignment);
        cm__rule(&r, h, "the texture's memory starts at %p, not a multiple of the device's "
                 "textureAlignment of %d bytes", (void *)t->base, t->texture_alignment);
    }
    if (t->kind == CM__KIND_PITCHED) {
        if (t->texture_pitch_alignment > 0 && t->pitch % (size_t)t->texture_pitch_alignment != 0) {
            char h[200];
            snprintf(h, sizeof h, "use a pitch that is a multiple of %d bytes (cudaMallocPitch "
                     "chooses one)", t->texture_pitch_alignment);
            cm__rule(&r, h, "pitch %zu is not a multiple of the device's texturePitchAlignment "
                     "of %d bytes", t->pitch, t->texture_pitch_alignment);
        }
        const char *fix = "tile the image into textures within the device's maxTexture2DLinear, "
                          "or copy it into a CUDA array (larger 2-D limits)";
        if (t->width > (size_t)t->max_2d_linear_width)
            cm__rule(&r, fix, "width %zu exceeds the device's maxTexture2DLinear width of %d",
                     t->width, t->max_2d_linear_width);
        if (t->height > (size_t)t->max_2d_linear_height)
            cm__rule(&r, fix, "height %zu exceeds the device's maxTexture2DLinear height of %d",
                     t->height, t->max_2d_linear_height);
        if (t->pitch > (size_t)t->max_2d_linear_pitch)
            cm__rule(&r, fix, "pitch %zu exceeds the device's maxTexture2DLinear pitch of %d bytes",
                     t->pitch, t->max_2d_linear_pitch);
    }
    if (t->kind == CM__KIND_ARRAY) {
        const char *fix = "tile the image into arrays within the device's maxTexture2D";
        if (t->width > (size_t)t->max_2d_width)
            cm__rule(&r, fix, "width %zu exceeds the device's maxTexture2D width of %d", t->width,
                     t->max_2d_width);
        if (t->height > (size_t)t->max_2d_height)
            cm__rule(&r, fix, "height %zu exceeds the device's maxTexture2D height of %d",
                     t->height, t->max_2d_height);
    }
    if (msg != NULL && msg_size > 0) {
        if (r.n == 0) msg[0] = '\0';
        else
            snprintf(msg, msg_size, "the texture over the %s breaks %u rule%s: %s; nothing was "
                     "created", mem, r.n, r.n == 1 ? "" : "s", r.text);
    }
    return r.n;
}

/* ------------------------------------------------------------------ creating a view */

/* The device's limits a target must fit (only those its kind needs). */
static cm_status_t cm__tex_limits(int ordinal, cm__tex_target_t *t, const char *func) {
#define CM__ATTR(attr, field) CM_TRY(cm__ms_attribute(ordinal, attr, #attr, &t->field, func))
    if (t->kind == CM__KIND_BUFFER) {
        CM__ATTR(cudaDevAttrTextureAlignment, texture_alignment);
        CM__ATTR(cudaDevAttrMaxTexture1DLinearWidth, max_1d_linear);
    } else if (t->kind == CM__KIND_PITCHED) {
        CM__ATTR(cudaDevAttrTextureAlignment, texture_alignment);
        CM__ATTR(cudaDevAttrTexturePitchAlignment, texture_pitch_alignment);
        CM__ATTR(cudaDevAttrMaxTexture2DLinearWidth, max_2d_linear_width);
        CM__ATTR(cudaDevAttrMaxTexture2DLinearHeight, max_2d_linear_height);
        CM__ATTR(cudaDevAttrMaxTexture2DLinearPitch, max_2d_linear_pitch);
    } else {
        CM__ATTR(cudaDevAttrMaxTexture2DWidth, max_2d_width);
        CM__ATTR(cudaDevAttrMaxTexture2DHeight, max_2d_height);
    }
#undef CM__ATTR
    return CM_OK;
}

static enum cudaTextureAddressMode cm__cuda_address(cm_address_mode_t m) {
    switch (m) {
    case CM_ADDRESS_WRAP: return cudaAddressModeWrap;
    case CM_ADDRESS_MIRROR: return cudaAddressModeMirror;
    case CM_ADDRESS_BORDER: return cudaAddressModeBorder;
    case CM_ADDRESS_CLAMP: break;
    }
    return cudaAddressModeClamp;
}

/* The memory a view reads, resolved from its handle. */
typedef struct cm__viewed {
    cm__alloc_t *a;
    cm__tex_target_t target;
    struct cudaResourceDesc res;
} cm__viewed_t;

/* Make the CUDA object (texture when desc != NULL, else surface) in a scope of the device,
 * then the view's handle in the memory's device object. */
static cm_status_t cm__view_make(cm__viewed_t *m, const void *memory, cm__kind_t memory_kind,
                                 cm__kind_t kind, const cm_texture_desc_t *desc, cm_format_t format,
                                 void **out, const char *file, int line, const char *func) {
    struct cm__device *dev = m->a->dev;
    const int ordinal = dev->ordinal;
    struct cm__texobj *v = calloc(1, sizeof *v);
    if (v == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the %s object", cm__kind_name(kind));
    }
    cm__scope_t sc;
    cm_status_t status = cm__enter(ordinal, 1, &sc);
    if (status != CM_OK) {
        free(v);
        return status;
    }
    cudaError_t err;
    if (desc != NULL) {
        struct cudaTextureDesc td;
        memset(&td, 0, sizeof td);
        for (int i = 0; i < 3; ++i) td.addressMode[i] = cm__cuda_address(desc->address_mode);
        td.filterMode = desc->filter_mode == CM_FILTER_LINEAR ? cudaFilterModeLinear
                                                               : cudaFilterModePoint;
        td.readMode = desc->read_mode == CM_READ_NORMALIZED_FLOAT ? cudaReadModeNormalizedFloat
                                                                  : cudaReadModeElementType;
        td.normalizedCoords = desc->normalized_coords ? 1 : 0;
        cudaTextureObject_t obj = 0;
        err = cm__cuda.create_texture_object(&obj, &m->res, &td, NULL);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaCreateTextureObject(over a %s) "
                                   "in %s", cm__memory_name(memory_kind), func);
        v->object = obj;
        v->desc = *desc;
    } else {
        cudaSurfaceObject_t obj = 0;
        err = cm__cuda.create_surface_object(&obj, &m->res);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaCreateSurfaceObject(over a CUDA "
                                   "array) in %s", func);
        v->object = obj;
    }
    cm__leave(&sc);
    if (status != CM_OK) {
        free(v);
        return status;
    }
    v->memory = memory;
    v->memory_kind = memory_kind;
    v->memory_serial = m->a->serial;
    v->format = format;
    v->width = m->target.kind == CM__KIND_BUFFER ? m->target.range_bytes / cm_format_bytes(format)
                                                 : m->target.width;
    v->height = m->target.kind == CM__KIND_BUFFER ? 1 : m->target.height;
    v->a.dev = dev;
    v->a.kind = kind;
    v->a.bytes = 0;
    v->a.file = file;
    v->a.line = line;
    status = cm__alloc_track(&v->a, dev->handle, ordinal, func);
    if (status != CM_OK) {
        if (cm__enter(ordinal, 1, &sc) == CM_OK) {
            if (kind == CM__KIND_TEXTURE) (void)cm__cuda.destroy_texture_object(v->object);
            else (void)cm__cuda.destroy_surface_object(v->object);
            cm__leave(&sc);
        }
        free(v);
        return status;
    }
    *out = v->a.handle;
    return CM_OK;
}

/* Validate desc against the memory and make the texture. */
static cm_status_t cm__texture_make(cm__viewed_t *m, const void *memory, cm__kind_t memory_kind,
                                    const cm_texture_desc_t *desc, cm_texture_t **out,
                                    const char *file, int line, const char *func) {
    const int ordinal = m->a->dev->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    CM_TRY(cm__tex_limits(ordinal, &m->target, func));
    char msg[CM_ERROR_MESSAGE_MAX], hint[CM_ERROR_HINT_MAX];
    cm_format_t format = CM_FORMAT_NONE;
    if (cm__texture_check(&m->target, desc, &format, msg, sizeof msg, hint, sizeof hint) > 0)
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint, "%s",
                        msg);
    const struct cudaChannelFormatDesc cd = cm__ms_channel_desc(format);
    if (m->res.resType == cudaResourceTypeLinear) m->res.res.linear.desc = cd;
    else if (m->res.resType == cudaResourceTypePitch2D) m->res.res.pitch2D.desc = cd;
    void *h = NULL;
    CM_TRY(cm__view_make(m, memory, memory_kind, CM__KIND_TEXTURE, desc, format, &h, file, line,
                         func));
    *out = h;
    return CM_OK;
}

static cm_status_t cm__check_view_out(const void *out, const char *type, const char *func) {
    if (out != NULL) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "pass the address of a %s * to receive the handle", type);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint, "out is NULL");
}

cm_status_t cm_texture_create_from_buffer_at(const cm_buffer_t *buf, size_t offset, size_t bytes,
                                             const cm_texture_desc_t *desc, cm_texture_t **out,
                                             const char *file, int line) {
    const char *func = __func__;
    CM_TRY(cm__check_view_out(out, "cm_texture_t", func));
    struct cm__buffer *b;
    CM_TRY(cm__buffer_get(buf, "buf", func, &b));
    if (desc == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, b->a.dev->ordinal, __FILE__, __LINE__, func,
                        "pass a cm_texture_desc_t (CM_TEXTURE_DESC_INIT) with desc.format set to "
                        "the element type the kernel reads",
                        "desc is NULL: a texture over a cm_buffer_t needs desc.format");
    }
    CM_TRY(cm__ms_check_range("buf", "cm_buffer_t", offset, bytes, b->a.bytes, func));
    cm__viewed_t m;
    memset(&m, 0, sizeof m);
    m.a = &b->a;
    m.target.kind = CM__KIND_BUFFER;
    m.target.base = (uintptr_t)b->ptr + offset;
    m.target.range_bytes = bytes;
    m.target.width = bytes;
    m.target.height = 1;
    m.res.resType = cudaResourceTypeLinear;
    /* a zero-byte buffer has no address: no NULL + offset (the texture is refused below) */
    m.res.res.linear.devPtr = b->ptr != NULL ? (unsigned char *)b->ptr + offset : NULL;
    m.res.res.linear.sizeInBytes = bytes;
    return cm__texture_make(&m, buf, CM__KIND_BUFFER, desc, out, file, line, func);
}

cm_status_t cm_texture_create_from_pitched_at(const cm_pitched_t *img, const cm_texture_desc_t *desc,
                                              cm_texture_t **out, const char *file, int line) {
    const char *func = __func__;
    CM_TRY(cm__check_view_out(out, "cm_texture_t", func));
    void *o;
    CM_TRY(cm__handle_get(img, CM__KIND_PITCHED, "img", func, &o));
    struct cm__pitched *p = o;
    const cm_texture_desc_t defaults = CM_TEXTURE_DESC_INIT;
    cm__viewed_t m;
    memset(&m, 0, sizeof m);
    m.a = &p->a;
    m.target.kind = CM__KIND_PITCHED;
    m.target.format = p->format;
    m.target.width = p->width;
    m.target.height = p->height;
    m.target.pitch = p->pitch;
    m.target.base = (uintptr_t)p->ptr;
    m.res.resType = cudaResourceTypePitch2D;
    m.res.res.pitch2D.devPtr = p->ptr;
    m.res.res.pitch2D.width = p->width;
    m.res.res.pitch2D.height = p->height;
    m.res.res.pitch2D.pitchInBytes = p->pitch;
    return cm__texture_make(&m, img, CM__KIND_PITCHED, desc != NULL ? desc : &defaults, out, file,
                            line, func);
}

cm_status_t cm_texture_create_from_array_at(const cm_array_t *arr, const cm_texture_desc_t *desc,
                                            cm_texture_t **out, const char *file, int line) {
    const char *func = __func__;
    CM_TRY(cm__check_view_out(out, "cm_texture_t", func));
    void *o;
    CM_TRY(cm__handle_get(arr, CM__KIND_ARRAY, "arr", func, &o));
    struct cm__array *a = o;
    const cm_texture_desc_t defaults = CM_TEXTURE_DESC_INIT;
    cm__viewed_t m;
    memset(&m, 0, sizeof m);
    m.a = &a->a;
    m.target.kind = CM__KIND_ARRAY;
    m.target.format = a->format;
    m.target.width = a->width;
    m.target.height = a->height;
    m.res.resType = cudaResourceTypeArray;
    m.res.res.array.array = a->array;
    return cm__texture_make(&m, arr, CM__KIND_ARRAY, desc != NULL ? desc : &defaults, out, file,
                            line, func);
}

/* ------------------------------------------------------------------ destroy, object */

static cm_status_t cm__view_destroy(const void *h, cm__kind_t kind, const char *arg,
                                    const char *func) {
    if (h == NULL) return CM_OK;
    void *o;
    CM_TRY(cm__handle_get(h, kind, arg, func, &o));
    const int ordinal = ((const cm__alloc_t *)o)->dev->ordinal;
    /* the device's scope is entered before the handle ends: when it cannot be, the view stays
     * alive (the destroy may be repeated); a lost context took the object with it */
    cm__scope_t sc;
    bool entered = false;
    if (cm__context_guard(ordinal) == CM_OK) {
        CM_TRY(cm__enter(ordinal, 1, &sc));
        entered = true;
    }
    cm__core_lock();
    struct cm__texobj *v = cm__handle_end_locked(h, kind);
    if (v != NULL) cm__alloc_untrack_locked(&v->a);
    cm__core_unlock();
    if (v == NULL) { /* raced */
        if (entered) cm__leave(&sc);
        return cm__handle_fail(h, kind, arg, func);
    }
    const unsigned long long object = v->object;
    free(v);
    if (!entered) return cm__context_guard(ordinal);
    cudaError_t err = kind == CM__KIND_TEXTURE ? cm__cuda.destroy_texture_object(object)
                                               : cm__cuda.destroy_surface_object(object);
    cm_status_t status = CM_OK;
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s in %s",
                               kind == CM__KIND_TEXTURE ? "cudaDestroyTextureObject"
                                                        : "cudaDestroySurfaceObject", func);
    cm__leave(&sc);
    return status;
}

cm_status_t cm_texture_destroy(cm_texture_t *tex) {
    return cm__view_destroy(tex, CM__KIND_TEXTURE, "tex", __func__);
}

cm_status_t cm_texture_object(const cm_texture_t *tex, unsigned long long *obj) {
    CM__REQUIRE(obj != NULL, "pass the address of an unsigned long long", "obj is NULL");
    void *o;
    CM_TRY(cm__handle_get(tex, CM__KIND_TEXTURE, "tex", __func__, &o));
    *obj = ((const struct cm__texobj *)o)->object;
    return CM_OK;
}

/* ------------------------------------------------------------------ surfaces */

cm_status_t cm_surface_create_at(const cm_array_t *arr, cm_surface_t **out, const char *file,
                                 int line) {
    const char *func = __func__;
    CM_TRY(cm__check_view_out(out, "cm_surface_t", func));
    void *o;
    CM_TRY(cm__handle_get(arr, CM__KIND_ARRAY, "arr", func, &o));
    struct cm__array *a = o;
    const int ordinal = a->a.dev->ordinal;
    if ((a->flags & CM_ARRAY_SURFACE_LOAD_STORE) == 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "create the array with CM_ARRAY_SURFACE_LOAD_STORE "
                        "(cm_array_create(dev, w, h, format, CM_ARRAY_SURFACE_LOAD_STORE, &arr))",
                        "the CUDA array (%zu x %zu %s) was created without "
                        "CM_ARRAY_SURFACE_LOAD_STORE: a surface cannot be bound to it",
                        a->width, a->height, cm_format_name(a->format));
    }
    CM_TRY(cm__context_guard(ordinal));
    cm__viewed_t m;
    memset(&m, 0, sizeof m);
    m.a = &a->a;
    m.target.kind = CM__KIND_ARRAY;
    m.target.width = a->width;
    m.target.height = a->height;
    m.res.resType = cudaResourceTypeArray;
    m.res.res.array.array = a->array;
    void *h = NULL;
    CM_TRY(cm__view_make(&m, arr, CM__KIND_ARRAY, CM__KIND_SURFACE, NULL, a->format, &h, file, line,
                         func));
    *out = h;
    return CM_OK;
}

cm_status_t cm_surface_destroy(cm_surface_t *surf) {
    return cm__view_destroy(surf, CM__KIND_SURFACE, "surf", __func__);
}

cm_status_t cm_surface_object(const cm_surface_t *surf, unsigned long long *obj) {
    CM__REQUIRE(obj != NULL, "pass the address of an unsigned long long", "obj is NULL");
    void *o;
    CM_TRY(cm__handle_get(surf, CM__KIND_SURFACE, "surf", __func__, &o));
    *obj = ((const struct cm__texobj *)o)->object;
    return CM_OK;
}
