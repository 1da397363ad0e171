/*
 * The generational handle table (core/handle.h) and the core spin lock (core/lock.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"
#include "internal.h"
#include "lock.h"

/* ------------------------------------------------------------------ the core spin lock */

/*
 * Guards short sections only (slot allocation, live lists, counters), so a test-and-test-and-set
 * spin lock: one atomic exchange to take it, a release store to drop it. A waiter spins briefly,
 * then yields so that a descheduled holder can finish.
 */
static atomic_int cm__core_spin;

void cm__core_lock(void) {
    if (!atomic_exchange_explicit(&cm__core_spin, 1, memory_order_acquire)) return;
    for (;;) {
        for (unsigned i = 0; atomic_load_explicit(&cm__core_spin, memory_order_relaxed); ++i) {
            if (i >= 64) {
                sched_yield();
                i = 0;
            }
        }
        if (!atomic_exchange_explicit(&cm__core_spin, 1, memory_order_acquire)) return;
    }
}

void cm__core_unlock(void) {
    atomic_store_explicit(&cm__core_spin, 0, memory_order_release);
}

int cm__core_lock_held_for_tests(void) {
    return atomic_load_explicit(&cm__core_spin, memory_order_relaxed);
}

/* ------------------------------------------------------------------ fork() */

/* A child forked after the parent opened a device inherits copies of the parent's handles, and
 * CUDA cannot be used in it (the driver's state belongs to the parent): the child's copies are
 * refused from the fork on, reported as the parent's. */
atomic_int cm__h_forked;
static pthread_once_t cm__h_fork_once = PTHREAD_ONCE_INIT;

static void cm__h_in_child(void) {
    atomic_store_explicit(&cm__h_forked, 1, memory_order_relaxed);
}

static void cm__h_fork_register(void) {
    (void)pthread_atfork(NULL, NULL, cm__h_in_child);
}

void cm__handle_watch_fork(void) {
    (void)pthread_once(&cm__h_fork_once, cm__h_fork_register);
}

/* ------------------------------------------------------------------ the table */

_Atomic(cm__slot_t *) cm__h_chunks[CM__H_MAX_CHUNKS];

/* Under the core lock. */
static struct {
    uint32_t n_chunks;     /* chunks allocated */
    uint32_t n_used;       /* slots ever handed out (the next fresh index) */
    uint32_t free_head;    /* index + 1 of the first free slot; 0: none */
    uint32_t free_tail;    /* index + 1 of the last free slot (FIFO: spreads generations) */
    uint32_t n_free;
    size_t live[CM__KIND_COUNT];
    size_t retired;
    uint32_t fresh_gen;    /* generation of a never-used slot (tests raise it) */
} cm__h = {.fresh_gen = 1};

#include "handle_names.h"

const char *cm__kind_type(cm__kind_t kind) {
    return (unsigned)kind < CM__KIND_COUNT ? cm__kind_types[kind] : "handle";
}

const char *cm__kind_name(cm__kind_t kind) {
    return (unsigned)kind < CM__KIND_COUNT ? cm__kind_names[kind] : "handle";
}

static inline cm__slot_t *cm__slot_at(uint32_t index) {
    return &atomic_load_explicit(&cm__h_chunks[index >> CM__H_CHUNK_BITS],
                                 memory_order_relaxed)[index & (CM__H_CHUNK - 1)];
}

/* A free slot's index (locked), or UINT32_MAX when host memory or the index space runs out. */
static uint32_t cm__slot_take_locked(void) {
    if (cm__h.n_free > CM__H_KEEP) {
        uint32_t i = cm__h.free_head - 1;
        --cm__h.n_free;
        cm__slot_t *s = cm__slot_at(i);
        cm__h.free_head = s->next_free;
        if (cm__h.free_head == 0) cm__h.free_tail = 0;
        s->next_free = 0;
        return i;
    }
    if (cm__h.n_used == cm__h.n_chunks * CM__H_CHUNK) {
        if (cm__h.n_chunks == CM__H_MAX_CHUNKS) return UINT32_MAX;
        cm__slot_t *chunk = calloc(CM__H_CHUNK, sizeof *chunk);
        if (chunk == NULL) return UINT32_MAX;
        for (uint32_t k = 0; k < CM__H_CHUNK; ++k)
            atomic_init(&chunk[k].tag, cm__h.fresh_gen - 1u); /* kind 0, not live */
        atomic_store_explicit(&cm__h_chunks[cm__h.n_chunks], chunk, memory_order_release);
        ++cm__h.n_chunks;
    }
    return cm__h.n_used++;
}

void *cm__handle_new_locked(cm__kind_t kind, void *obj, const cm__epitaph_t *ep) {
    if ((unsigned)kind - 1u >= CM__KIND_COUNT - 1u || obj == NULL) return NULL;
    uint32_t i = cm__slot_take_locked();
    if (i == UINT32_MAX) return NULL;
    cm__slot_t *s = cm__slot_at(i);
    uint32_t gen = (atomic_load_explicit(&s->tag, memory_order_relaxed) & CM__H_GEN_MAX) + 1u;
    uint32_t tag = (uint32_t)kind << 24 | gen;
    s->obj = obj;
    if (ep != NULL) {
        s->ep = *ep;
    } else {
        s->ep = (cm__epitaph_t){.device = -1};
    }
    atomic_store_explicit(&s->tag, CM__H_LIVE | tag, memory_order_release);
    ++cm__h.live[kind];
    return (void *)(uintptr_t)((uint64_t)tag << 32 | i);
}

void *cm__handle_new(cm__kind_t kind, void *obj, const cm__epitaph_t *ep) {
    cm__core_lock();
    void *h = cm__handle_new_locked(kind, obj, ep);
    cm__core_unlock();
    return h;
}

void *cm__handle_end_locked(const void *h, cm__kind_t kind) {
    void *obj = cm__handle_obj(h, kind);
    if (obj == NULL) return NULL;
    uint32_t i = cm__h_index(h);
    cm__slot_t *s = cm__slot_at(i);
    uint32_t tag = cm__h_tag(h);
    atomic_store_explicit(&s->tag, tag, memory_order_release); /* dead: same kind and gen */
    s->obj = NULL;
    --cm__h.live[kind];
    if ((tag & CM__H_GEN_MAX) >= CM__H_GEN_MAX) {
        ++cm__h.retired; /* no generation left: the slot is never handed out again */
        return obj;
    }
    s->next_free = 0;
    if (cm__h.free_tail != 0)
        cm__slot_at(cm__h.free_tail - 1)->next_free = i + 1;
    else
        cm__h.free_head = i + 1;
    cm__h.free_tail = i + 1;
    ++cm__h.n_free;
    return obj;
}

void cm__handle_set_epitaph(const void *h, const cm__epitaph_t *ep) {
    cm__slot_t *s = cm__h_slot(h);
    if (s == NULL || ep == NULL) return;
    cm__core_lock();
    if (atomic_load_explicit(&s->tag, memory_order_relaxed) == (CM__H_LIVE | cm__h_tag(h)))
        s->ep = *ep;
    cm__core_unlock();
}

void *cm__handle_end(const void *h, cm__kind_t kind) {
    cm__core_lock();
    void *obj = cm__handle_end_locked(h, kind);
    cm__core_unlock();
    return obj;
}

size_t cm__handle_live_count(cm__kind_t kind) {
    if ((unsigned)kind >= CM__KIND_COUNT) return 0;
    cm__core_lock();
    size_t n = cm__h.live[kind];
    cm__core_unlock();
    return n;
}

size_t cm__handle_retired_count(void) {
    cm__core_lock();
    size_t n = cm__h.retired;
    cm__core_unlock();
    return n;
}

void cm__handle_age_for_tests(uint32_t generation) {
    if (generation == 0 || generation > CM__H_GEN_MAX) return;
    cm__core_lock();
    cm__h.fresh_gen = generation;
    for (uint32_t f = cm__h.free_head; f != 0; f = cm__slot_at(f - 1)->next_free) {
        cm__slot_t *s = cm__slot_at(f - 1);
        uint32_t t = atomic_load_explicit(&s->tag, memory_order_relaxed);
        if ((t & CM__H_GEN_MAX) < generation - 1u)
            atomic_store_explicit(&s->tag, (t & ~CM__H_GEN_MAX) | (generation - 1u),
                                  memory_order_relaxed);
    }
    for (uint32_t i = cm__h.n_used; i < cm__h.n_chunks * CM__H_CHUNK; ++i)
        atomic_store_explicit(&cm__slot_at(i)->tag, generation - 1u, memory_order_relaxed);
    cm__core_unlock();
}

/* ------------------------------------------------------------------ failures */

cm_status_t cm__handle_fail(const void *h, cm__kind_t kind, const char *arg, const char *func) {
    unsigned k = (unsigned)kind < CM__KIND_COUNT ? (unsigned)kind : 0u;
    const char *type = cm__kind_types[k];
    const char *create = cm__kind_create[k];
    char hint[CM_ERROR_HINT_MAX];
    if (h == NULL) {
        snprintf(hint, sizeof hint, "pass a %s from %s", type, create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s is NULL", arg);
    }
    cm__kind_t hk = cm__h_kind(h);
    uint64_t top = (uint64_t)(uintptr_t)h >> 56;
    cm__slot_t *s = cm__h_slot(h);
    if (atomic_load_explicit(&cm__h_forked, memory_order_relaxed)) {
        snprintf(hint, sizeof hint, "a child process must not use its parent's handles, and "
                 "CUDA cannot be used in a child forked after its parent used it: start the "
                 "child with exec (posix_spawn), or fork before any CUDA call");
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s (%p) is a handle of the parent process: this process was forked "
                        "(fork()) after the parent opened a device", arg, h);
    }
    if (top == 0 || (top & 0x80u) != 0 || hk == CM__KIND_NONE || (unsigned)hk >= CM__KIND_COUNT ||
        s == NULL ||
        (atomic_load_explicit(&s->tag, memory_order_acquire) & 0x7f000000u) == 0) {
        /* kind bits of a slot that never held a handle are 0 */
        snprintf(hint, sizeof hint, "pass the %s that %s returned (handles are values: do not "
                 "build, copy into or offset them)", type, create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s (%p) is not a live %s (%s): it never came from %s", arg, h, type,
                        cm__kind_names[k], create);
    }
    uint32_t want = cm__h_tag(h);
    uint32_t now = atomic_load_explicit(&s->tag, memory_order_acquire);
    if (now == (CM__H_LIVE | want)) {
        /* a live handle of another kind than expected */
        snprintf(hint, sizeof hint, "pass a %s from %s here", type, create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s is a %s, not a %s (a %s is expected here)", arg, cm__kind_types[hk],
                        type, cm__kind_names[k]);
    }
    /* stale: ended. Its epitaph is the slot's while the slot was not handed out again. */
    char msg[CM_ERROR_MESSAGE_MAX];
    size_t n = 0;
#define CM__PUT(...)                                                                         \
    do {                                                                                     \
        if (n < sizeof msg) {                                                                \
            int w_ = snprintf(msg + n, sizeof msg - n, __VA_ARGS__);                         \
            if (w_ > 0) n += (size_t)w_;                                                     \
        }                                                                                    \
    } while (0)
    const char *name = cm__kind_names[hk];
    CM__PUT("%s was already %s: it was %s %s (%s)", arg, cm__kind_ended[hk],
            strchr("aeiou", name[0]) != NULL ? "an" : "a", name, cm__kind_types[hk]);
    if (now == want) {
        cm__epitaph_t ep = s->ep;
        if (ep.what != NULL) CM__PUT(", %s", ep.what);
        if (ep.bytes != 0) {
            char size[32];
            cm__format_bytes((size_t)ep.bytes, size, sizeof size);
            CM__PUT(" of %s (%llu bytes)", size, (unsigned long long)ep.bytes);
        }
        if (ep.device >= 0) CM__PUT(" on device %d", ep.device);
        if (ep.file != NULL) CM__PUT(", created at %s:%d", ep.file, ep.line);
        if (ep.label[0] != '\0') CM__PUT(" \"%.*s\"", (int)sizeof ep.label, ep.label);
    } else {
        CM__PUT(" (ended long ago; the handle names nothing now)");
    }
    if (hk != kind) CM__PUT(", and a %s is expected here", type);
#undef CM__PUT
    snprintf(hint, sizeof hint,
             "do not use a handle after %s; set the variable to NULL after releasing it, or "
             "declare it with CM_SCOPED() so that it is released once, at scope exit",
             cm__kind_end[hk]);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint, "%s", msg);
}
