/*
 * The per-device object (device.h, "The per-device object"), the handle registry that makes
 * use-after-destroy a reported error instead of a crash, live-buffer accounting and leak
 * reports, the memory report, and the memory pool settings of buffer.h.
 *
 * Handle checks never dereference a pointer the library does not know: every live handle is in
 * a registry (an open-addressing hash set of addresses). A destroyed handle's memory is not
 * freed at once but kept, marked dead, in a quarantine of the last CM__QUARANTINE handles, so
 * that (1) the allocator does not hand the same address to the next handle right away (a stale
 * pointer would then name a live handle), and (2) the error can say what the handle was and
 * where it was created. A buffer handle that leaves the quarantine (CM__QUARANTINE releases
 * later) is kept as storage for a later buffer handle instead of free + calloc; other handles
 * are freed then. The quarantine and the spares are emptied when no handle is left at all.
 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../memory/memory_internal.h"
#include "../exec/stream_internal.h"

/* ------------------------------------------------------------------ lock, text, detail */

/*
 * The memory lock guards short critical sections only (registry, live lists, counters: no CUDA
 * call, no wait, no allocation but a handle's), so it is a test-and-test-and-set spin lock: one
 * atomic exchange to take it and a plain release store to drop it, where a mutex costs two
 * atomic read-modify-writes and two library calls per pair on the buffer fast path. A waiter
 * spins briefly, then yields the processor so a descheduled holder can finish.
 */
static atomic_int cm__mem_spin;

void cm__mem_lock(void) {
    if (!atomic_exchange_explicit(&cm__mem_spin, 1, memory_order_acquire)) return;
    for (;;) {
        for (unsigned i = 0; atomic_load_explicit(&cm__mem_spin, memory_order_relaxed); ++i) {
            if (i >= 64) {
                sched_yield();
                i = 0;
            }
        }
        if (!atomic_exchange_explicit(&cm__mem_spin, 1, memory_order_acquire)) return;
    }
}

void cm__mem_unlock(void) {
    atomic_store_explicit(&cm__mem_spin, 0, memory_order_release);
}

cm_error_t *cm__detail(void) {
    /* cm_last_error() returns a pointer to the (non-const) thread-local detail */
    return (cm_error_t *)cm_last_error();
}

void cm__text_printf(cm__text_t *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *dst = NULL;
    size_t room = 0;
    if (t->buf != NULL && t->len < t->size) {
        dst = t->buf + t->len;
        room = t->size - t->len;
    }
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

cm_status_t cm__cuda_fail(cudaError_t err, const char *file, int line, const char *fmt, ...) {
    char call[CM_ERROR_CALL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    return cm_record_cuda_error(err, call, file, line);
}

/* ------------------------------------------------------------------ registry */

/*
 * An open-addressing hash set with linear probing. A slot holds a handle address with its kind
 * in the low bits (handles come from malloc: 8-byte aligned at least), 0 when empty. Removal
 * shifts the entries of the probe run back instead of leaving tombstones, so probe runs stay
 * short however many handles come and go (no rehash to clean up after removals).
 */
#define CM__EMPTY ((uintptr_t)0)
#define CM__KIND_BITS ((uintptr_t)7)
_Static_assert(_Alignof(max_align_t) > CM__KIND_BITS,
               "malloc'd handles must leave the low bits of their address free for the kind");

static struct {
    uintptr_t *slots;
    size_t cap;      /* power of two, or 0 */
    unsigned shift;  /* 64 - log2(cap): the hash keeps the top bits */
    size_t count;    /* live handles */
} cm__reg;

#define CM__QUARANTINE 256
static struct {
    void *mem[CM__QUARANTINE];
    cm__kind_t kind[CM__QUARANTINE];
    size_t next;  /* slot the next handle goes to */
    size_t count; /* occupied slots */
} cm__quar;

/* Buffer handles that left the quarantine (destroyed more than CM__QUARANTINE releases ago),
 * kept as storage for the next buffer handles instead of free + calloc. */
#define CM__SPARE_MAX 64
static struct {
    struct cm_buffer *mem[CM__SPARE_MAX];
    size_t count;
} cm__spare;

/* Incremented (under cm__mem_lock) whenever a device object is closed: a device checked live
 * at epoch E is still live while the epoch is E (cm__device_info()). */
static _Atomic uint64_t cm__device_epoch = 1;

/* Devices that are open, for out-of-memory holdings and trims across device objects. */
static struct cm_device *cm__open_devices;

static inline size_t cm__reg_home(uintptr_t addr) {
    return (size_t)((uint64_t)addr * UINT64_C(0x9E3779B97F4A7C15) >> cm__reg.shift);
}

/* Slot of addr, or SIZE_MAX. */
static inline size_t cm__reg_find_slot(uintptr_t addr) {
    if (cm__reg.cap == 0 || addr == 0 || (addr & CM__KIND_BITS) != 0) return SIZE_MAX;
    size_t mask = cm__reg.cap - 1;
    for (size_t i = cm__reg_home(addr);; i = (i + 1) & mask) {
        uintptr_t s = cm__reg.slots[i];
        if ((s & ~CM__KIND_BITS) == addr) return i;
        if (s == CM__EMPTY) return SIZE_MAX; /* the table is never full: an empty slot ends it */
    }
}

static void cm__reg_place(uintptr_t *slots, size_t mask, uintptr_t entry) {
    size_t i = cm__reg_home(entry & ~CM__KIND_BITS);
    while (slots[i] != CM__EMPTY) i = (i + 1) & mask;
    slots[i] = entry;
}

static bool cm__reg_grow(void) {
    size_t cap = cm__reg.cap ? cm__reg.cap * 2 : 64;
    if (cap == 0 || cap > SIZE_MAX / sizeof(uintptr_t)) return false;
    uintptr_t *slots = calloc(cap, sizeof *slots);
    if (slots == NULL) return false;
    unsigned log2cap = 0;
    while (((size_t)1 << log2cap) < cap) ++log2cap;
    uintptr_t *old = cm__reg.slots;
    size_t old_cap = cm__reg.cap;
    cm__reg.slots = slots;
    cm__reg.cap = cap;
    cm__reg.shift = 64u - log2cap;
    for (size_t j = 0; j < old_cap; ++j)
        if (old[j] != CM__EMPTY) cm__reg_place(slots, cap - 1, old[j]);
    free(old);
    return true;
}

static bool cm__reg_insert_locked(const void *h, cm__kind_t kind) {
    /* at most half full: probe runs stay short */
    if ((cm__reg.count + 1) * 2 > cm__reg.cap && !cm__reg_grow()) return false;
    cm__reg_place(cm__reg.slots, cm__reg.cap - 1, (uintptr_t)h | (uintptr_t)kind);
    ++cm__reg.count;
    return true;
}

static void cm__reg_remove_locked(const void *h) {
    size_t i = cm__reg_find_slot((uintptr_t)h);
    if (i == SIZE_MAX) return;
    /* backward-shift deletion: move later members of the run into the hole when their home
     * slot is not in (hole, their slot] */
    size_t mask = cm__reg.cap - 1;
    uintptr_t *slots = cm__reg.slots;
    for (size_t j = (i + 1) & mask; slots[j] != CM__EMPTY; j = (j + 1) & mask) {
        size_t home = cm__reg_home(slots[j] & ~CM__KIND_BITS);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            slots[i] = slots[j];
            i = j;
        }
    }
    slots[i] = CM__EMPTY;
    --cm__reg.count;
}

static inline cm__kind_t cm__reg_kind_locked(const void *h) {
    size_t i = cm__reg_find_slot((uintptr_t)h);
    return i == SIZE_MAX ? CM__KIND_NONE : (cm__kind_t)(cm__reg.slots[i] & CM__KIND_BITS);
}

static uint32_t cm__magic_of(cm__kind_t kind) {
    switch (kind) {
    case CM__KIND_DEVICE: return CM__MAGIC_DEVICE;
    case CM__KIND_BUFFER: return CM__MAGIC_BUFFER;
    case CM__KIND_HOST_BUFFER: return CM__MAGIC_HOST_BUFFER;
    case CM__KIND_NONE: break;
    }
    return 0;
}

bool cm__handle_live_locked(const void *h, cm__kind_t kind) {
    if (cm__reg_kind_locked(h) != kind) return false;
    /* the magic tag backs the registry up (and catches a corrupted handle) */
    uint32_t magic = kind == CM__KIND_DEVICE ? ((const struct cm_device *)h)->magic
                                             : ((const cm__alloc_t *)h)->magic;
    return magic == cm__magic_of(kind);
}

/* Free everything quarantined and spare (called when no handle is left). */
static void cm__quarantine_flush_locked(void) {
    for (size_t i = 0; i < CM__QUARANTINE; ++i) {
        free(cm__quar.mem[i]);
        cm__quar.mem[i] = NULL;
    }
    cm__quar.count = 0;
    cm__quar.next = 0;
    for (size_t i = 0; i < cm__spare.count; ++i) free(cm__spare.mem[i]);
    cm__spare.count = 0;
}

/* Keep a buffer handle's memory for the next handle, or free it. */
static void cm__spare_put_locked(struct cm_buffer *b) {
    if (cm__spare.count < CM__SPARE_MAX) cm__spare.mem[cm__spare.count++] = b;
    else free(b);
}

static void cm__quarantine_push_locked(void *mem, cm__kind_t kind) {
    void *oldest = cm__quar.mem[cm__quar.next];
    if (oldest == NULL) {
        ++cm__quar.count;
    } else if (cm__quar.kind[cm__quar.next] == CM__KIND_BUFFER) {
        /* the oldest leaves: nothing remembers it any more, its memory serves a new buffer */
        cm__spare_put_locked(oldest);
    } else {
        free(oldest);
    }
    cm__quar.mem[cm__quar.next] = mem;
    cm__quar.kind[cm__quar.next] = kind;
    cm__quar.next = cm__quar.next + 1 == CM__QUARANTINE ? 0 : cm__quar.next + 1;
    if (cm__reg.count == 0) {
        /* nothing is alive: release the registry, the quarantine and the spares */
        cm__quarantine_flush_locked();
        free(cm__reg.slots);
        memset(&cm__reg, 0, sizeof cm__reg);
    }
}

static cm__kind_t cm__quarantine_kind_locked(const void *h) {
    for (size_t i = 0; i < CM__QUARANTINE; ++i)
        if (cm__quar.mem[i] == h) return cm__quar.kind[i];
    return CM__KIND_NONE;
}

static const char *cm__kind_type(cm__kind_t kind) {
    switch (kind) {
    case CM__KIND_DEVICE: return "cm_device_t";
    case CM__KIND_BUFFER: return "cm_buffer_t";
    case CM__KIND_HOST_BUFFER: return "cm_host_buffer_t";
    case CM__KIND_NONE: break;
    }
    return "handle";
}

static const char *cm__kind_release(cm__kind_t kind) {
    switch (kind) {
    case CM__KIND_DEVICE: return "cm_device_close()";
    case CM__KIND_BUFFER: return "cm_buffer_destroy()";
    case CM__KIND_HOST_BUFFER: return "cm_host_buffer_destroy()";
    case CM__KIND_NONE: break;
    }
    return "destroy";
}

static const char *cm__kind_create(cm__kind_t kind) {
    switch (kind) {
    case CM__KIND_DEVICE: return "cm_device_open()";
    case CM__KIND_BUFFER: return "cm_buffer_create()";
    case CM__KIND_HOST_BUFFER: return "cm_host_buffer_create()";
    case CM__KIND_NONE: break;
    }
    return "create";
}

void cm__describe_alloc(const cm__alloc_t *a, cm__text_t *t) {
    char size[32];
    cm__format_bytes(a->bytes, size, sizeof size);
    const char *what = "device buffer";
    char extra[64] = "";
    if (a->kind == CM__KIND_BUFFER) {
        const struct cm_buffer *b = (const struct cm_buffer *)a;
        if (b->stream_ordered) snprintf(extra, sizeof extra, ", stream-ordered");
    } else {
        const struct cm_host_buffer *h = (const struct cm_host_buffer *)a;
        what = h->registered ? "registered host buffer" : "pinned host buffer";
        snprintf(extra, sizeof extra, "%s%s%s", (h->flags & CM_HOST_BUFFER_PORTABLE) ? ", portable" : "",
                 (h->flags & CM_HOST_BUFFER_MAPPED) ? ", mapped" : "",
                 (h->flags & CM_HOST_BUFFER_WRITE_COMBINED) ? ", write-combined" : "");
    }
    cm__text_printf(t, "%s of %s (%zu bytes)%s, created at %s:%d", what, size, a->bytes, extra,
                    a->file != NULL && a->file[0] ? a->file : "?", a->line);
    if (a->has_label) cm__text_printf(t, " \"%s\"", a->label);
}

cm_status_t cm__handle_fail_locked(const void *h, cm__kind_t kind, const char *arg,
                                   const char *func) {
    const char *type = cm__kind_type(kind);
    if (h == NULL) {
        char hint[160];
        snprintf(hint, sizeof hint, "pass a %s from %s", type, cm__kind_create(kind));
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s is NULL", arg);
    }
    cm__kind_t live_kind = cm__reg_kind_locked(h);
    cm__kind_t dead_kind = cm__quarantine_kind_locked(h);
    char msg[CM_ERROR_MESSAGE_MAX];
    cm__text_t t = {msg, sizeof msg, 0};
    char hint[CM_ERROR_HINT_MAX];
    if (live_kind == kind) {
        /* registered, but the tag is wrong: the handle's memory was overwritten */
        cm__text_printf(&t, "%s (%p) is a %s whose tag was overwritten: memory corruption", arg, h,
                        type);
        snprintf(hint, sizeof hint, "look for a buffer overrun next to the handle (run under "
                 "AddressSanitizer or valgrind)");
    } else if (live_kind != CM__KIND_NONE) {
        cm__text_printf(&t, "%s is a %s, not a %s", arg, cm__kind_type(live_kind), type);
        snprintf(hint, sizeof hint, "pass a %s from %s here", type, cm__kind_create(kind));
    } else if (dead_kind != CM__KIND_NONE) {
        if (dead_kind == CM__KIND_DEVICE) {
            const struct cm_device *d = h;
            cm__text_printf(&t, "%s was already closed (a cm_device_t of device %d, %s)", arg,
                            d->ordinal, d->name);
        } else {
            cm__text_printf(&t, "%s was already destroyed: it was a ", arg);
            cm__describe_alloc(h, &t);
        }
        if (dead_kind != kind) cm__text_printf(&t, " (and a %s is expected here)", type);
        snprintf(hint, sizeof hint,
                 "do not use a handle after %s; set the variable to NULL after releasing it, or "
                 "declare it with CM_SCOPED() so that it is released once, at scope exit",
                 cm__kind_release(dead_kind));
    } else {
        cm__text_printf(&t, "%s (%p) is not a live %s: it was released earlier or never came from "
                        "%s", arg, h, type, cm__kind_create(kind));
        snprintf(hint, sizeof hint,
                 "pass the handle %s returned, and do not use it after %s", cm__kind_create(kind),
                 cm__kind_release(kind));
    }
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint, "%s", msg);
}

cm_status_t cm__check_handle(const void *h, cm__kind_t kind, const char *arg, const char *func) {
    cm__mem_lock();
    cm_status_t s = cm__handle_live_locked(h, kind) ? CM_OK
                                                     : cm__handle_fail_locked(h, kind, arg, func);
    cm__mem_unlock();
    return s;
}

/* ------------------------------------------------------------------ accounting */

/* The label is copied (it may live on the caller's stack); the file is kept as a pointer: it
 * is the caller's __FILE__ (static storage, as buffer.h requires), so the fast path neither
 * measures nor copies a path on every create. */
static inline void cm__copy_where(cm__alloc_t *a, const char *label, const char *file, int line) {
    a->has_label = label != NULL && label[0] != '\0';
    if (a->has_label) cm__strlcpy(a->label, label, sizeof a->label);
    a->file = file;
    a->line = line;
}

/* Link a registered handle into its device's live list and counters (cm__mem_lock held). */
static void cm__alloc_link_locked(struct cm_device *dev, cm__alloc_t *a, cm__kind_t kind,
                                  size_t bytes) {
    a->magic = cm__magic_of(kind);
    a->serial = ++dev->serial;
    a->link.prev = dev->live.prev;
    a->link.next = &dev->live;
    dev->live.prev->next = &a->link;
    dev->live.prev = &a->link;
    if (kind == CM__KIND_BUFFER) {
        ++dev->n_buffers;
        dev->buffer_bytes += bytes;
        if (dev->buffer_bytes > dev->peak_buffer_bytes) dev->peak_buffer_bytes = dev->buffer_bytes;
    } else {
        ++dev->n_host_buffers;
        dev->host_bytes += bytes;
    }
}

static cm_status_t cm__registry_full(const struct cm_device *dev, const char *func) {
    return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, dev->ordinal, __FILE__, __LINE__, func,
                    "free host memory", "cannot grow the handle registry: host malloc failed");
}

cm_status_t cm__alloc_track(struct cm_device *dev, cm__alloc_t *a, cm__kind_t kind, size_t bytes,
                            const char *label, const char *file, int line, const char *func) {
    a->kind = kind;
    a->dev = dev;
    a->bytes = bytes;
    cm__copy_where(a, label, file, line);
    cm__mem_lock();
    if (!cm__handle_live_locked(dev, CM__KIND_DEVICE)) {
        /* closed by another thread meanwhile (a bug of the caller): refuse */
        cm_status_t s = cm__handle_fail_locked(dev, CM__KIND_DEVICE, "dev", func);
        cm__mem_unlock();
        return s;
    }
    if (!cm__reg_insert_locked(a, kind)) {
        cm__mem_unlock();
        return cm__registry_full(dev, func);
    }
    cm__alloc_link_locked(dev, a, kind, bytes);
    cm__mem_unlock();
    return CM_OK;
}

/*
 * Per-thread memos of the fast path:
 * - the last device checked live: while no device object has been closed since (the epoch),
 *   it is still live, and its ordinal and pool are what they were;
 * - the last stream checked and its device: a stream's device never changes, and back-to-back
 *   stream-ordered calls on one stream (the pool's fast path) skip the query. A stream destroyed
 *   and another created at the same address on another device would be misjudged here; CUDA
 *   itself then rejects the call.
 * One small thread-local object, in the initial-exec TLS model: a plain %fs-relative access
 * instead of a __tls_get_addr call per use in the shared library (40 bytes of static TLS, well
 * within what glibc reserves for libraries loaded with dlopen).
 */
#if defined(__GNUC__) || defined(__clang__)
#  define CM__TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#else
#  define CM__TLS_INITIAL_EXEC
#endif
static _Thread_local CM__TLS_INITIAL_EXEC struct {
    const struct cm_device *dev;
    uint64_t epoch;
    int ordinal;
    cudaMemPool_t pool;
    cudaStream_t stream;
    int stream_device; /* of stream (NULL: none; stream 0 never reaches the memo) */
} cm__memo;

static inline bool cm__stream_known_tls(cudaStream_t stream, int ordinal) {
    return stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread ||
           (stream == cm__memo.stream && cm__memo.stream_device == ordinal);
}

cm_status_t cm__device_info(const cm_device_t *dev, cudaStream_t stream, const char *func,
                            cm__dev_info_t *info) {
    uint64_t epoch = atomic_load_explicit(&cm__device_epoch, memory_order_acquire);
    if (dev != NULL && dev == cm__memo.dev && epoch == cm__memo.epoch) {
        info->ordinal = cm__memo.ordinal;
        info->pool = cm__memo.pool;
        info->epoch = epoch;
        info->stream_known = cm__stream_known_tls(stream, info->ordinal);
        return CM_OK;
    }
    cm__mem_lock();
    if (!cm__handle_live_locked(dev, CM__KIND_DEVICE)) {
        cm_status_t s = cm__handle_fail_locked(dev, CM__KIND_DEVICE, "dev", func);
        cm__mem_unlock();
        return s;
    }
    info->ordinal = dev->ordinal;
    info->pool = dev->pool;
    info->epoch = atomic_load_explicit(&cm__device_epoch, memory_order_relaxed);
    cm__mem_unlock();
    cm__memo.dev = dev;
    cm__memo.epoch = info->epoch;
    cm__memo.ordinal = info->ordinal;
    cm__memo.pool = info->pool;
    info->stream_known = cm__stream_known_tls(stream, info->ordinal);
    return CM_OK;
}

cm_status_t cm__buffer_track(struct cm_device *dev, const cm__dev_info_t *info, size_t bytes,
                             void *ptr, bool stream_ordered, cudaStream_t stream,
                             const char *label, const char *file, int line, const char *func,
                             struct cm_buffer **out) {
    cm__mem_lock();
    /* no device closed since the check: dev is live without a look-up */
    if (atomic_load_explicit(&cm__device_epoch, memory_order_relaxed) != info->epoch &&
        !cm__handle_live_locked(dev, CM__KIND_DEVICE)) {
        /* closed by another thread meanwhile (a bug of the caller): refuse */
        cm_status_t s = cm__handle_fail_locked(dev, CM__KIND_DEVICE, "dev", func);
        cm__mem_unlock();
        return s;
    }
    struct cm_buffer *b = cm__spare.count > 0 ? cm__spare.mem[--cm__spare.count]
                                              : malloc(sizeof *b);
    if (b == NULL) {
        cm__mem_unlock();
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, info->ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the buffer handle (%zu bytes)",
                        sizeof *b);
    }
    if (!cm__reg_insert_locked(b, CM__KIND_BUFFER)) {
        cm__spare_put_locked(b);
        cm__mem_unlock();
        return cm__registry_full(dev, func);
    }
    /* every field is set: recycled storage holds a dead handle */
    b->a.kind = CM__KIND_BUFFER;
    b->a.dev = dev;
    b->a.bytes = bytes;
    cm__copy_where(&b->a, label, file, line);
    b->ptr = ptr;
    b->stream_ordered = stream_ordered;
    b->stream = stream_ordered ? stream : 0;
    cm__alloc_link_locked(dev, &b->a, CM__KIND_BUFFER, bytes);
    cm__mem_unlock();
    *out = b;
    return CM_OK;
}

void cm__alloc_untrack_locked(cm__alloc_t *a) {
    struct cm_device *dev = a->dev;
    cm__reg_remove_locked(a);
    a->link.prev->next = a->link.next;
    a->link.next->prev = a->link.prev;
    a->link.prev = a->link.next = NULL;
    if (a->kind == CM__KIND_BUFFER) {
        --dev->n_buffers;
        dev->buffer_bytes -= a->bytes;
    } else {
        --dev->n_host_buffers;
        dev->host_bytes -= a->bytes;
    }
    a->magic = CM__MAGIC_DEAD;
    cm__quarantine_push_locked(a, a->kind);
}

/* ------------------------------------------------------------------ current device, streams */

cm_status_t cm__mem_device_enter(int ordinal, int *saved) {
    *saved = -1;
    int current = -1;
    if (cm__cuda.get_device(&current) == cudaSuccess && current == ordinal) return CM_OK;
    cudaError_t err = cm__cuda.set_device(ordinal);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaSetDevice(%d)", ordinal);
    *saved = current; /* -1 when the caller had none: nothing to restore */
    return CM_OK;
}

void cm__mem_device_leave(int saved) {
    if (saved >= 0) (void)cm__cuda.set_device(saved);
}

void cm__stream_check_forget(void) {
    cm__memo.stream = NULL;
    cm__memo.stream_device = -1;
}

bool cm__stream_known(cudaStream_t stream, int ordinal) {
    return cm__stream_known_tls(stream, ordinal);
}

cm_status_t cm__check_stream_device(cudaStream_t stream, int ordinal, const char *func) {
    if (cm__stream_known_tls(stream, ordinal)) return CM_OK;
    int device = -1;
    cudaError_t err = cm__cuda.stream_get_device(stream, &device);
    if (err == cudaSuccess) {
        cm__memo.stream = stream;
        cm__memo.stream_device = device;
    }
    if (err != cudaSuccess) {
        cm_status_t s = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamGetDevice(stream) in %s",
                                      func);
        cm_error_t *e = cm__detail();
        if (!e->context_lost) {
            snprintf(e->message, sizeof e->message,
                     "the stream passed to %s is not a valid CUDA stream (%s: %s)", func,
                     cudaGetErrorName(err), cudaGetErrorString(err));
            cm__strlcpy(e->hint, "pass a live stream from cudaStreamCreate(), or 0 for the "
                        "default stream; a destroyed stream cannot be used", sizeof e->hint);
        }
        return s;
    }
    if (device != ordinal) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "queue the work on a stream of device %d (create it after cudaSetDevice(%d)), or "
                 "use a buffer of device %d",
                 ordinal, ordinal, device);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "the stream belongs to device %d but the buffer to device %d", device,
                        ordinal);
    }
    return CM_OK;
}

/* ------------------------------------------------------------------ open, close */

cm_status_t cm_device_open(int ordinal, cm_device_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_device_t * to receive the device",
                "out is NULL");
    CM_TRY(cm__check_ordinal(ordinal));

    struct cudaDeviceProp props;
    memset(&props, 0, sizeof props);
    cudaError_t err = cm__cuda.get_device_properties(&props, ordinal);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaGetDeviceProperties(%d)", ordinal);
    int pools = 0;
    err = cm__cuda.device_get_attribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported, %d)", ordinal);
    }

    struct cm_device *dev = calloc(1, sizeof *dev);
    if (dev == NULL) {
        return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                        "cannot allocate the device object (%zu bytes)", sizeof *dev);
    }
    dev->ordinal = ordinal;
    cm__strlcpy(dev->name, props.name, sizeof dev->name);
    dev->total_bytes = props.totalGlobalMem;
    dev->live.prev = dev->live.next = &dev->live;
    dev->release_threshold = ~0ull;
    cm__staging_init(&dev->staging);

    cm_status_t status = CM_OK;
    int saved = -1;
    if (pools) {
        CM_TRY_GOTO(cm__mem_device_enter(ordinal, &saved), status, fail);
        struct cudaMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = cudaMemAllocationTypePinned;
        pp.handleTypes = cudaMemHandleTypeNone;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = ordinal;
        err = cm__cuda.mem_pool_create(&dev->pool, &pp);
        if (err != cudaSuccess) {
            dev->pool = NULL;
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolCreate(device %d)", ordinal);
            goto fail;
        }
        unsigned long long keep = dev->release_threshold;
        err = cm__cuda.mem_pool_set_attribute(dev->pool, cudaMemPoolAttrReleaseThreshold, &keep);
        if (err != cudaSuccess) {
            status = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
            goto fail;
        }
        cm__mem_device_leave(saved);
        saved = -1;
    }

    cm__mem_lock();
    if (!cm__reg_insert_locked(dev, CM__KIND_DEVICE)) {
        cm__mem_unlock();
        status = CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                          "cannot grow the handle registry: host malloc failed");
        goto fail;
    }
    dev->magic = CM__MAGIC_DEVICE;
    dev->next_open = cm__open_devices;
    cm__open_devices = dev;
    cm__mem_unlock();
    *out = dev;
    return CM_OK;

fail:
    if (dev->pool != NULL) (void)cm__cuda.mem_pool_destroy(dev->pool);
    cm__mem_device_leave(saved);
    cm__staging_release(&dev->staging);
    pthread_mutex_destroy(&dev->staging.lock);
    free(dev);
    return status;
}

/* The detail of a refused close: counts, bytes, the first buffers. Called under the lock. */
static cm_status_t cm__close_busy_locked(const struct cm_device *dev) {
    char msg[CM_ERROR_MESSAGE_MAX];
    cm__text_t t = {msg, sizeof msg, 0};
    size_t count = dev->n_buffers + dev->n_host_buffers;
    size_t bytes = dev->buffer_bytes + dev->host_bytes;
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
                    "destroy every buffer of the device before closing it (cm_buffer_destroy(), "
                    "cm_host_buffer_destroy()); cm_device_leak_report() lists them all",
                    "%s", msg);
}

cm_status_t cm_device_close(cm_device_t *dev) {
    if (dev == NULL) return CM_OK;
    cm__mem_lock();
    if (!cm__handle_live_locked(dev, CM__KIND_DEVICE)) {
        cm_status_t s = cm__handle_fail_locked(dev, CM__KIND_DEVICE, "dev", __func__);
        cm__mem_unlock();
        return s;
    }
    if (dev->n_buffers + dev->n_host_buffers > 0) {
        cm_status_t s = cm__close_busy_locked(dev);
        cm__mem_unlock();
        return s;
    }
    cm_status_t exec_busy = cm__exec_close_check(dev); /* stream.c: streams or events still lent */
    if (exec_busy != CM_OK) {
        cm__mem_unlock();
        return exec_busy;
    }
    cm__reg_remove_locked(dev);
    atomic_fetch_add_explicit(&cm__device_epoch, 1, memory_order_release);
    for (struct cm_device **p = &cm__open_devices; *p != NULL; p = &(*p)->next_open) {
        if (*p == dev) {
            *p = dev->next_open;
            break;
        }
    }
    dev->next_open = NULL;
    cm__mem_unlock();

    cm__exec_close_release(dev); /* stream.c: the device's streams and events */
    /* outside the lock: the staging release waits for DMA */
    cm__staging_release(&dev->staging);
    pthread_mutex_destroy(&dev->staging.lock);
    cm_status_t status = CM_OK;
    if (dev->pool != NULL && cm__context_guard(dev->ordinal) == CM_OK) {
        cudaError_t err = cm__cuda.mem_pool_destroy(dev->pool);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolDestroy(device %d)",
                                   dev->ordinal);
    }
    dev->pool = NULL;
    cm__mem_lock();
    dev->magic = CM__MAGIC_DEAD;
    cm__quarantine_push_locked(dev, CM__KIND_DEVICE);
    cm__mem_unlock();
    return status;
}

void cm_device_scope_exit(cm_device_t **dev) {
    if (dev == NULL || *dev == NULL) return;
    if (cm_device_close(*dev) != CM_ERROR_BUSY) *dev = NULL;
}

cm_status_t cm_device_ordinal(const cm_device_t *dev, int *ordinal) {
    CM__REQUIRE(ordinal != NULL, "pass the address of an int", "ordinal is NULL");
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    *ordinal = dev->ordinal;
    return CM_OK;
}

cm_status_t cm_device_memory_pool(const cm_device_t *dev, cudaMemPool_t *pool) {
    CM__REQUIRE(pool != NULL, "pass the address of a cudaMemPool_t", "pool is NULL");
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    *pool = dev->pool;
    return CM_OK;
}

/* ------------------------------------------------------------------ reports */

cm_status_t cm_device_leak_report(const cm_device_t *dev, char *buf, size_t size, size_t *length) {
    CM__REQUIRE(buf != NULL || size == 0, "pass a buffer, or size 0 to measure the report",
                "buf is NULL but size is %zu", size);
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    cm__text_t t = {buf, size, 0};
    if (buf != NULL && size > 0) buf[0] = '\0';
    cm__mem_lock();
    size_t count = dev->n_buffers + dev->n_host_buffers;
    size_t bytes = dev->buffer_bytes + dev->host_bytes;
    if (count == 0) {
        cm__text_printf(&t, "device %d (%s): no live buffers\n", dev->ordinal, dev->name);
    } else {
        char total[32];
        cm__format_bytes(bytes, total, sizeof total);
        cm__text_printf(&t, "device %d (%s): %zu live buffer%s, %s (%zu bytes): %zu on the device, "
                        "%zu pinned on the host\n", dev->ordinal, dev->name, count,
                        count == 1 ? "" : "s", total, bytes, dev->n_buffers, dev->n_host_buffers);
        for (const cm__link_t *l = dev->live.next; l != &dev->live; l = l->next) {
            const cm__alloc_t *a =
                (const cm__alloc_t *)((const char *)l - offsetof(cm__alloc_t, link));
            cm__text_printf(&t, "  #%llu ", (unsigned long long)a->serial);
            cm__describe_alloc(a, &t);
            cm__text_printf(&t, "\n");
        }
    }
    cm__mem_unlock();
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

cm_status_t cm_device_memory_report(const cm_device_t *dev_in, cm_memory_report_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_memory_report_t", "out is NULL");
    CM_TRY(cm__check_handle(dev_in, CM__KIND_DEVICE, "dev", __func__));
    struct cm_device *dev = (struct cm_device *)dev_in; /* staging lock */
    CM_TRY(cm__context_guard(dev->ordinal));
    cm_memory_report_t r;
    memset(&r, 0, sizeof r);
    r.device = dev->ordinal;
    cm__mem_lock();
    r.live_buffers = dev->n_buffers;
    r.live_bytes = dev->buffer_bytes;
    r.peak_live_bytes = dev->peak_buffer_bytes;
    r.live_host_buffers = dev->n_host_buffers;
    r.live_host_bytes = dev->host_bytes;
    r.pool_release_threshold = dev->release_threshold;
    cm__mem_unlock();
    if (dev->pool != NULL) {
        CM_TRY(cm__pool_attr(dev->pool, cudaMemPoolAttrReservedMemCurrent,
                             "cudaMemPoolAttrReservedMemCurrent", &r.pool_reserved_bytes));
        CM_TRY(cm__pool_attr(dev->pool, cudaMemPoolAttrUsedMemCurrent,
                             "cudaMemPoolAttrUsedMemCurrent", &r.pool_used_bytes));
        CM_TRY(cm__pool_attr(dev->pool, cudaMemPoolAttrReservedMemHigh,
                             "cudaMemPoolAttrReservedMemHigh", &r.pool_peak_reserved_bytes));
    }
    r.staging_bytes = cm__staging_bytes(&dev->staging);
    int saved = -1;
    CM_TRY(cm__mem_device_enter(dev->ordinal, &saved));
    cudaError_t err = cm__cuda.mem_get_info(&r.device_free_bytes, &r.device_total_bytes);
    cm__mem_device_leave(saved);
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemGetInfo");
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

cm_status_t cm_device_pool_set_release_threshold(cm_device_t *dev, unsigned long long bytes) {
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    CM_TRY(cm__context_guard(dev->ordinal));
    if (dev->pool == NULL) {
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, dev->ordinal,
                        "use synchronous buffers (cm_buffer_create()) on this device",
                        "device %d (%s) has no memory pools (cudaDevAttrMemoryPoolsSupported is 0)",
                        dev->ordinal, dev->name);
    }
    unsigned long long v = bytes;
    cudaError_t err = cm__cuda.mem_pool_set_attribute(dev->pool, cudaMemPoolAttrReleaseThreshold, &v);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold, %llu)", bytes);
    }
    cm__mem_lock();
    dev->release_threshold = bytes;
    cm__mem_unlock();
    return CM_OK;
}

cm_status_t cm_device_pool_trim(cm_device_t *dev, size_t keep_bytes) {
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    CM_TRY(cm__context_guard(dev->ordinal));
    if (dev->pool == NULL) return CM_OK;
    cudaError_t err = cm__cuda.mem_pool_trim_to(dev->pool, keep_bytes);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolTrimTo(pool, %zu)", keep_bytes);
    return CM_OK;
}

/* ------------------------------------------------------------------ across device objects */

void cm__ordinal_holdings(int ordinal, size_t *live_bytes, size_t *live_buffers,
                          size_t *cached_bytes) {
    size_t lb = 0, nb = 0, cached = 0;
    cm__mem_lock();
    for (struct cm_device *d = cm__open_devices; d != NULL; d = d->next_open) {
        if (d->ordinal != ordinal) continue;
        lb += d->buffer_bytes;
        nb += d->n_buffers;
        if (d->pool != NULL) {
            unsigned long long reserved = 0, used = 0;
            if (cm__cuda.mem_pool_get_attribute(d->pool, cudaMemPoolAttrReservedMemCurrent,
                                                 &reserved) == cudaSuccess &&
                cm__cuda.mem_pool_get_attribute(d->pool, cudaMemPoolAttrUsedMemCurrent, &used) ==
                    cudaSuccess &&
                reserved > used)
                cached += (size_t)(reserved - used);
        }
    }
    cm__mem_unlock();
    *live_bytes = lb;
    *live_buffers = nb;
    *cached_bytes = cached;
}

size_t cm__trim_ordinal(int ordinal) {
    size_t released = 0;
    cm__mem_lock();
    for (struct cm_device *d = cm__open_devices; d != NULL; d = d->next_open) {
        if (d->ordinal != ordinal || d->pool == NULL) continue;
        unsigned long long before = 0, after = 0;
        if (cm__cuda.mem_pool_get_attribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &before) !=
            cudaSuccess)
            before = 0;
        if (cm__cuda.mem_pool_trim_to(d->pool, 0) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        if (cm__cuda.mem_pool_get_attribute(d->pool, cudaMemPoolAttrReservedMemCurrent, &after) ==
                cudaSuccess &&
            before > after)
            released += (size_t)(before - after);
    }
    cm__mem_unlock();
    return released;
}

cm_status_t cm__peer_prepare(struct cm_device *a, struct cm_device *b) {
    if (a->ordinal == b->ordinal) return CM_OK;
    bool cacheable = a->ordinal < 64 && b->ordinal < 64;
    if (cacheable) {
        cm__mem_lock();
        bool done = ((a->peer_ready >> b->ordinal) & 1u) && ((b->peer_ready >> a->ordinal) & 1u);
        cm__mem_unlock();
        if (done) return CM_OK;
    }
    struct cm_device *pair[2] = {a, b};
    for (int i = 0; i < 2; ++i) {
        struct cm_device *self = pair[i], *peer = pair[1 - i];
        int can = 0;
        cudaError_t err = cm__cuda.device_can_access_peer(&can, self->ordinal, peer->ordinal);
        if (err != cudaSuccess) {
            return cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceCanAccessPeer(%d, %d)",
                                 self->ordinal, peer->ordinal);
        }
        if (!can) continue; /* cudaMemcpyPeer stages through the host */
        int saved = -1;
        CM_TRY(cm__mem_device_enter(self->ordinal, &saved));
        err = cm__cuda.device_enable_peer_access(peer->ordinal, 0);
        cm__mem_device_leave(saved);
        if (err == cudaErrorPeerAccessAlreadyEnabled) {
            (void)cudaGetLastError(); /* not an error here */
        } else if (err != cudaSuccess) {
            return cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceEnablePeerAccess(%d) on device %d",
                                 peer->ordinal, self->ordinal);
        }
        /* self may access peer's memory: let it reach the peer's pool allocations as well */
        if (peer->pool != NULL) {
            struct cudaMemAccessDesc desc;
            memset(&desc, 0, sizeof desc);
            desc.location.type = cudaMemLocationTypeDevice;
            desc.location.id = self->ordinal;
            desc.flags = cudaMemAccessFlagsProtReadWrite;
            err = cm__cuda.mem_pool_set_access(peer->pool, &desc, 1);
            if (err != cudaSuccess) {
                return cm__cuda_fail(err, __FILE__, __LINE__,
                                     "cudaMemPoolSetAccess(pool of device %d, device %d)",
                                     peer->ordinal, self->ordinal);
            }
        }
    }
    if (cacheable) {
        cm__mem_lock();
        a->peer_ready |= UINT64_C(1) << b->ordinal;
        b->peer_ready |= UINT64_C(1) << a->ordinal;
        cm__mem_unlock();
    }
    return CM_OK;
}
