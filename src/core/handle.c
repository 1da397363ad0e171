/*
 * The generational handle table (core/handle.h) and the core spin lock (core/lock.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

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

/* ------------------------------------------------------------------ the table */

_Atomic(cm__slot_t *) cm__h_chunks[CM__H_MAX_CHUNKS];

/* Under the core lock. */
static struct {
    uint32_t n_chunks;     /* chunks allocated */
    uint32_t n_used;       /* slots ever handed out (the next fresh index) */
    uint32_t free_head;    /* index + 1 of the first free slot; 0: none */
    uint32_t free_tail;    /* index + 1 of the last free slot (FIFO: spreads generations) */
    size_t live[CM__KIND_COUNT];
    size_t retired;
    uint32_t fresh_gen;    /* generation of a never-used slot (tests raise it) */
} cm__h = {.fresh_gen = 1};

static const char *const cm__kind_names[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "handle",
    [CM__KIND_DEVICE] = "device object",
    [CM__KIND_BUFFER] = "buffer",
    [CM__KIND_HOST_BUFFER] = "host buffer",
    [CM__KIND_STREAM] = "stream",
    [CM__KIND_EVENT] = "event",
    [CM__KIND_TIMER] = "timer",
    [CM__KIND_GRAPH] = "graph",
    [CM__KIND_DEVICE_SET] = "device set",
    [CM__KIND_SPLIT] = "split array",
    [CM__KIND_COMM] = "communicator",
};

/* How a handle of each kind is obtained and ended, for hints. */
static const char *const cm__kind_create[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "the library",
    [CM__KIND_DEVICE] = "cm_device_open()",
    [CM__KIND_BUFFER] = "cm_buffer_create()",
    [CM__KIND_HOST_BUFFER] = "cm_host_buffer_create()",
    [CM__KIND_STREAM] = "cm_stream_acquire()",
    [CM__KIND_EVENT] = "cm_event_acquire()",
    [CM__KIND_TIMER] = "cm_timer_create()",
    [CM__KIND_GRAPH] = "cm_graph_capture_end()",
    [CM__KIND_DEVICE_SET] = "cm_device_set_open()",
    [CM__KIND_SPLIT] = "cm_split_create()",
    [CM__KIND_COMM] = "cm_comm_create()",
};
static const char *const cm__kind_end[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "it was released",
    [CM__KIND_DEVICE] = "cm_device_close()",
    [CM__KIND_BUFFER] = "cm_buffer_destroy()",
    [CM__KIND_HOST_BUFFER] = "cm_host_buffer_destroy()",
    [CM__KIND_STREAM] = "cm_stream_release() (or its device's close)",
    [CM__KIND_EVENT] = "cm_event_release() (or its device's close)",
    [CM__KIND_TIMER] = "cm_timer_destroy()",
    [CM__KIND_GRAPH] = "cm_graph_destroy()",
    [CM__KIND_DEVICE_SET] = "cm_device_set_close()",
    [CM__KIND_SPLIT] = "cm_split_destroy()",
    [CM__KIND_COMM] = "cm_comm_destroy()",
};

const char *cm__kind_name(cm__kind_t kind) {
    return (unsigned)kind < CM__KIND_COUNT ? cm__kind_names[kind] : "handle";
}

static inline cm__slot_t *cm__slot_at(uint32_t index) {
    return &atomic_load_explicit(&cm__h_chunks[index >> CM__H_CHUNK_BITS],
                                 memory_order_relaxed)[index & (CM__H_CHUNK - 1)];
}

/* A free slot's index (locked), or UINT32_MAX when host memory or the index space runs out. */
static uint32_t cm__slot_take_locked(void) {
    if (cm__h.free_head != 0) {
        uint32_t i = cm__h.free_head - 1;
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
        s->ep = (cm__epitaph_t){NULL, 0, -1, 0};
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
    return obj;
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
    const char *type = cm__kind_name(kind);
    const char *create = cm__kind_create[(unsigned)kind < CM__KIND_COUNT ? kind : 0];
    char hint[CM_ERROR_HINT_MAX];
    if (h == NULL) {
        snprintf(hint, sizeof hint, "pass a %s from %s", type, create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s is NULL", arg);
    }
    cm__kind_t hk = cm__h_kind(h);
    uint64_t top = (uint64_t)(uintptr_t)h >> 56;
    cm__slot_t *s = cm__h_slot(h);
    if (top == 0 || (top & 0x80u) != 0 || hk == CM__KIND_NONE || (unsigned)hk >= CM__KIND_COUNT ||
        s == NULL ||
        (atomic_load_explicit(&s->tag, memory_order_acquire) & 0x7f000000u) == 0) {
        /* kind bits of a slot that never held a handle are 0 */
        snprintf(hint, sizeof hint, "pass the handle that %s returned (handles are values: do "
                 "not build or offset them)", create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s (%p) is not a handle of the library: never a %s", arg, h, type);
    }
    uint32_t want = cm__h_tag(h);
    uint32_t now = atomic_load_explicit(&s->tag, memory_order_acquire);
    if (now == (CM__H_LIVE | want)) {
        /* a live handle of another kind than expected */
        snprintf(hint, sizeof hint, "pass a %s from %s here", type, create);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s is a %s, not a %s", arg, cm__kind_name(hk), type);
    }
    /* stale: ended. Its epitaph is still the slot's while the slot was not reused. */
    char msg[CM_ERROR_MESSAGE_MAX];
    int n = snprintf(msg, sizeof msg, "%s is a %s handle that was already ended by %s", arg,
                     cm__kind_name(hk), cm__kind_end[hk]);
    if (now == want && n > 0 && (size_t)n < sizeof msg) {
        cm__epitaph_t ep = s->ep;
        if (ep.bytes != 0)
            n += snprintf(msg + n, sizeof msg - (size_t)n, "; it held %llu bytes",
                          (unsigned long long)ep.bytes);
        if (ep.device >= 0 && (size_t)n < sizeof msg)
            n += snprintf(msg + n, sizeof msg - (size_t)n, " of device %d", ep.device);
        if (ep.file != NULL && (size_t)n < sizeof msg)
            snprintf(msg + n, sizeof msg - (size_t)n, " and was created at %s:%d", ep.file,
                     ep.line);
    } else if (n > 0 && (size_t)n < sizeof msg) {
        snprintf(msg + n, sizeof msg - (size_t)n, " (its slot has been reused since; the stale "
                 "value names nothing)");
    }
    if (hk != kind && (size_t)n < sizeof msg) {
        size_t len = 0;
        while (len < sizeof msg && msg[len]) ++len;
        snprintf(msg + len, sizeof msg - len, "; and a %s is expected here", type);
    }
    snprintf(hint, sizeof hint,
             "do not use a handle after %s; set the variable to NULL after releasing it, or "
             "declare it with CM_SCOPED() so that it is released once, at scope exit",
             cm__kind_end[hk]);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint, "%s", msg);
}
