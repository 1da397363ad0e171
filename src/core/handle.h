/*
 * The one generational handle table of the library (private). Every handle the library hands
 * out (device objects, buffers, host buffers, streams, events, timers, graphs, device sets,
 * splits, communicators, pitched buffers, arrays, textures, surfaces, managed buffers) is a value, not a pointer: 8 bits of kind, 24 bits of generation and
 * 32 bits of slot index. The object behind it is found through the table in O(1) without a
 * lock; ending a handle bumps its slot's generation, so every later use of the old value is
 * reported as a stale handle of its kind, forever: a slot whose generation is exhausted is
 * retired, never reused, so a value never names a second object (no quarantine window).
 *
 * A handle value has kind bits in its top byte: it is never a valid user-space pointer, never
 * NULL, and a pointer that did not come from the library decodes to "not a handle".
 *
 * Locking: the table's lock (cm__core_lock(), core/lock.h) guards slot allocation and the free
 * list; lookups read the slot's tag with acquire ordering and take no lock. A handle is used by
 * one thread at a time unless its header says otherwise, so a lookup never races with the end
 * of the same handle in a correct program; a racing lookup in an incorrect one sees either the
 * live object or a stale tag, never freed table memory (slot chunks are never freed).
 */
#ifndef CUDAMODEL_SRC_CORE_HANDLE_H
#define CUDAMODEL_SRC_CORE_HANDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudamodel/status.h>

/** Every kind of handle. The values are part of the handle encoding (8 bits). */
typedef enum cm__kind {
    CM__KIND_NONE = 0,
    CM__KIND_DEVICE = 1,
    CM__KIND_BUFFER = 2,
    CM__KIND_HOST_BUFFER = 3,
    CM__KIND_STREAM = 4,
    CM__KIND_EVENT = 5,
    CM__KIND_TIMER = 6,
    CM__KIND_GRAPH = 7,
    CM__KIND_DEVICE_SET = 8,
    CM__KIND_SPLIT = 9,
    CM__KIND_COMM = 10,
    CM__KIND_PITCHED = 11,
    CM__KIND_ARRAY = 12,
    CM__KIND_TEXTURE = 13,
    CM__KIND_SURFACE = 14,
    CM__KIND_MANAGED = 15,
    CM__KIND_COUNT = 16
} cm__kind_t;

/* Encoding: kind << 56 | generation << 32 | index. */
#define CM__H_INDEX_BITS 32
#define CM__H_GEN_BITS 24
#define CM__H_GEN_MAX ((1u << CM__H_GEN_BITS) - 1u)
#define CM__H_CHUNK_BITS 12
#define CM__H_CHUNK (1u << CM__H_CHUNK_BITS)     /* slots per chunk */
#define CM__H_MAX_CHUNKS 4096u                   /* 16.7 M slots at most */
#define CM__H_LIVE 0x80000000u                   /* tag bit: the slot holds a live handle */
/* A freed slot is handed out again only while more than this many are free, so the report of a
 * stale handle can still say what its object was for the last CM__H_KEEP ends (reuse is safe at
 * any time: the generation differs). */
#define CM__H_KEEP 1024u

/** Why a handle was ended, for the report of a stale use. */
typedef struct cm__epitaph {
    const char *file;      /* where the object was created (static storage), or NULL */
    int line;
    int device;            /* its device ordinal, -1 when none */
    uint64_t bytes;        /* its size (buffers), 0 when none */
    const char *what;      /* a finer name ("stream-ordered buffer"), static storage, or NULL */
    char label[24];        /* the caller's label, truncated; "" when none */
} cm__epitaph_t;

typedef struct cm__slot {
    _Atomic uint32_t tag;  /* LIVE | kind << 24 | generation; dead: kind << 24 | generation */
    uint32_t next_free;    /* free list link (index + 1; 0: end) */
    void *obj;             /* the object of a live handle */
    cm__epitaph_t ep;      /* of the last handle of this slot */
} cm__slot_t;

/* The chunks of the table (read by the inline lookup). */
extern _Atomic(cm__slot_t *) cm__h_chunks[CM__H_MAX_CHUNKS];

/** The kind's name in messages: "buffer", "stream", "device object"... */
const char *cm__kind_name(cm__kind_t kind);
/** The kind's public type: "cm_buffer_t", "cm_stream_t"... */
const char *cm__kind_type(cm__kind_t kind);

/**
 * Give obj a new handle of kind; ep says where it was created (kept for stale-use reports).
 * Returns the handle value, or NULL when host memory for the table runs out (nothing recorded:
 * the caller records CM_ERROR_HOST_OUT_OF_MEMORY). Takes the table's lock unless _locked.
 */
void *cm__handle_new(cm__kind_t kind, void *obj, const cm__epitaph_t *ep);
/** cm__handle_new with cm__core_lock() held by the caller. */
void *cm__handle_new_locked(cm__kind_t kind, void *obj, const cm__epitaph_t *ep);

/**
 * End a live handle of kind: every later use of h is stale. Returns its object, or NULL when h
 * was not a live handle of kind (nothing changes then). ep, when not NULL, replaces the epitaph
 * given at creation (e.g. with the final size). Takes the table's lock unless _locked.
 */
void *cm__handle_end(const void *h, cm__kind_t kind);
void *cm__handle_end_locked(const void *h, cm__kind_t kind);
/** Update the epitaph of a live handle (e.g. its final size or a label set later). */
void cm__handle_set_epitaph(const void *h, const cm__epitaph_t *ep);

/** Decode a handle value. */
static inline uint32_t cm__h_index(const void *h) { return (uint32_t)(uintptr_t)h; }
static inline uint32_t cm__h_tag(const void *h) {
    return (uint32_t)((uintptr_t)h >> 32) & 0x7fffffffu; /* kind << 24 | generation */
}
static inline cm__kind_t cm__h_kind(const void *h) {
    return (cm__kind_t)(((uintptr_t)h >> 56) & 0x7fu);
}

/** The slot of a handle value, or NULL when its index is past the table. */
static inline cm__slot_t *cm__h_slot(const void *h) {
    uint32_t i = cm__h_index(h);
    uint32_t c = i >> CM__H_CHUNK_BITS;
    if (c >= CM__H_MAX_CHUNKS) return NULL;
    cm__slot_t *chunk = atomic_load_explicit(&cm__h_chunks[c], memory_order_acquire);
    return chunk != NULL ? &chunk[i & (CM__H_CHUNK - 1)] : NULL;
}

/** Nonzero in a child process forked after this process opened a device: every handle is its
 *  parent's, and CUDA cannot be used there (core/handle.c, pthread_atfork). */
extern atomic_int cm__h_forked;

/** Watch for fork() from now on (once per process; cm_device_open calls it). */
void cm__handle_watch_fork(void);

/** The object of h when h is a live handle of kind, else NULL. O(1), no lock, records nothing.
 *  In a forked child no handle is live: they are all the parent's. */
static inline void *cm__handle_obj(const void *h, cm__kind_t kind) {
    if (h == NULL || cm__h_kind(h) != kind) return NULL;
    if (atomic_load_explicit(&cm__h_forked, memory_order_relaxed)) return NULL;
    cm__slot_t *s = cm__h_slot(h);
    if (s == NULL) return NULL;
    if (atomic_load_explicit(&s->tag, memory_order_acquire) != (CM__H_LIVE | cm__h_tag(h)))
        return NULL;
    return s->obj;
}

/**
 * The object of h, checked: on failure records CM_ERROR_INVALID_ARGUMENT naming arg and func
 * and saying what h is (NULL; a handle of another kind; a stale handle of its kind, with where
 * its object was created; never a handle) and how to fix it, and *obj is NULL.
 */
cm_status_t cm__handle_fail(const void *h, cm__kind_t kind, const char *arg, const char *func);
static inline cm_status_t cm__handle_get(const void *h, cm__kind_t kind, const char *arg,
                                         const char *func, void **obj) {
    void *o = cm__handle_obj(h, kind);
    *obj = o;
    return o != NULL ? CM_OK : cm__handle_fail(h, kind, arg, func);
}

/** Typed form: CM__GET(dst_var, handle, kind, "arg") with __func__; returns on failure. */
#define CM__GET(var, h, kind, arg)                                                           \
    do {                                                                                     \
        void *cm__obj_;                                                                      \
        cm_status_t cm__st_ = cm__handle_get((h), (kind), (arg), __func__, &cm__obj_);       \
        if (cm__st_ != CM_OK) return cm__st_;                                                \
        (var) = cm__obj_;                                                                    \
    } while (0)

/** Live handles of kind (tests, leak reports). */
size_t cm__handle_live_count(cm__kind_t kind);
/** Slots retired because their generation was exhausted (tests). */
size_t cm__handle_retired_count(void);
/** Set every free slot's generation to start near the limit (tests of retirement). */
void cm__handle_age_for_tests(uint32_t generation);

#endif /* CUDAMODEL_SRC_CORE_HANDLE_H */
