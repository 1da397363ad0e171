/*
 * The staging pipeline behind pageable copies (buffer.h, "Pageable copies are staged").
 *
 * cudaMemcpy from pageable memory is slow because the driver copies through a small pinned
 * buffer of its own, one piece after the other, with a single thread. Here a copy is cut into
 * chunks (cm__staging_chunk_at(), a pure plan shared with the tests); chunk i goes through
 * staging buffer i % buffers. Host to device: host threads copy chunk i into its staging buffer
 * while the DMA engine still moves chunk i-1 from the other; before a staging buffer is reused
 * the pipeline waits on the event recorded after its last DMA. Device to host: DMA of up to
 * `buffers` chunks is queued ahead, and the host threads copy chunk i out of staging while the
 * next chunks are in flight.
 *
 * The host side is split over worker threads (cm__split_range()): one thread alone copies at
 * well under the bus speed on many servers, so the pipeline would be host-bound.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory_internal.h"

#define CM__DEFAULT_CHUNK ((size_t)8 << 20)
#define CM__MIN_CHUNK ((size_t)4096)
#define CM__MAX_CHUNK ((size_t)256 << 20)
#define CM__DEFAULT_BUFFERS 3u
#define CM__DEFAULT_MIN_BYTES ((size_t)1 << 20)
/* below this a host copy is not worth waking threads for */
#define CM__PARALLEL_MIN ((size_t)256 << 10)

/* ------------------------------------------------------------------ the plan (pure) */

size_t cm__staging_chunk_count(size_t bytes, size_t chunk_bytes) {
    if (bytes == 0 || chunk_bytes == 0) return 0;
    return bytes / chunk_bytes + (bytes % chunk_bytes != 0);
}

bool cm__staging_chunk_at(size_t bytes, size_t chunk_bytes, unsigned buffers, size_t i,
                          cm__chunk_t *out) {
    if (out == NULL || buffers == 0) return false;
    size_t count = cm__staging_chunk_count(bytes, chunk_bytes);
    if (i >= count) return false;
    cm__chunk_t c = {0};
    c.index = i;
    c.offset = i * chunk_bytes; /* i < count, so no overflow: i * chunk < bytes */
    c.bytes = bytes - c.offset < chunk_bytes ? bytes - c.offset : chunk_bytes;
    c.slot = (unsigned)(i % buffers);
    c.reuses_slot = i >= buffers;
    c.previous = c.reuses_slot ? i - buffers : 0;
    *out = c;
    return true;
}

void cm__split_range(size_t bytes, unsigned parts, unsigned k, size_t *offset, size_t *len) {
    *offset = 0;
    *len = 0;
    if (parts == 0 || k >= parts) return;
    /* each part a multiple of 64 bytes, the last one takes the rest */
    size_t per = bytes / parts;
    per -= per % 64;
    size_t start = per * k;
    if (start > bytes) start = bytes;
    size_t end = (k + 1 == parts) ? bytes : start + per;
    if (end > bytes) end = bytes;
    *offset = start;
    *len = end - start;
}

/* ------------------------------------------------------------------ configuration */

static unsigned cm__default_threads(void) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long t = cpus / 2;
    if (t > 8) t = 8; /* H200 host, 16 CPUs: D2H staged 27 GB/s with 4 threads (1.8x raw) */
    if (t < 1) t = 1;
    return (unsigned)t;
}

cm_status_t cm__staging_resolve(const cm_staging_config_t *in, cm_staging_config_t *out) {
    cm_staging_config_t c = *in;
    if (c.chunk_bytes == 0) c.chunk_bytes = CM__DEFAULT_CHUNK;
    if (c.buffers == 0) c.buffers = CM__DEFAULT_BUFFERS;
    if (c.host_threads == 0) c.host_threads = cm__default_threads();
    if (c.min_bytes == 0) c.min_bytes = CM__DEFAULT_MIN_BYTES;
    if (c.chunk_bytes < CM__MIN_CHUNK || c.chunk_bytes > CM__MAX_CHUNK) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "use 0 for the default (8 MiB); larger chunks amortise per-chunk costs, "
                        "smaller ones start the overlap sooner",
                        "staging chunk_bytes is %zu; it must be between %zu and %zu (or 0)",
                        c.chunk_bytes, CM__MIN_CHUNK, CM__MAX_CHUNK);
    }
    if (c.buffers < 2 || c.buffers > CM_STAGING_MAX_BUFFERS) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "two buffers are the least that overlap host copies with DMA; 0 picks 3",
                        "staging buffers is %u; it must be between 2 and %d (or 0)", c.buffers,
                        CM_STAGING_MAX_BUFFERS);
    }
    if (c.host_threads > CM_STAGING_MAX_THREADS) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "a few threads saturate host memory bandwidth; 0 picks min(8, CPUs / 2)",
                        "staging host_threads is %u; it must be between 1 and %d (or 0)",
                        c.host_threads, CM_STAGING_MAX_THREADS);
    }
    *out = c;
    return CM_OK;
}

/* ------------------------------------------------------------------ worker threads */

struct cm__copy_workers {
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    unsigned n;                    /* worker threads (the caller is part 0) */
    pthread_t thread[CM_STAGING_MAX_THREADS];
    uint64_t generation;           /* bumped for each job */
    unsigned remaining;            /* workers still copying the current job */
    bool stop;
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
    unsigned parts;
};

typedef struct cm__worker_arg {
    cm__copy_workers_t *w;
    unsigned k; /* part index, 1..n */
} cm__worker_arg_t;

static void *cm__worker_main(void *p) {
    cm__worker_arg_t arg = *(cm__worker_arg_t *)p;
    free(p);
    cm__copy_workers_t *w = arg.w;
    uint64_t seen = 0;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->stop && w->generation == seen) pthread_cond_wait(&w->go, &w->lock);
        if (w->stop) break;
        seen = w->generation;
        unsigned char *dst = w->dst;
        const unsigned char *src = w->src;
        size_t bytes = w->bytes;
        unsigned parts = w->parts;
        pthread_mutex_unlock(&w->lock);
        size_t off = 0, len = 0;
        cm__split_range(bytes, parts, arg.k, &off, &len);
        if (len > 0) memcpy(dst + off, src + off, len);
        pthread_mutex_lock(&w->lock);
        if (--w->remaining == 0) pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void cm__workers_stop(cm__copy_workers_t *w) {
    if (w == NULL) return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < w->n; ++i) pthread_join(w->thread[i], NULL);
    pthread_cond_destroy(&w->go);
    pthread_cond_destroy(&w->done);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* Start threads - 1 workers; NULL (copies stay on the caller's thread) when fewer than two
 * threads are asked for or nothing can be started. */
static cm__copy_workers_t *cm__workers_start(unsigned threads) {
    if (threads < 2) return NULL;
    cm__copy_workers_t *w = calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->go, NULL);
    pthread_cond_init(&w->done, NULL);
    for (unsigned k = 1; k < threads; ++k) {
        cm__worker_arg_t *arg = malloc(sizeof *arg);
        if (arg == NULL) break;
        arg->w = w;
        arg->k = k;
        if (pthread_create(&w->thread[w->n], NULL, cm__worker_main, arg) != 0) {
            free(arg);
            break;
        }
        ++w->n;
    }
    if (w->n == 0) {
        cm__workers_stop(w);
        return NULL;
    }
    return w;
}

static void cm__parallel_copy(cm__copy_workers_t *w, void *dst, const void *src, size_t bytes) {
    if (w == NULL || bytes < CM__PARALLEL_MIN) {
        memcpy(dst, src, bytes);
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->dst = dst;
    w->src = src;
    w->bytes = bytes;
    w->parts = w->n + 1;
    w->remaining = w->n;
    ++w->generation;
    pthread_cond_broadcast(&w->go);
    pthread_mutex_unlock(&w->lock);
    size_t off = 0, len = 0;
    cm__split_range(bytes, w->n + 1, 0, &off, &len);
    if (len > 0) memcpy(dst, src, len);
    pthread_mutex_lock(&w->lock);
    while (w->remaining > 0) pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

/* ------------------------------------------------------------------ staging buffers */

/* Resolve the device's configuration on first use (a device object starts with zeros). st->lock
 * held. The memory part's release, which frees the staging buffers at the close, was registered
 * by the first buffer of the device (cm__alloc_track): staging is allocated by copies of
 * buffers only. */
static void cm__staging_ready(struct cm__device *dev) {
    cm__staging_t *st = &dev->staging;
    if (st->cfg.chunk_bytes != 0) return;
    st->cfg.chunk_bytes = CM__DEFAULT_CHUNK;
    st->cfg.buffers = CM__DEFAULT_BUFFERS;
    st->cfg.host_threads = cm__default_threads();
    st->cfg.min_bytes = CM__DEFAULT_MIN_BYTES;
}

/* Free the staging buffers and events (waiting for their DMA), in the caller's scope of the
 * device. Called with st->lock held or when no other thread can reach st. CM_OK, or the first
 * failure recorded, its message counting what stays with the driver (a failed cudaEventDestroy
 * or cudaFreeHost); the slots are forgotten either way. */
static cm_status_t cm__staging_free_slots(cm__staging_t *st, int ordinal) {
    cm_status_t status = CM_OK;
    cm_error_t first = {0};
    unsigned events = 0, buffers = 0;
    for (unsigned i = 0; i < st->n_slots; ++i) {
        /* a failed wait is the free's business: no later call is blamed for it */
        if (st->event_pending[i] && cm__cuda.event_synchronize(st->event[i]) != cudaSuccess)
            (void)cm__cuda.get_last_error();
        st->event_pending[i] = false;
        cudaError_t err[2] = {cudaSuccess, cudaSuccess};
        if (st->event[i] != NULL) err[0] = cm__cuda.event_destroy(st->event[i]);
        if (st->slot[i] != NULL) err[1] = cm__cuda.free_host(st->slot[i]);
        for (int k = 0; k < 2; ++k) {
            if (err[k] == cudaSuccess) continue;
            if (k == 0) ++events;
            else ++buffers;
            cm_status_t s = cm__cuda_fail(err[k], __FILE__, __LINE__, "%s(staging %s %u)",
                                          k == 0 ? "cudaEventDestroy" : "cudaFreeHost",
                                          k == 0 ? "event" : "buffer", i);
            if (status == CM_OK) {
                status = s;
                first = *cm_last_error();
            }
        }
        st->event[i] = NULL;
        st->slot[i] = NULL;
    }
    st->n_slots = 0;
    st->slot_bytes = 0;
    if (status == CM_OK) return CM_OK;
    cm_error_t *e = cm__detail();
    *e = first;
    cm__text_t t = {e->message, sizeof e->message, 0};
    cm__text_printf(&t,
                    "the staging of device %d: %u pinned buffer%s and %u event%s not freed (%s)",
                    ordinal, buffers, buffers == 1 ? "" : "s", events, events == 1 ? "" : "s",
                    first.message);
    return status;
}

/* cm__staging_free_slots on a failure path: the failure being reported keeps its detail. */
static void cm__staging_free_slots_keep(cm__staging_t *st, int ordinal) {
    const cm_error_t reported = *cm_last_error();
    (void)cm__staging_free_slots(st, ordinal);
    *cm__detail() = reported;
}

cm_status_t cm__staging_release(struct cm__device *dev) {
    cm__staging_t *st = &dev->staging;
    cm_status_t status = CM_OK;
    if (st->n_slots > 0) {
        if (cm__context_guard(dev->ordinal) != CM_OK) {
            /* the events and pinned buffers went with the lost context */
            cm_last_error_clear();
            st->n_slots = 0;
        } else {
            /* the events and pinned buffers belong to the device's context */
            cm__scope_t sc;
            status = cm__enter(dev->ordinal, 1, &sc);
            if (status == CM_OK) {
                status = cm__staging_free_slots(st, dev->ordinal);
                cm__leave(&sc);
            } else {
                /* never freed outside the device's scope (a context would be bound) */
                cm_error_t *e = cm__detail();
                char why[CM_ERROR_MESSAGE_MAX];
                cm__strlcpy(why, e->message, sizeof why);
                cm__text_t t = {e->message, sizeof e->message, 0};
                cm__text_printf(&t,
                                "the staging of device %d: %u pinned buffers and events not freed "
                                "(no scope of the device: %s)", dev->ordinal, st->n_slots, why);
                st->n_slots = 0;
            }
        }
    }
    cm__workers_stop(st->workers);
    st->workers = NULL;
    return status;
}

size_t cm__staging_bytes(struct cm__device *dev) {
    cm__staging_t *st = &dev->staging;
    pthread_mutex_lock(&st->lock);
    size_t b = st->n_slots * st->slot_bytes;
    pthread_mutex_unlock(&st->lock);
    return b;
}

cm_staging_config_t cm__staging_config(struct cm__device *dev) {
    cm__staging_t *st = &dev->staging;
    pthread_mutex_lock(&st->lock);
    cm__staging_ready(dev);
    cm_staging_config_t c = st->cfg;
    pthread_mutex_unlock(&st->lock);
    return c;
}

cm_status_t cm_device_staging_configure(cm_device_t *h, const cm_staging_config_t *cfg) {
    CM__REQUIRE(cfg != NULL, "pass a configuration (CM_STAGING_CONFIG_INIT for the defaults)",
                "cfg is NULL");
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    cm_staging_config_t c;
    CM_TRY(cm__staging_resolve(cfg, &c));
    cm__staging_t *st = &dev->staging;
    pthread_mutex_lock(&st->lock);
    cm__staging_ready(dev);
    cm_status_t status = CM_OK;
    if ((c.chunk_bytes != st->cfg.chunk_bytes || c.buffers != st->cfg.buffers) && st->n_slots > 0) {
        /* the events and pinned buffers belong to the device's context (as in the release):
         * a lost one or a scope that cannot be entered changes nothing */
        cm__scope_t sc;
        status = cm__context_guard(dev->ordinal);
        if (status == CM_OK) status = cm__enter(dev->ordinal, 1, &sc);
        if (status != CM_OK) {
            pthread_mutex_unlock(&st->lock);
            return status;
        }
        status = cm__staging_free_slots(st, dev->ordinal);
        cm__leave(&sc);
    }
    if (c.host_threads != st->cfg.host_threads) {
        cm__workers_stop(st->workers);
        st->workers = NULL;
    }
    st->cfg = c;
    pthread_mutex_unlock(&st->lock);
    if (status != CM_OK) {
        cm_error_t *e = cm__detail();
        const size_t len = strlen(e->message);
        cm__strlcpy(e->message + len, "; the new configuration is in force",
                    sizeof e->message - len);
    }
    return status;
}

cm_status_t cm_device_staging_config(const cm_device_t *h, cm_staging_config_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_staging_config_t", "out is NULL");
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    *out = cm__staging_config(dev);
    return CM_OK;
}

/* Allocate staging buffers, events and workers as configured. st->lock held. */
static cm_status_t cm__staging_ensure(struct cm__device *dev) {
    cm__staging_t *st = &dev->staging;
    cm__staging_ready(dev);
    if (st->workers == NULL && st->cfg.host_threads > 1)
        st->workers = cm__workers_start(st->cfg.host_threads);
    if (st->n_slots == st->cfg.buffers && st->slot_bytes == st->cfg.chunk_bytes) return CM_OK;
    (void)cm__staging_free_slots(st, dev->ordinal); /* what fails to free stays with the driver */
    for (unsigned i = 0; i < st->cfg.buffers; ++i) {
        cudaError_t err = cm__cuda.host_alloc(&st->slot[i], st->cfg.chunk_bytes,
                                               cudaHostAllocPortable);
        if (err != cudaSuccess) {
            st->slot[i] = NULL;
            st->n_slots = i + 1; /* free what was made, events included */
            st->slot_bytes = st->cfg.chunk_bytes;
            cm_status_t s = cm__cuda_fail(err, __FILE__, __LINE__,
                                          "cudaHostAlloc(staging buffer %u of %zu bytes)", i,
                                          st->cfg.chunk_bytes);
            if (err == cudaErrorMemoryAllocation) {
                s = CM_ERROR_HOST_OUT_OF_MEMORY;
                cm_error_t *e = cm__detail();
                e->status = s;
                snprintf(e->message, sizeof e->message,
                         "cannot pin %u staging buffers of %zu bytes for a pageable copy on device "
                         "%d (cudaHostAlloc failed for buffer %u)", st->cfg.buffers,
                         st->cfg.chunk_bytes, dev->ordinal, i);
                cm__strlcpy(e->hint, "free pinned host memory, use smaller staging buffers "
                            "(cm_device_staging_configure()), or copy from a cm_host_buffer_t",
                            sizeof e->hint);
            }
            cm__staging_free_slots_keep(st, dev->ordinal);
            return s;
        }
        err = cm__cuda.event_create(&st->event[i], cudaEventDisableTiming);
        if (err != cudaSuccess) {
            st->event[i] = NULL;
            st->n_slots = i + 1;
            st->slot_bytes = st->cfg.chunk_bytes;
            cm_status_t s = cm__cuda_fail(err, __FILE__, __LINE__,
                                          "cudaEventCreateWithFlags(staging event %u)", i);
            cm__staging_free_slots_keep(st, dev->ordinal);
            return s;
        }
        st->event_pending[i] = false;
    }
    st->n_slots = st->cfg.buffers;
    st->slot_bytes = st->cfg.chunk_bytes;
    return CM_OK;
}

static cm_status_t cm__slot_wait(cm__staging_t *st, unsigned slot) {
    if (!st->event_pending[slot]) return CM_OK;
    cudaError_t err = cm__cuda.event_synchronize(st->event[slot]);
    st->event_pending[slot] = false;
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventSynchronize(staging event %u)", slot);
    return CM_OK;
}

static cm_status_t cm__slot_record(cm__staging_t *st, unsigned slot, cudaStream_t s) {
    cudaError_t err = cm__cuda.event_record(st->event[slot], s);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaEventRecord(staging event %u)", slot);
    st->event_pending[slot] = true;
    return CM_OK;
}

/* Waits for every slot, even after a failure (no DMA into staging is left behind); the first
 * failure is the status and the report (cm_last_error), as a later slot's would replace it */
static cm_status_t cm__wait_all(cm__staging_t *st) {
    cm_status_t status = CM_OK;
    cm_error_t first = {0};
    for (unsigned i = 0; i < st->n_slots; ++i) {
        cm_status_t s = cm__slot_wait(st, i);
        if (s != CM_OK && status == CM_OK) {
            status = s;
            first = *cm__detail();
        }
    }
    if (status != CM_OK) *cm__detail() = first;
    return status;
}

cm_status_t cm__staged_h2d(struct cm__device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync) {
    cm__staging_t *st = &dev->staging;
    cudaStream_t s = sync ? 0 : stream;
    pthread_mutex_lock(&st->lock);
    cm_status_t status = cm__staging_ensure(dev);
    size_t count = cm__staging_chunk_count(bytes, st->slot_bytes);
    for (size_t i = 0; status == CM_OK && i < count; ++i) {
        cm__chunk_t c = {0};
        (void)cm__staging_chunk_at(bytes, st->slot_bytes, st->n_slots, i, &c);
        /* the slot's previous DMA (of this copy or an earlier one) must be done */
        CM_TRY_GOTO(cm__slot_wait(st, c.slot), status, out);
        cm__parallel_copy(st->workers, st->slot[c.slot], (const unsigned char *)src + c.offset,
                          c.bytes);
        cudaError_t err = cm__cuda.memcpy_async((unsigned char *)dst + c.offset, st->slot[c.slot],
                                                 c.bytes, cudaMemcpyHostToDevice, s);
        if (err != cudaSuccess) {
            status = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaMemcpyAsync(staged chunk %zu of %zu, %zu bytes, host to "
                                   "device)", i, count, c.bytes);
            goto out;
        }
        CM_TRY_GOTO(cm__slot_record(st, c.slot, s), status, out);
    }
    if (status == CM_OK && sync) status = cm__wait_all(st);
out:
    pthread_mutex_unlock(&st->lock);
    return status;
}

static cm_status_t cm__d2h_enqueue(cm__staging_t *st, const void *src, size_t bytes, size_t i,
                                   size_t count, cudaStream_t s) {
    cm__chunk_t c = {0};
    (void)cm__staging_chunk_at(bytes, st->slot_bytes, st->n_slots, i, &c);
    CM_TRY(cm__slot_wait(st, c.slot));
    cudaError_t err = cm__cuda.memcpy_async(st->slot[c.slot], (const unsigned char *)src + c.offset,
                                             c.bytes, cudaMemcpyDeviceToHost, s);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaMemcpyAsync(staged chunk %zu of %zu, %zu bytes, device to host)",
                             i, count, c.bytes);
    }
    return cm__slot_record(st, c.slot, s);
}

cm_status_t cm__staged_d2h(struct cm__device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync) {
    cm__staging_t *st = &dev->staging;
    cudaStream_t s = sync ? 0 : stream;
    pthread_mutex_lock(&st->lock);
    cm_status_t status = cm__staging_ensure(dev);
    size_t count = status == CM_OK ? cm__staging_chunk_count(bytes, st->slot_bytes) : 0;
    /* queue the DMA of the first chunks, one per staging buffer */
    for (size_t i = 0; status == CM_OK && i < count && i < st->n_slots; ++i)
        status = cm__d2h_enqueue(st, src, bytes, i, count, s);
    for (size_t i = 0; status == CM_OK && i < count; ++i) {
        cm__chunk_t c = {0};
        (void)cm__staging_chunk_at(bytes, st->slot_bytes, st->n_slots, i, &c);
        CM_TRY_GOTO(cm__slot_wait(st, c.slot), status, out);
        cm__parallel_copy(st->workers, (unsigned char *)dst + c.offset, st->slot[c.slot], c.bytes);
        if (i + st->n_slots < count)
            CM_TRY_GOTO(cm__d2h_enqueue(st, src, bytes, i + st->n_slots, count, s), status, out);
    }
out:
    if (status != CM_OK) { /* leave no DMA into staging behind; the first failure is the report */
        cm_error_t first = *cm__detail();
        (void)cm__wait_all(st);
        *cm__detail() = first;
    }
    pthread_mutex_unlock(&st->lock);
    return status;
}
