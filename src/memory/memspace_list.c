/*
 * The memory-space objects in their device object's list of live allocations (memspace.h,
 * memspace_internal.h): their counters, their lines of the leak report, and the look-up of the
 * textures and surfaces that read a piece of memory (no dangling texture). Called by the list
 * itself (memory/device_memory.c) and by the destroys of memory, with cm__core_lock() held:
 * no CUDA call, no allocation, nothing of the files that call the list.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memspace_internal.h"

/* ------------------------------------------------------------------ accounting */

void cm__memspace_count_locked(struct cm__device *dev, const cm__alloc_t *a, int sign) {
    if (sign > 0) {
        ++dev->n_spaces;
        dev->space_bytes += a->bytes;
        if (a->kind == CM__KIND_TEXTURE || a->kind == CM__KIND_SURFACE) ++dev->n_views;
    } else {
        --dev->n_spaces;
        dev->space_bytes -= a->bytes;
        if (a->kind == CM__KIND_TEXTURE || a->kind == CM__KIND_SURFACE) --dev->n_views;
    }
}

static const char *cm__filter_name(cm_filter_mode_t f) {
    return f == CM_FILTER_LINEAR ? "linear filtering" : "point sampling";
}

static const char *cm__address_name(cm_address_mode_t m) {
    switch (m) {
    case CM_ADDRESS_CLAMP: return "clamp";
    case CM_ADDRESS_WRAP: return "wrap";
    case CM_ADDRESS_MIRROR: return "mirror";
    case CM_ADDRESS_BORDER: return "border";
    }
    return "?";
}

/* "texture over pitched buffer #3 (1024 x 768 CM_FORMAT_F32, linear filtering, clamp)" */
static void cm__view_text(const struct cm__texobj *v, uint64_t serial, cm__text_t *t) {
    char number[32] = "";
    if (serial != 0) snprintf(number, sizeof number, " #%llu", (unsigned long long)serial);
    const char *mem = v->memory_kind == CM__KIND_BUFFER    ? "device buffer"
                      : v->memory_kind == CM__KIND_PITCHED ? "pitched buffer"
                                                           : "CUDA array";
    if (v->a.kind == CM__KIND_SURFACE) {
        cm__text_printf(t, "surface%s over %s #%llu (%zu x %zu %s)", number, mem,
                        (unsigned long long)v->memory_serial, v->width, v->height,
                        cm_format_name(v->format));
        return;
    }
    cm__text_printf(t, "texture%s over %s #%llu (", number, mem,
                    (unsigned long long)v->memory_serial);
    if (v->memory_kind == CM__KIND_BUFFER) cm__text_printf(t, "%zu elements", v->width);
    else cm__text_printf(t, "%zu x %zu", v->width, v->height);
    cm__text_printf(t, " %s, %s, %s%s%s)", cm_format_name(v->format),
                    cm__filter_name(v->desc.filter_mode), cm__address_name(v->desc.address_mode),
                    v->desc.normalized_coords ? ", normalised coordinates" : "",
                    v->desc.read_mode == CM_READ_NORMALIZED_FLOAT ? ", read as normalised float"
                                                                  : "");
}

static void cm__where(const cm__alloc_t *a, cm__text_t *t) {
    cm__text_printf(t, ", created at %s:%d", a->file != NULL && a->file[0] ? a->file : "?",
                    a->line);
    if (a->has_label) cm__text_printf(t, " \"%s\"", a->label);
}

void cm__memspace_describe(const cm__alloc_t *a, cm__text_t *t) {
    char size[32];
    cm__format_bytes(a->bytes, size, sizeof size);
    switch (a->kind) {
    case CM__KIND_PITCHED: {
        const struct cm__pitched *p = (const struct cm__pitched *)a;
        cm__text_printf(t, "pitched buffer of %zu x %zu %s (pitch %zu bytes), %s (%zu bytes)",
                        p->width, p->height, cm_format_name(p->format), p->pitch, size, a->bytes);
        break;
    }
    case CM__KIND_ARRAY: {
        const struct cm__array *r = (const struct cm__array *)a;
        cm__text_printf(t, "CUDA array of %zu x %zu %s%s, %s (%zu bytes)", r->width, r->height,
                        cm_format_name(r->format),
                        (r->flags & CM_ARRAY_SURFACE_LOAD_STORE) ? " (surface load/store)" : "",
                        size, a->bytes);
        break;
    }
    case CM__KIND_MANAGED:
        cm__text_printf(t, "managed buffer of %s (%zu bytes)", size, a->bytes);
        break;
    default:
        cm__view_text((const struct cm__texobj *)a, 0, t);
        break;
    }
    cm__where(a, t);
}

/* ------------------------------------------------------------------ no dangling texture */

bool cm__memspace_viewer_locked(const void *h, cm__kind_t kind, char *who, size_t size) {
    const cm__alloc_t *mem = cm__handle_obj(h, kind);
    if (mem == NULL || mem->dev->n_views == 0) return false;
    const struct cm__device *dev = mem->dev;
    for (const cm__link_t *l = dev->live.next; l != &dev->live; l = l->next) {
        const cm__alloc_t *a = (const cm__alloc_t *)((const char *)l - offsetof(cm__alloc_t, link));
        if (a->kind != CM__KIND_TEXTURE && a->kind != CM__KIND_SURFACE) continue;
        const struct cm__texobj *v = (const struct cm__texobj *)a;
        if (v->memory != h) continue;
        cm__text_t t = {who, size, 0};
        if (size > 0) who[0] = '\0';
        cm__view_text(v, a->serial, &t);
        cm__where(a, &t);
        return true;
    }
    return false;
}
