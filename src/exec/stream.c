/*
 * The execution module (stream.h): per-device stream and event pools, dependencies, host
 * callbacks, synchronisation that names the likely faulting launch, timers and graphs.
 *
 * Handles: every stream, event, timer and graph handed out is a value of the core's handle
 * table (core/handle.h) naming a struct cm__stream, cm__event, cm__timer or cm__graph. Pooled
 * streams and events stay in their device's pool until the device object closes; each acquire
 * gives the pooled object a NEW handle and each release ends it, so a released handle is stale
 * forever (also once the same pooled object is lent again). Timers and graphs are freed at once
 * on destroy. An event remembers the HANDLE of the stream it was last recorded on, never a
 * pointer, so fault attribution looks the stream up and says so when it was released since.
 *
 * Device: the execution state of a device object is its exec part (dev->exec.state, a struct
 * cm__exec), created on first use. Every CUDA call runs inside a cm__enter() scope of the
 * object's device (make_current when CUDA needs the device current: creation, allocation,
 * device synchronisation), never on whatever device the caller has current.
 *
 * Locking (core/lock.h): the core spin lock guards the pools (free lists, stream fields, scratch
 * pointers) together with the handles it hands out, so an acquire or a release is one short
 * locked section (one atomic exchange): no CUDA call inside it; CUDA calls that may take long
 * (creation, synchronisation) run outside it, on an object the caller owns at that point. The
 * close check (dev->exec.busy_locked) reads the same fields under the same lock.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/interop.h>

#include "../core/device.h"
#include "../core/handle.h"
#include "../core/internal.h"
#include "../core/lock.h"
#include "../memory/memory_internal.h" /* cm__check_stream_device, cm__defer_free */
#include "stream_internal.h"

#define CM__DEFAULT_LOW 16u
#define CM__DEFAULT_HIGH 4u
#define CM__SITE_MAX 160 /* "file:line" of a caller */

/* ------------------------------------------------------------------ types */

struct cm__exec;

struct cm__stream {
    void *handle;                /* its handle while acquired, NULL in the pool */
    struct cm__exec *ex;
    int ordinal;
    cm_stream_priority_t priority;
    unsigned index;              /* in its class */
    cudaStream_t cs;             /* NULL until first hand-out */
    bool capturing;
    int next_free;               /* index of the next free stream of the class, -1: none */
    const char *file;            /* last acquire */
    int line;
    const void *last_kernel;     /* last cm_launch queued on it since the acquire */
    const char *last_file;
    int last_line;
    const char *last_op;         /* or: the library operation (cm_gemm, cm_reduce_sum_f32...)
                                    that queued the last work, static storage; NULL: none */
    void *scratch;               /* device scratch of work queued on it (cm__stream_scratch) */
    size_t scratch_bytes;
    bool wrapped;                /* a caller's CUDA stream (cm_stream_wrap): not pooled, never
                                    destroyed by the library */
    struct cm__stream *wrapped_next; /* the exec part's list of wrapped streams */
};

struct cm__event {
    void *handle;                /* its handle while lent, NULL in the pool */
    struct cm__exec *ex;
    int ordinal;
    cm_event_kind_t kind;
    cudaEvent_t ce;
    bool recorded;
    const void *recorded_on;     /* handle value of the stream of the last record (may be stale) */
    struct cm__event *next_free;
    struct cm__event *next_all;
};

struct cm__timer {
    void *handle;
    cm_event_t *start, *stop;
    cm_stream_t *stream;
    int state; /* 0 new, 1 started, 2 stopped */
};

struct cm__graph {
    void *handle;
    int ordinal;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
};

/* The exec part of a device object (dev->exec.state). */
typedef struct cm__exec {
    struct cm__device *dev;
    int ordinal;
    unsigned cap[2];
    struct cm__stream *streams[2];
    int free_head[2];
    unsigned acquired[2], created[2], peak[2];
    int priority_value[2]; /* CUDA priority of each class */
    struct cm__event *free_events[2];
    struct cm__event *all_events;
    unsigned n_events[2];
    unsigned events_acquired;
    void *legacy_scratch;        /* cm__stream_scratch of the legacy default stream */
    size_t legacy_scratch_bytes;
    struct cm__stream *wrapped;  /* wrapped streams alive (cm_stream_wrap) */
    unsigned n_wrapped;
} cm__exec_t;

/* ------------------------------------------------------------------ names and sites */

static const char *cm__prio_name(cm_stream_priority_t p) {
    return p == CM_STREAM_PRIORITY_HIGH ? "high" : "low";
}

static const char *cm__site(const char *file, char *buf, size_t size, int line) {
    if (file == NULL) return "an unknown place (no file:line given)";
    snprintf(buf, size, "%s:%d", file, line);
    return buf;
}

static cm_status_t cm__oom(int ordinal, const char *what) {
    return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                    "cannot allocate %s: host malloc failed", what);
}

static inline struct cm__stream *cm__stream_obj(const cm_stream_t *h) {
    return (struct cm__stream *)cm__handle_obj(h, CM__KIND_STREAM);
}

static inline struct cm__event *cm__event_obj(const cm_event_t *h) {
    return (struct cm__event *)cm__handle_obj(h, CM__KIND_EVENT);
}

/* The acquired stream of h (*out; core lock held), or the recorded failure (*out NULL). */
static cm_status_t cm__stream_check_locked(const cm_stream_t *h, const char *arg,
                                           const char *func, struct cm__stream **out) {
    *out = cm__stream_obj(h);
    return *out != NULL ? CM_OK : cm__handle_fail(h, CM__KIND_STREAM, arg, func);
}

static cm_status_t cm__event_check_locked(const cm_event_t *h, const char *arg,
                                          const char *func, struct cm__event **out) {
    *out = cm__event_obj(h);
    return *out != NULL ? CM_OK : cm__handle_fail(h, CM__KIND_EVENT, arg, func);
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

/* ------------------------------------------------------------------ the exec part */

static cm_status_t cm__exec_busy_locked(struct cm__device *dev);
static cm_status_t cm__exec_release(struct cm__device *dev);

/* Allocate the stream slots of each class (no CUDA call: streams are created on first use). */
static bool cm__ex_alloc_streams(cm__exec_t *x, struct cm__stream *out[2], const unsigned n[2]) {
    for (int c = 0; c < 2; ++c) {
        out[c] = calloc(n[c] ? n[c] : 1, sizeof(struct cm__stream));
        if (out[c] == NULL) {
            free(out[0]);
            out[0] = NULL;
            return false;
        }
        for (unsigned i = 0; i < n[c]; ++i) {
            struct cm__stream *s = &out[c][i];
            s->ex = x;
            s->ordinal = x->ordinal;
            s->priority = (cm_stream_priority_t)c;
            s->index = i;
            s->next_free = i + 1 < n[c] ? (int)(i + 1) : -1;
        }
    }
    return true;
}

/* The CUDA objects a release could not destroy, and the first failure (its detail). */
typedef struct cm__ex_left {
    unsigned streams, events, scratch;
    cm_status_t status;
    cm_error_t first;
} cm__ex_left_t;

/* A destroy's result: a failure is counted (the object stays with the driver) and the first
 * one's detail kept. */
static void cm__ex_note(cm__ex_left_t *l, unsigned *count, cudaError_t err, const char *call) {
    if (err == cudaSuccess) return;
    ++*count;
    cm_status_t s = cm__cuda_fail(err, __FILE__, __LINE__, "%s", call);
    if (l->status == CM_OK) {
        l->status = s;
        l->first = *cm_last_error();
    }
}

/* A wait before a free: its failure is the free's business (the runtime's last error is
 * cleared so that no later call is blamed for it). */
static void cm__ex_wait(cudaError_t err) {
    if (err != cudaSuccess) (void)cm__cuda.get_last_error();
}

/* Destroy the CUDA streams and scratch of a stream array (no lock held; the caller is in a
 * scope of the device when destroy_cuda), then free it. Scratch exists only where a GPU ran
 * work: wait for the stream before freeing it. Without destroy_cuda the CUDA objects are only
 * counted in left (when not NULL). */
static void cm__streams_free(struct cm__stream *arr, unsigned n, bool destroy_cuda,
                             cm__ex_left_t *left) {
    cm__ex_left_t none;
    memset(&none, 0, sizeof none);
    if (left == NULL) left = &none;
    for (unsigned i = 0; arr != NULL && i < n; ++i) {
        struct cm__stream *s = &arr[i];
        if (s->handle != NULL) (void)cm__handle_end(s->handle, CM__KIND_STREAM);
        if (!destroy_cuda) {
            left->scratch += s->scratch != NULL;
            left->streams += s->cs != NULL;
            continue;
        }
        if (s->scratch != NULL) {
            if (s->cs != NULL) cm__ex_wait(cm__cuda.stream_synchronize(s->cs));
            cm__ex_note(left, &left->scratch, cm__cuda.device_free(s->scratch),
                        "cudaFree(stream scratch)");
        }
        if (s->cs != NULL)
            cm__ex_note(left, &left->streams, cm__cuda.stream_destroy(s->cs),
                        "cudaStreamDestroy(pooled stream)");
    }
    free(arr);
}

/* Record what a release left (the first failure's detail, with the counts); CM_OK when
 * nothing. what: "the stream pool of device 0" or the like. */
static cm_status_t cm__ex_left_report(const cm__ex_left_t *l, const char *what) {
    if (l->status == CM_OK) return CM_OK;
    cm_error_t *e = cm__detail();
    *e = l->first;
    e->status = l->status;
    cm__text_t t = {e->message, sizeof e->message, 0};
    cm__text_printf(&t,
                    "%s: %u CUDA stream%s, %u event%s and %u scratch block%s not destroyed (%s)",
                    what, l->streams, l->streams == 1 ? "" : "s", l->events,
                    l->events == 1 ? "" : "s", l->scratch, l->scratch == 1 ? "" : "s",
                    l->first.message);
    return l->status;
}

/* Free an exec part that no other thread can reach any more. destroy_cuda: the device's
 * context is alive (else CUDA objects died with it). Returns CM_OK, or a recorded failure that
 * counts the CUDA objects left with the driver (a destroy failed, or no scope of the device
 * could be entered). */
static cm_status_t cm__ex_free(cm__exec_t *x, bool destroy_cuda) {
    cm__scope_t sc;
    bool entered = false;
    cm__ex_left_t left;
    memset(&left, 0, sizeof left);
    cm__ex_left_t *count = NULL; /* where objects left without a try are counted */
    if (destroy_cuda) {
        cm_status_t st = cm__enter(x->ordinal, 1, &sc);
        entered = st == CM_OK;
        if (!entered) {
            left.status = st;
            left.first = *cm_last_error();
            count = &left;
            destroy_cuda = false;
        }
    }
    if (x->legacy_scratch != NULL) {
        if (destroy_cuda) {
            cm__ex_wait(cm__cuda.stream_synchronize(cudaStreamLegacy));
            cm__ex_note(&left, &left.scratch, cm__cuda.device_free(x->legacy_scratch),
                        "cudaFree(legacy stream scratch)");
        } else if (count != NULL) {
            ++count->scratch;
        }
    }
    for (int c = 0; c < 2; ++c) {
        cm__streams_free(x->streams[c], x->cap[c], destroy_cuda, destroy_cuda ? &left : count);
        x->streams[c] = NULL;
    }
    while (x->wrapped != NULL) { /* the caller's CUDA streams: never destroyed here */
        struct cm__stream *w = x->wrapped;
        x->wrapped = w->wrapped_next;
        if (w->handle != NULL) (void)cm__handle_end(w->handle, CM__KIND_STREAM);
        if (w->scratch != NULL) {
            if (destroy_cuda) {
                cm__ex_wait(cm__cuda.stream_synchronize(w->cs));
                cm__ex_note(&left, &left.scratch, cm__cuda.device_free(w->scratch),
                            "cudaFree(wrapped stream scratch)");
            } else if (count != NULL) {
                ++count->scratch;
            }
        }
        free(w);
    }
    while (x->all_events != NULL) {
        struct cm__event *e = x->all_events;
        x->all_events = e->next_all;
        if (e->handle != NULL) (void)cm__handle_end(e->handle, CM__KIND_EVENT);
        if (destroy_cuda)
            cm__ex_note(&left, &left.events, cm__cuda.event_destroy(e->ce), "cudaEventDestroy");
        else if (count != NULL)
            ++count->events;
        free(e);
    }
    if (entered) cm__leave(&sc);
    char what[64];
    snprintf(what, sizeof what, "the stream and event pools of device %d", x->ordinal);
    free(x);
    return cm__ex_left_report(&left, what);
}

/* The exec part of the device object d, created on first use. */
static cm_status_t cm__ex_of(struct cm__device *d, cm__exec_t **out) {
    cm__core_lock();
    cm__exec_t *x = d->exec.state;
    cm__core_unlock();
    if (x != NULL) {
        *out = x;
        return CM_OK;
    }
    int ordinal = d->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    int least = 0, greatest = 0;
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cudaError_t err = cm__cuda.priority_range(&least, &greatest);
    cm_status_t st = CM_OK;
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceGetStreamPriorityRange (device %d)",
                           ordinal);
    cm__leave(&sc);
    CM_TRY(st);
    x = calloc(1, sizeof *x);
    if (x == NULL) return cm__oom(ordinal, "the stream pool");
    x->dev = d;
    x->ordinal = ordinal;
    x->priority_value[CM_STREAM_PRIORITY_LOW] = least;
    x->priority_value[CM_STREAM_PRIORITY_HIGH] = greatest;
    const unsigned n[2] = {CM__DEFAULT_LOW, CM__DEFAULT_HIGH};
    if (!cm__ex_alloc_streams(x, x->streams, n)) {
        free(x);
        return cm__oom(ordinal, "the stream pool");
    }
    for (int c = 0; c < 2; ++c) {
        x->cap[c] = n[c];
        x->free_head[c] = n[c] ? 0 : -1;
    }
    cm__core_lock();
    cm__exec_t *other = d->exec.state;
    if (other == NULL) {
        d->exec.state = x;
        d->exec.busy_locked = cm__exec_busy_locked;
        d->exec.release = cm__exec_release;
    }
    cm__core_unlock();
    if (other != NULL) { /* another thread was first */
        (void)cm__ex_free(x, false);
        x = other;
    }
    *out = x;
    return CM_OK;
}

/* The exec part of the device handle dev (checked: a live device object). */
static cm_status_t cm__ex_get(cm_device_t *dev, const char *func, cm__exec_t **out) {
    struct cm__device *d = NULL;
    CM_TRY(cm__device_get(dev, "dev", func, &d));
    return cm__ex_of(d, out);
}

/* dev->exec.busy_locked: under cm__core_lock() only (no CUDA call, no other lock). */
static cm_status_t cm__exec_busy_locked(struct cm__device *dev) {
    const cm__exec_t *x = dev->exec.state;
    if (x == NULL) return CM_OK;
    unsigned streams = x->acquired[0] + x->acquired[1] + x->n_wrapped;
    unsigned events = x->events_acquired;
    if (streams + events == 0) return CM_OK;
    char msg[CM_ERROR_MESSAGE_MAX];
    cm__text_t t = {msg, sizeof msg, 0};
    cm__text_printf(&t, "cannot close device %d: %u stream%s still acquired", x->ordinal, streams,
                    streams == 1 ? " is" : "s are");
    unsigned shown = 0;
    for (int c = 0; c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            const struct cm__stream *s = &x->streams[c][i];
            if (s->handle == NULL) continue;
            if (t.len + 80 >= sizeof msg) break;
            char site[CM__SITE_MAX];
            cm__text_printf(&t, "%s%s priority #%u acquired at %s", shown ? "; " : ": ",
                            cm__prio_name(s->priority), s->index,
                            cm__site(s->file, site, sizeof site, s->line));
            ++shown;
        }
    }
    for (const struct cm__stream *w = x->wrapped; w != NULL && t.len + 80 < sizeof msg;
         w = w->wrapped_next, ++shown) {
        char site[CM__SITE_MAX];
        cm__text_printf(&t, "%swrapped CUDA stream wrapped at %s", shown ? "; " : ": ",
                        cm__site(w->file, site, sizeof site, w->line));
    }
    if (shown < streams) cm__text_printf(&t, "; and %u more", streams - shown);
    if (events) cm__text_printf(&t, "; %u event%s lent (cm_event_acquire() or a timer)", events,
                                events == 1 ? " is" : "s are");
    return cm__fail(CM_ERROR_BUSY, x->ordinal, __FILE__, __LINE__, "cm_device_close",
                    "release every stream (cm_stream_release()) and event (cm_event_release(), "
                    "cm_timer_destroy()) of the device before closing it",
                    "%s", msg);
}

/* dev->exec.release: after the close was decided (no lock held). Reports the CUDA streams,
 * events and scratch it could not destroy (a lost context's went with it). */
static cm_status_t cm__exec_release(struct cm__device *dev) {
    cm__core_lock();
    cm__exec_t *x = dev->exec.state;
    dev->exec.state = NULL;
    cm__core_unlock();
    if (x == NULL) return CM_OK;
    bool alive = cm__context_guard(x->ordinal) == CM_OK;
    if (!alive) cm_last_error_clear();
    return cm__ex_free(x, alive);
}

/* ------------------------------------------------------------------ fault attribution */

/* What the attribution says about a stream, copied under the core lock. */
typedef struct cm__launch_site {
    cm_stream_priority_t priority;
    const char *file;
    int line;
    const void *last_kernel;
    const char *last_file;
    int last_line;
    const char *last_op;
} cm__launch_site_t;

/* The launch site of the stream whose handle is h; false when h is not acquired any more. */
static bool cm__stream_site(const void *h, cm__launch_site_t *out) {
    cm__core_lock();
    const struct cm__stream *s = cm__stream_obj(h);
    if (s != NULL) {
        out->priority = s->priority;
        out->file = s->file;
        out->line = s->line;
        out->last_kernel = s->last_kernel;
        out->last_file = s->last_file;
        out->last_line = s->last_line;
        out->last_op = s->last_op;
    }
    cm__core_unlock();
    return s != NULL;
}

/* After a failed synchronisation on the stream whose handle is h (NULL: none known): add the
 * likely cause (the stream's last library launch since its acquire), or say that the stream was
 * released since, so that no launch of another acquire of the same pooled stream is blamed. */
static void cm__attribute_fault(const void *h, int ordinal) {
    cm_error_t *e = cm__detail();
    char extra[512];
    cm__launch_site_t ls;
    if (h == NULL) return;
    if (!cm__stream_site(h, &ls)) {
        snprintf(extra, sizeof extra,
                 "; its stream was released since (a pooled stream acquired again is a new "
                 "stream), so the library names no launch");
    } else {
        char site[CM__SITE_MAX];
        const char *kname = NULL;
        if (ls.last_kernel != NULL) {
            /* the name is a nicety: a scope that cannot be entered must not replace the detail
             * of the failure being reported */
            const cm_error_t reported = *e;
            cm__scope_t sc;
            if (cm__enter(ordinal, 0, &sc) == CM_OK) {
                if (cm__cuda.func_get_name(&kname, ls.last_kernel) != cudaSuccess) {
                    (void)cm__cuda.get_last_error();
                    kname = NULL;
                }
                cm__leave(&sc);
            } else {
                *e = reported;
            }
        }
        char kdemangled[256];
        if (ls.last_op != NULL) {
            snprintf(extra, sizeof extra,
                     "; the last work the library queued on this stream (%s priority, acquired "
                     "at %s) was a kernel of %s",
                     cm__prio_name(ls.priority), cm__site(ls.file, site, sizeof site, ls.line),
                     ls.last_op);
        } else if (ls.last_file != NULL || ls.last_kernel != NULL) {
            char where[CM__SITE_MAX];
            snprintf(extra, sizeof extra,
                     "; the last launch the library queued on this stream (%s priority, acquired "
                     "at %s) was %s at %s",
                     cm__prio_name(ls.priority), cm__site(ls.file, site, sizeof site, ls.line),
                     kname ? cm__kernel_name(kname, kdemangled, sizeof kdemangled) : "a kernel",
                     cm__site(ls.last_file, where, sizeof where, ls.last_line));
        } else {
            snprintf(extra, sizeof extra,
                     "; no launch of the library was queued on this stream (%s priority, acquired "
                     "at %s)",
                     cm__prio_name(ls.priority), cm__site(ls.file, site, sizeof site, ls.line));
        }
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
    CM_TRY(cm__context_guard(x->ordinal));
    /* the old pool's CUDA streams are destroyed in the device's scope: entered before anything
     * changes, so that a context that cannot be made current leaves the pool as it was (instead
     * of dropping its streams without destroying them) */
    cm__scope_t sc;
    CM_TRY(cm__enter(x->ordinal, 1, &sc));
    const unsigned n[2] = {low, high};
    struct cm__stream *fresh[2] = {NULL, NULL};
    if (!cm__ex_alloc_streams(x, fresh, n)) {
        cm__leave(&sc);
        return cm__oom(x->ordinal, "the stream pool");
    }
    cm__core_lock();
    if (x->acquired[0] + x->acquired[1] > 0) {
        unsigned busy = x->acquired[0] + x->acquired[1];
        cm__core_unlock();
        free(fresh[0]);
        free(fresh[1]);
        cm__leave(&sc);
        return CM__FAIL(CM_ERROR_BUSY, x->ordinal,
                        "release every stream of the device (cm_stream_release()) before resizing "
                        "its pool, or size it right after cm_device_open()",
                        "cannot resize the stream pool of device %d: %u stream%s acquired",
                        x->ordinal, busy, busy == 1 ? " is" : "s are");
    }
    struct cm__stream *old[2] = {x->streams[0], x->streams[1]};
    unsigned old_cap[2] = {x->cap[0], x->cap[1]};
    for (int c = 0; c < 2; ++c) {
        x->streams[c] = fresh[c];
        x->cap[c] = n[c];
        x->free_head[c] = n[c] ? 0 : -1;
        x->created[c] = 0;
        x->peak[c] = 0;
    }
    cm__core_unlock();
    /* no stream of the old pool is acquired, so no handle names one and no thread uses one:
     * destroy their CUDA streams and free their scratch on the device */
    cm__ex_left_t left;
    memset(&left, 0, sizeof left);
    for (int c = 0; c < 2; ++c) cm__streams_free(old[c], old_cap[c], true, &left);
    cm__leave(&sc);
    char what[96];
    snprintf(what, sizeof what, "the stream pool of device %d was resized, but its old pool",
             x->ordinal);
    return cm__ex_left_report(&left, what);
}

cm_status_t cm_stream_pool_stats(cm_device_t *dev, cm_stream_pool_stats_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_stream_pool_stats_t", "out is NULL");
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    cm_stream_pool_stats_t r;
    memset(&r, 0, sizeof r);
    cm__core_lock();
    for (int c = 0; c < 2; ++c) {
        r.capacity[c] = x->cap[c];
        r.acquired[c] = x->acquired[c];
        r.created[c] = x->created[c];
        r.peak_acquired[c] = x->peak[c];
    }
    r.events_timing = x->n_events[CM_EVENT_TIMING];
    r.events_sync_only = x->n_events[CM_EVENT_SYNC_ONLY];
    r.events_acquired = x->events_acquired;
    cm__core_unlock();
    *out = r;
    return CM_OK;
}

/* Put an acquired stream back in its pool (core lock held): end its handle. */
static void cm__stream_put_back_locked(struct cm__stream *s) {
    cm__exec_t *x = s->ex;
    int c = (int)s->priority;
    (void)cm__handle_end_locked(s->handle, CM__KIND_STREAM);
    s->handle = NULL;
    --x->acquired[c];
    s->next_free = x->free_head[c];
    x->free_head[c] = (int)s->index;
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
    cm__core_lock();
    int i = x->free_head[c];
    if (i < 0) {
        unsigned cap = x->cap[c];
        cm__core_unlock();
        return CM__FAIL(CM_ERROR_BUSY, x->ordinal,
                        "release streams you no longer need (cm_stream_release()), or enlarge the "
                        "pool with cm_stream_pool_configure()",
                        "all %u %s-priority streams of device %d are acquired", cap,
                        cm__prio_name(priority), x->ordinal);
    }
    struct cm__stream *s = &x->streams[c][i];
    /* a new handle for this acquire: every handle of an earlier acquire stays stale */
    const cm__epitaph_t ep = {.file = file, .line = line, .device = x->ordinal,
                              .what = c ? "high-priority stream" : "low-priority stream"};
    void *h = cm__handle_new_locked(CM__KIND_STREAM, s, &ep);
    if (h != NULL) {
        s->handle = h;
        s->file = file;
        s->line = line;
        if (++x->acquired[c] > x->peak[c]) x->peak[c] = x->acquired[c];
    }
    if (h == NULL) {
        cm__core_unlock();
        return cm__oom(x->ordinal, "a stream handle");
    }
    x->free_head[c] = s->next_free;
    s->next_free = -1;
    s->last_op = NULL;
    s->last_kernel = NULL;
    s->last_file = NULL;
    s->last_line = 0;
    bool create = s->cs == NULL;
    cm__core_unlock();

    if (create) { /* the slot is ours: create its CUDA stream outside the lock */
        cm__scope_t sc;
        cm_status_t st = cm__enter(x->ordinal, 1, &sc);
        cudaStream_t cs = NULL;
        if (st == CM_OK) {
            cudaError_t err = cm__cuda.stream_create(&cs, cudaStreamNonBlocking,
                                                     x->priority_value[c]);
            if (err != cudaSuccess)
                st = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaStreamCreateWithPriority(non-blocking, %d) on device %d",
                                   x->priority_value[c], x->ordinal);
            cm__leave(&sc);
        }
        cm__core_lock();
        if (st != CM_OK) {
            cm__stream_put_back_locked(s);
            cm__core_unlock();
            if (file != NULL) cm__error_set_location(file, line);
            return st;
        }
        s->cs = cs;
        ++x->created[c];
        cm__core_unlock();
    }
    *out = (cm_stream_t *)h;
    return CM_OK;
}

/* Free a stream's scratch after the work queued on the stream (device scope, no lock held): a
 * released wrapped stream's, or a block that lost the race for the first allocation (its
 * memset was queued on cs). While this thread captures a graph (CUDA would refuse the
 * synchronising calls) or when the device cannot be made current, the free is deferred
 * (cm__defer_free). Records nothing: the caller's detail stays. */
static void cm__scratch_drop(struct cm__device *dev, int ordinal, cudaStream_t cs, void *p,
                             size_t bytes) {
    const cm_error_t reported = *cm_last_error();
    if (cm__context_guard(ordinal) == CM_OK) { /* else it went with the lost context */
        cm__scope_t sc;
        if (cm__thread_captures == 0 && cm__enter(ordinal, 1, &sc) == CM_OK) {
            cm__ex_wait(cm__cuda.stream_synchronize(cs));
            if (cm__cuda.device_free(p) != cudaSuccess) /* stays with the driver */
                (void)cm__cuda.get_last_error();
            cm__leave(&sc);
        } else {
            (void)cm__defer_free(dev, p, bytes);
        }
    }
    *cm__detail() = reported;
}

cm_status_t cm_stream_release(cm_stream_t *stream) {
    if (stream == NULL) return CM_OK;
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st != CM_OK) {
        cm__core_unlock();
        return st;
    }
    if (s->capturing) {
        int ordinal = s->ordinal;
        cm__core_unlock();
        return CM__FAIL(CM_ERROR_BUSY, ordinal, "end the capture with cm_graph_capture_end() first",
                        "the stream is being captured into a graph");
    }
    if (s->wrapped) {
        /* end the handle and forget the stream; the CUDA stream stays the caller's */
        cm__exec_t *x = s->ex;
        (void)cm__handle_end_locked(s->handle, CM__KIND_STREAM);
        for (struct cm__stream **p = &x->wrapped; *p != NULL; p = &(*p)->wrapped_next) {
            if (*p == s) {
                *p = s->wrapped_next;
                break;
            }
        }
        --x->n_wrapped;
        cm__core_unlock();
        if (s->scratch != NULL)
            cm__scratch_drop(x->dev, s->ordinal, s->cs, s->scratch, s->scratch_bytes);
        free(s);
        return CM_OK;
    }
    cm__stream_put_back_locked(s);
    cm__core_unlock();
    return CM_OK;
}

cm_status_t cm_stream_wrap_at(cm_device_t *dev, cudaStream_t cs, cm_stream_t **out,
                              const char *file, int line) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_stream_t * to receive the stream",
                "out is NULL");
    *out = NULL;
    if (cs == 0 || cs == cudaStreamLegacy || cs == cudaStreamPerThread) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass NULL as the cm_stream_t * for synchronous work; wrap a "
                        "stream from cudaStreamCreate()",
                        "cannot wrap a default stream (0, cudaStreamLegacy or cudaStreamPerThread): "
                        "it follows the current device instead of belonging to one");
    }
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    CM_TRY(cm__context_guard(x->ordinal));
    /* the stream must be one of the device object's device (checked before anything is made) */
    CM_TRY(cm__check_stream_of(cs, x->ordinal, "device object", __func__));
    struct cm__stream *s = calloc(1, sizeof *s);
    if (s == NULL) return cm__oom(x->ordinal, "a wrapped stream");
    s->ex = x;
    s->ordinal = x->ordinal;
    s->priority = CM_STREAM_PRIORITY_LOW;
    s->cs = cs;
    s->next_free = -1;
    s->file = file;
    s->line = line;
    s->wrapped = true;
    const cm__epitaph_t ep = {.file = file, .line = line, .device = x->ordinal,
                              .what = "wrapped CUDA stream"};
    cm__core_lock();
    void *h = cm__handle_new_locked(CM__KIND_STREAM, s, &ep);
    if (h != NULL) {
        s->handle = h;
        s->wrapped_next = x->wrapped;
        x->wrapped = s;
        ++x->n_wrapped;
    }
    cm__core_unlock();
    if (h == NULL) {
        free(s);
        return cm__oom(x->ordinal, "a stream handle");
    }
    *out = (cm_stream_t *)h;
    return CM_OK;
}

cm_status_t cm_stream_device(const cm_stream_t *stream, cm_device_t **dev) {
    CM__REQUIRE(dev != NULL, "pass the address of a cm_device_t *", "dev is NULL");
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st == CM_OK) *dev = (cm_device_t *)s->ex->dev->handle;
    cm__core_unlock();
    return st;
}

cm_status_t cm_stream_cuda(const cm_stream_t *stream, cudaStream_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cudaStream_t", "out is NULL");
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st == CM_OK) *out = s->cs;
    cm__core_unlock();
    return st;
}

/* ------------------------------------------------------------------ scratch */

/* Zeroed device memory for work queued on one stream: cudaMalloc with the device current, then
 * cudaMemsetAsync on cs so that it is zero before anything later on cs runs. */
static cm_status_t cm__scratch_new(int ordinal, cudaStream_t cs, size_t bytes, void **out) {
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    void *p = NULL;
    cudaError_t err = cm__cuda.device_malloc(&p, bytes);
    if (err == cudaSuccess) err = cm__cuda.memset_async(p, 0, bytes, cs);
    cm_status_t st = CM_OK;
    if (err != cudaSuccess) {
        if (p != NULL) (void)cm__cuda.device_free(p);
        p = NULL;
        st = cm__cuda_fail(err, __FILE__, __LINE__,
                           "cudaMalloc/cudaMemsetAsync(%zu bytes of stream scratch, device %d)",
                           bytes, ordinal);
    }
    cm__leave(&sc);
    *out = p;
    return st;
}

cm_status_t cm__stream_scratch(struct cm__device *dev, cm_stream_t *stream, cudaStream_t cs,
                               size_t bytes, void **out) {
    static const char func[] = "cm__stream_scratch";
    *out = NULL;
    if (stream == NULL) { /* the legacy default stream of the device object */
        CM__REQUIRE(dev != NULL, "pass the device object of the operands", "dev is NULL");
        cm__exec_t *x = NULL;
        CM_TRY(cm__ex_of(dev, &x));
        cm__core_lock();
        void *have = x->legacy_scratch_bytes >= bytes ? x->legacy_scratch : NULL;
        bool exists = x->legacy_scratch != NULL;
        cm__core_unlock();
        if (exists) {
            *out = have; /* NULL: too small, the caller allocates its own */
            return CM_OK;
        }
        void *p = NULL;
        CM_TRY(cm__scratch_new(x->ordinal, cs, bytes, &p));
        cm__core_lock();
        if (x->legacy_scratch == NULL) {
            x->legacy_scratch = p;
            x->legacy_scratch_bytes = bytes;
            p = NULL;
        }
        *out = x->legacy_scratch_bytes >= bytes ? x->legacy_scratch : NULL;
        cm__core_unlock();
        if (p != NULL) /* another thread was first */
            cm__scratch_drop(dev, x->ordinal, cs, p, bytes);
        return CM_OK;
    }
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", func, &s);
    void *have = st == CM_OK && s->scratch_bytes >= bytes ? s->scratch : NULL;
    bool exists = st == CM_OK && s->scratch != NULL;
    int ordinal = st == CM_OK ? s->ordinal : -1;
    struct cm__device *sdev = st == CM_OK ? s->ex->dev : NULL;
    cm__core_unlock();
    CM_TRY(st);
    if (exists) {
        *out = have;
        return CM_OK;
    }
    void *p = NULL;
    CM_TRY(cm__scratch_new(ordinal, cs, bytes, &p));
    /* install it unless another thread was first; look the handle up again: the stream may have
     * been released meanwhile (a misuse, but its slot must not be written then) */
    cm__core_lock();
    st = cm__stream_check_locked(stream, "stream", func, &s);
    if (st == CM_OK) {
        if (s->scratch == NULL) {
            s->scratch = p;
            s->scratch_bytes = bytes;
            p = NULL;
        }
        *out = s->scratch_bytes >= bytes ? s->scratch : NULL;
    }
    cm__core_unlock();
    if (p != NULL) cm__scratch_drop(sdev, ordinal, cs, p, bytes);
    return st;
}

/* ------------------------------------------------------------------ for other modules */

cm_status_t cm__stream_for_device(cm_stream_t *stream, int ordinal, const char *operands,
                                  const char *func, cudaStream_t *cs) {
    *cs = 0;
    if (stream == NULL) return CM_OK;
    /* one locked look: the handle, its CUDA stream and its device */
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", func, &s);
    cudaStream_t c = st == CM_OK ? s->cs : NULL;
    int sd = st == CM_OK ? s->ordinal : -1;
    if (st == CM_OK && sd == ordinal) {
        /* the caller queues its kernels next: a later fault on the stream names it */
        s->last_kernel = NULL;
        s->last_file = NULL;
        s->last_line = 0;
        s->last_op = func;
    }
    cm__core_unlock();
    CM_TRY(st);
    if (sd != ordinal) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "acquire a stream of device %d's device object, or pass NULL "
                 "for a synchronous call", ordinal);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "stream belongs to device %d but the %s are on device %d", sd, operands,
                        ordinal);
    }
    *cs = c;
    return CM_OK;
}

cm_status_t cm__stream_for_launch(cm_stream_t *stream, const void *kernel, const char *file,
                                  int line, const char *func, cudaStream_t *out, int *ordinal) {
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", func, &s);
    if (st == CM_OK) {
        s->last_kernel = kernel;
        s->last_file = file;
        s->last_line = line;
        s->last_op = NULL;
        *out = s->cs;
        *ordinal = s->ordinal;
    }
    cm__core_unlock();
    return st;
}

bool cm__stream_capturing(cudaStream_t s) {
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    /* a driver query: a failure leaves the runtime's last error alone */
    if (cm__cuda.stream_is_capturing(s, &cs) != cudaSuccess) return false;
    return cs != cudaStreamCaptureStatusNone;
}

/* ------------------------------------------------------------------ synchronisation */

/* The CUDA stream and ordinal of an acquired stream, or the recorded failure. */
static cm_status_t cm__stream_get(cm_stream_t *stream, const char *arg, const char *func,
                                  cudaStream_t *cs, int *ordinal) {
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, arg, func, &s);
    if (st == CM_OK) {
        *cs = s->cs;
        *ordinal = s->ordinal;
    }
    cm__core_unlock();
    return st;
}

cm_status_t cm_stream_synchronize(cm_stream_t *s) {
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    CM__NVTX_PUSH("cm_stream_synchronize");
    cudaError_t err = cm__cuda.stream_synchronize(cs);
    CM__NVTX_POP();
    cm_status_t st = CM_OK;
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize (device %d)", ordinal);
    cm__leave(&sc);
    if (st != CM_OK) cm__attribute_fault(s, ordinal);
    return st;
}

cm_status_t cm_stream_query(cm_stream_t *s, bool *idle) {
    CM__REQUIRE(idle != NULL, "pass the address of a bool", "idle is NULL");
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__stream_get(s, "stream", __func__, &cs, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    cudaError_t err = cm__cuda.stream_query(cs);
    cm_status_t st = CM_OK;
    if (err == cudaErrorNotReady) {
        (void)cm__cuda.get_last_error();
        *idle = false;
    } else if (err != cudaSuccess) {
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamQuery (device %d)", ordinal);
    } else {
        *idle = true;
    }
    cm__leave(&sc);
    if (st != CM_OK) cm__attribute_fault(s, ordinal);
    return st;
}

cm_status_t cm_device_synchronize(cm_device_t *dev) {
    struct cm__device *d = NULL;
    CM_TRY(cm__device_get(dev, "dev", __func__, &d));
    int ordinal = d->ordinal;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    CM__NVTX_PUSH("cm_device_synchronize");
    cudaError_t err = cm__cuda.device_synchronize();
    CM__NVTX_POP();
    cm_status_t st = CM_OK;
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceSynchronize (device %d)", ordinal);
    cm__leave(&sc);
    if (st == CM_OK) return CM_OK;
    /* name the last library launch of each acquired stream of the device object */
    cm_error_t *e = cm__detail();
    cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
    cm__core_lock();
    const cm__exec_t *x = d->exec.state;
    unsigned named = 0;
    for (int c = 0; x != NULL && c < 2; ++c) {
        for (unsigned i = 0; i < x->cap[c]; ++i) {
            const struct cm__stream *s = &x->streams[c][i];
            if (s->handle == NULL || (s->last_file == NULL && s->last_op == NULL)) continue;
            if (s->last_op != NULL)
                cm__text_printf(&t, "%s%s", named ? ", " : "; last library launches on its "
                                "acquired streams: ", s->last_op);
            else
                cm__text_printf(&t, "%s%s:%d",
                                named ? ", " : "; last library launches on its acquired streams: ",
                                s->last_file, s->last_line);
            ++named;
        }
    }
    cm__core_unlock();
    if (strstr(e->hint, "CUDAMODEL_SYNC") == NULL) {
        size_t len = strlen(e->hint);
        cm__strlcpy(e->hint + len, "; run with CUDAMODEL_SYNC=1 to have the faulting launch name itself",
                    sizeof e->hint - len);
    }
    return st;
}

/* ------------------------------------------------------------------ buffers on streams */

cm_status_t cm__stream_queue(cm_stream_t *stream, const char *func, cm__queue_t *q) {
    q->handle = NULL;
    q->cs = 0;
    q->ordinal = -1;
    if (stream == NULL) return CM_OK;
    CM_TRY(cm__stream_get(stream, "stream", func, &q->cs, &q->ordinal));
    q->handle = stream;
    return CM_OK;
}

void cm__stream_note_op(cm_stream_t *stream, const char *op) {
    if (stream == NULL) return;
    cm__core_lock();
    /* a failed look-up records nothing here: the caller's operation already succeeded */
    struct cm__stream *s = cm__stream_obj(stream);
    if (s != NULL) {
        s->last_kernel = NULL;
        s->last_file = NULL;
        s->last_line = 0;
        s->last_op = op;
    }
    cm__core_unlock();
}

/* ------------------------------------------------------------------ events */

/* Lend e (core lock held): a new handle. NULL when host memory for the handle runs out. */
static void *cm__event_lend_locked(struct cm__event *e) {
    const cm__epitaph_t ep = {.device = e->ordinal,
                              .what = e->kind == CM_EVENT_TIMING ? "timing event"
                                                                 : "synchronisation-only event"};
    void *h = cm__handle_new_locked(CM__KIND_EVENT, e, &ep);
    if (h != NULL) {
        e->handle = h;
        ++e->ex->events_acquired;
    }
    e->recorded = false;
    e->recorded_on = NULL;
    return h;
}

cm_status_t cm_event_acquire(cm_device_t *dev, cm_event_kind_t kind, cm_event_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_event_t * to receive the event",
                "out is NULL");
    CM__REQUIRE(kind == CM_EVENT_SYNC_ONLY || kind == CM_EVENT_TIMING,
                "use CM_EVENT_SYNC_ONLY or CM_EVENT_TIMING", "kind %d is not an event kind",
                (int)kind);
    cm__exec_t *x = NULL;
    CM_TRY(cm__ex_get(dev, __func__, &x));
    cm__core_lock();
    struct cm__event *e = x->free_events[kind];
    if (e != NULL) {
        void *h = cm__event_lend_locked(e);
        if (h != NULL) {
            x->free_events[kind] = e->next_free;
            e->next_free = NULL;
        }
        cm__core_unlock();
        if (h == NULL) return cm__oom(x->ordinal, "an event handle");
        *out = (cm_event_t *)h;
        return CM_OK;
    }
    cm__core_unlock();

    /* none free: make one (outside the lock) */
    CM_TRY(cm__context_guard(x->ordinal));
    e = calloc(1, sizeof *e);
    if (e == NULL) return cm__oom(x->ordinal, "an event");
    cm__scope_t sc;
    cm_status_t st = cm__enter(x->ordinal, 1, &sc);
    if (st != CM_OK) {
        free(e);
        return st;
    }
    unsigned flags = kind == CM_EVENT_TIMING ? cudaEventDefault : cudaEventDisableTiming;
    cudaError_t err = cm__cuda.event_create(&e->ce, flags);
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventCreateWithFlags(%s) on device %d",
                           kind == CM_EVENT_TIMING ? "cudaEventDefault" : "cudaEventDisableTiming",
                           x->ordinal);
    cm__leave(&sc);
    if (st != CM_OK) {
        free(e);
        return st;
    }
    e->ex = x;
    e->ordinal = x->ordinal;
    e->kind = kind;
    cm__core_lock();
    void *h = cm__event_lend_locked(e);
    if (h != NULL) {
        e->next_all = x->all_events;
        x->all_events = e;
        ++x->n_events[kind];
    }
    cm__core_unlock();
    if (h == NULL) {
        if (cm__enter(x->ordinal, 0, &sc) == CM_OK) {
            (void)cm__cuda.event_destroy(e->ce);
            cm__leave(&sc);
        }
        free(e);
        return cm__oom(x->ordinal, "an event handle");
    }
    *out = (cm_event_t *)h;
    return CM_OK;
}

cm_status_t cm_event_release(cm_event_t *event) {
    if (event == NULL) return CM_OK;
    cm__core_lock();
    struct cm__event *e = NULL;
    cm_status_t st = cm__event_check_locked(event, "event", __func__, &e);
    if (st == CM_OK) {
        cm__exec_t *x = e->ex;
        (void)cm__handle_end_locked(e->handle, CM__KIND_EVENT);
        e->handle = NULL;
        --x->events_acquired;
        e->recorded_on = NULL;
        e->next_free = x->free_events[e->kind];
        x->free_events[e->kind] = e;
    }
    cm__core_unlock();
    return st;
}

cm_status_t cm_event_cuda(const cm_event_t *event, cudaEvent_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cudaEvent_t", "out is NULL");
    cm__core_lock();
    struct cm__event *e = NULL;
    cm_status_t st = cm__event_check_locked(event, "event", __func__, &e);
    if (st == CM_OK) *out = e->ce;
    cm__core_unlock();
    return st;
}

/* Check an event and a stream together (same device); give their CUDA handles and device.
 * mark_recorded: the event is being recorded on the stream (remember the stream's handle). */
static cm_status_t cm__event_stream(cm_event_t *event, cm_stream_t *stream, const char *func,
                                    cudaEvent_t *ce, cudaStream_t *cs, int *ordinal,
                                    bool mark_recorded) {
    cm__core_lock();
    struct cm__event *e = NULL;
    struct cm__stream *s = NULL;
    cm_status_t st = cm__event_check_locked(event, "event", func, &e);
    if (st == CM_OK) st = cm__stream_check_locked(stream, "stream", func, &s);
    if (st == CM_OK) st = cm__same_device(e->ordinal, s->ordinal, "the event", "the stream", func);
    if (st == CM_OK) {
        *ce = e->ce;
        *cs = s->cs;
        *ordinal = s->ordinal;
        if (mark_recorded) {
            e->recorded = true;
            e->recorded_on = s->handle;
        }
    }
    cm__core_unlock();
    return st;
}

cm_status_t cm_event_record(cm_event_t *e, cm_stream_t *s) {
    cudaEvent_t ce = NULL;
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__event_stream(e, s, __func__, &ce, &cs, &ordinal, true));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    CM__NVTX_PUSH("cm_event_record");
    cudaError_t err = cm__cuda.event_record(ce, cs);
    CM__NVTX_POP();
    cm_status_t st = CM_OK;
    if (err != cudaSuccess) st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventRecord");
    cm__leave(&sc);
    return st;
}

cm_status_t cm_stream_wait_event(cm_stream_t *s, cm_event_t *e) {
    cudaEvent_t ce = NULL;
    cudaStream_t cs = NULL;
    int ordinal = -1;
    CM_TRY(cm__event_stream(e, s, __func__, &ce, &cs, &ordinal, false));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    CM__NVTX_PUSH("cm_stream_wait_event");
    cudaError_t err = cm__cuda.stream_wait_event(cs, ce, 0);
    CM__NVTX_POP();
    cm_status_t st = CM_OK;
    if (err != cudaSuccess) st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamWaitEvent");
    cm__leave(&sc);
    return st;
}

cm_status_t cm_event_synchronize(cm_event_t *event) {
    cm__core_lock();
    struct cm__event *e = NULL;
    cm_status_t st = cm__event_check_locked(event, "event", __func__, &e);
    cudaEvent_t ce = st == CM_OK ? e->ce : NULL;
    int ordinal = st == CM_OK ? e->ordinal : -1;
    const void *on = st == CM_OK ? e->recorded_on : NULL;
    cm__core_unlock();
    CM_TRY(st);
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    cudaError_t err = cm__cuda.event_synchronize(ce);
    if (err != cudaSuccess)
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventSynchronize (device %d)", ordinal);
    cm__leave(&sc);
    /* the stream is named by its handle: a stream released (and maybe acquired again, or its
     * pool resized) since the record is reported as such, never read through a stale pointer */
    if (st != CM_OK) cm__attribute_fault(on, ordinal);
    return st;
}

cm_status_t cm_event_query(cm_event_t *event, bool *done) {
    CM__REQUIRE(done != NULL, "pass the address of a bool", "done is NULL");
    cm__core_lock();
    struct cm__event *e = NULL;
    cm_status_t st = cm__event_check_locked(event, "event", __func__, &e);
    cudaEvent_t ce = st == CM_OK ? e->ce : NULL;
    int ordinal = st == CM_OK ? e->ordinal : -1;
    cm__core_unlock();
    CM_TRY(st);
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    cudaError_t err = cm__cuda.event_query(ce);
    if (err == cudaErrorNotReady) {
        (void)cm__cuda.get_last_error();
        *done = false;
    } else if (err != cudaSuccess) {
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventQuery (device %d)", ordinal);
    } else {
        *done = true;
    }
    cm__leave(&sc);
    return st;
}

cm_status_t cm_event_elapsed_ms(cm_event_t *start, cm_event_t *stop, float *ms) {
    CM__REQUIRE(ms != NULL, "pass the address of a float", "ms is NULL");
    cm__core_lock();
    struct cm__event *a = NULL, *b = NULL;
    cm_status_t st = cm__event_check_locked(start, "start", __func__, &a);
    if (st == CM_OK) st = cm__event_check_locked(stop, "stop", __func__, &b);
    if (st == CM_OK) st = cm__same_device(a->ordinal, b->ordinal, "start", "stop", __func__);
    const char *which = NULL;
    if (st == CM_OK) {
        if (a->kind != CM_EVENT_TIMING) which = "start";
        else if (b->kind != CM_EVENT_TIMING) which = "stop";
    }
    bool recorded = st == CM_OK && a->recorded && b->recorded;
    bool start_recorded = st == CM_OK && a->recorded;
    int ordinal = st == CM_OK ? a->ordinal : -1;
    cudaEvent_t ca = st == CM_OK ? a->ce : NULL, cb = st == CM_OK ? b->ce : NULL;
    cm__core_unlock();
    CM_TRY(st);
    if (which != NULL) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal,
                        "acquire both events with CM_EVENT_TIMING (synchronisation-only events "
                        "carry no timestamp)",
                        "%s is a synchronisation-only event (CM_EVENT_SYNC_ONLY)", which);
    }
    if (!recorded) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal,
                        "record both events with cm_event_record() (start before stop)",
                        "%s was never recorded since it was acquired",
                        start_recorded ? "stop" : "start");
    }
    float v = 0.0f;
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    cudaError_t err = cm__cuda.event_elapsed(&v, ca, cb);
    if (err == cudaErrorNotReady) {
        (void)cm__cuda.get_last_error();
        st = CM__FAIL(CM_ERROR_BUSY, ordinal,
                      "wait for the stop event first (cm_event_synchronize(stop))",
                      "the stop event has not completed yet");
    } else if (err != cudaSuccess) {
        st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventElapsedTime");
    }
    cm__leave(&sc);
    if (st == CM_OK) *ms = v;
    return st;
}

/* ------------------------------------------------------------------ dependencies, callbacks */

cm_status_t cm_stream_wait(cm_stream_t *waiter, cm_stream_t *signaler) {
    cm__core_lock();
    struct cm__stream *w = NULL, *g = NULL;
    cm_status_t st = cm__stream_check_locked(waiter, "waiter", __func__, &w);
    if (st == CM_OK) st = cm__stream_check_locked(signaler, "signaler", __func__, &g);
    if (st == CM_OK && w->ex != g->ex)
        st = cm__same_device(w->ordinal, g->ordinal, "waiter", "signaler", __func__);
    if (st == CM_OK && w->ex != g->ex) {
        st = CM__FAIL(CM_ERROR_INVALID_ARGUMENT, w->ordinal,
                      "use streams acquired from one cm_device_t",
                      "waiter and signaler come from two device objects of device %d",
                      w->ordinal);
    }
    cm_device_t *dev = st == CM_OK ? (cm_device_t *)w->ex->dev->handle : NULL;
    cm__core_unlock();
    CM_TRY(st);
    if (w == g) return CM_OK;
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
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 0, &sc));
    CM__NVTX_PUSH("cm_stream_host_callback");
    cudaError_t err = cm__cuda.launch_host_func(cs, (cudaHostFn_t)fn, user);
    CM__NVTX_POP();
    cm_status_t st = CM_OK;
    if (err != cudaSuccess) st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaLaunchHostFunc");
    cm__leave(&sc);
    return st;
}

/* ------------------------------------------------------------------ timers */

cm_status_t cm_timer_create(cm_device_t *dev, cm_timer_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_timer_t *", "out is NULL");
    struct cm__timer *t = calloc(1, sizeof *t);
    if (t == NULL) return cm__oom(-1, "a timer");
    cm_status_t st = cm_event_acquire(dev, CM_EVENT_TIMING, &t->start);
    if (st == CM_OK) st = cm_event_acquire(dev, CM_EVENT_TIMING, &t->stop);
    if (st == CM_OK) {
        const struct cm__device *d = cm__device_obj(dev);
        const cm__epitaph_t ep = {.device = d != NULL ? d->ordinal : -1};
        t->handle = cm__handle_new(CM__KIND_TIMER, t, &ep);
        if (t->handle == NULL) st = cm__oom(-1, "a timer handle");
    }
    if (st != CM_OK) {
        (void)cm_event_release(t->start);
        (void)cm_event_release(t->stop);
        free(t);
        return st;
    }
    *out = (cm_timer_t *)t->handle;
    return CM_OK;
}

cm_status_t cm_timer_destroy(cm_timer_t *timer) {
    if (timer == NULL) return CM_OK;
    struct cm__timer *t = cm__handle_end(timer, CM__KIND_TIMER);
    if (t == NULL) return cm__handle_fail(timer, CM__KIND_TIMER, "timer", __func__);
    cm_status_t a = cm_event_release(t->start);
    cm_status_t b = cm_event_release(t->stop);
    free(t);
    return a != CM_OK ? a : b;
}

cm_status_t cm_timer_start(cm_timer_t *timer, cm_stream_t *s) {
    struct cm__timer *t = NULL;
    CM__GET(t, timer, CM__KIND_TIMER, "timer");
    CM_TRY(cm_event_record(t->start, s));
    t->stream = s;
    t->state = 1;
    return CM_OK;
}

cm_status_t cm_timer_stop(cm_timer_t *timer) {
    struct cm__timer *t = NULL;
    CM__GET(t, timer, CM__KIND_TIMER, "timer");
    if (t->state != 1) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "call cm_timer_start() first",
                        "the timer was %s", t->state == 0 ? "never started" : "already stopped");
    }
    CM_TRY(cm_event_record(t->stop, t->stream));
    t->state = 2;
    return CM_OK;
}

cm_status_t cm_timer_elapsed_ms(cm_timer_t *timer, float *ms) {
    CM__REQUIRE(ms != NULL, "pass the address of a float", "ms is NULL");
    struct cm__timer *t = NULL;
    CM__GET(t, timer, CM__KIND_TIMER, "timer");
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

cm_status_t cm_graph_capture_begin(cm_stream_t *stream) {
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st == CM_OK && s->capturing) {
        int ordinal = s->ordinal;
        cm__core_unlock();
        return CM__FAIL(CM_ERROR_BUSY, ordinal, "end the capture with cm_graph_capture_end()",
                        "the stream is already being captured");
    }
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    int ordinal = st == CM_OK ? s->ordinal : -1;
    if (st == CM_OK) s->capturing = true;
    cm__core_unlock();
    CM_TRY(st);
    cm__scope_t sc;
    st = cm__enter(ordinal, 0, &sc);
    if (st == CM_OK) {
        cudaError_t err = cm__cuda.begin_capture(cs, cudaStreamCaptureModeThreadLocal);
        if (err != cudaSuccess)
            st = cm__cuda_fail(err, __FILE__, __LINE__,
                               "cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal)");
        cm__leave(&sc);
    }
    if (st != CM_OK) { /* the stream is still ours: one thread uses it at a time */
        cm__core_lock();
        s->capturing = false;
        cm__core_unlock();
    } else {
        ++cm__thread_captures;
    }
    return st;
}

/* End a capture and instantiate its graph (inside the scope of the stream's device). */
static cm_status_t cm__capture_end(cudaStream_t cs, int ordinal, struct cm__graph **out) {
    cudaGraph_t g = NULL;
    cudaError_t err = cm__cuda.end_capture(cs, &g);
    if (err == cudaErrorStreamCaptureInvalidated || err == cudaErrorStreamCaptureUnsupported ||
        err == cudaErrorStreamCaptureUnjoined) {
        (void)cm__cuda.get_last_error();
        if (g != NULL) (void)cm__cuda.graph_destroy(g);
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, ordinal,
                        "capture only asynchronous work on the stream: launches, copies on the "
                        "stream, sets, fills, waits; join every stream that forked from it "
                        "(cm_stream_wait back onto it); no synchronisation, synchronous calls "
                        "(a NULL stream) or synchronous allocation inside a capture",
                        "the capture on device %d was invalidated by a call that cannot be captured "
                        "(%s: %s)",
                        ordinal, cm__cuda.get_error_name(err), cm__cuda.get_error_string(err));
    }
    if (err != cudaSuccess) return cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamEndCapture");
    struct cm__graph *gr = calloc(1, sizeof *gr);
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
    const cm__epitaph_t ep = {.device = ordinal};
    gr->handle = cm__handle_new(CM__KIND_GRAPH, gr, &ep);
    if (gr->handle == NULL) {
        (void)cm__cuda.graph_exec_destroy(gr->exec);
        (void)cm__cuda.graph_destroy(g);
        free(gr);
        return cm__oom(ordinal, "a graph handle");
    }
    *out = gr;
    return CM_OK;
}

cm_status_t cm_graph_capture_end(cm_stream_t *stream, cm_graph_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_graph_t *", "out is NULL");
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st == CM_OK && !s->capturing) {
        int ordinal = s->ordinal;
        cm__core_unlock();
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal,
                        "call cm_graph_capture_begin() on the stream first",
                        "the stream is not being captured");
    }
    int ordinal = st == CM_OK ? s->ordinal : -1;
    cm__core_unlock();
    CM_TRY(st);
    /* instantiation allocates on the device: make it current. First, before the stream is marked
     * as no longer capturing: a scope that cannot be entered ends nothing (CUDA still captures),
     * and the end may be repeated */
    cm__scope_t sc;
    st = cm__enter(ordinal, 1, &sc);
    if (st != CM_OK) {
        /* a lost context took the capture with it: the stream and this thread capture nothing
         * any more (nothing to repeat), else the thread would count a capture for good and
         * refuse its closes */
        const cm_error_t reported = *cm_last_error();
        if (cm__context_guard(ordinal) != CM_OK) {
            cm__core_lock();
            if (cm__stream_check_locked(stream, "stream", __func__, &s) == CM_OK &&
                s->capturing) {
                s->capturing = false;
                if (cm__thread_captures > 0) --cm__thread_captures;
            }
            cm__core_unlock();
        }
        *cm__detail() = reported;
        return st;
    }
    cm__core_lock();
    st = cm__stream_check_locked(stream, "stream", __func__, &s);
    const bool ended = st == CM_OK && !s->capturing; /* by another thread meanwhile */
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    if (st == CM_OK) s->capturing = false;
    cm__core_unlock();
    if (ended)
        st = CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal,
                      "call cm_graph_capture_begin() on the stream first",
                      "the stream is not being captured");
    if (st != CM_OK) {
        cm__leave(&sc);
        return st;
    }
    if (cm__thread_captures > 0) --cm__thread_captures; /* ended below, whatever the outcome */
    struct cm__graph *gr = NULL;
    st = cm__capture_end(cs, ordinal, &gr);
    cm__leave(&sc);
    /* frees deferred while this thread captured (a failed cudaFreeAsync) can run now */
    cm__deferred_free_drain();
    CM_TRY(st);
    *out = (cm_graph_t *)gr->handle;
    return CM_OK;
}

cm_status_t cm_graph_launch(cm_graph_t *graph, cm_stream_t *stream) {
    struct cm__graph *g = NULL;
    CM__GET(g, graph, CM__KIND_GRAPH, "graph");
    cm__core_lock();
    struct cm__stream *s = NULL;
    cm_status_t st = cm__stream_check_locked(stream, "stream", __func__, &s);
    if (st == CM_OK) st = cm__same_device(g->ordinal, s->ordinal, "the graph", "the stream", __func__);
    cudaStream_t cs = st == CM_OK ? s->cs : NULL;
    cm__core_unlock();
    CM_TRY(st);
    CM_TRY(cm__context_guard(g->ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(g->ordinal, 0, &sc));
    CM__NVTX_PUSH("cm_graph_launch");
    cudaError_t err = cm__cuda.graph_launch(g->exec, cs);
    CM__NVTX_POP();
    if (err != cudaSuccess) st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaGraphLaunch");
    cm__leave(&sc);
    return st;
}

cm_status_t cm_graph_node_count(const cm_graph_t *graph, size_t *count) {
    CM__REQUIRE(count != NULL, "pass the address of a size_t", "count is NULL");
    const struct cm__graph *g = NULL;
    CM__GET(g, graph, CM__KIND_GRAPH, "graph");
    cm__scope_t sc;
    CM_TRY(cm__enter(g->ordinal, 0, &sc));
    size_t n = 0;
    cudaError_t err = cm__cuda.graph_get_nodes(g->graph, NULL, &n);
    cm_status_t st = CM_OK;
    if (err != cudaSuccess) st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaGraphGetNodes");
    cm__leave(&sc);
    if (st == CM_OK) *count = n;
    return st;
}

cm_status_t cm_graph_destroy(cm_graph_t *graph) {
    if (graph == NULL) return CM_OK;
    struct cm__graph *g = NULL;
    CM__GET(g, graph, CM__KIND_GRAPH, "graph");
    /* the destroys are runtime calls: the device's scope is entered before the handle ends, so
     * that a context that cannot be made current leaves the graph alive (the destroy may be
     * repeated) instead of destroying it with no context current; a lost context skips them */
    const int ordinal = g->ordinal;
    const bool alive = cm__context_guard(ordinal) == CM_OK;
    if (!alive) cm_last_error_clear();
    cm__scope_t sc;
    if (alive) CM_TRY(cm__enter(ordinal, 0, &sc));
    g = cm__handle_end(graph, CM__KIND_GRAPH);
    if (g == NULL) { /* raced */
        if (alive) cm__leave(&sc);
        return cm__handle_fail(graph, CM__KIND_GRAPH, "graph", __func__);
    }
    cm_status_t st = CM_OK;
    if (alive) {
        cudaError_t e1 = cm__cuda.graph_exec_destroy(g->exec);
        cudaError_t e2 = cm__cuda.graph_destroy(g->graph);
        if (e1 != cudaSuccess) st = cm__cuda_fail(e1, __FILE__, __LINE__, "cudaGraphExecDestroy");
        else if (e2 != cudaSuccess) st = cm__cuda_fail(e2, __FILE__, __LINE__, "cudaGraphDestroy");
        cm__leave(&sc);
    }
    free(g);
    return st;
}
