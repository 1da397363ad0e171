/*
 * The execution module (stream.h): per-device stream and event pools, dependencies, host
 * callbacks, synchronisation that names the likely faulting launch, timers and graphs.
 *
 * State per device object lives here, keyed by the cm_device_t pointer (a short list of
 * `cm__exec` records, one per device object that used a stream or an event), so the memory
 * module's structs are untouched. Every handle this file hands out (streams, events, timers,
 * graphs) is in a handle set (open addressing over addresses) and is checked there before it is
 * dereferenced: a released, closed or foreign handle is reported, not followed. Pooled streams
 * and events stay allocated until their device is closed; timers and graphs are freed on
 * destroy.
 *
 * One mutex (cm__ex_lock) guards all of it; CUDA calls that may take long (stream creation,
 * synchronisation) run outside it, on a slot the caller owns at that point.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../memory/memory_internal.h"
#include "stream_internal.h"

#define CM__MAGIC_STREAM 0x4d525453u /* "STRM" */
#define CM__MAGIC_EVENT 0x544e5645u  /* "EVNT" */
#define CM__MAGIC_TIMER 0x524d4954u  /* "TIMR" */
#define CM__MAGIC_GRAPH 0x48505247u  /* "GRPH" */

#define CM__DEFAULT_LOW 16u
#define CM__DEFAULT_HIGH 4u


/* ------------------------------------------------------------------ types */

typedef enum cm__xkind { CM__X_NONE = 0, CM__X_STREAM, CM__X_EVENT, CM__X_TIMER, CM__X_GRAPH } cm__xkind_t;

struct cm__exec;

struct cm_stream {
    uint32_t magic;
    struct cm__exec *ex;
    int ordinal;
    cm_stream_priority_t priority;
    unsigned index;              /* in its class */
    cudaStream_t cs;             /* NULL until first hand-out */
    bool acquired;
    bool capturing;
    int next_free;               /* index of the next free stream of the class, -1: none */
    const char *file;            /* last acquire */
    int line;
    const void *last_kernel;     /* last library launch queued on it */
    const char *last_file;
    int last_line;
    void *scratch;               /* device scratch of work queued on it (cm__stream_scratch) */
    size_t scratch_bytes;
};

struct cm_event {
    uint32_t magic;
    struct cm__exec *ex;
    int ordinal;
    cm_event_kind_t kind;
    cudaEvent_t ce;
    bool acquired;
    bool recorded;
    struct cm_stream *recorded_on; /* for fault attribution; may be released since */
    struct cm_event *next_free;
    struct cm_event *next_all;
};

struct cm_timer {
    uint32_t magic;
    cm_event_t *start, *stop;
    cm_stream_t *stream;
    int state; /* 0 new, 1 started, 2 stopped */
};

struct cm_graph {
    uint32_t magic;
    int ordinal;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

typedef struct cm__exec {
    const cm_device_t *dev;
    int ordinal;
    struct cm__exec *next;
    unsigned cap[2];
    struct cm_stream *streams[2];
    int free_head[2];
    unsigned acquired[2], created[2], peak[2];
    int priority_value[2]; /* CUDA priority of each class */
    struct cm_event *free_events[2];
    struct cm_event *all_events;
    unsigned n_events[2];
    unsigned events_acquired;
    void *legacy_scratch;        /* cm__stream_scratch of the legacy default stream */
    size_t legacy_scratch_bytes;
} cm__exec_t;

static pthread_mutex_t cm__ex_lock = PTHREAD_MUTEX_INITIALIZER;
static cm__exec_t *cm__ex_list;

/* ------------------------------------------------------------------ handle set */

#define CM__XEMPTY ((uintptr_t)0)
#define CM__XTOMB ((uintptr_t)1)

static struct {
    uintptr_t *keys;
    unsigned char *kinds;
    size_t cap, count, used;
} cm__xs;

static size_t cm__xhash(uintptr_t k, size_t cap) {
    uint64_t h = (uint64_t)(k >> 3) * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static size_t cm__xs_find(uintptr_t k) {
    if (cm__xs.cap == 0) return SIZE_MAX;
    size_t i = cm__xhash(k, cm__xs.cap);
    for (size_t n = 0; n < cm__xs.cap; ++n) {
        if (cm__xs.keys[i] == k) return i;
        if (cm__xs.keys[i] == CM__XEMPTY) return SIZE_MAX;
        i = (i + 1) & (cm__xs.cap - 1);
    }
    return SIZE_MAX;
}

static bool cm__xs_grow(void) {
    size_t cap = cm__xs.cap ? cm__xs.cap * 2 : 256;
    if (cm__xs.cap != 0 && cm__xs.count * 4 < cm__xs.cap) cap = cm__xs.cap;
    uintptr_t *keys = calloc(cap, sizeof *keys);
    unsigned char *kinds = calloc(cap, sizeof *kinds);
    if (keys == NULL || kinds == NULL) {
        free(keys);
        free(kinds);
        return false;
    }
    for (size_t j = 0; j < cm__xs.cap; ++j) {
        uintptr_t k = cm__xs.keys[j];
        if (k == CM__XEMPTY || k == CM__XTOMB) continue;
        size_t i = cm__xhash(k, cap);
        while (keys[i] != CM__XEMPTY) i = (i + 1) & (cap - 1);
        keys[i] = k;
        kinds[i] = cm__xs.kinds[j];
    }
    free(cm__xs.keys);
    free(cm__xs.kinds);
    cm__xs.keys = keys;
    cm__xs.kinds = kinds;
    cm__xs.cap = cap;
    cm__xs.used = cm__xs.count;
    return true;
}

static bool cm__xs_insert_locked(const void *h, cm__xkind_t kind) {
    if ((cm__xs.used + 1) * 2 > cm__xs.cap && !cm__xs_grow()) return false;
    uintptr_t k = (uintptr_t)h;
    size_t i = cm__xhash(k, cm__xs.cap);
    while (cm__xs.keys[i] != CM__XEMPTY && cm__xs.keys[i] != CM__XTOMB) i = (i + 1) & (cm__xs.cap - 1);
    if (cm__xs.keys[i] == CM__XEMPTY) ++cm__xs.used;
    cm__xs.keys[i] = k;
    cm__xs.kinds[i] = (unsigned char)kind;
    ++cm__xs.count;
    return true;
}

static void cm__xs_remove_locked(const void *h) {
    size_t i = cm__xs_find((uintptr_t)h);
    if (i == SIZE_MAX) return;
    cm__xs.keys[i] = CM__XTOMB;
    cm__xs.kinds[i] = 0;
    --cm__xs.count;
    if (cm__xs.count == 0) {
        free(cm__xs.keys);
        free(cm__xs.kinds);
        memset(&cm__xs, 0, sizeof cm__xs);
    }
}

static cm__xkind_t cm__xs_kind_locked(const void *h) {
    if (h == NULL) return CM__X_NONE;
    size_t i = cm__xs_find((uintptr_t)h);
    return i == SIZE_MAX ? CM__X_NONE : (cm__xkind_t)cm__xs.kinds[i];
}

/* ------------------------------------------------------------------ helpers */

static const char *cm__prio_name(cm_stream_priority_t p) {
    return p == CM_STREAM_PRIORITY_HIGH ? "high" : "low";
}

static const char *cm__site(const char *file, char *buf, size_t size, int line) {
    if (file == NULL) return "an unknown place (no file:line given)";
    snprintf(buf, size, "%s:%d", file, line);
    return buf;
}

static cm__exec_t *cm__ex_find_locked(const cm_device_t *dev) {
    for (cm__exec_t *x = cm__ex_list; x != NULL; x = x->next)
        if (x->dev == dev) return x;
    return NULL;
}

static void cm__ex_free(cm__exec_t *x, bool destroy_cuda) {
    int saved = -1;
    bool have_scratch = x->legacy_scratch != NULL;
    for (int c = 0; c < 2 && !have_scratch; ++c)
        for (unsigned i = 0; i < x->cap[c] && !have_scratch; ++i)
            have_scratch = x->streams[c][i].scratch != NULL;
    /* scratch exists only where a GPU ran work: cudaFree it on its device */
    if (have_scratch && destroy_cuda && cm__mem_device_enter(x->ordinal, &saved) != CM_OK)
        destroy_cuda = false;
    if (destroy_cuda && x->legacy_scratch != NULL) (void)cudaFree(x->legacy_scratch);
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            struct cm_stream *s = &x->streams[c][i];
            if (s->scratch != NULL && destroy_cuda) (void)cudaFree(s->scratch);
            if (s->cs != NULL && destroy_cuda) (void)cm__cuda.stream_destroy(s->cs);
        }
        free(x->streams[c]);
        x->streams[c] = NULL;
    }
    while (x->all_events != NULL) {
        struct cm_event *e = x->all_events;
        x->all_events = e->next_all;
        if (destroy_cuda) (void)cm__cuda.event_destroy(e->ce);
        free(e);
    }
    if (have_scratch) cm__mem_device_leave(saved);
    free(x);
}

/* Allocate the stream slots of a class (no CUDA call: streams are created on first use). */
static bool cm__ex_alloc_streams(cm__exec_t *x, unsigned low, unsigned high) {
    unsigned n[2] = {low, high};
    for (int c = 0; c < 2; ++c) {
        x->streams[c] = calloc(n[c] ? n[c] : 1, sizeof(struct cm_stream));
        if (x->streams[c] == NULL) return false;
        x->cap[c] = n[c];
        for (unsigned i = 0; i < n[c]; ++i) {
            struct cm_stream *s = &x->streams[c][i];
            s->ex = x;
            s->ordinal = x->ordinal;
            s->priority = (cm_stream_priority_t)c;
            s->index = i;
            s->next_free = i + 1 < n[c] ? (int)(i + 1) : -1;
        }
        x->free_head[c] = n[c] ? 0 : -1;
    }
    return true;
}

static bool cm__ex_register_streams_locked(cm__exec_t *x) {
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            if (!cm__xs_insert_locked(&x->streams[c][i], CM__X_STREAM)) return false;
            x->streams[c][i].magic = CM__MAGIC_STREAM;
        }
    }
    return true;
}

static void cm__ex_unregister_locked(cm__exec_t *x) {
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            cm__xs_remove_locked(&x->streams[c][i]);
            x->streams[c][i].magic = 0;
        }
    }
    for (struct cm_event *e = x->all_events; e != NULL; e = e->next_all) {
        cm__xs_remove_locked(e);
        e->magic = 0;
    }
}

static cm_status_t cm__oom(int ordinal, const char *what) {
    return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                    "cannot allocate %s: host malloc failed", what);
}

/* The execution state of dev, created on first use (dev checked: live device object). */
static cm_status_t cm__ex_get(cm_device_t *dev, const char *func, cm__exec_t **out) {
    pthread_mutex_lock(&cm__ex_lock);
    cm__exec_t *x = cm__ex_find_locked(dev);
    pthread_mutex_unlock(&cm__ex_lock);
    if (x != NULL) {
        *out = x;
        return CM_OK;
    }
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", func));
    int ordinal = -1;
    CM_TRY(cm_device_ordinal(dev, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    int least = 0, greatest = 0;
    int saved = -1;
    CM_TRY(cm__mem_device_enter(ordinal, &saved));
    cudaError_t err = cm__cuda.priority_range(&least, &greatest);
    cm__mem_device_leave(saved);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceGetStreamPriorityRange (device %d)",
                             ordinal);
    x = calloc(1, sizeof *x);
    if (x == NULL) return cm__oom(ordinal, "the stream pool");
    x->dev = dev;
    x->ordinal = ordinal;
    x->priority_value[CM_STREAM_PRIORITY_LOW] = least;
    x->priority_value[CM_STREAM_PRIORITY_HIGH] = greatest;
    if (!cm__ex_alloc_streams(x, CM__DEFAULT_LOW, CM__DEFAULT_HIGH)) {
        cm__ex_free(x, false);
        return cm__oom(ordinal, "the stream pool");
    }
    pthread_mutex_lock(&cm__ex_lock);
    cm__exec_t *other = cm__ex_find_locked(dev);
    if (other != NULL) { /* another thread was first */
        pthread_mutex_unlock(&cm__ex_lock);
        cm__ex_free(x, false);
        *out = other;
        return CM_OK;
    }
    if (!cm__ex_register_streams_locked(x)) {
        cm__ex_unregister_locked(x);
        pthread_mutex_unlock(&cm__ex_lock);
        cm__ex_free(x, false);
        return cm__oom(ordinal, "the handle set of the stream pool");
    }
    x->next = cm__ex_list;
    cm__ex_list = x;
    pthread_mutex_unlock(&cm__ex_lock);
    *out = x;
    return CM_OK;
}

/* Check a stream handle (lock held): acquired pooled stream. Records the failure. */
static cm_status_t cm__stream_check_locked(const cm_stream_t *s, const char *arg, const char *func) {
    if (s == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass a stream from cm_stream_acquire()", "%s is NULL", arg);
    }
    cm__xkind_t k = cm__xs_kind_locked(s);
    if (k != CM__X_STREAM || s->magic != CM__MAGIC_STREAM) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass a stream from cm_stream_acquire() of a device that is still open",
                        "%s (%p) is not a stream of any open device: never acquired, a pointer to "
                        "something else, or its device was closed%s",
                        arg, (const void *)s, k == CM__X_NONE ? "" : " (it is another kind of handle)");
    }
    if (!s->acquired) {
        char site[CM__WHERE_MAX + 16];
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, s->ordinal, __FILE__, __LINE__, func,
                        "a released stream must not be used again: acquire a stream and keep it "
                        "until you release it once",
                        "%s is a %s-priority stream of device %d that was released (last acquired "
                        "at %s)",
                        arg, cm__prio_name(s->priority), s->ordinal,
                        cm__site(s->file, site, sizeof site, s->line));
    }
    return CM_OK;
}

static cm_status_t cm__event_check_locked(const cm_event_t *e, const char *arg, const char *func) {
    if (e == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass an event from cm_event_acquire()", "%s is NULL", arg);
    }
    if (cm__xs_kind_locked(e) != CM__X_EVENT || e->magic != CM__MAGIC_EVENT) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass an event from cm_event_acquire() of a device that is still open",
                        "%s (%p) is not an event of any open device: never acquired, a pointer "
                        "to something else, or its device was closed",
                        arg, (const void *)e);
    }
    if (!e->acquired) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, e->ordinal, __FILE__, __LINE__, func,
                        "a released event must not be used again",
                        "%s is a %s event of device %d that was released", arg,
                        e->kind == CM_EVENT_TIMING ? "timing" : "synchronisation-only", e->ordinal);
    }
    return CM_OK;
}

static cm_status_t cm__event_check(const cm_event_t *e, const char *arg, const char *func) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(e, arg, func);
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

static cm_status_t cm__same_device(int a, int b, const char *what_a, const char *what_b,
                                   const char *func) {
    if (a == b) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint,
             "use handles of one device object; to order work across devices, record an event "
             "of device %d and synchronise it on the host",
             b);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, a, __FILE__, __LINE__, func, hint,
                    "%s belongs to device %d but %s to device %d", what_a, a, what_b, b);
}

/* After a failed synchronisation: add the likely cause (the stream's last library launch). */
static void cm__attribute_fault(const struct cm_stream *s) {
    cm_error_t *e = cm__detail();
    if (s == NULL) return;
    char site[CM__WHERE_MAX + 16], extra[512];
    const char *kname = NULL;
    if (s->last_kernel != NULL && cudaFuncGetName(&kname, s->last_kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        kname = NULL;
    }
    if (s->last_file != NULL || s->last_kernel != NULL) {
        char where[CM__WHERE_MAX + 16];
        snprintf(extra, sizeof extra,
                 "; the last launch the library queued on this stream (%s priority, acquired at "
                 "%s) was %s at %s",
                 cm__prio_name(s->priority), cm__site(s->file, site, sizeof site, s->line),
                 kname ? kname : "a kernel", cm__site(s->last_file, where, sizeof where, s->last_line));
    } else {
        snprintf(extra, sizeof extra,
                 "; no launch of the library was queued on this stream (%s priority, acquired at %s)",
                 cm__prio_name(s->priority), cm__site(s->file, site, sizeof site, s->line));
    }
    size_t len = strlen(e->message);
    if (len + 1 < sizeof e->message) cm__strlcpy(e->message + len, extra, sizeof e->message - len);
    if (strstr(e->hint, "CUDAMODEL_SYNC") == NULL) {
        len = strlen(e->hint);
        cm__strlcpy(e->hint + len,
                    len ? "; run with CUDAMODEL_SYNC=1 to have the faulting launch name itself"
                        : "run with CUDAMODEL_SYNC=1 to have the faulting launch name itself",
                    sizeof e->hint - len);
    }
}

/* ------------------------------------------------------------------ stream pool */

cm_status_t cm_stream_pool_configure(cm_device_t *dev, const cm_stream_pool_config_t *cfg) {
    unsigned low = CM__DEFAULT_LOW, high = CM__DEFAULT_HIGH;
    if (cfg != NULL) {
        if (cfg->low_streams) low = cfg->low_streams;
        if (cfg->high_streams) high = cfg->high_streams;
    }
    CM__REQUIRE(low <= CM_STREAM_POOL_MAX && high <= CM_STREAM_POOL_MAX,
                "use at most CM_STREAM_POOL_MAX (256) streams per class; a GPU runs at most 128 "
                "kernels at once",
                "asked for %u low- and %u high-priority streams; the most per class is %u", low,
                high, CM_STREAM_POOL_MAX);
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    cm__exec_t fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.ordinal = x->ordinal;
    if (!cm__ex_alloc_streams(&fresh, low, high)) {
        free(fresh.streams[0]);
        free(fresh.streams[1]);
        return cm__oom(x->ordinal, "the stream pool");
    }
    pthread_mutex_lock(&cm__ex_lock);
    if (x->acquired[0] + x->acquired[1] > 0) {
        unsigned n = x->acquired[0] + x->acquired[1];
        pthread_mutex_unlock(&cm__ex_lock);
        free(fresh.streams[0]);
        free(fresh.streams[1]);
        return CM__FAIL(CM_ERROR_BUSY, x->ordinal,
                        "release every stream of the device (cm_stream_release()) before resizing "
                        "its pool, or size it right after cm_device_open()",
                        "cannot resize the stream pool of device %d: %u stream%s acquired",
                        x->ordinal, n, n == 1 ? " is" : "s are");
    }
    struct cm_stream *old[2] = {x->streams[0], x->streams[1]};
    unsigned old_cap[2] = {x->cap[0], x->cap[1]};
    for (int c = 0; c < 2; ++c)
        for (unsigned i = 0; i < x->cap[c]; ++i) cm__xs_remove_locked(&x->streams[c][i]);
    for (int c = 0; c < 2; ++c) {
        x->streams[c] = fresh.streams[c];
        x->cap[c] = fresh.cap[c];
        x->free_head[c] = fresh.free_head[c];
        x->created[c] = 0;
        x->peak[c] = 0;
        for (unsigned i = 0; i < x->cap[c]; ++i) x->streams[c][i].ex = x;
    }
    bool ok = cm__ex_register_streams_locked(x);
    pthread_mutex_unlock(&cm__ex_lock);
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < old_cap[c]; ++i)
            if (old[c][i].cs != NULL) (void)cm__cuda.stream_destroy(old[c][i].cs);
        free(old[c]);
    }
    if (!ok) return cm__oom(x->ordinal, "the handle set of the stream pool");
    return CM_OK;
}

cm_status_t cm_stream_pool_stats(cm_device_t *dev, cm_stream_pool_stats_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_stream_pool_stats_t", "out is NULL");
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    cm_stream_pool_stats_t r;
    memset(&r, 0, sizeof r);
    pthread_mutex_lock(&cm__ex_lock);
    for (int c = 0; c < 2; ++c) {
        r.capacity[c] = x->cap[c];
        r.acquired[c] = x->acquired[c];
        r.created[c] = x->created[c];
        r.peak_acquired[c] = x->peak[c];
    }
    r.events_timing = x->n_events[CM_EVENT_TIMING];
    r.events_sync_only = x->n_events[CM_EVENT_SYNC_ONLY];
    r.events_acquired = x->events_acquired;
    pthread_mutex_unlock(&cm__ex_lock);
    *out = r;
    return CM_OK;
}

cm_status_t cm_stream_acquire_at(cm_device_t *dev, cm_stream_priority_t priority,
                                 cm_stream_t **out, const char *file, int line) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_stream_t * to receive the stream",
                "out is NULL");
    CM__REQUIRE(priority == CM_STREAM_PRIORITY_LOW || priority == CM_STREAM_PRIORITY_HIGH,
                "use CM_STREAM_PRIORITY_LOW or CM_STREAM_PRIORITY_HIGH",
                "priority %d is not a stream priority class", (int)priority);
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    CM_TRY(cm__context_guard(x->ordinal));
    int c = (int)priority;
    pthread_mutex_lock(&cm__ex_lock);
    int i = x->free_head[c];
    if (i < 0) {
        unsigned cap = x->cap[c];
        pthread_mutex_unlock(&cm__ex_lock);
        return CM__FAIL(CM_ERROR_BUSY, x->ordinal,
                        "release streams you no longer need (cm_stream_release()), or enlarge the "
                        "pool with cm_stream_pool_configure()",
                        "all %u %s-priority streams of device %d are acquired", cap,
                        cm__prio_name(priority), x->ordinal);
    }
    struct cm_stream *s = &x->streams[c][i];
    x->free_head[c] = s->next_free;
    s->next_free = -1;
    s->acquired = true;
    s->file = file;
    s->line = line;
    s->last_kernel = NULL;
    s->last_file = NULL;
    s->last_line = 0;
    if (++x->acquired[c] > x->peak[c]) x->peak[c] = x->acquired[c];
    bool create = s->cs == NULL;
    pthread_mutex_unlock(&cm__ex_lock);

    if (create) { /* the slot is ours: create its CUDA stream outside the lock */
        int saved = -1;
        cm_status_t st = cm__mem_device_enter(x->ordinal, &saved);
        cudaError_t err = cudaSuccess;
        cudaStream_t cs = NULL;
        if (st == CM_OK) {
            err = cm__cuda.stream_create(&cs, cudaStreamNonBlocking, x->priority_value[c]);
            cm__mem_device_leave(saved);
            if (err != cudaSuccess)
                st = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaStreamCreateWithPriority(non-blocking, %d) on device %d",
                                   x->priority_value[c], x->ordinal);
        }
        pthread_mutex_lock(&cm__ex_lock);
        if (st != CM_OK) {
            s->acquired = false;
            s->next_free = x->free_head[c];
            x->free_head[c] = i;
            --x->acquired[c];
            pthread_mutex_unlock(&cm__ex_lock);
            if (file != NULL) cm__error_set_location(file, line);
            return st;
        }
        s->cs = cs;
        ++x->created[c];
        pthread_mutex_unlock(&cm__ex_lock);
    }
    *out = s;
    return CM_OK;
}

cm_status_t cm_stream_release(cm_stream_t *s) {
    if (s == NULL) return CM_OK;
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK && s->capturing) {
        pthread_mutex_unlock(&cm__ex_lock);
        return CM__FAIL(CM_ERROR_BUSY, s->ordinal,
                        "end the capture with cm_graph_capture_end() first",
                        "the stream is being captured into a graph");
    }
    if (st == CM_OK) {
        cm__exec_t *x = s->ex;
        int c = (int)s->priority;
        s->acquired = false;
        s->next_free = x->free_head[c];
        x->free_head[c] = (int)s->index;
        --x->acquired[c];
    }
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

cm_status_t cm_stream_device(const cm_stream_t *s, cm_device_t **dev) {
    CM__REQUIRE(dev != NULL, "pass the address of a cm_device_t *", "dev is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK) *dev = (cm_device_t *)s->ex->dev;
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

cm_status_t cm_stream_cuda(const cm_stream_t *s, cudaStream_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cudaStream_t", "out is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK) *out = s->cs;
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

/* Zeroed device memory for work queued on one stream: allocated on first use (cudaMalloc, then
 * cudaMemsetAsync on cs so that it is zero before anything later on cs runs); kept until the
 * device object closes. */
static cm_status_t cm__scratch_new(int ordinal, cudaStream_t cs, size_t bytes, void **out) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err == cudaSuccess) err = cudaMemsetAsync(p, 0, bytes, cs);
    if (err != cudaSuccess) {
        if (p != NULL) (void)cudaFree(p);
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaMalloc/cudaMemsetAsync(%zu bytes of stream scratch, device %d)",
                             bytes, ordinal);
    }
    *out = p;
    return CM_OK;
}

cm_status_t cm__stream_scratch(cm_device_t *dev, cm_stream_t *s, cudaStream_t cs, size_t bytes,
                               void **out) {
    *out = NULL;
    cm__exec_t *x = NULL;
    if (s == NULL) {
        CM_TRY(cm__ex_get(dev, "cm__stream_scratch", &x));
        pthread_mutex_lock(&cm__ex_lock);
        void *have = x->legacy_scratch_bytes >= bytes ? x->legacy_scratch : NULL;
        bool exists = x->legacy_scratch != NULL;
        pthread_mutex_unlock(&cm__ex_lock);
        if (exists) {
            *out = have; /* NULL: too small, the caller allocates its own */
            return CM_OK;
        }
        void *p = NULL;
        CM_TRY(cm__scratch_new(x->ordinal, cs, bytes, &p));
        pthread_mutex_lock(&cm__ex_lock);
        if (x->legacy_scratch == NULL) {
            x->legacy_scratch = p;
            x->legacy_scratch_bytes = bytes;
            p = NULL;
        }
        *out = x->legacy_scratch_bytes >= bytes ? x->legacy_scratch : NULL;
        pthread_mutex_unlock(&cm__ex_lock);
        if (p != NULL) { /* another thread was first */
            (void)cudaStreamSynchronize(cs);
            (void)cudaFree(p);
        }
        return CM_OK;
    }
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", "cm__stream_scratch");
    void *have = st == CM_OK && s->scratch_bytes >= bytes ? s->scratch : NULL;
    bool exists = st == CM_OK && s->scratch != NULL;
    int ordinal = st == CM_OK ? s->ordinal : -1;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    if (exists) {
        *out = have;
        return CM_OK;
    }
    void *p = NULL;
    CM_TRY(cm__scratch_new(ordinal, cs, bytes, &p));
    pthread_mutex_lock(&cm__ex_lock);
    /* one thread at a time uses a stream (stream.h): nobody else set it meanwhile */
    s->scratch = p;
    s->scratch_bytes = bytes;
    pthread_mutex_unlock(&cm__ex_lock);
    *out = p;
    return CM_OK;
}

cm_status_t cm__stream_for_device(cm_stream_t *stream, int ordinal, const char *operands,
                                  const char *func, cudaStream_t *cs) {
    *cs = 0;
    if (stream == NULL) return CM_OK;
    /* one locked look: the handle, its CUDA stream and its device */
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(stream, "stream", func);
    cudaStream_t s = st == CM_OK ? stream->cs : NULL;
    int sd = st == CM_OK ? stream->ordinal : -1;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    if (sd != ordinal) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "acquire a stream of device %d's device object, or pass NULL "
                 "for the legacy default stream", ordinal);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "stream belongs to device %d but the %s are on device %d", sd, operands,
                        ordinal);
    }
    *cs = s;
    return CM_OK;
}

cm_status_t cm__stream_for_launch(cm_stream_t *s, int ordinal, const void *kernel,
                                  const char *file, int line, cudaStream_t *out) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "cfg->stream", "cm_launch");
    if (st == CM_OK && s->ordinal != ordinal) {
        int sd = s->ordinal;
        pthread_mutex_unlock(&cm__ex_lock);
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "make device %d current (cudaSetDevice(%d)) before launching on this stream, or "
                 "acquire a stream of device %d's device object",
                 sd, sd, ordinal);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, "cm_launch", hint,
                        "cfg->stream belongs to device %d but the launch is on device %d (the "
                        "current device)",
                        sd, ordinal);
    }
    if (st == CM_OK) {
        s->last_kernel = kernel;
        s->last_file = file;
        s->last_line = line;
        *out = s->cs;
    }
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

bool cm__stream_capturing(cudaStream_t s) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return cs != cudaStreamCaptureStatusNone;
}

/* The CUDA stream and ordinal of an acquired stream, or the recorded failure. */
static cm_status_t cm__stream_get(cm_stream_t *s, const char *arg, const char *func,
                                  cudaStream_t *cs, int *ordinal) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, arg, func);
    if (st == CM_OK) {
        *cs = s->cs;
        *ordinal = s->ordinal;
    }
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

cm_status_t cm_stream_synchronize(cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    CM__NVTX_PUSH("cm_stream_synchronize");
    cudaError_t err = cm__cuda.stream_synchronize(cs);
    CM__NVTX_POP();
    if (err != cudaSuccess) {
        cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize (device %d)",
                                       ordinal);
        cm__attribute_fault(s);
        return st;
    }
    return CM_OK;
}

cm_status_t cm_stream_query(cm_stream_t *s, bool *idle) {
    CM__REQUIRE(idle != NULL, "pass the address of a bool", "idle is NULL");
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    cudaError_t err = cm__cuda.stream_query(cs);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *idle = false;
        return CM_OK;
    }
    if (err != cudaSuccess) {
        cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamQuery (device %d)", ordinal);
        cm__attribute_fault(s);
        return st;
    }
    *idle = true;
    return CM_OK;
}

cm_status_t cm_device_synchronize(cm_device_t *dev) {
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", __func__));
    int ordinal = -1;
    CM_TRY(cm_device_ordinal(dev, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    int saved = -1;
    CM_TRY(cm__mem_device_enter(ordinal, &saved));
    CM__NVTX_PUSH("cm_device_synchronize");
    cudaError_t err = cm__cuda.device_synchronize();
    CM__NVTX_POP();
    cm__mem_device_leave(saved);
    if (err == cudaSuccess) return CM_OK;
    cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceSynchronize (device %d)",
                                   ordinal);
    /* name the last library launch of each acquired stream of the device */
    cm_error_t *e = cm__detail();
    cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
    pthread_mutex_lock(&cm__ex_lock);
    cm__exec_t *x = cm__ex_find_locked(dev);
    unsigned named = 0;
    for (int c = 0; x != NULL && c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            const struct cm_stream *s = &x->streams[c][i];
            if (!s->acquired || s->last_file == NULL) continue;
            cm__text_printf(&t, "%s%s:%d", named ? ", " : "; last library launches on its acquired streams: ",
                            s->last_file, s->last_line);
            ++named;
        }
    }
    pthread_mutex_unlock(&cm__ex_lock);
    if (strstr(e->hint, "CUDAMODEL_SYNC") == NULL) {
        size_t len = strlen(e->hint);
        cm__strlcpy(e->hint + len, "; run with CUDAMODEL_SYNC=1 to have the faulting launch name itself",
                    sizeof e->hint - len);
    }
    return st;
}

/* ------------------------------------------------------------------ buffers on streams */

cm_status_t cm_buffer_create_on_stream_at(cm_device_t *dev, size_t bytes, cm_stream_t *s,
                                          cm_buffer_t **out, const char *file, int line) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM__NVTX_PUSH("cm_buffer_create_on_stream");
    cm_status_t st = cm_buffer_create_on_cuda_stream_at(dev, bytes, cs, out, NULL, file, line);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_from_host_buffer_on_stream(cm_buffer_t *dst, size_t dst_offset,
                                                      const cm_host_buffer_t *src, size_t src_offset,
                                                      size_t bytes, cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM__NVTX_PUSH("cm_buffer_copy_from_host_buffer_on_stream");
    cm_status_t st = cm_buffer_copy_from_host_buffer_on_cuda_stream(dst, dst_offset, src, src_offset,
                                                                    bytes, cs);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_to_host_buffer_on_stream(const cm_buffer_t *src, size_t src_offset,
                                                    cm_host_buffer_t *dst, size_t dst_offset,
                                                    size_t bytes, cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM__NVTX_PUSH("cm_buffer_copy_to_host_buffer_on_stream");
    cm_status_t st = cm_buffer_copy_to_host_buffer_on_cuda_stream(src, src_offset, dst, dst_offset,
                                                                  bytes, cs);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_on_stream(cm_buffer_t *dst, size_t dst_offset, const cm_buffer_t *src,
                                     size_t src_offset, size_t bytes, cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM__NVTX_PUSH("cm_buffer_copy_on_stream");
    cm_status_t st = cm_buffer_copy_on_cuda_stream(dst, dst_offset, src, src_offset, bytes, cs);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_set_on_stream(cm_buffer_t *buf, size_t offset, size_t bytes, int value,
                                    cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM__NVTX_PUSH("cm_buffer_set_on_stream");
    cm_status_t st = cm_buffer_set_on_cuda_stream(buf, offset, bytes, value, cs);
    CM__NVTX_POP();
    return st;
}

/* ------------------------------------------------------------------ events */

cm_status_t cm_event_acquire(cm_device_t *dev, cm_event_kind_t kind, cm_event_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_event_t * to receive the event",
                "out is NULL");
    CM__REQUIRE(kind == CM_EVENT_SYNC_ONLY || kind == CM_EVENT_TIMING,
                "use CM_EVENT_SYNC_ONLY or CM_EVENT_TIMING", "kind %d is not an event kind",
                (int)kind);
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    pthread_mutex_lock(&cm__ex_lock);
    struct cm_event *e = x->free_events[kind];
    if (e != NULL) {
        x->free_events[kind] = e->next_free;
        e->next_free = NULL;
        e->acquired = true;
        e->recorded = false;
        e->recorded_on = NULL;
        ++x->events_acquired;
        pthread_mutex_unlock(&cm__ex_lock);
        *out = e;
        return CM_OK;
    }
    pthread_mutex_unlock(&cm__ex_lock);

    /* none free: make one (outside the lock) */
    CM_TRY(cm__context_guard(x->ordinal));
    e = calloc(1, sizeof *e);
    if (e == NULL) return cm__oom(x->ordinal, "an event");
    int saved = -1;
    cm_status_t st = cm__mem_device_enter(x->ordinal, &saved);
    if (st != CM_OK) {
        free(e);
        return st;
    }
    unsigned flags = kind == CM_EVENT_TIMING ? cudaEventDefault : cudaEventDisableTiming;
    cudaError_t err = cm__cuda.event_create(&e->ce, flags);
    cm__mem_device_leave(saved);
    if (err != cudaSuccess) {
        free(e);
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventCreateWithFlags(%s) on device %d",
                             kind == CM_EVENT_TIMING ? "cudaEventDefault" : "cudaEventDisableTiming",
                             x->ordinal);
    }
    e->ex = x;
    e->ordinal = x->ordinal;
    e->kind = kind;
    e->acquired = true;
    pthread_mutex_lock(&cm__ex_lock);
    if (!cm__xs_insert_locked(e, CM__X_EVENT)) {
        pthread_mutex_unlock(&cm__ex_lock);
        (void)cm__cuda.event_destroy(e->ce);
        free(e);
        return cm__oom(x->ordinal, "the handle set of the event pool");
    }
    e->magic = CM__MAGIC_EVENT;
    e->next_all = x->all_events;
    x->all_events = e;
    ++x->n_events[kind];
    ++x->events_acquired;
    pthread_mutex_unlock(&cm__ex_lock);
    *out = e;
    return CM_OK;
}

cm_status_t cm_event_release(cm_event_t *e) {
    if (e == NULL) return CM_OK;
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(e, "event", __func__);
    if (st == CM_OK) {
        cm__exec_t *x = e->ex;
        e->acquired = false;
        e->next_free = x->free_events[e->kind];
        x->free_events[e->kind] = e;
        --x->events_acquired;
    }
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

cm_status_t cm_event_cuda(const cm_event_t *e, cudaEvent_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cudaEvent_t", "out is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(e, "event", __func__);
    if (st == CM_OK) *out = e->ce;
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

/* Check an event and a stream together (same device); give their CUDA handles. */
static cm_status_t cm__event_stream(cm_event_t *e, cm_stream_t *s, const char *func,
                                    cudaEvent_t *ce, cudaStream_t *cs, bool mark_recorded) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(e, "event", func);
    if (st == CM_OK) st = cm__stream_check_locked(s, "stream", func);
    if (st == CM_OK) st = cm__same_device(e->ordinal, s->ordinal, "the event", "the stream", func);
    if (st == CM_OK) {
        *ce = e->ce;
        *cs = s->cs;
        if (mark_recorded) {
            e->recorded = true;
            e->recorded_on = s;
        }
    }
    pthread_mutex_unlock(&cm__ex_lock);
    return st;
}

cm_status_t cm_event_record(cm_event_t *e, cm_stream_t *s) {
    cudaEvent_t ce = NULL;
    cudaStream_t cs = NULL;
    CM_TRY(cm__event_stream(e, s, __func__, &ce, &cs, true));
    CM__NVTX_PUSH("cm_event_record");
    cudaError_t err = cm__cuda.event_record(ce, cs);
    CM__NVTX_POP();
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventRecord");
    return CM_OK;
}

cm_status_t cm_stream_wait_event(cm_stream_t *s, cm_event_t *e) {
    cudaEvent_t ce = NULL;
    cudaStream_t cs = NULL;
    CM_TRY(cm__event_stream(e, s, __func__, &ce, &cs, false));
    CM__NVTX_PUSH("cm_stream_wait_event");
    cudaError_t err = cm__cuda.stream_wait_event(cs, ce, 0);
    CM__NVTX_POP();
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamWaitEvent");
    return CM_OK;
}

cm_status_t cm_event_synchronize(cm_event_t *e) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(e, "event", __func__);
    cudaEvent_t ce = st == CM_OK ? e->ce : NULL;
    int ordinal = st == CM_OK ? e->ordinal : -1;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    CM_TRY(cm__context_guard(ordinal));
    cudaError_t err = cm__cuda.event_synchronize(ce);
    if (err != cudaSuccess) {
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventSynchronize (device %d)", ordinal);
        pthread_mutex_lock(&cm__ex_lock);
        const struct cm_stream *on = e->recorded_on;
        struct cm_stream copy;
        memset(&copy, 0, sizeof copy);
        bool have = on != NULL;
        if (have) copy = *on;
        pthread_mutex_unlock(&cm__ex_lock);
        if (have) cm__attribute_fault(&copy);
        return st;
    }
    return CM_OK;
}

cm_status_t cm_event_query(cm_event_t *e, bool *done) {
    CM__REQUIRE(done != NULL, "pass the address of a bool", "done is NULL");
    CM_TRY(cm__event_check(e, "event", __func__));
    CM_TRY(cm__context_guard(e->ordinal));
    cudaError_t err = cm__cuda.event_query(e->ce);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = false;
        return CM_OK;
    }
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventQuery (device %d)", e->ordinal);
    *done = true;
    return CM_OK;
}

cm_status_t cm_event_elapsed_ms(cm_event_t *start, cm_event_t *stop, float *ms) {
    CM__REQUIRE(ms != NULL, "pass the address of a float", "ms is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__event_check_locked(start, "start", __func__);
    if (st == CM_OK) st = cm__event_check_locked(stop, "stop", __func__);
    if (st == CM_OK) st = cm__same_device(start->ordinal, stop->ordinal, "start", "stop", __func__);
    const char *which = NULL;
    if (st == CM_OK) {
        if (start->kind != CM_EVENT_TIMING) which = "start";
        else if (stop->kind != CM_EVENT_TIMING) which = "stop";
    }
    bool recorded = st == CM_OK && start->recorded && stop->recorded;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    if (which != NULL) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, start->ordinal,
                        "acquire both events with CM_EVENT_TIMING (synchronisation-only events "
                        "carry no timestamp)",
                        "%s is a synchronisation-only event (CM_EVENT_SYNC_ONLY)", which);
    }
    if (!recorded) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, start->ordinal,
                        "record both events with cm_event_record() (start before stop)",
                        "%s was never recorded since it was acquired",
                        start->recorded ? "stop" : "start");
    }
    float v = 0.0f;
    cudaError_t err = cm__cuda.event_elapsed(&v, start->ce, stop->ce);
    if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return CM__FAIL(CM_ERROR_BUSY, start->ordinal,
                        "wait for the stop event first (cm_event_synchronize(stop))",
                        "the stop event has not completed yet");
    }
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventElapsedTime");
    *ms = v;
    return CM_OK;
}

/* ------------------------------------------------------------------ dependencies, callbacks */

cm_status_t cm_stream_wait(cm_stream_t *waiter, cm_stream_t *signaler) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(waiter, "waiter", __func__);
    if (st == CM_OK) st = cm__stream_check_locked(signaler, "signaler", __func__);
    if (st == CM_OK && waiter->ex != signaler->ex)
        st = cm__same_device(waiter->ordinal, signaler->ordinal, "waiter", "signaler", __func__);
    if (st == CM_OK && waiter->ex != signaler->ex) {
        st = CM__FAIL(CM_ERROR_INVALID_ARGUMENT, waiter->ordinal,
                      "use streams acquired from one cm_device_t",
                      "waiter and signaler come from two device objects of device %d",
                      waiter->ordinal);
    }
    cm_device_t *dev = st == CM_OK ? (cm_device_t *)waiter->ex->dev : NULL;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    if (waiter == signaler) return CM_OK;
    cm_event_t *e = NULL;
    CM_TRY(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e));
    CM__NVTX_PUSH("cm_stream_wait");
    st = cm_event_record(e, signaler);
    if (st == CM_OK) st = cm_stream_wait_event(waiter, e);
    CM__NVTX_POP();
    /* the wait holds what it needs: the event can be re-recorded by its next owner */
    cm_status_t rel = cm_event_release(e);
    return st != CM_OK ? st : rel;
}

cm_status_t cm_stream_host_callback(cm_stream_t *s, cm_host_fn_t fn, void *user) {
    CM__REQUIRE(fn != NULL, "pass a function to run", "fn is NULL");
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    CM__NVTX_PUSH("cm_stream_host_callback");
    cudaError_t err = cm__cuda.launch_host_func(cs, (cudaHostFn_t)fn, user);
    CM__NVTX_POP();
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaLaunchHostFunc");
    return CM_OK;
}

/* ------------------------------------------------------------------ device close */

cm_status_t cm__exec_close_check(const cm_device_t *dev) {
    pthread_mutex_lock(&cm__ex_lock);
    cm__exec_t *x = cm__ex_find_locked(dev);
    unsigned streams = x ? x->acquired[0] + x->acquired[1] : 0;
    unsigned events = x ? x->events_acquired : 0;
    if (streams + events == 0) {
        pthread_mutex_unlock(&cm__ex_lock);
        return CM_OK;
    }
    char msg[CM_ERROR_MESSAGE_MAX];
    cm__text_t t = {msg, sizeof msg, 0};
    cm__text_printf(&t, "cannot close device %d: %u stream%s still acquired", x->ordinal, streams,
                    streams == 1 ? " is" : "s are");
    unsigned shown = 0;
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            const struct cm_stream *s = &x->streams[c][i];
            if (!s->acquired) continue;
            if (t.len + 80 >= sizeof msg) break;
            char site[CM__WHERE_MAX + 16];
            cm__text_printf(&t, "%s%s priority #%u acquired at %s", shown ? "; " : ": ",
                            cm__prio_name(s->priority), s->index,
                            cm__site(s->file, site, sizeof site, s->line));
            ++shown;
        }
    }
    if (shown < streams) cm__text_printf(&t, "; and %u more", streams - shown);
    if (events) cm__text_printf(&t, "; %u event%s lent (cm_event_acquire() or a timer)", events,
                                events == 1 ? " is" : "s are");
    int ordinal = x->ordinal;
    pthread_mutex_unlock(&cm__ex_lock);
    return cm__fail(CM_ERROR_BUSY, ordinal, __FILE__, __LINE__, "cm_device_close",
                    "release every stream (cm_stream_release()) and event (cm_event_release(), "
                    "cm_timer_destroy()) of the device before closing it",
                    "%s", msg);
}

void cm__exec_close_release(const cm_device_t *dev) {
    pthread_mutex_lock(&cm__ex_lock);
    cm__exec_t *x = NULL;
    for (cm__exec_t **p = &cm__ex_list; *p != NULL; p = &(*p)->next) {
        if ((*p)->dev == dev) {
            x = *p;
            *p = x->next;
            break;
        }
    }
    if (x != NULL) cm__ex_unregister_locked(x);
    pthread_mutex_unlock(&cm__ex_lock);
    if (x == NULL) return;
    bool alive = cm__context_guard(x->ordinal) == CM_OK;
    if (!alive) cm_last_error_clear();
    cm__ex_free(x, alive);
}

/* ------------------------------------------------------------------ timers */

static cm_status_t cm__timer_check(const cm_timer_t *t, const char *func) {
    pthread_mutex_lock(&cm__ex_lock);
    bool ok = t != NULL && cm__xs_kind_locked(t) == CM__X_TIMER && t->magic == CM__MAGIC_TIMER;
    pthread_mutex_unlock(&cm__ex_lock);
    if (ok) return CM_OK;
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "pass a timer from cm_timer_create() that was not destroyed",
                    "timer (%p) is %s", (const void *)t,
                    t == NULL ? "NULL" : "not a live timer (destroyed, or not a timer)");
}

cm_status_t cm_timer_create(cm_device_t *dev, cm_timer_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_timer_t *", "out is NULL");
    cm_timer_t *t = calloc(1, sizeof *t);
    if (t == NULL) return cm__oom(-1, "a timer");
    cm_status_t st = cm_event_acquire(dev, CM_EVENT_TIMING, &t->start);
    if (st == CM_OK) st = cm_event_acquire(dev, CM_EVENT_TIMING, &t->stop);
    if (st == CM_OK) {
        pthread_mutex_lock(&cm__ex_lock);
        if (!cm__xs_insert_locked(t, CM__X_TIMER)) st = CM_ERROR_HOST_OUT_OF_MEMORY;
        else t->magic = CM__MAGIC_TIMER;
        pthread_mutex_unlock(&cm__ex_lock);
        if (st != CM_OK) st = cm__oom(-1, "the handle set for a timer");
    }
    if (st != CM_OK) {
        (void)cm_event_release(t->start);
        (void)cm_event_release(t->stop);
        free(t);
        return st;
    }
    *out = t;
    return CM_OK;
}

cm_status_t cm_timer_destroy(cm_timer_t *t) {
    if (t == NULL) return CM_OK;
    CM_TRY(cm__timer_check(t, __func__));
    pthread_mutex_lock(&cm__ex_lock);
    cm__xs_remove_locked(t);
    t->magic = 0;
    pthread_mutex_unlock(&cm__ex_lock);
    cm_status_t a = cm_event_release(t->start);
    cm_status_t b = cm_event_release(t->stop);
    free(t);
    return a != CM_OK ? a : b;
}

cm_status_t cm_timer_start(cm_timer_t *t, cm_stream_t *s) {
    CM_TRY(cm__timer_check(t, __func__));
    CM_TRY(cm_event_record(t->start, s));
    t->stream = s;
    t->state = 1;
    return CM_OK;
}

cm_status_t cm_timer_stop(cm_timer_t *t) {
    CM_TRY(cm__timer_check(t, __func__));
    if (t->state != 1) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "call cm_timer_start() first",
                        "the timer was %s", t->state == 0 ? "never started" : "already stopped");
    }
    CM_TRY(cm_event_record(t->stop, t->stream));
    t->state = 2;
    return CM_OK;
}

cm_status_t cm_timer_elapsed_ms(cm_timer_t *t, float *ms) {
    CM__REQUIRE(ms != NULL, "pass the address of a float", "ms is NULL");
    CM_TRY(cm__timer_check(t, __func__));
    if (t->state != 2) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "call cm_timer_start() and cm_timer_stop() before reading the time",
                        "the timer was %s", t->state == 0 ? "never started" : "started but not stopped");
    }
    CM_TRY(cm_event_synchronize(t->stop));
    return cm_event_elapsed_ms(t->start, t->stop, ms);
}

static int cm__cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

cm_status_t cm_time_callable(cm_stream_t *s, cm_timed_fn_t fn, void *user, int warmup, int reps,
                             cm_timing_stats_t *out) {
    CM__REQUIRE(fn != NULL && out != NULL, "pass the function to time and a cm_timing_stats_t",
                "%s is NULL", fn == NULL ? "fn" : "out");
    CM__REQUIRE(reps >= 1 && reps <= CM_TIME_REPS_MAX && warmup >= 0 && warmup <= CM_TIME_REPS_MAX,
                "use 1..100000 timed calls (20 is usual) and 0..100000 warm-up calls",
                "reps is %d and warmup %d; the range is 1..%d and 0..%d", reps, warmup,
                CM_TIME_REPS_MAX, CM_TIME_REPS_MAX);
    cm_device_t *dev = NULL;
    CM_TRY(cm_stream_device(s, &dev));
    for (int i = 0; i < warmup; ++i) CM_TRY(fn(user, s));
    CM_TRY(cm_stream_synchronize(s));
    double *t = malloc((size_t)reps * sizeof *t);
    if (t == NULL) return cm__oom(-1, "the per-call times");
    cm_timer_t *timer = NULL;
    cm_status_t st = cm_timer_create(dev, &timer);
    for (int i = 0; st == CM_OK && i < reps; ++i) {
        float ms = 0.0f;
        st = cm_timer_start(timer, s);
        if (st == CM_OK) st = fn(user, s);
        if (st == CM_OK) st = cm_timer_stop(timer);
        if (st == CM_OK) st = cm_timer_elapsed_ms(timer, &ms);
        t[i] = ms;
    }
    if (timer != NULL) {
        cm_status_t d = cm_timer_destroy(timer);
        if (st == CM_OK) st = d;
    }
    if (st == CM_OK) {
        qsort(t, (size_t)reps, sizeof *t, cm__cmp_double);
        cm_timing_stats_t r;
        r.min_ms = t[0];
        r.max_ms = t[reps - 1];
        r.median_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        r.reps = reps;
        *out = r;
    }
    free(t);
    return st;
}

/* ------------------------------------------------------------------ graphs */

cm_status_t cm_graph_capture_begin(cm_stream_t *s) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK && s->capturing) {
        pthread_mutex_unlock(&cm__ex_lock);
        return CM__FAIL(CM_ERROR_BUSY, s->ordinal, "end the capture with cm_graph_capture_end()",
                        "the stream is already being captured");
    }
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    if (st == CM_OK) s->capturing = true;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    cudaError_t err = cm__cuda.begin_capture(cs, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess) {
        pthread_mutex_lock(&cm__ex_lock);
        s->capturing = false;
        pthread_mutex_unlock(&cm__ex_lock);
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal)");
    }
    return CM_OK;
}

cm_status_t cm_graph_capture_end(cm_stream_t *s, cm_graph_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_graph_t *", "out is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK && !s->capturing) {
        pthread_mutex_unlock(&cm__ex_lock);
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, s->ordinal,
                        "call cm_graph_capture_begin() on the stream first",
                        "the stream is not being captured");
    }
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    int ordinal = st == CM_OK ? s->ordinal : -1;
    if (st == CM_OK) s->capturing = false;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    cudaGraph_t g = NULL;
    cudaError_t err = cm__cuda.end_capture(cs, &g);
    if (err == cudaErrorStreamCaptureInvalidated || err == cudaErrorStreamCaptureUnsupported ||
        err == cudaErrorStreamCaptureUnjoined) {
        (void)cudaGetLastError();
        if (g != NULL) (void)cm__cuda.graph_destroy(g);
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, ordinal,
                        "capture only asynchronous work on the stream: launches, copies with device "
                        "buffers and pinned host buffers, sets, fills, waits; join every stream "
                        "that forked from it (cm_stream_wait back onto it); no synchronisation, "
                        "pageable copies or synchronous allocation inside a capture",
                        "the capture on device %d was invalidated by a call that cannot be captured "
                        "(%s: %s)",
                        ordinal, cudaGetErrorName(err), cudaGetErrorString(err));
    }
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamEndCapture");
    cm_graph_t *gr = calloc(1, sizeof *gr);
    if (gr == NULL) {
        (void)cm__cuda.graph_destroy(g);
        return cm__oom(ordinal, "a graph");
    }
    gr->ordinal = ordinal;
    gr->graph = g;
    err = cm__cuda.graph_instantiate(&gr->exec, g, 0);
    if (err != cudaSuccess) {
        (void)cm__cuda.graph_destroy(g);
        free(gr);
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaGraphInstantiate");
    }
    pthread_mutex_lock(&cm__ex_lock);
    bool ok = cm__xs_insert_locked(gr, CM__X_GRAPH);
    if (ok) gr->magic = CM__MAGIC_GRAPH;
    pthread_mutex_unlock(&cm__ex_lock);
    if (!ok) {
        (void)cm__cuda.graph_exec_destroy(gr->exec);
        (void)cm__cuda.graph_destroy(g);
        free(gr);
        return cm__oom(ordinal, "the handle set for a graph");
    }
    *out = gr;
    return CM_OK;
}

static cm_status_t cm__graph_check_locked(const cm_graph_t *g, const char *func) {
    if (g != NULL && cm__xs_kind_locked(g) == CM__X_GRAPH && g->magic == CM__MAGIC_GRAPH) return CM_OK;
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "pass a graph from cm_graph_capture_end() that was not destroyed",
                    "graph (%p) is %s", (const void *)g,
                    g == NULL ? "NULL" : "not a live graph (destroyed, or not a graph)");
}

cm_status_t cm_graph_launch(cm_graph_t *g, cm_stream_t *s) {
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__graph_check_locked(g, __func__);
    if (st == CM_OK) st = cm__stream_check_locked(s, "stream", __func__);
    if (st == CM_OK) st = cm__same_device(g->ordinal, s->ordinal, "the graph", "the stream", __func__);
    cudaGraphExec_t exec = st == CM_OK ? g->exec : NULL;
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    CM_TRY(cm__context_guard(g->ordinal));
    CM__NVTX_PUSH("cm_graph_launch");
    cudaError_t err = cm__cuda.graph_launch(exec, cs);
    CM__NVTX_POP();
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaGraphLaunch");
    return CM_OK;
}

cm_status_t cm_graph_node_count(const cm_graph_t *g, size_t *count) {
    CM__REQUIRE(count != NULL, "pass the address of a size_t", "count is NULL");
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__graph_check_locked(g, __func__);
    cudaGraph_t graph = st == CM_OK ? g->graph : NULL;
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    size_t n = 0;
    cudaError_t err = cm__cuda.graph_get_nodes(graph, NULL, &n);
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaGraphGetNodes");
    *count = n;
    return CM_OK;
}

cm_status_t cm_graph_destroy(cm_graph_t *g) {
    if (g == NULL) return CM_OK;
    pthread_mutex_lock(&cm__ex_lock);
    cm_status_t st = cm__graph_check_locked(g, __func__);
    if (st == CM_OK) {
        cm__xs_remove_locked(g);
        g->magic = 0;
    }
    pthread_mutex_unlock(&cm__ex_lock);
    CM_TRY(st);
    cudaError_t e1 = cm__cuda.graph_exec_destroy(g->exec);
    cudaError_t e2 = cm__cuda.graph_destroy(g->graph);
    free(g);
    if (e1 != cudaSuccess) return cm__cuda_fail(e1, __FILE__, __LINE__, "cudaGraphExecDestroy");
    if (e2 != cudaSuccess) return cm__cuda_fail(e2, __FILE__, __LINE__, "cudaGraphDestroy");
    return CM_OK;
}
