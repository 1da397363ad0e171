/*
 * The GPU soak of issue #17: several host threads (8 by default) hammer the public API of one
 * device at random for a bounded time and check every result.
 *
 * Each thread owns up to 8 device buffers, each with a host "shadow" copy of what its contents
 * must be. Every operation that changes a buffer changes the shadow the same way; every read
 * (a device-to-host copy, a reduction, each buffer before it is destroyed) is compared with the
 * shadow bit for bit. The operations, picked at random with fixed weights:
 *   buffer_create / buffer_destroy  synchronous (cudaMalloc-like) and stream-ordered (the
 *                                   device's pool), destroyed on their stream or another one
 *   copy_h2d / copy_d2h / copy_d2d  pageable, pinned (pointer and host-buffer forms), device
 *                                   to device (two buffers, or disjoint ranges of one)
 *   set / fill                      cm_buffer_set, cm_buffer_fill with 1/2/4/8-byte patterns
 *   stream                          release and re-acquire the thread's stream (either
 *                                   priority), cross-stream waits, host callbacks
 *   event                           timing events and elapsed time, sync-only events waited on
 *                                   by another stream, cm_timer
 *   launch                          the soak's own kernel (bench/soak_kernels.cu) by cm_launch
 *   vector                          cm_vector (add, axpy, scale, fill, copy; f32 and f64;
 *                                   in place and not) on exactly representable values
 *   reduce                          cm_reduce / cm_reduce_to_host of i32 sum, min, max
 *   gemm                            small cm_gemm (FP32, TF32, 3xTF32, BF16; both layouts,
 *                                   transposes, padded leading dimensions) of small integers,
 *                                   whose products are exact in every precision
 *   graph                           a capture of 2-5 sets / fills / launches / copies /
 *                                   reductions, replayed 1-3 times
 *   host_buffer                     pinned host buffers (default, portable, mapped: the kernel
 *                                   writes host memory, write-combined) and registered memory
 * Each operation runs synchronously (stream NULL) or on the thread's stream, at random.
 *
 * Memory: each thread keeps its device buffers and pinned host memory under budget / threads
 * (CM_SOAK_BUDGET_MB, default 1024 MiB in all). At the end every thread has released all its
 * objects; the device must then report no live buffers, no lent streams or events, close with
 * CM_OK, and the device's free memory (cudaMemGetInfo) must be back within CM_SOAK_SLACK_MB
 * (default 256 MiB, room for modules and local memory first reserved during the soak; 768 MiB
 * under compute-sanitizer, which holds memory of its own) of what it
 * was before the soak (measured after a one-thread warm-up pass, device closed, so modules the
 * operations load are not counted).
 *
 * Output: operations per second of each kind and in total, the peak memory, the number of
 * failures; each as a result row (bench_common.h: printed, and appended to CM_BENCH_RESULTS
 * when set), with no peer (peer null, peer_name "none", goal "info") except the checks
 * (failures "== 0", memory "<= budget", drift "<= slack"). Exit status 0 only when every
 * check passed; 1 when one failed; 2 for a bad environment variable or no GPU.
 *
 * Environment:
 *   CM_SOAK_SECONDS    duration of the soak proper (default 60; scripts/gpu-check.sh runs 10
 *                      under compute-sanitizer memcheck)
 *   CM_SOAK_THREADS    threads (default 8, at most 64)
 *   CM_SOAK_SEED       the random seed (default: from the clock; printed either way, so a run
 *                      can be repeated; the threads' interleaving still varies)
 *   CM_SOAK_BUDGET_MB  device + pinned memory budget of all threads together (default 1024)
 *   CM_SOAK_SLACK_MB   allowed drop of the device's free memory after the soak
 *   CM_SOAK_DEVICE     device ordinal (default 0)
 *   CM_TEST_UNDER_SANITIZER=1  (set by gpu-check) a larger default slack
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cudamodel/cudamodel.h>

const void *soak_xor_kernel(void); /* bench/soak_kernels.cu */

#define MIB ((size_t)1 << 20)
#define NSLOTS 8
#define MAX_BUF (8 * MIB)          /* largest device buffer */
#define HB_BYTES (4 * MIB)         /* each thread's long-lived pinned host buffer */
#define MAX_RANGE (1 * MIB)        /* longest copy / set / fill / launch range */
#define HOST_OP_MAX (MIB + 4096) /* most pinned memory op_host() holds at once */
#define HIST 8                     /* operations remembered per buffer, for failure reports */
#define GRAPH_OPS_MAX 5

enum kind {
    K_CREATE, K_DESTROY, K_H2D, K_D2H, K_D2D, K_SET, K_FILL, K_STREAM, K_EVENT, K_LAUNCH,
    K_VECTOR, K_REDUCE, K_GEMM, K_GRAPH, K_HOST, K_COUNT
};
static const char *const kind_name[K_COUNT] = {
    "buffer_create", "buffer_destroy", "copy_h2d", "copy_d2h", "copy_d2d", "set", "fill",
    "stream", "event", "launch", "vector", "reduce", "gemm", "graph", "host_buffer"};
static const unsigned kind_weight[K_COUNT] = {8, 6, 10, 10, 8, 6, 6, 4, 5, 8, 6, 6, 4, 3, 3};

/* ------------------------------------------------------------------ settings and globals */

static double g_seconds = 60.0;
static int g_threads = 8;
static uint64_t g_seed;
static size_t g_budget = 1024 * MIB;
static size_t g_slack = 256 * MIB;
static int g_ordinal = 0;
static cm_device_t *g_dev;
static double g_deadline_us;
static atomic_int g_stop;
static atomic_size_t g_live_bytes; /* device + pinned bytes of all threads */
static atomic_size_t g_peak_bytes;
static const void *g_xor;

/* ------------------------------------------------------------------ per-thread state */

typedef struct slot {
    cm_buffer_t *buf;       /* NULL: free slot */
    size_t bytes;
    bool ordered;           /* stream-ordered */
    cm_stream_t *made_on;   /* its stream while that is still the thread's; NULL once released */
    uint8_t *shadow;        /* what the buffer must hold */
    unsigned nhist;
    char hist[HIST][96];
} slot_t;

typedef struct worker {
    int id;
    uint64_t rng;
    cm_stream_t *home;      /* the thread's stream */
    bool dirty;             /* work may be pending on home */
    bool capturing;         /* home is being captured */
    cm_host_buffer_t *hb;   /* long-lived pinned buffer */
    uint8_t *hb_data;
    uint8_t *tmp, *tmp2;    /* pageable scratch, MAX_BUF each */
    slot_t slot[NSLOTS];
    size_t live_bytes, budget;
    unsigned long long count[K_COUNT];
    atomic_uint callbacks;
    unsigned callbacks_queued;
    int gemm_prec;          /* warm-up: force this precision (-1: random) */
    bool gemm_vec;          /* warm-up: force a matrix-vector shape (m = 1) */
    int failed;
    char fail[4096];
} worker_t;

/* ------------------------------------------------------------------ small helpers */

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t rnd(worker_t *w) { /* xorshift64* */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 0x2545F4914F6CDD1Dull;
}
static size_t rnd_below(worker_t *w, size_t n) { return n ? (size_t)(rnd(w) % n) : 0; }
static bool chance(worker_t *w, unsigned percent) { return rnd(w) % 100 < percent; }
static void rnd_bytes(worker_t *w, uint8_t *p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = rnd(w);
        memcpy(p + i, &v, 8);
    }
    for (uint64_t v = rnd(w); i < n; ++i, v >>= 8) p[i] = (uint8_t)v;
}

static void account(worker_t *w, size_t add, size_t sub) {
    w->live_bytes += add;
    w->live_bytes -= sub;
    size_t now = atomic_fetch_add(&g_live_bytes, add) + add;
    atomic_fetch_sub(&g_live_bytes, sub);
    size_t peak = atomic_load(&g_peak_bytes);
    while (now > peak && !atomic_compare_exchange_weak(&g_peak_bytes, &peak, now)) {
    }
}

static void note(slot_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(slot_t *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->hist[s->nhist % HIST], sizeof s->hist[0], fmt, ap);
    va_end(ap);
    s->nhist++;
}

static int failf(worker_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(worker_t *w, const char *fmt, ...) {
    if (w->failed) return -1;
    w->failed = 1;
    int n = snprintf(w->fail, sizeof w->fail, "thread %d: ", w->id);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof w->fail) vsnprintf(w->fail + n, sizeof w->fail - (size_t)n, fmt, ap);
    va_end(ap);
    atomic_store(&g_stop, 1);
    return -1;
}

static int fail_status(worker_t *w, cm_status_t st, const char *call, int line) {
    char detail[2048];
    cm_error_format(NULL, detail, sizeof detail);
    return failf(w, "%s returned %s (soak.c:%d)\n%s", call, cm_status_name(st), line, detail);
}

#define CHECK(w, call)                                                                       \
    do {                                                                                     \
        cm_status_t st_ = (call);                                                            \
        if (st_ != CM_OK) return fail_status((w), st_, #call, __LINE__);                     \
    } while (0)

/* The stream of the next operation: NULL (synchronous) a quarter of the time, else the thread's
 * stream. The legacy default stream does not wait for the (non-blocking) pooled streams, so the
 * thread's stream is drained before a synchronous operation. */
static int pick_stream(worker_t *w, cm_stream_t **s) {
    if (chance(w, 25)) {
        if (w->dirty) {
            CHECK(w, cm_stream_synchronize(w->home));
            w->dirty = false;
        }
        *s = NULL;
    } else {
        *s = w->home;
        w->dirty = true;
    }
    return 0;
}
static int drain(worker_t *w) {
    if (w->dirty) {
        CHECK(w, cm_stream_synchronize(w->home));
        w->dirty = false;
    }
    return 0;
}

/* A random non-empty range of a buffer of `bytes`: offset and length multiples of align,
 * length at most maxlen. false when the buffer is shorter than align. */
static bool pick_range(worker_t *w, size_t bytes, size_t align, size_t maxlen, size_t *off,
                       size_t *len) {
    if (bytes < align) return false;
    size_t units = bytes / align, max_units = maxlen / align;
    if (max_units > units) max_units = units;
    size_t lu;
    switch (rnd_below(w, 4)) {
    case 0: lu = 1 + rnd_below(w, max_units < 16 ? max_units : 16); break; /* tiny */
    case 1: lu = max_units; break;                                        /* as long as allowed */
    default: lu = 1 + rnd_below(w, max_units); break;
    }
    *len = lu * align;
    *off = rnd_below(w, units - lu + 1) * align;
    return true;
}

/* A live slot with at least min_bytes, at random; -1 when none. */
static int pick_slot(worker_t *w, size_t min_bytes) {
    int cand[NSLOTS], n = 0;
    for (int i = 0; i < NSLOTS; ++i)
        if (w->slot[i].buf != NULL && w->slot[i].bytes >= min_bytes) cand[n++] = i;
    return n ? cand[rnd_below(w, (size_t)n)] : -1;
}

static int compare(worker_t *w, int si, size_t off, const uint8_t *got, size_t len,
                   const char *what) {
    slot_t *s = &w->slot[si];
    if (memcmp(got, s->shadow + off, len) == 0) return 0;
    size_t i = 0;
    while (i < len && got[i] == s->shadow[off + i]) ++i;
    char hist[HIST * 100] = "";
    size_t h = 0;
    unsigned first = s->nhist > HIST ? s->nhist - HIST : 0;
    for (unsigned k = first; k < s->nhist && h < sizeof hist; ++k)
        h += (size_t)snprintf(hist + h, sizeof hist - h, "    %s\n", s->hist[k % HIST]);
    return failf(w, "%s: buffer %d (%zu bytes, %s) differs at byte %zu: 0x%02x, expected 0x%02x "
                 "(range %zu+%zu); its last operations, oldest first:\n%s", what, si, s->bytes,
                 s->ordered ? "stream-ordered" : "synchronous", off + i, got[i],
                 s->shadow[off + i], off, len, hist);
}

/* Read a range back (stream NULL or home; pageable or pinned) and compare with the shadow. */
static int verify_range(worker_t *w, int si, size_t off, size_t len, const char *what) {
    slot_t *s = &w->slot[si];
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    uint8_t *dst = w->tmp;
    int way = (int)rnd_below(w, len <= HB_BYTES ? 3 : 1);
    if (way == 0) {
        CHECK(w, cm_buffer_copy_to_host(st, s->buf, off, w->tmp, len));
    } else if (way == 1) {
        CHECK(w, cm_buffer_copy_to_host(st, s->buf, off, w->hb_data, len));
        dst = w->hb_data;
    } else {
        CHECK(w, cm_buffer_copy_to_host_buffer(st, s->buf, off, w->hb, 0, len));
        dst = w->hb_data;
    }
    if (way != 0 && st != NULL && drain(w)) return -1; /* a pinned copy on a stream is queued */
    return compare(w, si, off, dst, len, what);
}

/* ------------------------------------------------------------------ buffers */

static int op_destroy_slot(worker_t *w, int si, bool verify) {
    slot_t *s = &w->slot[si];
    if (verify && s->bytes > 0 && verify_range(w, si, 0, s->bytes, "before destroy")) return -1;
    if (s->ordered) {
        if (s->made_on == NULL || chance(w, 50)) {
            CHECK(w, cm_buffer_destroy_on_stream(w->home, s->buf));
        } else {
            CHECK(w, cm_buffer_destroy(s->buf));
        }
        w->dirty = true;
    } else {
        if (drain(w)) return -1;
        if (chance(w, 30)) {
            CHECK(w, cm_buffer_destroy_on_stream(w->home, s->buf));
        } else {
            CHECK(w, cm_buffer_destroy(s->buf));
        }
    }
    account(w, 0, s->bytes);
    free(s->shadow);
    s->buf = NULL;
    s->shadow = NULL;
    s->bytes = 0;
    return 0;
}

static int op_destroy(worker_t *w) {
    int si = pick_slot(w, 0);
    if (si < 0) return 0;
    w->count[K_DESTROY]++;
    return op_destroy_slot(w, si, true);
}

static size_t pick_size(worker_t *w) {
    unsigned r = (unsigned)rnd_below(w, 100);
    size_t b;
    if (r < 2) b = 0;                                          /* an empty buffer is valid */
    else if (r < 50) b = 4 + rnd_below(w, 64 * 1024);
    else if (r < 85) b = 64 * 1024 + rnd_below(w, MIB);
    else b = MIB + rnd_below(w, MAX_BUF - MIB);
    return b & ~(size_t)3;
}

static int op_create(worker_t *w) {
    int si = -1;
    for (int i = 0; i < NSLOTS && si < 0; ++i)
        if (w->slot[i].buf == NULL) si = i;
    if (si < 0) { /* all slots used: free one first */
        w->count[K_DESTROY]++;
        si = pick_slot(w, 0);
        if (op_destroy_slot(w, si, true)) return -1;
    }
    size_t bytes = pick_size(w);
    while (w->live_bytes + bytes + HOST_OP_MAX > w->budget) { /* stay inside the budget */
        int victim = pick_slot(w, 0);
        if (victim < 0) {
            bytes = 0;
            break;
        }
        w->count[K_DESTROY]++;
        if (op_destroy_slot(w, victim, true)) return -1;
    }
    slot_t *s = &w->slot[si];
    s->shadow = malloc(bytes ? bytes : 1);
    if (s->shadow == NULL) return failf(w, "out of host memory (%zu bytes)", bytes);
    s->ordered = chance(w, 50);
    char label[32];
    snprintf(label, sizeof label, "soak t%d s%d", w->id, si);
    cm_buffer_t *buf = NULL;
    cm_status_t st = cm_buffer_create_at(s->ordered ? w->home : NULL, g_dev, bytes, &buf,
                                         chance(w, 50) ? label : NULL, __FILE__, __LINE__);
    if (st != CM_OK) {
        free(s->shadow);
        s->shadow = NULL;
        return fail_status(w, st, "cm_buffer_create_at", __LINE__);
    }
    s->buf = buf;
    s->bytes = bytes;
    s->made_on = s->ordered ? w->home : NULL;
    s->nhist = 0;
    account(w, bytes, 0);
    w->count[K_CREATE]++;
    /* defined contents: a set of the whole buffer on its stream (or either, when synchronous) */
    cm_stream_t *stream = w->home;
    if (s->ordered) w->dirty = true;
    else if (pick_stream(w, &stream)) return -1;
    int v = (int)rnd_below(w, 256);
    CHECK(w, cm_buffer_set(stream, s->buf, 0, bytes, v));
    memset(s->shadow, v, bytes);
    note(s, "create %zu bytes %s, set to 0x%02x %s", bytes, s->ordered ? "ordered" : "sync", v,
         stream ? "on stream" : "sync");
    return 0;
}

/* ------------------------------------------------------------------ copies, set, fill */

static int op_h2d(worker_t *w, int si) {
    slot_t *s = &w->slot[si];
    size_t off, len;
    if (!pick_range(w, s->bytes, 4, MAX_RANGE, &off, &len)) return 0;
    cm_stream_t *st = NULL;
    if (drain(w) || pick_stream(w, &st)) return -1; /* hb may still be read by queued work */
    int way = (int)rnd_below(w, 3);
    uint8_t *src = way == 0 ? w->tmp : w->hb_data;
    rnd_bytes(w, src, len);
    if (way == 0) {
        CHECK(w, cm_buffer_copy_from_host(st, s->buf, off, w->tmp, len));
    } else if (way == 1) {
        CHECK(w, cm_buffer_copy_from_host(st, s->buf, off, w->hb_data, len));
    } else {
        CHECK(w, cm_buffer_copy_from_host_buffer(st, s->buf, off, w->hb, 0, len));
    }
    memcpy(s->shadow + off, src, len);
    note(s, "h2d %zu+%zu %s%s", off, len, way == 0 ? "pageable" : way == 1 ? "pinned ptr" : "host buffer",
         st ? " on stream" : "");
    w->count[K_H2D]++;
    return 0;
}

static int op_d2h(worker_t *w, int si) {
    slot_t *s = &w->slot[si];
    size_t off, len;
    if (!pick_range(w, s->bytes, 1, 4 * MIB, &off, &len)) return 0;
    if (drain(w)) return -1; /* hb may be the source of a queued copy */
    w->count[K_D2H]++;
    return verify_range(w, si, off, len, "copy_d2h");
}

static int op_d2d(worker_t *w) {
    int a = pick_slot(w, 8), b = pick_slot(w, 8);
    if (a < 0) return 0;
    slot_t *d = &w->slot[a], *src = &w->slot[b];
    size_t doff, soff, len;
    if (a == b) { /* two disjoint ranges of one buffer */
        size_t half = d->bytes / 2;
        if (!pick_range(w, half, 1, MAX_RANGE, &soff, &len)) return 0;
        size_t lo = rnd_below(w, d->bytes - 2 * len + 1);
        size_t hi = lo + len + rnd_below(w, d->bytes - lo - 2 * len + 1);
        if (chance(w, 50)) { soff = lo; doff = hi; } else { soff = hi; doff = lo; }
    } else {
        size_t m = d->bytes < src->bytes ? d->bytes : src->bytes;
        if (!pick_range(w, m, 1, MAX_RANGE, &soff, &len)) return 0;
        doff = rnd_below(w, d->bytes - len + 1);
        soff = rnd_below(w, src->bytes - len + 1);
    }
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    CHECK(w, cm_buffer_copy(st, d->buf, doff, src->buf, soff, len));
    memmove(d->shadow + doff, src->shadow + soff, len);
    note(d, "d2d %zu+%zu from buffer %d at %zu%s", doff, len, b, soff, st ? " on stream" : "");
    w->count[K_D2D]++;
    return 0;
}

static int op_set(worker_t *w, int si) {
    slot_t *s = &w->slot[si];
    size_t off, len;
    if (!pick_range(w, s->bytes, 1, MAX_RANGE, &off, &len)) return 0;
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    int v = (int)rnd_below(w, 256);
    CHECK(w, cm_buffer_set(st, s->buf, off, len, v));
    memset(s->shadow + off, v, len);
    note(s, "set %zu+%zu 0x%02x%s", off, len, v, st ? " on stream" : "");
    w->count[K_SET]++;
    return 0;
}

static void fill_shadow(uint8_t *p, size_t len, const uint8_t *pat, size_t ps) {
    for (size_t i = 0; i < len; i += ps) memcpy(p + i, pat, ps);
}

static int op_fill(worker_t *w, int si) {
    slot_t *s = &w->slot[si];
    size_t ps = (size_t)1 << rnd_below(w, 4), off, len;
    if (!pick_range(w, s->bytes, ps, MAX_RANGE, &off, &len)) return 0;
    uint8_t pat[8];
    rnd_bytes(w, pat, sizeof pat);
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    CHECK(w, cm_buffer_fill(st, s->buf, off, len, pat, ps));
    fill_shadow(s->shadow + off, len, pat, ps);
    note(s, "fill %zu+%zu pattern of %zu%s", off, len, ps, st ? " on stream" : "");
    w->count[K_FILL]++;
    return 0;
}

/* ------------------------------------------------------------------ launches */

static void xor_shadow(uint8_t *p, size_t words, uint32_t key) {
    for (size_t i = 0; i < words; ++i) {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        v ^= key + (uint32_t)i * 0x9E3779B9u;
        memcpy(p + 4 * i, &v, 4);
    }
}

/* Launch the XOR kernel over `words` words at device address base + off. */
static int launch_xor(worker_t *w, cm_stream_t *st, void *base, size_t off, size_t words,
                      uint32_t key) {
    cm_launch_config_t cfg;
    if (!w->capturing && chance(w, 20)) {
        CHECK(w, cm_launch_config_auto(g_xor, words, 0, &cfg));
    } else {
        static const unsigned bs[] = {64, 128, 256, 512, 1024};
        CHECK(w, cm_launch_config_1d(words, bs[rnd_below(w, 5)], &cfg));
    }
    void *p = (uint8_t *)base + off;
    unsigned long long n = words;
    void *args[] = {&p, &n, &key};
    CHECK(w, CM_LAUNCH(st, g_xor, &cfg, args));
    return 0;
}

static int op_launch(worker_t *w, int si, cm_stream_t *forced) {
    slot_t *s = &w->slot[si];
    size_t off, len;
    if (!pick_range(w, s->bytes, 4, MAX_RANGE, &off, &len)) return 0;
    cm_stream_t *st = forced;
    if (forced == NULL && pick_stream(w, &st)) return -1;
    void *base = NULL;
    CHECK(w, cm_buffer_device_ptr(s->buf, &base));
    uint32_t key = (uint32_t)rnd(w);
    if (launch_xor(w, st, base, off, len / 4, key)) return -1;
    xor_shadow(s->shadow + off, len / 4, key);
    note(s, "xor launch %zu+%zu key %08x%s", off, len, key, st ? " on stream" : "");
    w->count[K_LAUNCH]++;
    return 0;
}

/* ------------------------------------------------------------------ streams and events */

static void count_callback(void *user) {
    atomic_fetch_add(&((worker_t *)user)->callbacks, 1u);
}

static int check_callbacks(worker_t *w) {
    unsigned got = atomic_load(&w->callbacks);
    if (got != w->callbacks_queued)
        return failf(w, "%u host callbacks ran after the stream drained, %u were queued", got,
                     w->callbacks_queued);
    return 0;
}

static int op_stream(worker_t *w) {
    w->count[K_STREAM]++;
    if (chance(w, 30)) {
        CHECK(w, cm_stream_host_callback(w->home, count_callback, w));
        w->callbacks_queued++;
        w->dirty = true;
    }
    if (chance(w, 50)) { /* give the stream back and borrow another */
        if (chance(w, 50)) {
            bool idle = false;
            for (int spins = 0; !idle; ++spins) {
                CHECK(w, cm_stream_query(w->home, &idle));
                if (!idle && spins > 100) CHECK(w, cm_stream_synchronize(w->home));
                if (!idle && spins > 100) break;
            }
        } else {
            CHECK(w, cm_stream_synchronize(w->home));
        }
        w->dirty = false;
        if (check_callbacks(w)) return -1;
        CHECK(w, cm_stream_release(w->home));
        w->home = NULL;
        for (int i = 0; i < NSLOTS; ++i) w->slot[i].made_on = NULL;
        cm_stream_priority_t pr = chance(w, 25) ? CM_STREAM_PRIORITY_HIGH : CM_STREAM_PRIORITY_LOW;
        CHECK(w, cm_stream_acquire(g_dev, pr, &w->home));
        cm_device_t *d = NULL;
        CHECK(w, cm_stream_device(w->home, &d));
        if (d != g_dev) return failf(w, "cm_stream_device gave another device");
        return 0;
    }
    /* a second stream ordered after the thread's, doing work, then waited for */
    cm_stream_t *t = NULL;
    CHECK(w, cm_stream_acquire(g_dev, chance(w, 25) ? CM_STREAM_PRIORITY_HIGH
                                                     : CM_STREAM_PRIORITY_LOW, &t));
    int rc = 0;
    cm_status_t st = cm_stream_wait(t, w->home);
    if (st != CM_OK) rc = fail_status(w, st, "cm_stream_wait(t, home)", __LINE__);
    int si = pick_slot(w, 4);
    if (rc == 0 && si >= 0) rc = op_launch(w, si, t);
    if (rc == 0 && (st = cm_stream_wait(w->home, t)) != CM_OK)
        rc = fail_status(w, st, "cm_stream_wait(home, t)", __LINE__);
    w->dirty = true;
    if ((st = cm_stream_release(t)) != CM_OK && rc == 0)
        rc = fail_status(w, st, "cm_stream_release(t)", __LINE__);
    if (rc == 0 && chance(w, 10)) {
        cm_stream_pool_stats_t ps;
        CHECK(w, cm_stream_pool_stats(g_dev, &ps));
    }
    return rc;
}

static int op_event(worker_t *w) {
    w->count[K_EVENT]++;
    unsigned which = (unsigned)rnd_below(w, 3);
    int rc = 0;
    cm_status_t st;
    if (which == 0) { /* timing pair around a launch */
        cm_event_t *a = NULL, *b = NULL;
        CHECK(w, cm_event_acquire(g_dev, CM_EVENT_TIMING, &a));
        if ((st = cm_event_acquire(g_dev, CM_EVENT_TIMING, &b)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_acquire(TIMING)", __LINE__);
            goto release_ab;
        }
        w->dirty = true;
        if ((st = cm_event_record(a, w->home)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_record(a)", __LINE__);
            goto release_ab;
        }
        int si = pick_slot(w, 4);
        if (si >= 0 && (rc = op_launch(w, si, w->home)) != 0) goto release_ab;
        if ((st = cm_event_record(b, w->home)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_record(b)", __LINE__);
            goto release_ab;
        }
        if ((st = cm_event_synchronize(b)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_synchronize(b)", __LINE__);
            goto release_ab;
        }
        bool done = false;
        float ms = -1.0f;
        if ((st = cm_event_query(b, &done)) != CM_OK || !done) {
            rc = st != CM_OK ? fail_status(w, st, "cm_event_query(b)", __LINE__)
                             : failf(w, "cm_event_query: not done after cm_event_synchronize");
            goto release_ab;
        }
        if ((st = cm_event_elapsed_ms(a, b, &ms)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_elapsed_ms", __LINE__);
            goto release_ab;
        }
        if (!(ms >= 0.0f) || ms > 60000.0f) rc = failf(w, "cm_event_elapsed_ms gave %g ms", (double)ms);
    release_ab:
        if ((st = cm_event_release(a)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_event_release(a)", __LINE__);
        if ((st = cm_event_release(b)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_event_release(b)", __LINE__);
        return rc;
    }
    if (which == 1) { /* a sync-only event: another stream works after it, home waits for that */
        cm_event_t *e = NULL;
        cm_stream_t *t = NULL;
        CHECK(w, cm_event_acquire(g_dev, CM_EVENT_SYNC_ONLY, &e));
        if ((st = cm_stream_acquire(g_dev, CM_STREAM_PRIORITY_LOW, &t)) != CM_OK) {
            rc = fail_status(w, st, "cm_stream_acquire", __LINE__);
            goto release_et;
        }
        w->dirty = true;
        if ((st = cm_event_record(e, w->home)) != CM_OK ||
            (st = cm_stream_wait_event(t, e)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_record(e, home) / cm_stream_wait_event(t, e)", __LINE__);
            goto release_et;
        }
        int si = pick_slot(w, 4);
        if (si >= 0 && (rc = op_launch(w, si, t)) != 0) goto release_et;
        if ((st = cm_event_record(e, t)) != CM_OK || (st = cm_stream_wait_event(w->home, e)) != CM_OK) {
            rc = fail_status(w, st, "cm_event_record(e, t) / cm_stream_wait_event(home, e)", __LINE__);
            goto release_et;
        }
    release_et:
        if ((st = cm_stream_release(t)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_stream_release(t)", __LINE__);
        if ((st = cm_event_release(e)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_event_release(e)", __LINE__);
        return rc;
    }
    /* a timer */
    cm_timer_t *tm = NULL;
    float ms = -1.0f;
    CHECK(w, cm_timer_create(g_dev, &tm));
    w->dirty = true;
    if ((st = cm_timer_start(tm, w->home)) != CM_OK) {
        rc = fail_status(w, st, "cm_timer_start", __LINE__);
    } else {
        int si = pick_slot(w, 4);
        if (si >= 0) rc = op_launch(w, si, w->home);
        if (rc == 0 && (st = cm_timer_stop(tm)) != CM_OK) rc = fail_status(w, st, "cm_timer_stop", __LINE__);
        if (rc == 0 && (st = cm_timer_elapsed_ms(tm, &ms)) != CM_OK)
            rc = fail_status(w, st, "cm_timer_elapsed_ms", __LINE__);
        if (rc == 0 && (!(ms >= 0.0f) || ms > 60000.0f)) rc = failf(w, "cm_timer_elapsed_ms gave %g ms", (double)ms);
    }
    if ((st = cm_timer_destroy(tm)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_timer_destroy", __LINE__);
    return rc;
}

/* ------------------------------------------------------------------ vector operations */

/* Exactly representable values (multiples of 1/8 up to 128 in magnitude): every result of the
 * operations below is exact in float, so the device's fused or separate arithmetic and the
 * host's agree bit for bit. */
static double nice(worker_t *w) { return ((double)rnd_below(w, 2049) - 1024.0) / 8.0; }

static void store_val(uint8_t *p, size_t i, double v, bool f64) {
    if (f64) memcpy(p + 8 * i, &v, 8);
    else {
        float f = (float)v;
        memcpy(p + 4 * i, &f, 4);
    }
}

static int op_vector(worker_t *w) {
    bool f64 = chance(w, 40);
    size_t es = f64 ? 8 : 4;
    int si = pick_slot(w, 3 * es + 3 * 64);
    if (si < 0) return 0;
    slot_t *s = &w->slot[si];
    size_t nmax = (s->bytes - 3 * 64) / (3 * es);
    if (nmax > 16384) nmax = 16384;
    size_t n = 1 + rnd_below(w, nmax);
    if (chance(w, 30)) n = 1 + rnd_below(w, nmax < 70 ? nmax : 70); /* heads and tails */
    size_t span = n * es, room = s->bytes - 3 * span;                 /* room >= 3 * 64 */
    size_t g0 = rnd_below(w, room / 3 / es + 1) * es, g1 = rnd_below(w, room / 3 / es + 1) * es;
    size_t g2 = rnd_below(w, room / 3 / es + 1) * es;
    size_t xo = g0, yo = xo + span + g1, oo = yo + span + g2;
    cm_vector_op_t op = (cm_vector_op_t)rnd_below(w, 5);
    static const double alphas[] = {0.5, 2.0, -1.0, 0.25, 3.0};
    double alpha = alphas[rnd_below(w, 5)];
    unsigned alias = (unsigned)rnd_below(w, 3); /* 0 separate out, 1 out = x, 2 out = y */
    if (op == CM_VECTOR_FILL || op == CM_VECTOR_COPY) alias = 0;
    if (op == CM_VECTOR_SCALE && alias == 2) alias = 1;
    if (alias == 1) oo = xo;
    if (alias == 2) oo = yo;
    bool reads_x = op != CM_VECTOR_FILL, reads_y = op == CM_VECTOR_ADD || op == CM_VECTOR_AXPY;
    bool x_is_y = op == CM_VECTOR_AXPY && alias == 0 && chance(w, 20); /* axpy allows x = y */
    if (x_is_y) xo = yo;
    double *xv = (double *)w->tmp2, *yv = xv + n, fillv = nice(w);
    for (size_t i = 0; i < n; ++i) xv[i] = nice(w);
    for (size_t i = 0; i < n; ++i) yv[i] = x_is_y ? xv[i] : nice(w);
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    uint8_t *hx = w->tmp, *hy = w->tmp + span;
    for (size_t i = 0; i < n; ++i) {
        store_val(hx, i, xv[i], f64);
        store_val(hy, i, yv[i], f64);
    }
    if (reads_x) {
        CHECK(w, cm_buffer_copy_from_host(st, s->buf, xo, hx, span));
        memcpy(s->shadow + xo, hx, span);
    }
    if (reads_y && !x_is_y) {
        CHECK(w, cm_buffer_copy_from_host(st, s->buf, yo, hy, span));
        memcpy(s->shadow + yo, hy, span);
    }
    float alpha_f = (float)alpha, fill_f = (float)fillv;
    const void *ap = NULL;
    if (op == CM_VECTOR_AXPY || op == CM_VECTOR_SCALE) ap = f64 ? (const void *)&alpha : (const void *)&alpha_f;
    if (op == CM_VECTOR_FILL) ap = f64 ? (const void *)&fillv : (const void *)&fill_f;
    CHECK(w, cm_vector(st, op, f64 ? CM_DTYPE_F64 : CM_DTYPE_F32, n, ap, s->buf, oo,
                       reads_x ? s->buf : NULL, xo, reads_y ? s->buf : NULL, yo));
    for (size_t i = 0; i < n; ++i) {
        double r = 0.0;
        switch (op) {
        case CM_VECTOR_ADD: r = xv[i] + yv[i]; break;
        case CM_VECTOR_AXPY: r = alpha * xv[i] + yv[i]; break;
        case CM_VECTOR_SCALE: r = alpha * xv[i]; break;
        case CM_VECTOR_FILL: r = fillv; break;
        case CM_VECTOR_COPY: r = xv[i]; break;
        }
        store_val(s->shadow + oo, i, r, f64);
    }
    note(s, "vector op %d %s n %zu x %zu y %zu out %zu%s", (int)op, f64 ? "f64" : "f32", n, xo, yo,
         oo, st ? " on stream" : "");
    w->count[K_VECTOR]++;
    return 0;
}

/* ------------------------------------------------------------------ reductions */

static void reduce_i32(const uint8_t *p, size_t n, cm_reduce_op_t op, int64_t *sum, int32_t *mm) {
    int64_t acc = 0;
    int32_t m = op == CM_REDUCE_MIN ? INT32_MAX : INT32_MIN;
    for (size_t i = 0; i < n; ++i) {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        acc += v;
        if (op == CM_REDUCE_MIN ? v < m : v > m) m = v;
    }
    *sum = acc;
    *mm = m;
}

/* Enqueue an i32 reduction of n words at xo of slot xi into slot ri at ro (device result). */
static int reduce_to_device(worker_t *w, cm_stream_t *st, cm_reduce_op_t op, int xi, size_t xo,
                            size_t n, int ri, size_t ro) {
    CHECK(w, cm_reduce(st, op, CM_DTYPE_I32, n, w->slot[xi].buf, xo, NULL, 0, w->slot[ri].buf, ro));
    return 0;
}
static void reduce_shadow(worker_t *w, cm_reduce_op_t op, int xi, size_t xo, size_t n, int ri,
                          size_t ro) {
    int64_t sum;
    int32_t mm;
    reduce_i32(w->slot[xi].shadow + xo, n, op, &sum, &mm);
    if (op == CM_REDUCE_SUM) memcpy(w->slot[ri].shadow + ro, &sum, 8);
    else memcpy(w->slot[ri].shadow + ro, &mm, 4);
}

/* A result place of `rs` bytes (aligned to rs) outside [xo, xo + xl) of slot xi: false if the
 * random tries found none. */
static bool pick_result(worker_t *w, int xi, size_t xo, size_t xl, size_t rs, int *ri, size_t *ro) {
    for (int tries = 0; tries < 8; ++tries) {
        int r = pick_slot(w, rs);
        if (r < 0) return false;
        size_t o = rnd_below(w, w->slot[r].bytes / rs) * rs;
        if (r != xi || o + rs <= xo || o >= xo + xl) {
            *ri = r;
            *ro = o;
            return true;
        }
    }
    return false;
}

static int op_reduce(worker_t *w) {
    int xi = pick_slot(w, 4);
    if (xi < 0) return 0;
    slot_t *s = &w->slot[xi];
    static const cm_reduce_op_t ops[] = {CM_REDUCE_SUM, CM_REDUCE_MIN, CM_REDUCE_MAX};
    cm_reduce_op_t op = ops[rnd_below(w, 3)];
    size_t xo, xl;
    pick_range(w, s->bytes, 4, 4 * MIB, &xo, &xl);
    if (chance(w, 5)) xl = 0; /* the identity */
    size_t n = xl / 4;
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    int64_t sum;
    int32_t mm;
    reduce_i32(s->shadow + xo, n, op, &sum, &mm);
    int ri;
    size_t ro, rs = op == CM_REDUCE_SUM ? 8 : 4;
    if (chance(w, 50) && pick_result(w, xi, xo, xl, rs, &ri, &ro)) {
        if (reduce_to_device(w, st, op, xi, xo, n, ri, ro)) return -1;
        reduce_shadow(w, op, xi, xo, n, ri, ro);
        note(&w->slot[ri], "reduce op %d of buffer %d %zu+%zu into %zu%s", (int)op, xi, xo, xl, ro,
             st ? " on stream" : "");
    } else {
        int64_t got_sum = 0;
        int32_t got_mm = 0;
        void *res = op == CM_REDUCE_SUM ? (void *)&got_sum : (void *)&got_mm;
        CHECK(w, cm_reduce_to_host(st, op, CM_DTYPE_I32, n, s->buf, xo, NULL, 0, res, NULL));
        if (op == CM_REDUCE_SUM ? got_sum != sum : got_mm != mm)
            return failf(w, "cm_reduce_to_host(op %d, i32, n %zu, offset %zu) of buffer %d gave %" PRId64
                         ", expected %" PRId64, (int)op, n, xo, xi,
                         op == CM_REDUCE_SUM ? got_sum : (int64_t)got_mm,
                         op == CM_REDUCE_SUM ? sum : (int64_t)mm);
    }
    w->count[K_REDUCE]++;
    return 0;
}

/* ------------------------------------------------------------------ GEMM */

/* Element (i, j) of a stored matrix in the layout, leading dimension ld. */
static size_t at(cm_gemm_layout_t l, size_t i, size_t j, size_t ld) {
    return l == CM_GEMM_ROW_MAJOR ? i * ld + j : j * ld + i;
}

static int op_gemm(worker_t *w) {
    static const cm_gemm_precision_t precs[] = {CM_GEMM_FP32, CM_GEMM_TF32, CM_GEMM_FP32_3XTF32,
                                                CM_GEMM_BF16};
    cm_gemm_precision_t prec = w->gemm_prec >= 0 ? precs[w->gemm_prec % 4] : precs[rnd_below(w, 4)];
    cm_gemm_layout_t lay = chance(w, 50) ? CM_GEMM_ROW_MAJOR : CM_GEMM_COL_MAJOR;
    cm_gemm_op_t oa = chance(w, 50) ? CM_GEMM_OP_T : CM_GEMM_OP_N;
    cm_gemm_op_t ob = chance(w, 50) ? CM_GEMM_OP_T : CM_GEMM_OP_N;
    size_t m = 1 + rnd_below(w, 48), n = 1 + rnd_below(w, 48), k = 1 + rnd_below(w, 48);
    if (w->gemm_vec) m = 1;
    size_t ein = prec == CM_GEMM_BF16 ? 2 : 4;
    /* stored shapes and leading dimensions (padded at times) */
    size_t ra = oa == CM_GEMM_OP_N ? m : k, ca = oa == CM_GEMM_OP_N ? k : m;
    size_t rb = ob == CM_GEMM_OP_N ? k : n, cb = ob == CM_GEMM_OP_N ? n : k;
    size_t inner_a = lay == CM_GEMM_ROW_MAJOR ? ca : ra, outer_a = lay == CM_GEMM_ROW_MAJOR ? ra : ca;
    size_t inner_b = lay == CM_GEMM_ROW_MAJOR ? cb : rb, outer_b = lay == CM_GEMM_ROW_MAJOR ? rb : cb;
    size_t inner_c = lay == CM_GEMM_ROW_MAJOR ? n : m, outer_c = lay == CM_GEMM_ROW_MAJOR ? m : n;
    size_t lda = inner_a + (chance(w, 50) ? 0 : rnd_below(w, 9));
    size_t ldb = inner_b + (chance(w, 50) ? 0 : rnd_below(w, 9));
    size_t ldc = inner_c + (chance(w, 50) ? 0 : rnd_below(w, 9));
    size_t na = (outer_a - 1) * lda + inner_a, nb = (outer_b - 1) * ldb + inner_b;
    size_t nc = (outer_c - 1) * ldc + inner_c;
    size_t need = na * ein + nb * ein + nc * 4 + 3 * 64;
    int si = pick_slot(w, need);
    if (si < 0) return 0;
    slot_t *s = &w->slot[si];
    /* A, B, C one after the other from a random start, each at a 16-byte boundary or not */
    size_t slack = s->bytes - need, pos = rnd_below(w, slack / 4 + 1) * 4;
    size_t ao = pos + (chance(w, 50) ? 0 : 4);
    ao = (ao + ein - 1) / ein * ein;
    size_t bo = ao + na * ein + (chance(w, 50) ? 0 : 2 * ein);
    size_t co = (bo + nb * ein + 4 + 15) / 16 * 16 + (chance(w, 50) ? 0 : 4);
    if (co + nc * 4 > s->bytes) return 0;
    /* alpha > 0: alpha * (+0) stays +0 whether or not a kernel adds beta * C (= 0) after it */
    static const float alphas[] = {1.0f, 2.0f, 0.5f};
    static const float betas[] = {0.0f, 1.0f, -2.0f};
    float alpha = alphas[rnd_below(w, 3)], beta = betas[rnd_below(w, 3)];
    /* small integers: exact in bf16, tf32, and every sum here in float */
    float *af = (float *)w->tmp2, *bf = af + na, *cf = bf + nb;
    for (size_t i = 0; i < na; ++i) af[i] = (float)((int)rnd_below(w, 9) - 4);
    for (size_t i = 0; i < nb; ++i) bf[i] = (float)((int)rnd_below(w, 9) - 4);
    for (size_t i = 0; i < nc; ++i) cf[i] = (float)((int)rnd_below(w, 9) - 4);
    uint8_t *ha = w->tmp, *hbm = w->tmp + na * ein;
    if (ein == 2) {
        cm_bf16_from_float_array((cm_bf16_t *)(void *)ha, af, na);
        cm_bf16_from_float_array((cm_bf16_t *)(void *)hbm, bf, nb);
    } else {
        memcpy(ha, af, na * 4);
        memcpy(hbm, bf, nb * 4);
    }
    cm_stream_t *st = NULL;
    if (pick_stream(w, &st)) return -1;
    CHECK(w, cm_buffer_copy_from_host(st, s->buf, ao, ha, na * ein));
    CHECK(w, cm_buffer_copy_from_host(st, s->buf, bo, hbm, nb * ein));
    memcpy(s->shadow + ao, ha, na * ein);
    memcpy(s->shadow + bo, hbm, nb * ein);
    if (beta != 0.0f) {
        CHECK(w, cm_buffer_copy_from_host(st, s->buf, co, cf, nc * 4));
        memcpy(s->shadow + co, cf, nc * 4);
    }
    CHECK(w, cm_gemm(st, prec, lay, oa, ob, m, n, k, alpha, s->buf, ao, lda, s->buf, bo, ldb, beta,
                     s->buf, co, ldc));
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            double acc = 0.0;
            for (size_t p = 0; p < k; ++p) {
                double a = oa == CM_GEMM_OP_N ? af[at(lay, i, p, lda)] : af[at(lay, p, i, lda)];
                double b = ob == CM_GEMM_OP_N ? bf[at(lay, p, j, ldb)] : bf[at(lay, j, p, ldb)];
                acc += a * b;
            }
            size_t ci = at(lay, i, j, ldc);
            float old;
            memcpy(&old, s->shadow + co + 4 * ci, 4);
            float r = (float)((double)alpha * acc + (beta != 0.0f ? (double)beta * old : 0.0));
            memcpy(s->shadow + co + 4 * ci, &r, 4);
        }
    note(s, "gemm prec %d %s %c%c m %zu n %zu k %zu a %zu/%zu b %zu/%zu c %zu/%zu beta %g%s",
         (int)prec, lay == CM_GEMM_ROW_MAJOR ? "row" : "col", oa ? 'T' : 'N', ob ? 'T' : 'N', m, n,
         k, ao, lda, bo, ldb, co, ldc, (double)beta, st ? " on stream" : "");
    w->count[K_GEMM]++;
    return 0;
}

/* ------------------------------------------------------------------ graphs */

typedef struct gop {
    int kind;        /* 0 set, 1 fill, 2 xor launch, 3 copy, 4 reduce */
    int si, si2;
    size_t off, off2, len, ps;
    uint32_t key;
    int value;
    uint8_t pat[8];
    cm_reduce_op_t rop;
} gop_t;

static void gop_shadow(worker_t *w, const gop_t *g) {
    slot_t *s = &w->slot[g->si];
    switch (g->kind) {
    case 0: memset(s->shadow + g->off, g->value, g->len); break;
    case 1: fill_shadow(s->shadow + g->off, g->len, g->pat, g->ps); break;
    case 2: xor_shadow(s->shadow + g->off, g->len / 4, g->key); break;
    case 3: memmove(s->shadow + g->off, w->slot[g->si2].shadow + g->off2, g->len); break;
    case 4: reduce_shadow(w, g->rop, g->si2, g->off2, g->len / 4, g->si, g->off); break;
    }
}

/* Queue one random capturable operation on home (being captured) and describe it in g. */
static int gop_queue(worker_t *w, gop_t *g) {
    memset(g, 0, sizeof *g);
    g->kind = (int)rnd_below(w, 5);
    g->si = pick_slot(w, 8);
    slot_t *s = &w->slot[g->si];
    switch (g->kind) {
    case 0:
        pick_range(w, s->bytes, 1, MAX_RANGE, &g->off, &g->len);
        g->value = (int)rnd_below(w, 256);
        CHECK(w, cm_buffer_set(w->home, s->buf, g->off, g->len, g->value));
        break;
    case 1:
        g->ps = (size_t)1 << rnd_below(w, 4);
        pick_range(w, s->bytes, g->ps, MAX_RANGE, &g->off, &g->len);
        rnd_bytes(w, g->pat, sizeof g->pat);
        CHECK(w, cm_buffer_fill(w->home, s->buf, g->off, g->len, g->pat, g->ps));
        break;
    case 2: {
        pick_range(w, s->bytes, 4, MAX_RANGE, &g->off, &g->len);
        g->key = (uint32_t)rnd(w);
        void *base = NULL;
        CHECK(w, cm_buffer_device_ptr(s->buf, &base));
        if (launch_xor(w, w->home, base, g->off, g->len / 4, g->key)) return -1;
        break;
    }
    case 3: { /* from another buffer (or, with one buffer, its other half) */
        g->si2 = pick_slot(w, 8);
        slot_t *src = &w->slot[g->si2];
        if (g->si2 == g->si) {
            g->len = s->bytes / 2;
            if (chance(w, 50)) g->off2 = g->len; else g->off = g->len;
        } else {
            size_t mx = s->bytes < src->bytes ? s->bytes : src->bytes;
            pick_range(w, mx, 1, MAX_RANGE, &g->off2, &g->len);
            g->off = rnd_below(w, s->bytes - g->len + 1);
            g->off2 = rnd_below(w, src->bytes - g->len + 1);
        }
        CHECK(w, cm_buffer_copy(w->home, s->buf, g->off, src->buf, g->off2, g->len));
        break;
    }
    default: { /* i32 reduction into a device buffer: scratch from the pool inside the graph */
        static const cm_reduce_op_t ops[] = {CM_REDUCE_SUM, CM_REDUCE_MIN, CM_REDUCE_MAX};
        g->rop = ops[rnd_below(w, 3)];
        g->si2 = g->si;
        pick_range(w, s->bytes, 4, 4 * MIB, &g->off2, &g->len);
        size_t rs = g->rop == CM_REDUCE_SUM ? 8 : 4;
        if (!pick_result(w, g->si2, g->off2, g->len, rs, &g->si, &g->off)) { /* fall back: a set */
            g->kind = 0;
            g->si = g->si2;
            g->off = g->off2;
            g->value = (int)rnd_below(w, 256);
            CHECK(w, cm_buffer_set(w->home, s->buf, g->off, g->len, g->value));
            break;
        }
        if (reduce_to_device(w, w->home, g->rop, g->si2, g->off2, g->len / 4, g->si, g->off)) return -1;
        break;
    }
    }
    return 0;
}

static int op_graph(worker_t *w) {
    if (pick_slot(w, 8) < 0) return 0;
    gop_t ops[GRAPH_OPS_MAX];
    size_t nops = 2 + rnd_below(w, GRAPH_OPS_MAX - 1);
    CHECK(w, cm_graph_capture_begin(w->home));
    w->capturing = true;
    w->dirty = true;
    for (size_t i = 0; i < nops; ++i)
        if (gop_queue(w, &ops[i])) return -1;
    cm_graph_t *g = NULL;
    w->capturing = false;
    CHECK(w, cm_graph_capture_end(w->home, &g));
    size_t nodes = 0;
    int rc = 0;
    cm_status_t st = cm_graph_node_count(g, &nodes);
    if (st != CM_OK) rc = fail_status(w, st, "cm_graph_node_count", __LINE__);
    else if (nodes < nops) rc = failf(w, "a graph of %zu operations has %zu nodes", nops, nodes);
    size_t reps = 1 + rnd_below(w, 3);
    for (size_t r = 0; r < reps && rc == 0; ++r) {
        if ((st = cm_graph_launch(g, w->home)) != CM_OK) {
            rc = fail_status(w, st, "cm_graph_launch", __LINE__);
            break;
        }
        for (size_t i = 0; i < nops; ++i) gop_shadow(w, &ops[i]);
    }
    for (size_t i = 0; i < nops; ++i)
        note(&w->slot[ops[i].si], "graph (x%zu) op kind %d at %zu+%zu", reps, ops[i].kind,
             ops[i].off, ops[i].len);
    if ((st = cm_graph_destroy(g)) != CM_OK && rc == 0) rc = fail_status(w, st, "cm_graph_destroy", __LINE__);
    if (rc == 0) w->count[K_GRAPH]++;
    return rc;
}

/* ------------------------------------------------------------------ host buffers */

static int op_host(worker_t *w) {
    int si = pick_slot(w, 4);
    if (si < 0) return 0;
    slot_t *s = &w->slot[si];
    bool reg = chance(w, 30);
    static const unsigned fl[] = {CM_HOST_BUFFER_DEFAULT, CM_HOST_BUFFER_PORTABLE,
                                  CM_HOST_BUFFER_MAPPED, CM_HOST_BUFFER_WRITE_COMBINED,
                                  CM_HOST_BUFFER_PORTABLE | CM_HOST_BUFFER_MAPPED};
    unsigned flags = reg ? (chance(w, 50) ? CM_HOST_BUFFER_DEFAULT : CM_HOST_BUFFER_MAPPED)
                         : fl[rnd_below(w, 5)];
    size_t maxb = flags & CM_HOST_BUFFER_WRITE_COMBINED ? 64 * 1024 : MIB;
    size_t off, len;
    if (!pick_range(w, s->bytes, 4, maxb, &off, &len)) return 0;
    size_t bytes = len + 4 * rnd_below(w, 1024);
    void *mem = NULL;
    if (reg && posix_memalign(&mem, 4096, bytes) != 0) return failf(w, "posix_memalign(%zu)", bytes);
    if (drain(w)) {
        free(mem);
        return -1;
    }
    cm_host_buffer_t *h = NULL;
    cm_status_t st = reg ? cm_host_buffer_register(g_dev, mem, bytes, flags, &h)
                         : cm_host_buffer_create(g_dev, bytes, flags, &h);
    if (st != CM_OK) {
        free(mem);
        return fail_status(w, st, reg ? "cm_host_buffer_register" : "cm_host_buffer_create", __LINE__);
    }
    account(w, bytes, 0);
    int rc = 0;
    uint8_t *data = NULL;
    cm_host_buffer_info_t info;
    cm_stream_t *stream = chance(w, 50) ? w->home : NULL;
    if ((st = cm_host_buffer_data(h, (void **)&data)) != CM_OK ||
        (st = cm_host_buffer_info(h, &info)) != CM_OK) {
        rc = fail_status(w, st, "cm_host_buffer_data / cm_host_buffer_info", __LINE__);
        goto out;
    }
    if (info.bytes != bytes || info.flags != flags || info.registered != reg ||
        (reg && data != mem)) {
        rc = failf(w, "cm_host_buffer_info: %zu bytes flags %u registered %d, expected %zu %u %d",
                   info.bytes, info.flags, (int)info.registered, bytes, flags, (int)reg);
        goto out;
    }
    /* host -> device, then the range back into the zeroed host memory */
    rnd_bytes(w, data, len);
    if (reg ? (st = cm_buffer_copy_from_host(stream, s->buf, off, data, len)) != CM_OK
            : (st = cm_buffer_copy_from_host_buffer(stream, s->buf, off, h, 0, len)) != CM_OK) {
        rc = fail_status(w, st, "copy from the host buffer", __LINE__);
        goto out;
    }
    memcpy(s->shadow + off, data, len);
    note(s, "h2d %zu+%zu from a host buffer, flags %u%s", off, len, flags, reg ? " registered" : "");
    if (stream && (st = cm_stream_synchronize(stream)) != CM_OK) {
        rc = fail_status(w, st, "cm_stream_synchronize", __LINE__);
        goto out;
    }
    memset(data, 0, len);
    if ((st = cm_buffer_copy_to_host_buffer(stream, s->buf, off, h, 0, len)) != CM_OK ||
        (stream && (st = cm_stream_synchronize(stream)) != CM_OK)) {
        rc = fail_status(w, st, "copy back into the host buffer", __LINE__);
        goto out;
    }
    if ((rc = compare(w, si, off, data, len, "host buffer round trip")) != 0) goto out;
    if (flags & CM_HOST_BUFFER_MAPPED) { /* the kernel writes host memory over the bus */
        void *dp = NULL;
        if ((st = cm_host_buffer_device_ptr(h, &dp)) != CM_OK) {
            rc = fail_status(w, st, "cm_host_buffer_device_ptr", __LINE__);
            goto out;
        }
        uint32_t key = (uint32_t)rnd(w);
        memcpy(w->tmp, data, len);
        if ((rc = launch_xor(w, stream, dp, 0, len / 4, key)) != 0) goto out;
        if (stream && (st = cm_stream_synchronize(stream)) != CM_OK) {
            rc = fail_status(w, st, "cm_stream_synchronize", __LINE__);
            goto out;
        }
        xor_shadow(w->tmp, len / 4, key);
        if (memcmp(w->tmp, data, len) != 0) {
            rc = failf(w, "a launch on mapped host memory (%zu bytes) did not write what it should", len);
            goto out;
        }
    }
out:
    if (stream && (st = cm_stream_synchronize(stream)) != CM_OK && rc == 0)
        rc = fail_status(w, st, "cm_stream_synchronize", __LINE__);
    if (stream) w->dirty = false;
    if ((st = cm_host_buffer_destroy(h)) != CM_OK && rc == 0)
        rc = fail_status(w, st, "cm_host_buffer_destroy", __LINE__);
    account(w, 0, bytes);
    free(mem);
    if (rc == 0) w->count[K_HOST]++;
    return rc;
}

/* ------------------------------------------------------------------ the thread */

static int run_op(worker_t *w, int kind) {
    if (kind != K_CREATE && kind != K_STREAM && kind != K_EVENT && kind != K_GEMM &&
        kind != K_VECTOR && pick_slot(w, 8) < 0)
        kind = K_CREATE;
    int si = pick_slot(w, 8);
    switch (kind) {
    case K_CREATE: return op_create(w);
    case K_DESTROY: return op_destroy(w);
    case K_H2D: return op_h2d(w, si);
    case K_D2H: return op_d2h(w, si);
    case K_D2D: return op_d2d(w);
    case K_SET: return op_set(w, si);
    case K_FILL: return op_fill(w, si);
    case K_STREAM: return op_stream(w);
    case K_EVENT: return op_event(w);
    case K_LAUNCH: return op_launch(w, si, NULL);
    case K_VECTOR: return op_vector(w);
    case K_REDUCE: return op_reduce(w);
    case K_GEMM: return op_gemm(w);
    case K_GRAPH: return op_graph(w);
    default: return op_host(w);
    }
}

static int pick_kind(worker_t *w) {
    unsigned total = 0;
    for (int k = 0; k < K_COUNT; ++k) total += kind_weight[k];
    unsigned r = (unsigned)rnd_below(w, total);
    for (int k = 0; k < K_COUNT; ++k) {
        if (r < kind_weight[k]) return k;
        r -= kind_weight[k];
    }
    return K_CREATE;
}

static int worker_setup(worker_t *w) {
    cudaError_t ce = cudaSetDevice(g_ordinal); /* launches on stream NULL use the current device */
    if (ce != cudaSuccess) return failf(w, "cudaSetDevice(%d): %s", g_ordinal, cudaGetErrorString(ce));
    w->tmp = malloc(MAX_BUF);
    w->tmp2 = malloc(MAX_BUF);
    if (w->tmp == NULL || w->tmp2 == NULL) return failf(w, "out of host memory");
    CHECK(w, cm_stream_acquire(g_dev, CM_STREAM_PRIORITY_LOW, &w->home));
    CHECK(w, cm_host_buffer_create(g_dev, HB_BYTES, CM_HOST_BUFFER_DEFAULT, &w->hb));
    account(w, HB_BYTES, 0);
    CHECK(w, cm_host_buffer_data(w->hb, (void **)&w->hb_data));
    return 0;
}

/* Verify and release everything the thread holds (after a failure: release without verifying,
 * keeping the first failure). Returns -1 when something could not be released. */
static int worker_cleanup(worker_t *w) {
    bool verify = !w->failed;
    int rc = 0;
    if (w->capturing && w->home) { /* a failure inside a capture: end it */
        cm_graph_t *g = NULL;
        if (cm_graph_capture_end(w->home, &g) == CM_OK) cm_graph_destroy(g);
        w->capturing = false;
    }
    for (int i = 0; i < NSLOTS; ++i) {
        if (w->slot[i].buf == NULL) continue;
        if (verify) {
            if (op_destroy_slot(w, i, true)) rc = -1, verify = false;
            continue;
        }
        slot_t *s = &w->slot[i];
        cm_status_t st = s->ordered && w->home ? cm_buffer_destroy_on_stream(w->home, s->buf)
                                                 : cm_buffer_destroy(s->buf);
        if (st != CM_OK) rc = -1;
        if (st != CM_OK && !w->failed) fail_status(w, st, "cm_buffer_destroy (cleanup)", __LINE__);
        account(w, 0, s->bytes);
        free(s->shadow);
        s->buf = NULL;
        s->shadow = NULL;
    }
    if (w->home) {
        cm_status_t st = cm_stream_synchronize(w->home);
        if (st != CM_OK) {
            rc = -1;
            if (!w->failed) fail_status(w, st, "cm_stream_synchronize (cleanup)", __LINE__);
        } else if (!w->failed && check_callbacks(w)) {
            rc = -1;
        }
        st = cm_stream_release(w->home);
        if (st != CM_OK) {
            rc = -1;
            if (!w->failed) fail_status(w, st, "cm_stream_release (cleanup)", __LINE__);
        }
        w->home = NULL;
    }
    if (w->hb) {
        cm_status_t st = cm_host_buffer_destroy(w->hb);
        if (st != CM_OK) {
            rc = -1;
            if (!w->failed) fail_status(w, st, "cm_host_buffer_destroy (cleanup)", __LINE__);
        }
        account(w, 0, HB_BYTES);
        w->hb = NULL;
    }
    free(w->tmp);
    free(w->tmp2);
    w->tmp = w->tmp2 = NULL;
    return rc;
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    if (worker_setup(w) == 0) {
        while (!atomic_load(&g_stop) && cm_bench_now_us() < g_deadline_us) {
            if (run_op(w, pick_kind(w))) break;
        }
    }
    worker_cleanup(w);
    return NULL;
}

/* One thread, each kind a few times in turn: loads the modules and reserves what the device
 * keeps for the process (local memory of the kernels), before the free memory is measured. */
static int warm_up(worker_t *w) {
    if (worker_setup(w)) return -1;
    for (int round = 0; round < 3 && !w->failed; ++round)
        for (int k = 0; k < K_COUNT && !w->failed; ++k) {
            if (op_create(w)) break;
            if (run_op(w, k)) break;
        }
    /* every GEMM precision, matrix and matrix-vector shapes, in both layouts and transposes (at
     * random), for their modules */
    for (int i = 0; i < 32 && !w->failed; ++i) {
        w->gemm_prec = i % 4;
        w->gemm_vec = (i / 4) % 2;
        if (pick_slot(w, 64 * 1024) < 0 && op_create(w)) break;
        if (op_gemm(w)) break;
    }
    w->gemm_prec = -1;
    w->gemm_vec = false;
    worker_cleanup(w);
    return w->failed ? -1 : 0;
}

/* ------------------------------------------------------------------ main */

static int env_number(const char *name, double lo, double hi, double *out) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') return 0;
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d >= lo && d <= hi)) {
        fprintf(stderr, "soak: %s=%s: expected a number in [%g, %g]\n", name, v, lo, hi);
        return -1;
    }
    *out = d;
    return 1;
}

static int report_row(const char *case_name, const char *unit, double ours, const char *goal,
                      bool meets) {
    cm_bench_row_t row = {"soak", case_name, unit, ours, NAN, "none", NAN, goal, meets};
    return cm_bench_report(&row);
}

int main(void) {
    double d;
    bool under_sanitizer = getenv("CM_TEST_UNDER_SANITIZER") && !strcmp(getenv("CM_TEST_UNDER_SANITIZER"), "1");
    if (under_sanitizer) g_slack = 768 * MIB;
    int r;
    if ((r = env_number("CM_SOAK_SECONDS", 1, 86400, &d)) < 0) return 2;
    if (r) g_seconds = d;
    if ((r = env_number("CM_SOAK_THREADS", 1, 64, &d)) < 0) return 2;
    if (r) g_threads = (int)d;
    if ((r = env_number("CM_SOAK_BUDGET_MB", 64, 1 << 20, &d)) < 0) return 2;
    if (r) g_budget = (size_t)d * MIB;
    if ((r = env_number("CM_SOAK_SLACK_MB", 0, 1 << 20, &d)) < 0) return 2;
    if (r) g_slack = (size_t)d * MIB;
    if ((r = env_number("CM_SOAK_DEVICE", 0, 1024, &d)) < 0) return 2;
    if (r) g_ordinal = (int)d;
    const char *sv = getenv("CM_SOAK_SEED");
    if (sv && *sv) {
        char *end = NULL;
        g_seed = strtoull(sv, &end, 0);
        if (end == sv || *end != '\0') {
            fprintf(stderr, "soak: CM_SOAK_SEED=%s: expected an integer\n", sv);
            return 2;
        }
    } else {
        g_seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() ^ (uint64_t)cm_bench_now_us();
    }
    if (g_budget / (size_t)g_threads < HB_BYTES + 2 * MAX_BUF) {
        fprintf(stderr, "soak: a budget of %zu MiB is too small for %d threads (at least %zu MiB each)\n",
                g_budget / MIB, g_threads, (HB_BYTES + 2 * MAX_BUF) / MIB);
        return 2;
    }
    printf("soak: %d threads for %.0f s on device %d, seed %" PRIu64 " (CM_SOAK_SEED=%" PRIu64
           " repeats it), budget %zu MiB, free-memory slack %zu MiB%s\n", g_threads, g_seconds,
           g_ordinal, g_seed, g_seed, g_budget / MIB, g_slack / MIB,
           under_sanitizer ? " (under compute-sanitizer)" : "");
    fflush(stdout);
    if (!cm_bench_have_gpu("soak")) return 2;
    if (cudaSetDevice(g_ordinal) != cudaSuccess || cudaFree(NULL) != cudaSuccess) {
        fprintf(stderr, "soak: cannot use device %d\n", g_ordinal);
        return 2;
    }
    g_xor = soak_xor_kernel();
    int failures = 0;
    char text[8192];

    /* warm-up, then the device closed and the free memory measured */
    worker_t *warm = calloc(1, sizeof *warm);
    cm_status_t st = cm_device_open(g_ordinal, &g_dev);
    if (warm == NULL || st != CM_OK) {
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "soak: cm_device_open: %s\n", text);
        return 1;
    }
    uint64_t sm = g_seed ^ 0xA5A5A5A5u;
    warm->id = -1;
    warm->gemm_prec = -1;
    warm->rng = splitmix(&sm) | 1;
    warm->budget = g_budget;
    g_deadline_us = cm_bench_now_us() + 1e12;
    if (warm_up(warm)) {
        fprintf(stderr, "soak: FAILED in the warm-up: %s\n", warm->fail);
        failures++;
    }
    free(warm);
    if ((st = cm_device_close(g_dev)) != CM_OK) {
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "soak: cm_device_close after the warm-up: %s\n", text);
        return 1;
    }
    size_t free0 = 0, free1 = 0, total = 0;
    if (cudaMemGetInfo(&free0, &total) != cudaSuccess) {
        fprintf(stderr, "soak: cudaMemGetInfo failed\n");
        return 1;
    }

    /* the soak */
    if ((st = cm_device_open(g_ordinal, &g_dev)) != CM_OK) {
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "soak: cm_device_open: %s\n", text);
        return 1;
    }
    unsigned pool = 2u * (unsigned)g_threads + 8u;
    cm_stream_pool_config_t pc = {pool > CM_STREAM_POOL_MAX ? CM_STREAM_POOL_MAX : pool,
                                  pool > CM_STREAM_POOL_MAX ? CM_STREAM_POOL_MAX : pool};
    if ((st = cm_stream_pool_configure(g_dev, &pc)) != CM_OK) {
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "soak: cm_stream_pool_configure: %s\n", text);
        return 1;
    }
    worker_t *ws = calloc((size_t)g_threads, sizeof *ws);
    pthread_t *tids = calloc((size_t)g_threads, sizeof *tids);
    if (ws == NULL || tids == NULL) {
        fprintf(stderr, "soak: out of host memory\n");
        return 1;
    }
    atomic_store(&g_peak_bytes, 0);
    double t0 = cm_bench_now_us();
    g_deadline_us = t0 + g_seconds * 1e6;
    int started = 0;
    for (int i = 0; i < g_threads; ++i) {
        ws[i].id = i;
        ws[i].rng = splitmix(&sm) | 1;
        ws[i].budget = g_budget / (size_t)g_threads;
        ws[i].gemm_prec = -1;
        atomic_init(&ws[i].callbacks, 0u);
        if (pthread_create(&tids[i], NULL, worker_main, &ws[i]) != 0) {
            fprintf(stderr, "soak: pthread_create failed\n");
            atomic_store(&g_stop, 1);
            failures++;
            break;
        }
        started++;
    }
    for (int i = 0; i < started; ++i) pthread_join(tids[i], NULL);
    double secs = (cm_bench_now_us() - t0) * 1e-6;

    unsigned long long counts[K_COUNT] = {0}, all = 0;
    for (int i = 0; i < started; ++i) {
        for (int k = 0; k < K_COUNT; ++k) counts[k] += ws[i].count[k];
        if (ws[i].failed) {
            failures++;
            fprintf(stderr, "soak: FAILED: %s\n", ws[i].fail);
        }
    }
    for (int k = 0; k < K_COUNT; ++k) all += counts[k];

    /* nothing may be left */
    cm_memory_report_t mr;
    cm_stream_pool_stats_t ps;
    size_t pool_peak = 0;
    if ((st = cm_device_leak_report(g_dev, text, sizeof text, NULL)) != CM_OK ||
        strstr(text, "no live buffers") == NULL) {
        fprintf(stderr, "soak: FAILED: objects left after every thread released its own:\n%s\n", text);
        failures++;
    }
    if ((st = cm_device_memory_report(g_dev, &mr)) != CM_OK ||
        mr.live_buffers + mr.live_host_buffers != 0) {
        fprintf(stderr, "soak: FAILED: memory report: status %s, %zu buffers and %zu host buffers live\n",
                cm_status_name(st), mr.live_buffers, mr.live_host_buffers);
        failures++;
    } else {
        pool_peak = mr.pool_peak_reserved_bytes;
    }
    if ((st = cm_stream_pool_stats(g_dev, &ps)) != CM_OK || ps.acquired[0] + ps.acquired[1] != 0 ||
        ps.events_acquired != 0) {
        fprintf(stderr, "soak: FAILED: stream pool: status %s, %u + %u streams and %u events lent\n",
                cm_status_name(st), ps.acquired[0], ps.acquired[1], ps.events_acquired);
        failures++;
    }
    if ((st = cm_device_close(g_dev)) != CM_OK) {
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "soak: FAILED: cm_device_close: %s\n", text);
        failures++;
    }
    double drift_mib = 0.0;
    bool drift_ok = false;
    if (cudaMemGetInfo(&free1, &total) != cudaSuccess) {
        fprintf(stderr, "soak: FAILED: cudaMemGetInfo after the soak\n");
        failures++;
    } else {
        drift_mib = ((double)free0 - (double)free1) / (double)MIB;
        drift_ok = free1 + g_slack >= free0;
        if (!drift_ok) {
            fprintf(stderr, "soak: FAILED: the device had %zu MiB free before the soak, %zu MiB after\n",
                    free0 / MIB, free1 / MIB);
            failures++;
        }
    }
    size_t peak = atomic_load(&g_peak_bytes);
    if (peak > g_budget) {
        fprintf(stderr, "soak: FAILED: %zu bytes held at the peak, budget %zu\n", peak, g_budget);
        failures++;
    }
    int missing = 0;
    for (int k = 0; k < K_COUNT; ++k)
        if (counts[k] == 0) {
            fprintf(stderr, "soak: FAILED: no %s operation ran\n", kind_name[k]);
            missing++;
        }
    if (missing && failures == 0) failures++;

    printf("\nsoak: %.1f s, %d threads, seed %" PRIu64 ": %llu operations, %d failure%s; device free "
           "memory %zu MiB before, %zu MiB after (drift %.1f MiB); peak held %.1f MiB of %zu; "
           "pool peak %.1f MiB\n",
           secs, started, g_seed, all, failures, failures == 1 ? "" : "s", free0 / MIB, free1 / MIB,
           drift_mib, (double)peak / (double)MIB, g_budget / MIB, (double)pool_peak / (double)MIB);
    cm_bench_print_header();
    int rerr = 0;
    for (int k = 0; k < K_COUNT; ++k) {
        char name[64];
        snprintf(name, sizeof name, "%s_ops", kind_name[k]);
        rerr |= report_row(name, "ops/s", (double)counts[k] / secs, "info", counts[k] > 0);
    }
    char goal[64];
    rerr |= report_row("total_ops", "ops/s", (double)all / secs, "info", true);
    rerr |= report_row("failures", "count", (double)failures, "== 0", failures == 0);
    snprintf(goal, sizeof goal, "<= %zu MiB", g_budget / MIB);
    rerr |= report_row("peak_memory", "MiB", (double)peak / (double)MIB, goal, peak <= g_budget);
    snprintf(goal, sizeof goal, "<= %zu MiB", g_slack / MIB);
    rerr |= report_row("free_memory_drift", "MiB", drift_mib, goal, drift_ok);
    free(ws);
    free(tids);
    if (rerr) {
        fprintf(stderr, "soak: could not write the results file\n");
        return 1;
    }
    printf("soak: %s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}
