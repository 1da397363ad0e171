/*
 * The API-sequence fuzzer's driver (fuzz_driver.h).
 *
 * Input layout: byte 0 b chooses the threads (1 + (b & 3) % 3), the synchronous debug mode
 * (0x80, one thread only: it is process-wide), small devices of 256 KiB instead of 1 MiB (0x40:
 * out of memory is common), device 1 without memory pools (0x20), the staging defaults on the
 * shared devices (0x10; otherwise 4 KiB chunks from 8 KiB on, with a worker thread), device 1
 * without concurrent managed access (0x08: no prefetch, no device advice) and device 1 without
 * managed memory (0x04). The rest is a sequence of operations, each an opcode byte (op % 20)
 * followed by the argument bytes it reads (a read past the end gives 0). Slot 1 (op % 20 == 1)
 * was a second buffer create; with bit 0x80 (bytes 141, 161, 181, 201, 221, 241) it is now one
 * memory-space operation each (memspace.h, below). That slot was chosen because no committed
 * input (corpus/, regressions/) used those six bytes as an opcode when they were taken: every
 * earlier input runs as before, and the modulus (hence every other opcode) is unchanged. With
 * several threads the bytes are dealt in 12-byte slices, slice k to thread k % threads; each
 * thread runs its bytes concurrently with the others, on handles of its own (the headers' rule:
 * one handle is used by one thread at a time) and on two device objects shared by all (device
 * objects, pools and the library's tables are shared between threads by design).
 * tests/fuzz/make_seeds.py writes inputs in this format.
 *
 * What the operations do: create, use, destroy every handle kind (device objects of the
 * thread's own that it closes and opens again; buffers, synchronous and stream-ordered;
 * pinned and registered host buffers; pooled and wrapped streams; events; timers; graphs;
 * device sets, split arrays and communicators), host/device/peer copies, sets and fills with
 * random offsets and sizes (out of range on purpose sometimes), launches of a simulated kernel
 * with random configurations, staging and pool settings, reports, misuse (stale handles,
 * handles of another kind, garbage pointers), and injected CUDA/NCCL failures (an opcode arms
 * a fault for the next operation: a given table entry, or the k-th CUDA call of any entry).
 * The memory spaces of memspace.h (opcodes 141 + 20 k), on handles of the thread's own: 2-D
 * pitched buffers and CUDA arrays (create with random sizes and formats, invalid ones on purpose:
 * zero or over-limit sizes, formats outside the enum, unknown flags, overflowing rows; destroy);
 * managed buffers (create, destroy, checked copies from and to host memory, prefetch to the host
 * or a device on a stream, advice; out-of-range ranges, bad locations and advice, NULL host
 * memory); checked 2-D copies between host memory (pageable, managed, NULL, device memory given
 * as host memory), pitched buffers and arrays (random corners, sizes, host pitches, streams;
 * rectangles out of bounds, short pitches, places of no kind, elements of two sizes, handles of
 * two devices, array to array); textures over a buffer's range, a pitched buffer or an array and
 * surfaces over an array, with random descriptors whose validity the driver works out from the
 * rules of memspace.h on its own (every field also outside its enum, unaligned ranges, wrong
 * formats, NULL descriptors); memory destroyed while a texture or surface reads it (refused with
 * CM_ERROR_BUSY, the memory alive, or the invariant breaks); copies to and from a __constant__
 * symbol of the thread's own on either device, its address, and symbols that are NULL or not
 * one; stale handles of these kinds, handles of another kind, NULL arguments, destroy(NULL).
 *
 * After every call: the status is one of cm_status_t; a failure's cm_last_error() has that
 * status and a message; without an injected fault (and outside a capture, and before any
 * sticky error) the status is one the operation allows (a valid call succeeds, an invalid one
 * is refused with CM_ERROR_INVALID_ARGUMENT, a busy pool says BUSY...); the thread's context
 * stack is what it was before the call. The data model: the bytes of every device buffer and
 * pinned host buffer written by successful copies, sets, fills and launches are kept on the
 * host, and every copy back, every sweep (all live handles: info matches, memory matches; stale
 * handles are refused) and the end compare them (the simulation stores device memory in host
 * memory, so device contents are checked directly as well). The same for pitched buffers and
 * arrays (the rows' bytes: written by 2-D copies, read back by them and in the simulation's
 * memory), managed buffers (their memory is the host's) and the thread's symbol on each device.
 * At the end everything is destroyed,
 * the shared devices close without a leak report, no handle of any kind is live, the simulation
 * holds nothing of the library's (memory whose free CUDA refused during a capture included: the
 * library frees it later, at the end of the capture or at the device's close) and saw no call
 * outside its objects (no memory freed under a texture included). A library issue found and not
 * fixed yet may be counted instead of failing (marked "Known library issue" here, with an input
 * in tests/fuzz/regressions-pending/), unless CMFZ_STRICT=1; none is at present.
 *
 * Never calls a path that runs a real kernel launcher of kernels/ (they bypass the call table):
 * no cm_vector other than CM_VECTOR_COPY, no reductions, GEMM, split vector operations or
 * cm_device_check_kernel_image.
 */
#define _POSIX_C_SOURCE 200809L

#include "fuzz_driver.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/launch.h>
#include <cudamodel/memspace.h>
#include <cudamodel/multi.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "multi/multi_internal.h"
#include "test_full_fake.h"

#define NB 8    /* buffers per thread */
#define NH 4    /* host buffers */
#define NS 6    /* streams */
#define NE 6    /* events */
#define NT 2    /* timers */
#define NG 3    /* graphs */
#define NI 4    /* 2-D images: pitched buffers and CUDA arrays */
#define NM 4    /* managed buffers */
#define NV 4    /* views: textures and surfaces */
#define SYM_BYTES 64 /* the thread's symbol */
#define NGRAVE 16
#define MAX_OPS 256
#define TRACE 24
#define MAX_THREADS 3

static atomic_ullong cmfz_calls_all, cmfz_inputs_all;
static int cmfz_strict = -1; /* CMFZ_STRICT=1: the known issues fail too */
/* a sticky error fired: every device may be lost from then on (process-wide in the library) */
static atomic_int cmfz_lost;

unsigned long long cmfz_total_calls(void) {
    return atomic_load(&cmfz_calls_all);
}

unsigned long long cmfz_total_inputs(void) {
    return atomic_load(&cmfz_inputs_all);
}

void cmfz_print_known_issues(FILE *out, const char *prefix) {
    fprintf(out, "%sknown library issues tolerated: none (every invariant is checked in full)\n",
            prefix);
}

void cmfz_set_strict(int on) {
    cmfz_strict = on;
}

/* ---------------------------------------------------------------- per-thread state */

typedef struct zbuf {
    cm_buffer_t *h;
    cm_device_t *dev;
    int ord;
    size_t size;
    bool ordered;
    cm_stream_t *on;             /* the stream it was created on (stream-ordered) */
    unsigned char *data, *known; /* the model */
} zbuf_t;

typedef struct zhost {
    cm_host_buffer_t *h;
    size_t size;
    unsigned char *mem;     /* its memory (the library's, or ours when registered) */
    unsigned char *shadow;  /* what it must hold */
    bool registered;
    unsigned char *owned;   /* our allocation behind a registration */
    cm_device_t *dev;
} zhost_t;

typedef struct zstream {
    cm_stream_t *h;
    cm_device_t *dev;
    int ord;
    cudaStream_t user;      /* wrapped: the application's CUDA stream */
    bool capturing;
} zstream_t;

typedef struct zevent {
    cm_event_t *h;
    cm_device_t *dev;
    int ord;
    int kind;
    bool recorded;
} zevent_t;

typedef struct ztimer {
    cm_timer_t *h;
    cm_device_t *dev;
    int ord;
    int state;
    cm_stream_t *stream; /* of the last start */
} ztimer_t;

/* A graph, with the buffers and host buffers its work writes (forgotten at each launch); a
 * graph whose memory was freed since is stale: never launched again (CUDA would replay into
 * freed memory, which a new allocation may reuse). */
typedef struct zgraph {
    cm_graph_t *h;
    int ord;
    const void *touched[8];
    int n_touched;
    bool stale;
} zgraph_t;

/* The bytes of a memory-space object the model knows (as zbuf_t's data and known). */
typedef struct zmodel {
    unsigned char *data, *known;
    size_t size;
} zmodel_t;

/* A pitched buffer or a CUDA array; its model holds the rows' data bytes (height x row_bytes,
 * without the pitch's padding). */
typedef struct zimg {
    void *h;                /* cm_pitched_t * or cm_array_t * */
    bool array;
    cm_device_t *dev;
    int ord;
    size_t width, height, elem, row_bytes;
    cm_format_t format;
    unsigned flags;
    zmodel_t m;
} zimg_t;

typedef struct zman {
    cm_managed_t *h;
    cm_device_t *dev;
    int ord;
    size_t size;
    zmodel_t m;
} zman_t;

/* A texture or surface, and the handle of the memory it reads. */
typedef struct zview {
    void *h;
    bool surface;
    const void *mem;
    cm_device_t *dev;
} zview_t;

typedef struct zgrave {
    void *h;
    int kind; /* cm__kind_t */
} zgrave_t;

typedef struct zthread {
    int id;
    uint8_t prog[MAX_OPS * 12];
    size_t len, pos;
    int n_ops;
    cm_device_t *sdev[2];      /* shared by every thread */
    cm_device_t *tdev[2];      /* the thread's own: closed and opened again */
    zbuf_t b[NB];
    zhost_t hb[NH];
    zstream_t s[NS];
    zevent_t e[NE];
    ztimer_t tm[NT];
    zgraph_t g[NG];
    zimg_t img[NI];
    zman_t man[NM];
    zview_t view[NV];
    const void *sym;           /* the thread's own symbol of SYM_BYTES (cmf_symbol) */
    zmodel_t symm[2];          /* its bytes on devices 0 and 1 */
    unsigned char sym_data[2][SYM_BYTES], sym_known[2][SYM_BYTES];
    const void *cap_touched[8]; /* buffers and host buffers the open capture's work writes */
    int n_cap_touched;
    bool cap_stale;
    int cap_slot;              /* stream slot being captured, -1 */
    cm_device_set_t *set;
    bool set_broken;           /* the set was made unusable during an operation with a fault */
    cm_status_t rank_aborted;  /* the status rank_comm was aborted with under a fault, or CM_OK */
    cm_comm_t *set_comm;
    cm_split_t *split;
    size_t split_n;
    unsigned char *split_model;
    cm_comm_t *rank_comm;
    cm_device_t *rank_dev;
    zgrave_t grave[NGRAVE];
    int n_grave;
    /* registered memory whose unregister failed (never reused), and pageable memory a captured
     * copy names (each launch of its graph reads / writes it): freed at the thread's end */
    unsigned char **quarantine;
    size_t n_quarantine;
    /* the fault for the next operation */
    int arm_mode;              /* 0 none, 1 member, 2 any */
    int arm_member;
    long arm_skip, arm_count;
    int arm_err, arm_nccl;
    long faults;
    bool fault_now;            /* a fault fired during the current operation */
    int callbacks;
    unsigned long calls;
    uint64_t rng;
    char trace[TRACE][160];
    int n_trace;
    bool failed;
    char why[1024];
} zthread_t;

/* ---------------------------------------------------------------- input */

static unsigned u8(zthread_t *t) {
    return t->pos < t->len ? t->prog[t->pos++] : 0u;
}
static unsigned u16(zthread_t *t) {
    unsigned a = u8(t);
    return a | (u8(t) << 8);
}

static uint64_t rnd(zthread_t *t) {
    uint64_t x = t->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return t->rng = x;
}

static void fill_random(zthread_t *t, unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(rnd(t) >> 24);
}

/* ---------------------------------------------------------------- failures */

static void note(zthread_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cmfz_verbose = -1; /* CMFZ_VERBOSE=1: print every operation as it runs */

static void note(zthread_t *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->trace[t->n_trace % TRACE], sizeof t->trace[0], fmt, ap);
    va_end(ap);
    if (cmfz_verbose > 0) fprintf(stderr, "[%d] %s\n", t->id, t->trace[t->n_trace % TRACE]);
    ++t->n_trace;
}

static void fail(zthread_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(zthread_t *t, const char *fmt, ...) {
    if (t->failed) return;
    t->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
}

/* The outcome of a create call that writes a handle to *out: true when it made one. A failure
 * must leave *out NULL and a success must write a handle (else the invariant breaks). */
static bool created(zthread_t *t, cm_status_t st, const void *h, const char *what) {
    if (st != CM_OK) {
        if (h != NULL) fail(t, "a failed %s wrote out", what);
        return false;
    }
    if (h == NULL) fail(t, "%s returned CM_OK and no handle", what);
    return h != NULL;
}

#define A(st) (1u << (st))
#define A_OK A(CM_OK)
#define A_INV A(CM_ERROR_INVALID_ARGUMENT)
#define A_BUSY A(CM_ERROR_BUSY)
#define A_OOM (A(CM_ERROR_DEVICE_OUT_OF_MEMORY) | A(CM_ERROR_HOST_OUT_OF_MEMORY))

static bool relaxed(const zthread_t *t) {
    return t->fault_now || cmf_fired() > 0 || atomic_load(&cmfz_lost) || t->cap_slot >= 0;
}

/* The checks after every call. allowed: the statuses the call may return without a fault. */
static cm_status_t zcheck(zthread_t *t, cm_status_t st, unsigned allowed, const char *what) {
    ++t->calls;
    atomic_fetch_add_explicit(&cmfz_calls_all, 1, memory_order_relaxed);
    if (cmf_fired() > 0) t->fault_now = true;
    if ((int)st < 0 || (int)st >= CM_STATUS_COUNT) {
        fail(t, "%s returned %d, not a cm_status_t", what, (int)st);
        return st;
    }
    if (st != CM_OK) {
        const cm_error_t *e = cm_last_error();
        if (e->status != st)
            fail(t, "%s returned %s but cm_last_error() says %s (%s)", what, cm_status_name(st),
                 cm_status_name(e->status), e->message);
        if (e->message[0] == '\0') fail(t, "%s returned %s with an empty message", what, cm_status_name(st));
        if (st == CM_ERROR_CONTEXT_LOST && !atomic_load(&cmfz_lost))
            fail(t, "%s: context lost without a sticky error: %s", what, e->message);
    }
    if (cmf_ctx_depth() != 0 || cmf_ctx_bound() != -1)
        fail(t, "%s left the thread's context stack changed (depth %d, bound %d)", what,
             cmf_ctx_depth(), cmf_ctx_bound());
    /* a collective aborted by an injected NCCL failure makes the set unusable for good (the
     * library's documented refusal, with the status it broke with): noted while the fault is
     * still in this operation, accepted as the refusal from then on; a set broken with no fault
     * is a library defect */
    const struct cm__device_set *ds =
        t->set != NULL ? cm__handle_obj(t->set, CM__KIND_DEVICE_SET) : NULL;
    const cm_status_t brk = ds != NULL ? cm__set_broken(ds) : CM_OK;
    if (brk != CM_OK && !t->set_broken) {
        if (relaxed(t)) t->set_broken = true;
        else fail(t, "%s: the device set became unusable without an injected fault", what);
    }
    const char *msg = st != CM_OK ? cm_last_error()->message : "";
    if (t->set_broken && st == brk && st != CM_OK &&
        (strstr(msg, "the device set is unusable") != NULL ||
         (strstr(what, "t->set_comm") != NULL &&
          strstr(msg, "the communicator was aborted") != NULL)))
        return st;
    /* likewise a rank's communicator aborted by an injected failure (NCCL's asynchronous error
     * or a timeout aborted its ranks) refuses every later call with the status it died with */
    if (strstr(what, "t->rank_comm") != NULL && st != CM_OK) {
        if (t->rank_aborted == CM_OK && relaxed(t) && strstr(msg, "aborted") != NULL)
            t->rank_aborted = st;
        else if (t->rank_aborted == st && strstr(msg, "the communicator was aborted") != NULL)
            return st;
    }
    if (!relaxed(t) && !(allowed & A(st)))
        fail(t, "%s returned %s without an injected fault (%s)", what, cm_status_name(st),
             st != CM_OK ? cm_last_error()->message : "the call should have been refused");
    return st;
}

#define CALL(expr, allowed) zcheck(t, (expr), (allowed), #expr)

/* ---------------------------------------------------------------- the model */

static void zm_alloc(zmodel_t *m, size_t n) {
    m->data = malloc(n ? n : 1);
    m->known = calloc(n ? n : 1, 1);
    if (m->data == NULL || m->known == NULL) abort();
    m->size = n;
}
static void zm_free(zmodel_t *m) {
    free(m->data);
    free(m->known);
    memset(m, 0, sizeof *m);
}
static void zm_set(zmodel_t *m, size_t off, const unsigned char *src, size_t n) {
    if (n == 0) return;
    memcpy(m->data + off, src, n);
    memset(m->known + off, 1, n);
}
static void zm_forget(zmodel_t *m, size_t off, size_t n) {
    if (m->known != NULL && n > 0) memset(m->known + off, 0, n);
}
/* a device buffer's model as a zmodel_t (a view of the same bytes) */
static zmodel_t zbuf_model(const zbuf_t *b) {
    return (zmodel_t){b->data, b->known, b->size};
}
static void model_set(zbuf_t *b, size_t off, const unsigned char *src, size_t n) {
    zmodel_t m = zbuf_model(b);
    zm_set(&m, off, src, n);
}
static void model_forget(zbuf_t *b, size_t off, size_t n) {
    zmodel_t m = zbuf_model(b);
    zm_forget(&m, off, n);
}
/* n bytes of s at soff to d at doff, with what the model knows of them */
static void zm_move(zmodel_t *d, size_t doff, const zmodel_t *s, size_t soff, size_t n) {
    if (n == 0) return;
    memmove(d->data + doff, s->data + soff, n);
    memmove(d->known + doff, s->known + soff, n);
}
/* The rows of a rectangle of an image (x, y in elements): each row's offset in the model. */
static size_t img_off(const zimg_t *m, size_t x, size_t y) {
    return y * m->row_bytes + x * m->elem;
}

static void model_forget_handle(zthread_t *t, const void *h) {
    for (int i = 0; i < NB; ++i)
        if (t->b[i].h == h && h != NULL) model_forget(&t->b[i], 0, t->b[i].size);
    for (int i = 0; i < NI; ++i)
        if (t->img[i].h == h && h != NULL) zm_forget(&t->img[i].m, 0, t->img[i].m.size);
    for (int i = 0; i < NM; ++i)
        if (t->man[i].h == h && h != NULL) zm_forget(&t->man[i].m, 0, t->man[i].m.size);
    if (h != NULL && h == t->sym)
        for (int d = 0; d < 2; ++d) zm_forget(&t->symm[d], 0, SYM_BYTES);
    for (int k = 0; k < NH; ++k)
        if (t->hb[k].h == h && h != NULL) memcpy(t->hb[k].shadow, t->hb[k].mem, t->hb[k].size);
}

static void touch_handle(zthread_t *t, const void *h) {
    for (int i = 0; i < t->n_cap_touched; ++i)
        if (t->cap_touched[i] == h) return;
    if (t->n_cap_touched < 8) t->cap_touched[t->n_cap_touched++] = h;
    else t->cap_stale = true; /* cannot follow more: never launch it */
}

/* Host memory kept until the thread's end (see zthread_t's quarantine). */
static void quarantine(zthread_t *t, unsigned char *p) {
    unsigned char **q = realloc(t->quarantine, (t->n_quarantine + 1) * sizeof *q);
    if (q == NULL) abort();
    t->quarantine = q;
    q[t->n_quarantine++] = p;
}

/* Work queued on stream slot s while it is captured runs later (graph launch): forget its
 * destination now and at each launch of the graph. */
static void capture_touch(zthread_t *t, int s, zbuf_t *b) {
    if (s < 0 || !t->s[s].capturing) return;
    model_forget(b, 0, b->size);
    touch_handle(t, b->h);
}

/* Memory that a handle names is freed: graphs (and the open capture) writing it go stale. */
static void memory_freed(zthread_t *t, const void *h) {
    for (int k = 0; k < NG; ++k)
        for (int j = 0; j < t->g[k].n_touched; ++j)
            if (t->g[k].touched[j] == h) t->g[k].stale = true;
    for (int j = 0; j < t->n_cap_touched; ++j)
        if (t->cap_touched[j] == h) t->cap_stale = true;
}

/* Bytes the libFuzzer build need not trace for coverage (the model's byte loops). */
#if defined(__clang__)
#  define CMFZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#  define CMFZ_NO_COVERAGE
#endif

/* got (n bytes at offset off of b) against the model; unknown bytes take what got holds, so
 * that the next comparison is one memcmp. */
CMFZ_NO_COVERAGE
static void zm_compare(zthread_t *t, zmodel_t *b, int ord, size_t off, const unsigned char *got,
                       size_t n, const char *what) {
    if (n == 0 || memcmp(got, b->data + off, n) == 0) return;
    for (size_t c = 0; c < n; c += 256) { /* blocks of 256 bytes: most of them equal */
        size_t m = n - c < 256 ? n - c : 256;
        if (memcmp(got + c, b->data + off + c, m) == 0) continue;
        for (size_t i = c; i < c + m; ++i) {
            if (!b->known[off + i]) {
                b->data[off + i] = got[i];
            } else if (got[i] != b->data[off + i]) {
                fail(t, "%s: byte %zu of a %zu-byte object (device %d) is 0x%02x, the model says "
                     "0x%02x", what, off + i, b->size, ord, got[i], b->data[off + i]);
                return;
            }
        }
    }
}

static void compare(zthread_t *t, zbuf_t *b, size_t off, const unsigned char *got, size_t n,
                    const char *what) {
    zmodel_t m = zbuf_model(b);
    zm_compare(t, &m, b->ord, off, got, n, what);
}

/* The simulated device memory itself against the model. */
static void backdoor(zthread_t *t, zbuf_t *b) {
    if (b->h == NULL || b->size == 0 || atomic_load(&cmfz_lost)) return;
    void *p = NULL;
    if (cm_buffer_device_ptr(b->h, &p) != CM_OK || p == NULL) {
        fail(t, "cm_buffer_device_ptr of a live buffer failed or gave NULL");
        return;
    }
    cmf_mem_t kind;
    int d = cmf_alloc_device(p, &kind);
    if (d != b->ord || (kind != CMF_MEM_DEV && kind != CMF_MEM_POOL))
        fail(t, "a buffer of device %d lives in simulated memory of device %d (kind %d)", b->ord, d,
             (int)kind);
    compare(t, b, 0, p, b->size, "device memory");
}

/* ---------------------------------------------------------------- picks */

/* A device object: shared (0, 1) or the thread's own (2, 3; opened now when needed). */
static cm_device_t *pick_dev(zthread_t *t, unsigned v, int *ord) {
    unsigned k = v % 4;
    cm_device_t *d;
    *ord = (int)(k % 2);
    if (k < 2) {
        d = t->sdev[k];
    } else {
        if (t->tdev[k - 2] == NULL) {
            cm_device_t *n = NULL;
            if (CALL(cm_device_open((int)(k - 2), &n), A_OK) != CM_OK) {
                if (n != NULL) fail(t, "cm_device_open failed but wrote out");
                return t->sdev[k - 2];
            }
            t->tdev[k - 2] = n;
        }
        d = t->tdev[k - 2];
    }
    *ord = (int)(k % 2);
    return d;
}

static int live_stream(zthread_t *t, unsigned v) {
    for (int i = 0; i < NS; ++i) {
        int s = (int)((v + (unsigned)i) % NS);
        if (t->s[s].h != NULL) return s;
    }
    return -1;
}

/* NULL (synchronous) or a live stream, as the byte says; *slot its index (-1: none). */
static cm_stream_t *pick_stream(zthread_t *t, unsigned v, int *slot) {
    *slot = -1;
    if ((v & 3) == 0) return NULL;
    int s = live_stream(t, v >> 2);
    if (s < 0) return NULL;
    *slot = s;
    return t->s[s].h;
}

static int live_buf(zthread_t *t, unsigned v) {
    for (int i = 0; i < NB; ++i) {
        int k = (int)((v + (unsigned)i) % NB);
        if (t->b[k].h != NULL) return k;
    }
    return -1;
}

static int live_host(zthread_t *t, unsigned v) {
    for (int i = 0; i < NH; ++i) {
        int k = (int)((v + (unsigned)i) % NH);
        if (t->hb[k].h != NULL) return k;
    }
    return -1;
}

/* A range in a size-byte object: inside mostly, past the end sometimes. */
static void pick_range(zthread_t *t, size_t size, size_t *off, size_t *len, bool *valid) {
    unsigned mode = u8(t);
    unsigned a = u16(t), b = u16(t);
    if (mode % 8 == 7) { /* out of range */
        *off = size > 0 ? a % (size + 16) : a % 16;
        *len = size + 1 + b % 64 - (*off > size ? size : *off);
        if (mode & 8) *len = (size_t)-1 - (*off / 2); /* an overflowing offset + length */
        *valid = false;
        return;
    }
    *off = size > 0 ? a % size : 0;
    size_t room = size - *off;
    *len = room > 0 ? (size_t)b % (room + 1) : 0;
    if (mode % 8 == 6) *len = room; /* to the end */
    *valid = true;
}

static void grave_add(zthread_t *t, void *h, int kind) {
    if (h == NULL) return;
    t->grave[t->n_grave % NGRAVE] = (zgrave_t){h, kind};
    ++t->n_grave;
}

/* A texture or surface of the thread reads the memory of handle h (its destroy is refused). */
static bool viewed_by(const zthread_t *t, const void *h) {
    for (int i = 0; i < NV; ++i)
        if (t->view[i].h != NULL && t->view[i].mem == h) return true;
    return false;
}

/* ---------------------------------------------------------------- faults */

static const int cuda_errs[] = {cudaErrorUnknown, cudaErrorMemoryAllocation, cudaErrorInvalidValue,
                                cudaErrorNotSupported, cudaErrorNotReady,
                                cudaErrorInvalidResourceHandle, cudaErrorStreamCaptureInvalidated,
                                cudaErrorInsufficientDriver, cudaErrorNoDevice,
                                cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration,
                                cudaErrorNoKernelImageForDevice, cudaErrorPeerAccessAlreadyEnabled,
                                cudaErrorIllegalAddress};
#if CM_HAVE_NCCL
static const int nccl_errs[] = {ncclUnhandledCudaError, ncclSystemError, ncclInternalError,
                                ncclInvalidArgument, ncclInvalidUsage, ncclRemoteError,
                                ncclInProgress};
#else
static const int nccl_errs[] = {0};
#endif
#define N_CUDA_ERRS ((int)(sizeof cuda_errs / sizeof cuda_errs[0]))
#define N_NCCL_ERRS ((int)(sizeof nccl_errs / sizeof nccl_errs[0]))

/* The members an "arm one member" byte names, byte % count: the call table's order when the
 * corpus and the regression inputs were recorded. Kept fixed so that an input keeps failing the
 * call it was recorded with when calls.h changes: a member since taken out of the table arms
 * nothing, a new one is added at the end (of its part). */
static const char *const arm_order[] = {
    "driver_get_version", "runtime_get_version", "get_device_count", "get_device", "set_device",
    "get_device_properties", "device_get_attribute", "device_get_p2p_attribute",
    "device_synchronize", "device_can_access_peer", "device_enable_peer_access",
    "ctx_get_current", "ctx_push_current", "ctx_pop_current", "primary_ctx_retain",
    "primary_ctx_state", "get_last_error", "get_error_name", "get_error_string", "mem_get_info",
    "device_malloc", "device_free", "malloc_async", "mem_pool_create", "mem_pool_destroy",
    "mem_pool_set_attribute", "mem_pool_get_attribute", "mem_pool_trim_to", "mem_pool_set_access",
    "malloc_from_pool_async", "free_async", "host_alloc", "free_host", "host_register",
    "host_unregister", "host_get_device_pointer", "pointer_get_attributes", "memcpy_sync",
    "memcpy_async", "memcpy_2d_async", "memcpy_peer", "memcpy_peer_async", "memset_async",
    "fill_async", "get_symbol_size", "get_symbol_address", "memcpy_to_symbol_async",
    "memcpy_from_symbol_async", "malloc_pitch", "malloc_array", "free_array",
    "memcpy_2d_to_array_async", "memcpy_2d_from_array_async", "create_texture_object",
    "destroy_texture_object", "create_surface_object", "destroy_surface_object", "malloc_managed",
    "mem_prefetch_async", "mem_advise", "priority_range", "stream_create", "stream_destroy",
    "stream_get_device", "stream_synchronize", "stream_query", "stream_wait_event",
    "stream_is_capturing", "stream_get_ctx", "launch_host_func", "event_create", "event_destroy",
    "event_record", "event_synchronize", "event_query", "event_elapsed", "begin_capture",
    "end_capture", "graph_instantiate", "graph_launch", "graph_get_nodes", "graph_destroy",
    "graph_exec_destroy", "func_get_attributes", "func_set_attribute", "func_get_name",
    "launch_kernel_ex",
#if CM_HAVE_NCCL
    "nccl_get_version", "nccl_get_unique_id", "nccl_comm_init_all", "nccl_comm_init_rank",
    "nccl_comm_destroy", "nccl_comm_abort", "nccl_comm_get_async_error", "nccl_get_error_string",
    "nccl_get_last_error", "nccl_group_start", "nccl_group_end", "nccl_all_reduce",
    "nccl_broadcast", "nccl_all_gather",
#endif
};
#define N_ARM ((unsigned)(sizeof arm_order / sizeof arm_order[0]))

static void op_arm(zthread_t *t) {
    unsigned mode = u8(t), a = u8(t), b = u8(t);
    /* a sticky error (the last of the list) only when the byte says so twice */
    int e = (int)(b % (unsigned)N_CUDA_ERRS);
    if (e == N_CUDA_ERRS - 1 && (a & 0xf0) != 0xf0) e = 0;
    t->arm_err = cuda_errs[e];
    t->arm_nccl = nccl_errs[b % (unsigned)N_NCCL_ERRS];
    if (mode & 1) {
        int m = cmf_member_index(arm_order[a % N_ARM]);
        if (m < 0 || !cmf_gated(m)) return;
        t->arm_mode = 1;
        t->arm_member = m;
        t->arm_skip = (mode >> 1) % 4;
        t->arm_count = (mode & 0x80) ? -1 : 1;
        if (cmf_member_is_nccl(m)) t->arm_err = t->arm_nccl;
        if (m == CMF_IDX_ctx_pop_current) t->arm_mode = 0; /* see cmf_gate_enter */
    } else {
        t->arm_mode = 2;
        t->arm_skip = (a % 24);
    }
    note(t, "arm %s member %s skip %ld err %d", t->arm_mode == 1 ? "one" : "any",
         t->arm_mode == 1 ? cmf_member_names[t->arm_member] : "-", t->arm_skip, t->arm_err);
}

static void arm_now(zthread_t *t) {
    /* a sticky error loses a context for the whole process: relax every thread from now */
    if (t->arm_mode != 0 && cm_cuda_error_is_sticky((cudaError_t)t->arm_err)) atomic_store(&cmfz_lost, 1);
    if (t->arm_mode == 1) cmf_arm(t->arm_member, t->arm_skip, t->arm_count, t->arm_err);
    else if (t->arm_mode == 2) cmf_arm_any(t->arm_skip, t->arm_err, t->arm_nccl);
    t->arm_mode = 0;
}

/* ---------------------------------------------------------------- buffers */

static void buf_forget_slot(zthread_t *t, int i) {
    free(t->b[i].data);
    free(t->b[i].known);
    memset(&t->b[i], 0, sizeof t->b[i]);
}

static void buf_destroy(zthread_t *t, int i, int how) {
    zbuf_t *b = &t->b[i];
    cm_status_t st;
    int slot = -1;
    cm_stream_t *s = how ? pick_stream(t, (unsigned)how | 1u, &slot) : NULL;
    /* a texture reads it: refused with CM_ERROR_BUSY, the buffer alive (memspace.h) */
    const bool viewed = viewed_by(t, b->h);
    if (s != NULL) {
        bool match = t->s[slot].ord == b->ord;
        st = CALL(cm_buffer_destroy_on_stream(s, b->h), !match ? A_INV : viewed ? A_BUSY : A_OK);
        if (st == CM_ERROR_INVALID_ARGUMENT && !match) return; /* refused: still alive */
    } else {
        st = CALL(cm_buffer_destroy(b->h), viewed ? A_BUSY : A_OK);
    }
    /* refused before anything was released (a synchronous buffer while the thread captures,
     * a texture over it, or a device scope that cannot be entered): still alive, the destroy
     * may be repeated */
    if (st != CM_OK && cm_buffer_info(b->h, &(cm_buffer_info_t){0}) == CM_OK) return;
    if (viewed)
        fail(t, "a buffer that a texture reads was destroyed (%s): the texture dangles",
             cm_status_name(st));
    /* released whatever the status: the memory freed, kept for later by the library (a free
     * that cannot happen now) or kept by the failed free itself (the simulation's orphan) */
    cm_buffer_info_t info;
    if (cm_buffer_info(b->h, &info) != CM_ERROR_INVALID_ARGUMENT)
        fail(t, "a destroyed buffer (status %s) is still a live handle", cm_status_name(st));
    grave_add(t, b->h, CM__KIND_BUFFER);
    memory_freed(t, b->h);
    buf_forget_slot(t, i);
}

static void op_buf_create(zthread_t *t) {
    unsigned v = u8(t), sz = u16(t), slot_byte = u8(t);
    int i = (int)(slot_byte % NB);
    if (t->b[i].h != NULL) buf_destroy(t, i, 0);
    if (t->b[i].h != NULL) return; /* refused: the slot stays taken */
    int ord = 0;
    cm_device_t *d = pick_dev(t, v, &ord);
    size_t size;
    switch ((v >> 2) % 8) {
    case 0: size = 0; break;
    case 1: size = (size_t)sz % 64u; break;
    case 6: size = (size_t)sz * 8u; break;            /* up to 512 KiB */
    case 7: size = (size_t)(sz % 4u + 1u) << 16;      /* up to 256 KiB: devices of 1 MiB or 256 */
        break;
    default: size = (size_t)sz % 4096u; break;
    }
    int ss = -1;
    cm_stream_t *s = (v & 0x40) ? pick_stream(t, slot_byte | 1u, &ss) : NULL;
    cm_buffer_t *h = NULL;
    cm_status_t st;
    if (s != NULL) {
        bool match = t->s[ss].ord == ord;
        st = CALL(cm_buffer_create_on_stream(s, d, size, &h),
                  !cmf.pools_supported[ord] ? A(CM_ERROR_NOT_SUPPORTED) | (match ? 0 : A_INV)
                  : match                   ? A_OK | A_OOM
                                            : A_INV);
    } else {
        st = CALL(cm_buffer_create_labeled(d, size, (v & 0x80) ? "fuzz" : NULL, &h), A_OK | A_OOM);
    }
    note(t, "buffer create %zu bytes device %d stream %d: %s", size, ord, ss, cm_status_name(st));
    if (!created(t, st, h, "cm_buffer_create")) return;
    zbuf_t *b = &t->b[i];
    b->h = h;
    b->dev = d;
    b->ord = ord;
    b->size = size;
    b->ordered = s != NULL;
    b->on = s;
    b->data = malloc(size ? size : 1);
    b->known = calloc(size ? size : 1, 1);
    if (b->data == NULL || b->known == NULL) abort();
    void *p = NULL; /* unknown bytes: what the simulated memory holds */
    if (size > 0 && cm_buffer_device_ptr(h, &p) == CM_OK && p != NULL) memcpy(b->data, p, size);
    backdoor(t, b);
}

static void op_buf_destroy(zthread_t *t) {
    unsigned v = u8(t), how = u8(t);
    int i = live_buf(t, v);
    if (i < 0) return;
    note(t, "buffer destroy slot %d", i);
    buf_destroy(t, i, (how & 1) ? (int)how : 0);
}

/* Pageable or pinned host memory of n bytes for a copy: a fresh array, or a range of a host
 * buffer (its slot in *hslot). */
static void op_h2d(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t);
    int i = live_buf(t, v);
    if (i < 0) return;
    zbuf_t *b = &t->b[i];
    size_t off, len;
    bool valid;
    pick_range(t, b->size, &off, &len, &valid);
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    if (s != NULL && t->s[ss].ord != b->ord) valid = false;
    int hs = (v & 0x80) ? live_host(t, sv) : -1;
    unsigned char *src = NULL, *tmp = NULL;
    if (hs >= 0 && valid && len <= t->hb[hs].size) {
        src = t->hb[hs].mem; /* pinned: copied directly */
    } else {
        /* zeroed: an invalid copy passes it without filling it (and gcc -O2 says so) */
        tmp = calloc(1, valid && len > 0 ? len : 1);
        if (tmp == NULL) abort();
        if (valid) fill_random(t, tmp, len);
        src = tmp;
        hs = -1;
    }
    cm_status_t st = CALL(cm_buffer_copy_from_host(s, b->h, off, valid ? src : tmp, len),
                          valid ? A_OK : A_INV);
    note(t, "copy_from_host slot %d off %zu len %zu stream %d pinned %d: %s", i, off, len, ss,
         hs >= 0, cm_status_name(st));
    if (st == CM_OK && valid) {
        if (ss >= 0 && t->s[ss].capturing) capture_touch(t, ss, b);
        else model_set(b, off, src, len);
    } else if (st != CM_OK && valid) {
        model_forget(b, off, len);
    }
    if (tmp != NULL && ss >= 0 && t->s[ss].capturing) quarantine(t, tmp); /* the graph reads it */
    else free(tmp);
    if (st == CM_ERROR_INVALID_ARGUMENT && !valid) backdoor(t, b); /* nothing was written */
}

static void op_d2h(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t);
    int i = live_buf(t, v);
    if (i < 0) return;
    zbuf_t *b = &t->b[i];
    size_t off, len;
    bool valid;
    pick_range(t, b->size, &off, &len, &valid);
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    if (s != NULL && t->s[ss].ord != b->ord) valid = false;
    int hs = (v & 0x80) ? live_host(t, sv) : -1;
    unsigned char *dst, *tmp = NULL;
    if (hs >= 0 && valid && len <= t->hb[hs].size) {
        dst = t->hb[hs].mem;
    } else {
        tmp = malloc(valid && len > 0 ? len : 1);
        if (tmp == NULL) abort();
        memset(tmp, 0xa5, valid && len > 0 ? len : 1);
        dst = tmp;
        hs = -1;
    }
    cm_status_t st = CALL(cm_buffer_copy_to_host(s, b->h, off, dst, len), valid ? A_OK : A_INV);
    note(t, "copy_to_host slot %d off %zu len %zu stream %d pinned %d: %s", i, off, len, ss, hs >= 0,
         cm_status_name(st));
    bool queued_in_capture = ss >= 0 && t->s[ss].capturing;
    if (st == CM_OK && valid && !queued_in_capture) compare(t, b, off, dst, len, "copy_to_host");
    if (hs >= 0 && t->hb[hs].size > 0) {
        zhost_t *h = &t->hb[hs];
        if (memcmp(h->mem + len, h->shadow + len, h->size - len) != 0)
            fail(t, "copy_to_host wrote past its %zu bytes into a pinned buffer", len);
        memcpy(h->shadow, h->mem, len); /* the copy's bytes (or what a failed one left) */
        if (queued_in_capture) touch_handle(t, h->h);
    }
    if (tmp != NULL && !valid && tmp[0] != 0xa5) fail(t, "a refused copy_to_host wrote its destination");
    if (tmp != NULL && queued_in_capture) quarantine(t, tmp); /* the graph writes it */
    else free(tmp);
}

/* Pinned host buffer <-> device buffer. */
static void op_pinned(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t), w = u8(t);
    int i = live_buf(t, v), k = live_host(t, w);
    if (i < 0 || k < 0) return;
    zbuf_t *b = &t->b[i];
    zhost_t *h = &t->hb[k];
    size_t boff, blen, hoff, hlen;
    bool bv, hv;
    pick_range(t, b->size, &boff, &blen, &bv);
    pick_range(t, h->size, &hoff, &hlen, &hv);
    size_t len = blen < hlen ? blen : hlen;
    if (!bv) len = blen;
    else if (!hv) len = hlen;
    bool valid = bv && hv;
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    if (s != NULL && t->s[ss].ord != b->ord) valid = false;
    bool cap = ss >= 0 && t->s[ss].capturing;
    cm_status_t st;
    if (v & 1) {
        st = CALL(cm_buffer_copy_from_host_buffer(s, b->h, boff, h->h, hoff, len), valid ? A_OK : A_INV);
        if (st == CM_OK && valid) {
            if (cap) capture_touch(t, ss, b);
            else if (h->size > 0) model_set(b, boff, h->shadow + hoff, len);
        } else if (st != CM_OK && valid) {
            model_forget(b, boff, len);
        }
    } else {
        st = CALL(cm_buffer_copy_to_host_buffer(s, b->h, boff, h->h, hoff, len), valid ? A_OK : A_INV);
        if (h->size == 0) {
            /* nothing to look at */
        } else if (valid) {
            if (st == CM_OK && !cap) compare(t, b, boff, h->mem + hoff, len, "copy_to_host_buffer");
            /* only the range may change (a failed copy may have written part of it) */
            if (memcmp(h->mem, h->shadow, hoff) != 0 ||
                memcmp(h->mem + hoff + len, h->shadow + hoff + len, h->size - hoff - len) != 0)
                fail(t, "copy_to_host_buffer wrote outside its range");
            memcpy(h->shadow + hoff, h->mem + hoff, len);
            if (cap) touch_handle(t, h->h);
        } else if (h->size > 0 && memcmp(h->mem, h->shadow, h->size) != 0) {
            fail(t, "a refused copy_to_host_buffer wrote the host buffer");
        }
    }
    note(t, "pinned %s slot %d/%d len %zu stream %d: %s", (v & 1) ? "h2d" : "d2h", i, k, len, ss,
         cm_status_name(st));
}

static void op_d2d(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), sv = u8(t);
    int i = live_buf(t, v), j = live_buf(t, w);
    if (i < 0 || j < 0) return;
    zbuf_t *d = &t->b[i], *s = &t->b[j];
    size_t doff, dlen, soff, slen;
    bool dv, sv_ok;
    pick_range(t, d->size, &doff, &dlen, &dv);
    pick_range(t, s->size, &soff, &slen, &sv_ok);
    size_t len = dlen < slen ? dlen : slen;
    if (!dv) len = dlen;
    else if (!sv_ok) len = slen;
    bool valid = dv && sv_ok;
    if (valid && i == j && len > 0 && doff < soff + len && soff < doff + len) valid = false;
    int ss = -1;
    cm_stream_t *st_h = pick_stream(t, sv, &ss);
    if (st_h != NULL && t->s[ss].ord != d->ord && t->s[ss].ord != s->ord) valid = false;
    cm_status_t st = CALL(cm_buffer_copy(st_h, d->h, doff, s->h, soff, len), valid ? A_OK : A_INV);
    note(t, "copy slot %d <- %d len %zu stream %d: %s", i, j, len, ss, cm_status_name(st));
    if (st == CM_OK && valid) {
        if (ss >= 0 && t->s[ss].capturing) {
            capture_touch(t, ss, d);
        } else {
            memmove(d->data + doff, s->data + soff, len);
            memmove(d->known + doff, s->known + soff, len);
        }
    } else if (st != CM_OK && valid) {
        model_forget(d, doff, len);
    }
}

static void op_set_fill(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t), val = u8(t), pv = u8(t);
    int i = live_buf(t, v);
    if (i < 0) return;
    zbuf_t *b = &t->b[i];
    size_t off, len;
    bool valid;
    pick_range(t, b->size, &off, &len, &valid);
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    if (s != NULL && t->s[ss].ord != b->ord) valid = false;
    unsigned char pattern[8];
    static const size_t sizes[] = {1, 2, 4, 8, 3, 4, 8, 2};
    size_t pb = sizes[pv % 8];
    for (size_t k = 0; k < 8; ++k) pattern[k] = (unsigned char)(val + k * (pv >> 3));
    cm_status_t st;
    bool stream_ok = s == NULL || t->s[ss].ord == b->ord;
    if (v & 1) {
        int value = (v & 0x80) ? 256 + (int)val : (int)val;
        if (value > 255) valid = false;
        st = CALL(cm_buffer_set(s, b->h, off, len, value), valid ? A_OK : A_INV);
        memset(pattern, val, 8);
        pb = 1;
    } else {
        if (pb != 3 && (pv & 0x40)) { /* aligned on purpose */
            off -= off % pb;
            len -= len % pb;
        }
        valid = pb != 3 && off % pb == 0 && len % pb == 0 && off <= b->size &&
                len <= b->size - off && stream_ok;
        st = CALL(cm_buffer_fill(s, b->h, off, len, pattern, pb), valid ? A_OK : A_INV);
    }
    note(t, "%s slot %d off %zu len %zu pattern %zu stream %d: %s", (v & 1) ? "set" : "fill", i, off,
         len, pb, ss, cm_status_name(st));
    if (st == CM_OK && valid) {
        if (ss >= 0 && t->s[ss].capturing) {
            capture_touch(t, ss, b);
        } else {
            for (size_t k = 0; k < len; ++k) b->data[off + k] = pattern[k % pb];
            memset(b->known + off, 1, len);
        }
    } else if (st != CM_OK && valid) {
        model_forget(b, off, len);
    }
}

/* cm_vector CM_VECTOR_COPY (a cudaMemcpyAsync: no kernel of kernels/). */
static void op_vector_copy(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), sv = u8(t), nb = u16(t), ob = u16(t), xb = u16(t);
    int i = live_buf(t, v), j = live_buf(t, w);
    if (i < 0 || j < 0) return;
    zbuf_t *o = &t->b[i], *x = &t->b[j];
    size_t n = nb % 512, ooff = (size_t)(ob % 256) * 4, xoff = (size_t)(xb % 256) * 4;
    if (v & 0x80) ooff += 2; /* not a multiple of the element */
    bool valid = ooff % 4 == 0 && ooff + n * 4 <= o->size && xoff + n * 4 <= x->size &&
                 o->ord == x->ord;
    if (valid && i == j && ooff != xoff && ooff < xoff + n * 4 && xoff < ooff + n * 4) valid = false;
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    if (s != NULL && t->s[ss].ord != o->ord && valid) valid = false;
    cm_status_t st = CALL(cm_vector(s, CM_VECTOR_COPY, CM_DTYPE_F32, n, NULL, o->h, ooff, x->h, xoff,
                                    NULL, 0),
                          valid ? A_OK : A_INV);
    note(t, "vector copy %zu floats slot %d+%zu <- %d+%zu stream %d: %s", n, i, ooff, j, xoff, ss,
         cm_status_name(st));
    if (st == CM_OK && valid && n > 0) {
        if (ss >= 0 && t->s[ss].capturing) {
            capture_touch(t, ss, o);
        } else {
            memmove(o->data + ooff, x->data + xoff, n * 4);
            memmove(o->known + ooff, x->known + xoff, n * 4);
        }
    } else if (st != CM_OK && valid) {
        model_forget(o, ooff, n * 4);
    }
}

/* ---------------------------------------------------------------- host buffers */

static void host_destroy(zthread_t *t, int k) {
    zhost_t *h = &t->hb[k];
    cm_status_t st = CALL(cm_host_buffer_destroy(h->h), A_OK);
    /* refused before anything was released: still alive (the caller may destroy it again) */
    if (st != CM_OK && cm_host_buffer_info(h->h, &(cm_host_buffer_info_t){0}) == CM_OK) return;
    cm_host_buffer_info_t info;
    if (cm_host_buffer_info(h->h, &info) != CM_ERROR_INVALID_ARGUMENT)
        fail(t, "a destroyed host buffer is still a live handle");
    grave_add(t, h->h, CM__KIND_HOST_BUFFER);
    memory_freed(t, h->h);
    if (h->owned != NULL) {
        if (st == CM_OK) {
            free(h->owned);
        } else { /* maybe still registered with CUDA: never reuse the memory */
            quarantine(t, h->owned);
        }
    }
    free(h->shadow);
    memset(h, 0, sizeof *h);
}

static void op_host(zthread_t *t) {
    unsigned v = u8(t), sz = u16(t), fl = u8(t);
    int k = (int)(v % NH);
    if (t->hb[k].h != NULL) {
        note(t, "host buffer destroy slot %d", k);
        host_destroy(t, k);
        if ((v & 0x80) || t->hb[k].h != NULL) return;
    }
    int ord = 0;
    cm_device_t *d = pick_dev(t, v >> 2, &ord);
    size_t size = (fl & 0x40) ? 0 : (size_t)sz % 8192u;
    zhost_t *h = &t->hb[k];
    cm_host_buffer_t *out = NULL;
    cm_status_t st;
    if (fl & 1) { /* register memory of ours */
        unsigned flags = (fl >> 1) & 7u;
        bool valid = (flags & CM_HOST_BUFFER_WRITE_COMBINED) == 0;
        unsigned char *mem = size > 0 ? malloc(size) : NULL;
        if (size > 0 && mem == NULL) abort();
        /* sometimes register memory that is registered already (another handle's) */
        int other = (fl & 0x80) ? live_host(t, v + 1) : -1;
        unsigned char *p = mem;
        if (other >= 0 && other != k && t->hb[other].registered && t->hb[other].size > 0 && size > 0) {
            p = t->hb[other].mem;
            size = t->hb[other].size;
            valid = false;
        }
        st = CALL(cm_host_buffer_register(d, p, size, flags, &out), valid ? A_OK | A_OOM : A_INV);
        if (st != CM_OK || p != mem) {
            free(mem);
            mem = NULL;
        }
        if (st == CM_OK) {
            h->registered = true;
            h->owned = mem;
        }
    } else {
        unsigned flags = (fl >> 1) & 15u;
        bool valid = flags <= 7u;
        st = CALL(cm_host_buffer_create(d, size, flags, &out), valid ? A_OK | A_OOM : A_INV);
    }
    note(t, "host buffer %s %zu bytes device %d: %s", (fl & 1) ? "register" : "create", size, ord,
         cm_status_name(st));
    if (st != CM_OK) {
        if (out != NULL) fail(t, "a failed host buffer create wrote out");
        return;
    }
    h->h = out;
    h->size = size;
    h->dev = d;
    void *mem = NULL;
    if (CALL(cm_host_buffer_data(out, &mem), A_OK) != CM_OK) return;
    if (size > 0 && mem == NULL) fail(t, "a host buffer of %zu bytes has no memory", size);
    if (h->registered && mem != (void *)h->owned) fail(t, "a registered buffer's data is not its memory");
    h->mem = mem;
    h->shadow = malloc(size ? size : 1);
    if (h->shadow == NULL) abort();
    if (size > 0) {
        fill_random(t, h->mem, size);
        memcpy(h->shadow, h->mem, size);
    }
}

/* ---------------------------------------------------------------- streams */

static void stream_release(zthread_t *t, int i) {
    zstream_t *s = &t->s[i];
    /* buffer.h: a stream-ordered buffer is freed on its stream, which must stay acquired (or
     * wrapped) until then: destroy them first */
    for (int k = 0; k < NB; ++k) {
        if (t->b[k].h == NULL || !t->b[k].ordered || t->b[k].on != s->h) continue;
        buf_destroy(t, k, 0);
        if (t->b[k].h != NULL) return; /* refused: the stream stays acquired for it */
    }
    cm_status_t st = CALL(cm_stream_release(s->h), s->capturing ? A_BUSY : A_OK);
    if (st == CM_ERROR_BUSY) return;
    cm_device_t *dev = NULL;
    if (cm_stream_device(s->h, &dev) != CM_ERROR_INVALID_ARGUMENT)
        fail(t, "a released stream is still a live handle");
    grave_add(t, s->h, CM__KIND_STREAM);
    if (s->user != NULL) cmf_user_stream_destroy(s->user);
    memset(s, 0, sizeof *s);
}

static void op_stream(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    int i = (int)(v % NS);
    zstream_t *s = &t->s[i];
    if (s->h != NULL) {
        if (!s->capturing || (w & 1)) {
            note(t, "stream release slot %d", i);
            stream_release(t, i);
        }
        return;
    }
    int ord = 0;
    cm_device_t *d = pick_dev(t, w, &ord);
    cm_stream_t *h = NULL;
    cm_status_t st;
    if (v & 0x80) { /* wrap a CUDA stream of the application */
        int sord = (w & 0x40) ? 1 - ord : ord;
        cudaStream_t us = (w & 0x20) ? cudaStreamLegacy : cmf_user_stream(sord);
        bool valid = sord == ord && us != cudaStreamLegacy;
        st = CALL(cm_stream_wrap(d, us, &h), valid ? A_OK : A_INV);
        if (st == CM_OK) s->user = us;
        else if (us != cudaStreamLegacy) cmf_user_stream_destroy(us);
    } else {
        int prio = (w & 0x20) ? 7 : (int)((w >> 3) & 1);
        st = CALL(cm_stream_acquire(d, (cm_stream_priority_t)prio, &h),
                  prio <= 1 ? A_OK | A_BUSY : A_INV);
    }
    note(t, "stream %s slot %d device %d: %s", (v & 0x80) ? "wrap" : "acquire", i, ord,
         cm_status_name(st));
    if (st != CM_OK) {
        if (h != NULL) fail(t, "a failed stream acquire/wrap wrote out");
        return;
    }
    s->h = h;
    s->dev = d;
    s->ord = ord;
    cudaStream_t cs = NULL;
    if (CALL(cm_stream_cuda(h, &cs), A_OK) == CM_OK && cmf_obj_device(cs) != ord)
        fail(t, "a stream of device %d is a CUDA stream of device %d", ord, cmf_obj_device(cs));
}

static void host_fn(void *user) {
    ++*(int *)user;
}

static void op_stream_use(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    int i = live_stream(t, v);
    if (i < 0) return;
    zstream_t *s = &t->s[i];
    bool idle = false;
    cm_status_t st = CM_OK;
    switch (w % 5) {
    case 0: st = CALL(cm_stream_synchronize(s->h), A_OK); break;
    case 1: st = CALL(cm_stream_query(s->h, &idle), A_OK); break;
    case 2: {
        int j = live_stream(t, w >> 3);
        bool valid = t->s[j].dev == s->dev;
        st = CALL(cm_stream_wait(s->h, t->s[j].h), valid ? A_OK : A_INV);
        break;
    }
    case 3: {
        int before = t->callbacks;
        st = CALL(cm_stream_host_callback(s->h, host_fn, &t->callbacks), A_OK);
        if (st == CM_OK && t->callbacks != before + 1 && !s->capturing)
            fail(t, "a host callback did not run exactly once");
        break;
    }
    case 4: {
        cm_device_t *d = NULL;
        st = CALL(cm_stream_device(s->h, &d), A_OK);
        if (st == CM_OK && d != s->dev) fail(t, "cm_stream_device names another device object");
        break;
    }
    }
    note(t, "stream use %u slot %d: %s", w % 5, i, cm_status_name(st));
}

/* ---------------------------------------------------------------- events, timers */

static void op_event(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), x = u8(t);
    int i = (int)(v % NE);
    zevent_t *e = &t->e[i];
    cm_status_t st = CM_OK;
    if (e->h == NULL) {
        int ord = 0;
        cm_device_t *d = pick_dev(t, w, &ord);
        int kind = (w & 0x80) ? 5 : (int)((w >> 2) & 1);
        cm_event_t *h = NULL;
        st = CALL(cm_event_acquire(d, (cm_event_kind_t)kind, &h), kind <= 1 ? A_OK : A_INV);
        note(t, "event acquire slot %d: %s", i, cm_status_name(st));
        if (st == CM_OK) *e = (zevent_t){h, d, ord, kind, false};
        return;
    }
    int ss = live_stream(t, x);
    bool done = false;
    float ms = 0.0f;
    switch (w % 6) {
    case 0:
        st = CALL(cm_event_release(e->h), A_OK);
        grave_add(t, e->h, CM__KIND_EVENT);
        memset(e, 0, sizeof *e);
        break;
    case 1:
        if (ss < 0) return;
        st = CALL(cm_event_record(e->h, t->s[ss].h), t->s[ss].ord == e->ord ? A_OK : A_INV);
        if (st == CM_OK) e->recorded = true;
        break;
    case 2:
        if (ss < 0) return;
        st = CALL(cm_stream_wait_event(t->s[ss].h, e->h), t->s[ss].ord == e->ord ? A_OK : A_INV);
        break;
    case 3: st = CALL(cm_event_synchronize(e->h), A_OK); break;
    case 4: st = CALL(cm_event_query(e->h, &done), A_OK); break;
    case 5: {
        int j = (int)((x >> 3) % NE);
        zevent_t *f = &t->e[j];
        if (f->h == NULL) return;
        bool valid = e->kind == 1 && f->kind == 1 && e->recorded && f->recorded && e->ord == f->ord;
        st = CALL(cm_event_elapsed_ms(e->h, f->h, &ms), valid ? A_OK : A_INV);
        break;
    }
    }
    note(t, "event op %u slot %d: %s", w % 6, i, cm_status_name(st));
}

static void op_timer(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    int i = (int)(v % NT);
    ztimer_t *tm = &t->tm[i];
    cm_status_t st = CM_OK;
    float ms = 0.0f;
    if (tm->h == NULL) {
        int ord = 0;
        cm_device_t *d = pick_dev(t, w, &ord);
        cm_timer_t *h = NULL;
        st = CALL(cm_timer_create(d, &h), A_OK);
        if (st == CM_OK) *tm = (ztimer_t){h, d, ord, 0, NULL};
        note(t, "timer create slot %d: %s", i, cm_status_name(st));
        return;
    }
    switch (w % 4) {
    case 0: {
        int ss = live_stream(t, w >> 2);
        if (ss < 0) return;
        st = CALL(cm_timer_start(tm->h, t->s[ss].h), t->s[ss].ord == tm->ord ? A_OK : A_INV);
        if (st == CM_OK) {
            tm->state = 1;
            tm->stream = t->s[ss].h;
        }
        break;
    }
    case 1: {
        /* the stop is recorded on the start's stream: released since, it is refused */
        bool live = false;
        for (int k = 0; k < NS; ++k) live = live || (t->s[k].h != NULL && t->s[k].h == tm->stream);
        st = CALL(cm_timer_stop(tm->h), tm->state == 1 && live ? A_OK : A_INV);
        if (st == CM_OK) tm->state = 2;
        break;
    }
    case 2: st = CALL(cm_timer_elapsed_ms(tm->h, &ms), tm->state == 2 ? A_OK : A_INV); break;
    case 3:
        st = CALL(cm_timer_destroy(tm->h), A_OK);
        grave_add(t, tm->h, CM__KIND_TIMER);
        memset(tm, 0, sizeof *tm);
        break;
    }
    note(t, "timer op %u slot %d: %s", w % 4, i, cm_status_name(st));
}

/* ---------------------------------------------------------------- graphs */

static void graph_destroy(zthread_t *t, int k) {
    cm_status_t st = CALL(cm_graph_destroy(t->g[k].h), A_OK);
    /* refused before anything was destroyed (the device's scope could not be entered): still
     * alive, the destroy may be repeated */
    if (st != CM_OK && cm__handle_obj(t->g[k].h, CM__KIND_GRAPH) != NULL) return;
    grave_add(t, t->g[k].h, CM__KIND_GRAPH);
    memset(&t->g[k], 0, sizeof t->g[k]);
}

static void capture_end(zthread_t *t, int k) {
    zstream_t *s = &t->s[t->cap_slot];
    cm_graph_t *g = NULL;
    cm_status_t st = CALL(cm_graph_capture_end(s->h, &g), A_OK);
    note(t, "capture end slot %d: %s", t->cap_slot, cm_status_name(st));
    /* a failed end may have ended nothing (the device's scope could not be entered): CUDA still
     * captures, and the end may be repeated (a few times: faults may still be armed) until the
     * library says the stream is no longer being captured */
    for (int again = 0; st != CM_OK && cmf_thread_captures() > 0 && again < 3; ++again) {
        if (g != NULL) fail(t, "a failed capture end wrote out");
        st = CALL(cm_graph_capture_end(s->h, &g),
                  A_OK | A(CM_ERROR_INVALID_ARGUMENT) /* ended by the failure after all */);
        note(t, "capture end again slot %d: %s", t->cap_slot, cm_status_name(st));
    }
    /* a fault armed for good (every cuCtxPushCurrent fails) refuses every repetition, as the
     * contract says (nothing ended, the end may be repeated): the last one runs with no fault
     * armed, as a caller's repetition once the cause is gone */
    if (st != CM_OK && cmf_thread_captures() > 0) {
        if (g != NULL) fail(t, "a failed capture end wrote out");
        t->faults += cmf_disarm();
        st = CALL(cm_graph_capture_end(s->h, &g), A_OK | A(CM_ERROR_INVALID_ARGUMENT));
        note(t, "capture end with no fault armed slot %d: %s", t->cap_slot, cm_status_name(st));
    }
    /* a capture the library can no longer end (CUDA still captures, the end is refused) would
     * leave the stream and the thread in capture mode for good (the simulation's is ended here) */
    if (st != CM_OK && cmf_thread_captures() > 0) {
        /* a lost context took its capture with it (the library says so: CM_ERROR_CONTEXT_LOST,
         * then "not being captured"); the simulation's capture is ended here */
        if (!cmf.lost[s->ord])
            fail(t, "a failed cm_graph_capture_end left the capture running and cannot end it");
        (void)cmf_abort_thread_captures();
    }
    s->capturing = false;
    t->cap_slot = -1;
    if (st != CM_OK) {
        if (g != NULL) fail(t, "a failed capture end wrote out");
        t->n_cap_touched = 0;
        return;
    }
    if (t->g[k].h != NULL) graph_destroy(t, k);
    for (int j = 0; j < NG && t->g[k].h != NULL; ++j) /* its destroy was refused: another slot */
        if (t->g[j].h == NULL) k = j;
    if (t->g[k].h != NULL) { /* every slot taken: the new graph goes, with no fault armed */
        t->faults += cmf_disarm();
        CALL(cm_graph_destroy(g), A_OK);
        grave_add(t, g, CM__KIND_GRAPH);
        t->n_cap_touched = 0;
        t->cap_stale = false;
        return;
    }
    t->g[k].h = g;
    t->g[k].ord = s->ord;
    memcpy(t->g[k].touched, t->cap_touched, sizeof t->cap_touched);
    t->g[k].n_touched = t->n_cap_touched;
    t->g[k].stale = t->cap_stale;
    t->n_cap_touched = 0;
    t->cap_stale = false;
}

static void op_graph(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    int k = (int)(w % NG);
    cm_status_t st = CM_OK;
    if (t->cap_slot >= 0) {
        if (v & 1) capture_end(t, k);
        return;
    }
    switch (v % 4) {
    case 0: {
        int i = live_stream(t, w >> 2);
        if (i < 0) return;
        st = CALL(cm_graph_capture_begin(t->s[i].h), A_OK);
        note(t, "capture begin slot %d: %s", i, cm_status_name(st));
        if (st == CM_OK) {
            t->s[i].capturing = true;
            t->cap_slot = i;
            t->n_cap_touched = 0;
            t->cap_stale = false;
        }
        return;
    }
    case 1: {
        if (t->g[k].h == NULL || t->g[k].stale) return;
        int i = live_stream(t, w >> 2);
        if (i < 0) return;
        st = CALL(cm_graph_launch(t->g[k].h, t->s[i].h), t->s[i].ord == t->g[k].ord ? A_OK : A_INV);
        if (st != CM_ERROR_INVALID_ARGUMENT || t->s[i].ord == t->g[k].ord)
            for (int j = 0; j < t->g[k].n_touched; ++j) model_forget_handle(t, t->g[k].touched[j]);
        break;
    }
    case 2: {
        if (t->g[k].h == NULL) return;
        size_t n = 0;
        st = CALL(cm_graph_node_count(t->g[k].h, &n), A_OK);
        break;
    }
    case 3:
        if (t->g[k].h == NULL) return;
        graph_destroy(t, k);
        break;
    }
    note(t, "graph op %u slot %d: %s", v % 4, k, cm_status_name(st));
}

/* ---------------------------------------------------------------- launches */

static void op_launch(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t), gx = u8(t), bx = u16(t), misc = u8(t), nb = u16(t), val = u8(t);
    int i = live_buf(t, v);
    if (i < 0) return;
    zbuf_t *b = &t->b[i];
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    /* a synchronous launch runs on the thread's current device: 0 here */
    if (s == NULL && b->ord != 0) return;
    if (s != NULL && t->s[ss].ord != b->ord) return; /* a kernel of one device on another's memory */
    const void *kernel = (misc & 1) ? CMF_KERNEL_256 : CMF_KERNEL_ADD;
    unsigned maxt = (misc & 1) ? 256 : 1024;
    cm_launch_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.grid.x = gx % 6;
    cfg.grid.y = 1 + ((misc >> 1) & 1);
    cfg.grid.z = 1;
    cfg.block.x = bx % 1400 + ((misc & 0x80) ? 0 : 1);
    cfg.block.y = 1 + ((misc >> 2) & 1);
    cfg.block.z = 1;
    if (misc & 0x10) cfg.dynamic_shared_bytes = 200 * 1024; /* over every limit */
    if (misc & 0x20) {
        cfg.cluster.x = 1 + ((misc >> 6) & 1);
        cfg.cluster.y = 1;
        cfg.cluster.z = 1;
    }
    unsigned long long threads = (unsigned long long)cfg.block.x * cfg.block.y;
    bool valid = cfg.block.x >= 1 && threads <= maxt && cfg.dynamic_shared_bytes == 0;
    if ((misc & 0x20) && cfg.grid.x % cfg.cluster.x != 0) valid = false;
    size_t off = b->size > 0 ? (size_t)nb % b->size : 0;
    size_t n = b->size - off;
    if (n > 0 && (val & 1)) n = (size_t)nb % (n + 1);
    if (n == 0 || b->size == 0) return;
    void *p = NULL;
    if (cm_buffer_device_ptr(b->h, &p) != CM_OK || p == NULL) return;
    unsigned char *ptr = (unsigned char *)p + off;
    unsigned char add = (unsigned char)val;
    void *args[3] = {&ptr, &n, &add};
    if (cfg.grid.x == 0) valid = true; /* an empty launch: nothing checked, nothing run */
    cm_status_t st = CALL(cm_launch(s, kernel, &cfg, args),
                          valid ? A_OK : A(CM_ERROR_INVALID_LAUNCH));
    note(t, "launch grid %u,%u block %u,%u smem %zu cluster %u on slot %d+%zu n %zu stream %d: %s",
         cfg.grid.x, cfg.grid.y, cfg.block.x, cfg.block.y, cfg.dynamic_shared_bytes, cfg.cluster.x, i,
         off, n, ss, cm_status_name(st));
    if (st == CM_OK && cfg.grid.x > 0) {
        unsigned long long total = threads * cfg.grid.x * cfg.grid.y;
        size_t count = (unsigned long long)n < total ? n : (size_t)total;
        if (ss >= 0 && t->s[ss].capturing) {
            capture_touch(t, ss, b);
        } else {
            for (size_t k = 0; k < count; ++k) b->data[off + k] = (unsigned char)(b->data[off + k] + add);
        }
    } else if (st != CM_OK && valid) {
        model_forget(b, off, n);
    }
}

/* ---------------------------------------------------------------- devices, pools, staging */

/* What the thread holds on device object d (the close must refuse while it is not 0). */
static int held_on(zthread_t *t, cm_device_t *d) {
    int n = 0;
    for (int i = 0; i < NB; ++i) n += t->b[i].h != NULL && t->b[i].dev == d;
    for (int i = 0; i < NH; ++i) n += t->hb[i].h != NULL && t->hb[i].dev == d;
    for (int i = 0; i < NS; ++i) n += t->s[i].h != NULL && t->s[i].dev == d;
    for (int i = 0; i < NE; ++i) n += t->e[i].h != NULL && t->e[i].dev == d;
    for (int i = 0; i < NT; ++i) n += t->tm[i].h != NULL && t->tm[i].dev == d;
    for (int i = 0; i < NI; ++i) n += t->img[i].h != NULL && t->img[i].dev == d;
    for (int i = 0; i < NM; ++i) n += t->man[i].h != NULL && t->man[i].dev == d;
    for (int i = 0; i < NV; ++i) n += t->view[i].h != NULL && t->view[i].dev == d;
    n += t->rank_comm != NULL && t->rank_dev == d;
    return n;
}

static int acquired_on(zthread_t *t, cm_device_t *d) {
    int n = 0;
    for (int i = 0; i < NS; ++i) n += t->s[i].h != NULL && t->s[i].dev == d && t->s[i].user == NULL;
    n += t->rank_comm != NULL && t->rank_dev == d;
    return n;
}

static void op_close(zthread_t *t) {
    unsigned v = u8(t);
    int k = (int)(v % 2);
    cm_device_t *d = t->tdev[k];
    if (d == NULL) return;
    bool busy = held_on(t, d) > 0;
    cm_status_t st = CALL(cm_device_close(d), busy ? A_BUSY : A_OK);
    note(t, "device close own %d (busy %d): %s", k, busy, cm_status_name(st));
    if (st == CM_ERROR_BUSY) {
        if (!busy && !relaxed(t)) fail(t, "close refused with nothing held");
        int o = -1;
        if (cm_device_ordinal(d, &o) != CM_OK) fail(t, "a refused close ended the device handle");
        return;
    }
    if (busy) {
        fail(t, "cm_device_close returned %s while the thread holds handles on it", cm_status_name(st));
        return;
    }
    int o = -1;
    /* refused before anything was released (the device's scope could not be entered): still
     * open, the close may be repeated; any other failure closed it (and listed what it could
     * not release: the failed destroys kept those objects, the simulation's orphans) */
    if (st != CM_OK && cm_device_ordinal(d, &o) == CM_OK) {
        if (!relaxed(t))
            fail(t, "a failed close (%s) left the device open without a fault", cm_status_name(st));
        return;
    }
    if (cm_device_ordinal(d, &o) != CM_ERROR_INVALID_ARGUMENT) fail(t, "a closed device is still live");
    grave_add(t, d, CM__KIND_DEVICE);
    t->tdev[k] = NULL;
}

static void op_pool(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), x = u16(t);
    int ord = 0;
    cm_device_t *d = pick_dev(t, v, &ord);
    /* the thread's own device object (only this thread's buffers on it); pick_dev falls back to
     * the shared one when opening it failed */
    bool own = d != NULL && d != t->sdev[0] && d != t->sdev[1];
    cm_status_t st = CM_OK;
    switch (w % 8) {
    case 0:
        st = CALL(cm_device_pool_set_release_threshold(d, (w & 0x80) ? ~0ull : (unsigned long long)x * 256),
                  cmf.pools_supported[ord] ? A_OK : A(CM_ERROR_NOT_SUPPORTED));
        break;
    case 1: st = CALL(cm_device_pool_trim(d, (size_t)x * 64), A_OK); break;
    case 2: {
        cm_memory_report_t r;
        st = CALL(cm_device_memory_report(d, &r), A_OK);
        if (st == CM_OK && own) {
            size_t nb = 0;
            for (int i = 0; i < NB; ++i) nb += t->b[i].h != NULL && t->b[i].dev == d;
            if (r.live_buffers != nb) fail(t, "the memory report counts %zu buffers, the thread holds %zu", r.live_buffers, nb);
        }
        char buf[256];
        if (st == CM_OK) CALL(cm_memory_report_format(&r, buf, (w & 0x40) ? 8 : sizeof buf, NULL), A_OK);
        break;
    }
    case 3: {
        char buf[128];
        size_t len = 0;
        st = CALL(cm_device_leak_report(d, (w & 0x40) ? NULL : buf, (w & 0x40) ? 0 : sizeof buf, &len), A_OK);
        if (st == CM_OK && len == 0) fail(t, "an empty leak report");
        break;
    }
    case 4: {
        cm_stream_pool_config_t c = {(x & 7) * 4u, (x >> 3) & 7u};
        if (x & 0x8000) c.low_streams = 300; /* over CM_STREAM_POOL_MAX */
        unsigned allowed = c.low_streams > CM_STREAM_POOL_MAX ? A_INV
                           : own ? (acquired_on(t, d) > 0 ? A_BUSY : A_OK)
                                 : A_OK | A_BUSY;
        st = CALL(cm_stream_pool_configure(d, (w & 0x40) ? NULL : &c), (w & 0x40) ? (own ? (acquired_on(t, d) > 0 ? A_BUSY : A_OK) : A_OK | A_BUSY) : allowed);
        break;
    }
    case 5: {
        cm_stream_pool_stats_t s;
        st = CALL(cm_stream_pool_stats(d, &s), A_OK);
        if (st == CM_OK && own && s.acquired[0] + s.acquired[1] != (unsigned)acquired_on(t, d))
            fail(t, "pool stats count %u acquired streams, the thread holds %d",
                 s.acquired[0] + s.acquired[1], acquired_on(t, d));
        break;
    }
    case 6: {
        static const size_t chunks[] = {0, 4096, 8192, 3000};
        static const unsigned bufs[] = {0, 2, 3, 9};
        static const unsigned thr[] = {0, 1, 2, 17};
        static const size_t mins[] = {0, 1, 4096, 1 << 20};
        cm_staging_config_t c = {chunks[x & 3], bufs[(x >> 2) & 3], thr[(x >> 4) & 3], mins[(x >> 6) & 3]};
        bool valid = c.chunk_bytes != 3000 && c.buffers != 9 && c.host_threads != 17;
        st = CALL(cm_device_staging_configure(d, &c), valid ? A_OK : A_INV);
        cm_staging_config_t back;
        CALL(cm_device_staging_config(d, &back), A_OK);
        break;
    }
    case 7: {
        size_t f = 0, tot = 0;
        st = CALL(cm_device_memory_info(ord, &f, &tot), A_OK);
        int n = 0;
        CALL(cm_device_count(&n), A_OK);
        cm_device_limits_t lim;
        CALL(cm_device_get_limits(ord, &lim), A_OK);
        CALL(cm_device_get_limits(5, &lim), A_INV);
        CALL(cm_device_synchronize(d), A_OK);
        break;
    }
    }
    note(t, "pool/device op %u device %d own %d: %s", w % 8, ord, own, cm_status_name(st));
}

/* ---------------------------------------------------------------- sets, splits, communicators */

/* A buffer made for one collective goes at its end: a destroy refused under a fault (the
 * device's scope could not be entered: nothing released, the destroy may be repeated) is
 * repeated with no fault armed, else the buffer would keep the set's member busy for good. */
static void set_buffer_destroy(zthread_t *t, cm_buffer_t *b) {
    if (b == NULL) return;
    cm_status_t st = CALL(cm_buffer_destroy(b), A_OK);
    if (st != CM_OK && cm_buffer_info(b, &(cm_buffer_info_t){0}) == CM_OK) {
        t->faults += cmf_disarm();
        st = CALL(cm_buffer_destroy(b), A_OK);
        if (st != CM_OK && cm_buffer_info(b, &(cm_buffer_info_t){0}) == CM_OK) {
            fail(t, "a buffer's destroy, refused under a fault, was refused again with none "
                    "armed (%s)", cm_status_name(st));
            return;
        }
    }
    grave_add(t, b, CM__KIND_BUFFER);
}

static void op_set(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), x = u16(t);
    cm_status_t st = CM_OK;
    if (t->set == NULL) {
        int ords[2] = {0, 1};
        int count = 1 + (int)(v & 1);
        bool valid = true;
        if (v & 0x80) {
            ords[1] = 0; /* twice */
            count = 2;
            valid = false;
        }
        if ((v & 0x60) == 0x60) {
            ords[0] = 7;
            valid = false;
        }
        st = CALL(cm_device_set_open(ords, count, &t->set), valid ? A_OK : A_INV);
        note(t, "set open %d devices: %s", count, cm_status_name(st));
        if (st != CM_OK && t->set != NULL) fail(t, "a failed set open wrote out");
        return;
    }
    int count = 0;
    CALL(cm_device_set_count(t->set, &count), A_OK);
    switch (w % 8) {
    case 0: { /* close */
        bool busy = t->set_comm != NULL || t->split != NULL;
        st = CALL(cm_device_set_close(t->set), busy ? A_BUSY : A_OK);
        /* refused ("nothing was closed"), still open; a CM_ERROR_BUSY of the waits (a fault
         * read as busy: cudaErrorNotReady) comes after the close went ahead (multi.h) */
        const bool open = cm__handle_obj(t->set, CM__KIND_DEVICE_SET) != NULL;
        if (open && st == CM_OK) fail(t, "a set close returned CM_OK and left the set open");
        if (open && st != CM_ERROR_BUSY && st != CM_ERROR_INVALID_ARGUMENT)
            fail(t, "a set close returned %s and left the set open", cm_status_name(st));
        if (!open && st == CM_ERROR_BUSY &&
            strstr(cm_last_error()->message, "nothing was closed") != NULL)
            fail(t, "a set close said that nothing was closed and closed the set");
        if (!open) {
            grave_add(t, t->set, CM__KIND_DEVICE_SET);
            t->set = NULL;
            t->set_broken = false;
        }
        break;
    }
    case 1:
#if CM_HAVE_NCCL
        if (t->set_comm == NULL) st = CALL(cm_comm_create(t->set, &t->set_comm), A_OK);
        else {
            st = CALL(cm_comm_destroy(t->set_comm), A_OK);
            grave_add(t, t->set_comm, CM__KIND_COMM);
            t->set_comm = NULL;
        }
#endif
        break;
    case 2: { /* a collective, on buffers made for it */
#if CM_HAVE_NCCL
        if (t->set_comm == NULL) return;
        cm_buffer_t *send[2] = {NULL, NULL}, *recv[2] = {NULL, NULL};
        size_t count_el = x % 64, esz = 4;
        bool ok = true;
        for (int k = 0; k < count && ok; ++k) {
            cm_device_t *d = NULL;
            CALL(cm_device_set_device(t->set, k, &d), A_OK);
            ok = CALL(cm_buffer_create(d, 256, &send[k]), A_OK | A_OOM) == CM_OK &&
                 CALL(cm_buffer_create(d, 512, &recv[k]), A_OK | A_OOM) == CM_OK;
        }
        if (ok) {
            bool big = (x & 0x8000) != 0;
            size_t n = big ? 1000 : count_el; /* 4000 bytes: larger than the buffers */
            int kind = (int)((x >> 6) % 3);
            bool fits = n * esz <= 256 && (kind != 2 || n * esz * (size_t)count <= 512);
            unsigned allowed = fits ? A_OK : A_INV;
            if (kind == 0)
                st = CALL(cm_comm_all_reduce(t->set_comm, send, recv, n, CM_DTYPE_F32, CM_COMM_SUM), allowed);
            else if (kind == 1)
                st = CALL(cm_comm_broadcast(t->set_comm, send, recv, n, CM_DTYPE_F32, (int)(x >> 8) % count), allowed);
            else
                st = CALL(cm_comm_all_gather(t->set_comm, send, recv, n, CM_DTYPE_F32), allowed);
            CALL(cm_comm_synchronize(t->set_comm), A_OK);
        }
        for (int k = 0; k < count; ++k) {
            set_buffer_destroy(t, send[k]);
            set_buffer_destroy(t, recv[k]);
        }
#endif
        break;
    }
    case 3: {
        cm_peer_info_t m[4];
        st = CALL(cm_device_set_peer_matrix(t->set, 0, m, 4), A_OK);
        int pairs = 0;
        CALL(cm_device_set_enable_peer_access(t->set, &pairs), A_OK);
        break;
    }
    case 4: { /* split create / destroy */
        if (t->split == NULL) {
            size_t n = x % 3000;
            st = CALL(cm_split_create(t->set, n, 4, &t->split), A_OK | A_OOM);
            if (st == CM_OK) {
                t->split_n = n;
                t->split_model = calloc(n * 4 + 1, 1);
                if (t->split_model == NULL) abort();
            }
        } else {
            /* refused while the thread captures (once the library refuses it: cudaFree would
             * be), the split still alive */
            st = CALL(cm_split_destroy(t->split), A_OK | (t->cap_slot >= 0 ? A(CM_ERROR_BUSY) : 0));
            if (st == CM_ERROR_BUSY && cm_split_info(t->split, NULL, NULL, NULL) == CM_OK) break;
            grave_add(t, t->split, CM__KIND_SPLIT);
            t->split = NULL;
            free(t->split_model);
            t->split_model = NULL;
        }
        break;
    }
    case 5: { /* scatter from host, gather back */
        if (t->split == NULL) return;
        size_t n = (x & 0x8000) ? t->split_n + 1 : t->split_n;
        unsigned char *src = malloc(n * 4 + 1);
        if (src == NULL) abort();
        fill_random(t, src, n * 4);
        st = CALL(cm_split_scatter_from_host(t->split, src, n), n == t->split_n ? A_OK : A_INV);
        if (st == CM_OK) {
            unsigned char *back = malloc(n * 4 + 1);
            if (back == NULL) abort();
            if (CALL(cm_split_gather_to_host(t->split, back, n), A_OK) == CM_OK && !relaxed(t) &&
                memcmp(back, src, n * 4) != 0)
                fail(t, "a split gathered back differs from what was scattered (%zu elements)", n);
            free(back);
        }
        free(src);
        break;
    }
    case 6: { /* scatter from / gather into a buffer of the thread */
        if (t->split == NULL) return;
        int i = live_buf(t, x);
        if (i < 0) return;
        zbuf_t *b = &t->b[i];
        size_t off = (size_t)(x >> 8) * 4;
        bool valid = off + t->split_n * 4 <= b->size;
        if (x & 1) {
            st = CALL(cm_split_scatter(t->split, b->h, off), valid ? A_OK : A_INV);
        } else {
            st = CALL(cm_split_gather(t->split, b->h, off), valid ? A_OK : A_INV);
            if (valid) model_forget(b, off, t->split_n * 4);
        }
        break;
    }
    case 7: {
        cm_stream_t *s = NULL;
        CALL(cm_device_set_stream(t->set, (int)(x % 3), &s), x % 3 < (unsigned)count ? A_OK : A_INV);
        st = CALL(cm_device_set_synchronize(t->set), A_OK);
        break;
    }
    }
    note(t, "set op %u: %s", w % 8, cm_status_name(st));
}

static void op_rank_comm(zthread_t *t) {
#if CM_HAVE_NCCL
    unsigned v = u8(t), w = u8(t);
    cm_status_t st = CM_OK;
    if (t->rank_comm == NULL) {
        int ord = 0;
        cm_device_t *d = pick_dev(t, v, &ord);
        cm_comm_id_t id;
        if (CALL(cm_comm_id_create(&id), A_OK) != CM_OK) return;
        char hex[CM_COMM_ID_HEX_SIZE];
        CALL(cm_comm_id_to_hex(&id, hex, sizeof hex), A_OK);
        cm_comm_id_t back;
        if (CALL(cm_comm_id_from_hex(hex, &back), A_OK) == CM_OK && memcmp(&back, &id, sizeof id) != 0)
            fail(t, "a communicator id does not survive its hex text");
        int nranks = (w & 0x80) ? 0 : 1;
        st = CALL(cm_comm_create_rank(d, &id, nranks, 0, &t->rank_comm), nranks == 1 ? A_OK | A_BUSY : A_INV);
        if (st == CM_OK) t->rank_dev = d;
        else if (t->rank_comm != NULL) fail(t, "a failed communicator create wrote out");
    } else if (w & 1) {
        st = CALL(cm_comm_destroy(t->rank_comm), A_OK);
        grave_add(t, t->rank_comm, CM__KIND_COMM);
        t->rank_comm = NULL;
        t->rank_aborted = CM_OK;
        t->rank_dev = NULL;
    } else {
        int nranks = 0, local = 0, first = 0;
        CALL(cm_comm_size(t->rank_comm, &nranks, &local, &first), A_OK);
        cm_stream_t *s = NULL;
        CALL(cm_comm_stream(t->rank_comm, (int)(w >> 1) % 2, &s), (w >> 1) % 2 == 0 ? A_OK : A_INV);
        st = CALL(cm_comm_synchronize(t->rank_comm), A_OK);
    }
    note(t, "rank communicator op: %s", cm_status_name(st));
#else
    (void)t;
#endif
}

/* ---------------------------------------------------------------- memory spaces (memspace.h) */

/* Managed memory on devices 0 and 1 for this input (byte 0: 0x04 and 0x08 take it from 1). */
static int cmfz_managed_ok[2] = {1, 1}, cmfz_concurrent[2] = {1, 1};

static cm_format_t pick_format(unsigned v) {
    return (cm_format_t)(1 + v % 24);
}

static bool img_alive(const zimg_t *m) {
    if (m->array) return cm_array_info(m->h, &(cm_array_info_t){0}) == CM_OK;
    return cm_pitched_info(m->h, &(cm_pitched_info_t){0}) == CM_OK;
}

static bool man_alive(const zman_t *m) {
    return cm_managed_info(m->h, &(cm_managed_info_t){0}) == CM_OK;
}

static bool view_alive(const zview_t *x, unsigned long long *obj) {
    if (x->surface) return cm_surface_object(x->h, obj) == CM_OK;
    return cm_texture_object(x->h, obj) == CM_OK;
}

/* An image's info and its simulated memory against the model. */
static void img_backdoor(zthread_t *t, zimg_t *m) {
    if (m->h == NULL || atomic_load(&cmfz_lost)) return;
    if (m->array) {
        cm_array_info_t info;
        if (CALL(cm_array_info(m->h, &info), A_OK) != CM_OK) return;
        if (info.width != m->width || info.height != m->height || info.format != m->format ||
            info.element_bytes != m->elem || info.flags != m->flags || info.ordinal != m->ord ||
            info.device != m->dev || info.cuda_array == NULL) {
            fail(t, "cm_array_info disagrees with what was created (%zu x %zu %s)", m->width,
                 m->height, cm_format_name(m->format));
            return;
        }
        const cmf_obj_t *o = info.cuda_array;
        if (o->kind != CMF_ARRAY || !o->live || o->device != m->ord ||
            o->row_bytes != m->row_bytes || o->rows != m->height) {
            fail(t, "an array of device %d is not a live simulated array of its size", m->ord);
            return;
        }
        zm_compare(t, &m->m, m->ord, 0, o->data, m->m.size, "array contents");
        return;
    }
    cm_pitched_info_t info;
    if (CALL(cm_pitched_info(m->h, &info), A_OK) != CM_OK) return;
    if (info.width != m->width || info.height != m->height || info.format != m->format ||
        info.element_bytes != m->elem || info.row_bytes != m->row_bytes ||
        info.pitch < m->row_bytes || info.pitch % 32 != 0 ||
        info.bytes != info.pitch * m->height || info.ordinal != m->ord || info.device != m->dev) {
        fail(t, "cm_pitched_info disagrees with what was created (%zu x %zu %s, pitch %zu)",
             m->width, m->height, cm_format_name(m->format), info.pitch);
        return;
    }
    cmf_mem_t kind;
    int d = cmf_alloc_device(info.device_ptr, &kind);
    if (d != m->ord || kind != CMF_MEM_DEV) {
        fail(t, "a pitched buffer of device %d lives in simulated memory of device %d (kind %d)",
             m->ord, d, (int)kind);
        return;
    }
    for (size_t y = 0; y < m->height && !t->failed; ++y)
        zm_compare(t, &m->m, m->ord, y * m->row_bytes,
                   (const unsigned char *)info.device_ptr + y * info.pitch, m->row_bytes,
                   "pitched buffer contents");
}

/* A managed buffer's info and its memory (host-visible) against the model. */
static void man_backdoor(zthread_t *t, zman_t *m) {
    if (m->h == NULL || atomic_load(&cmfz_lost)) return;
    cm_managed_info_t info;
    void *p = NULL;
    if (CALL(cm_managed_info(m->h, &info), A_OK) != CM_OK) return;
    if (CALL(cm_managed_data(m->h, &p), A_OK) != CM_OK) return;
    if (info.bytes != m->size || info.ordinal != m->ord || info.device != m->dev ||
        info.data != p || info.concurrent_access != (cmfz_concurrent[m->ord] != 0) ||
        (m->size > 0) != (p != NULL)) {
        fail(t, "cm_managed_info disagrees with what was created (%zu bytes, device %d)",
             m->size, m->ord);
        return;
    }
    if (p == NULL) return;
    cmf_mem_t kind;
    int d = cmf_alloc_device(p, &kind);
    if (d != m->ord || kind != CMF_MEM_MANAGED) {
        fail(t, "managed memory of device %d is simulated memory of device %d (kind %d)", m->ord,
             d, (int)kind);
        return;
    }
    zm_compare(t, &m->m, m->ord, 0, p, m->size, "managed memory");
}

static void sym_backdoor(zthread_t *t) {
    if (t->sym == NULL || atomic_load(&cmfz_lost)) return;
    for (int d = 0; d < 2; ++d)
        zm_compare(t, &t->symm[d], d, 0, cmf_symbol_data(t->sym, d), SYM_BYTES,
                   "symbol storage");
}

/* The whole image back through the library (a synchronous 2-D copy to host memory). */
static void img_readback(zthread_t *t, zimg_t *m) {
    if (m->h == NULL || atomic_load(&cmfz_lost) || t->cap_slot >= 0) return;
    unsigned char *out = malloc(m->m.size ? m->m.size : 1);
    if (out == NULL) abort();
    cm_place_t src = m->array ? cm_place_array(m->h, 0, 0) : cm_place_pitched(m->h, 0, 0);
    if (CALL(cm_copy_2d(NULL, cm_place_host(out, 0), src, m->width, m->height), A_OK) == CM_OK)
        zm_compare(t, &m->m, m->ord, 0, out, m->m.size, "2-D copy of a whole image");
    free(out);
}

static void img_destroy(zthread_t *t, int i) {
    zimg_t *m = &t->img[i];
    /* a texture or surface reads it: refused with CM_ERROR_BUSY, the memory alive */
    const bool viewed = viewed_by(t, m->h);
    const unsigned allowed = viewed ? A_BUSY : A_OK;
    cm_status_t st = m->array ? CALL(cm_array_destroy(m->h), allowed)
                              : CALL(cm_pitched_destroy(m->h), allowed);
    /* refused before anything was released (a view, a capture, a device scope that cannot be
     * entered): still alive, the destroy may be repeated */
    if (st != CM_OK && img_alive(m)) {
        if (st == CM_ERROR_BUSY && viewed) img_backdoor(t, m);
        return;
    }
    if (viewed)
        fail(t, "a %s that a %s reads was destroyed (%s): the view dangles",
             m->array ? "CUDA array" : "pitched buffer", "texture or surface", cm_status_name(st));
    if (img_alive(m)) fail(t, "a destroyed image is still a live handle");
    grave_add(t, m->h, m->array ? CM__KIND_ARRAY : CM__KIND_PITCHED);
    memory_freed(t, m->h);
    zm_free(&m->m);
    memset(m, 0, sizeof *m);
}

static void man_destroy(zthread_t *t, int i) {
    zman_t *m = &t->man[i];
    cm_status_t st = CALL(cm_managed_destroy(m->h), A_OK);
    if (st != CM_OK && man_alive(m)) return; /* refused (a capture, a scope): still alive */
    if (man_alive(m)) fail(t, "a destroyed managed buffer is still a live handle");
    grave_add(t, m->h, CM__KIND_MANAGED);
    memory_freed(t, m->h);
    zm_free(&m->m);
    memset(m, 0, sizeof *m);
}

static void view_destroy(zthread_t *t, int i) {
    zview_t *x = &t->view[i];
    cm_status_t st = x->surface ? CALL(cm_surface_destroy(x->h), A_OK)
                                : CALL(cm_texture_destroy(x->h), A_OK);
    unsigned long long obj = 0;
    if (st != CM_OK && view_alive(x, &obj)) return; /* refused before anything was released */
    if (view_alive(x, &obj)) fail(t, "a destroyed texture or surface is still a live handle");
    grave_add(t, x->h, x->surface ? CM__KIND_SURFACE : CM__KIND_TEXTURE);
    memset(x, 0, sizeof *x);
}

/* Create a pitched buffer or an array in a free slot (a taken one is destroyed first). */
static void op_image(zthread_t *t) {
    unsigned v = u8(t), wb = u16(t), hb = u8(t), f = u8(t);
    int i = (int)(v % NI);
    zimg_t *m = &t->img[i];
    if (m->h != NULL) {
        note(t, "%s destroy slot %d", m->array ? "array" : "pitched", i);
        img_destroy(t, i);
        if ((v & 0x80) || m->h != NULL) return;
    }
    int ord = 0;
    cm_device_t *d = pick_dev(t, v >> 2, &ord);
    const bool array = (v & 0x10) != 0;
    cm_format_t fmt = pick_format(f);
    size_t width = 1 + wb % 96, height = 1 + hb % 48;
    unsigned flags = array && (v & 0x20) ? (unsigned)CM_ARRAY_SURFACE_LOAD_STORE : 0u;
    if (v & 0x40) { /* out of range on purpose, mostly */
        switch ((f >> 5) & 7) {
        case 0: width = 0; break;
        case 1: height = 0; break;
        case 2: fmt = CM_FORMAT_NONE; break;
        case 3: fmt = (cm_format_t)(25 + (wb & 7)); break;
        case 4: /* over an array's limit; over a pitched buffer's linear-texture limit */
            width = 131073 + (wb & 3);
            height = 1;
            break;
        case 5:
            if (array) {
                flags |= 2u << (wb & 3); /* unknown flag bits */
            } else {
                fmt = CM_FORMAT_F32X4;
                width = SIZE_MAX / 8; /* a row that overflows size_t */
            }
            break;
        case 6: height = array ? 65537 : (size_t)1 << 20; break;
        default:
            width = array ? 131072 : 4096;
            height = 1 + (hb & 3);
            break;
        }
    }
    const size_t elem = cm_format_bytes(fmt);
    bool valid = elem > 0 && width > 0 && height > 0;
    if (array) {
        const bool surf = (flags & CM_ARRAY_SURFACE_LOAD_STORE) != 0;
        const int mw = cmf.attr_val[ord][surf ? cudaDevAttrMaxSurface2DWidth
                                              : cudaDevAttrMaxTexture2DWidth];
        const int mh = cmf.attr_val[ord][surf ? cudaDevAttrMaxSurface2DHeight
                                              : cudaDevAttrMaxTexture2DHeight];
        valid = valid && (flags & ~1u) == 0 && width <= (size_t)mw && height <= (size_t)mh;
    } else {
        valid = valid && width <= SIZE_MAX / elem;
    }
    const char *label = (v & 0x80) ? "fuzz image" : NULL;
    const unsigned allowed = valid ? A_OK | A_OOM : A_INV;
    void *h = NULL;
    cm_status_t st;
    if (array) {
        cm_array_t *a = NULL;
        st = CALL(cm_array_create_at(d, width, height, fmt, flags, &a, label, __FILE__, __LINE__),
                  allowed);
        h = a;
    } else {
        cm_pitched_t *p = NULL;
        st = CALL(cm_pitched_create_at(d, width, height, fmt, &p, label, __FILE__, __LINE__),
                  allowed);
        h = p;
    }
    note(t, "%s create slot %d %zu x %zu %s flags %u device %d: %s", array ? "array" : "pitched",
         i, width, height, cm_format_name(fmt), flags, ord, cm_status_name(st));
    if (!created(t, st, h, array ? "cm_array_create" : "cm_pitched_create")) return;
    m->h = h;
    m->array = array;
    m->dev = d;
    m->ord = ord;
    m->width = width;
    m->height = height;
    m->elem = elem;
    m->row_bytes = width * elem;
    m->format = fmt;
    m->flags = flags;
    if (!valid) { /* accepted although invalid (a failure already): not modelled */
        img_destroy(t, i);
        return;
    }
    zm_alloc(&m->m, m->row_bytes * height);
    img_backdoor(t, m); /* unknown bytes: what the simulated memory holds */
}

static const int locations[8] = {CM_LOCATION_HOST, 0, 1, CM_LOCATION_HOST, 0, 1, 2, -2};

static bool location_ok(int loc) {
    return loc == CM_LOCATION_HOST || (loc >= 0 && loc < 2);
}

/* Managed memory: create, destroy, checked copies, prefetch, advice. */
static void op_managed(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t), w = u8(t), x = u8(t);
    int i = (int)(v % NM);
    zman_t *m = &t->man[i];
    cm_status_t st = CM_OK;
    if (m->h == NULL) {
        unsigned sz = u16(t);
        int ord = 0;
        cm_device_t *d = pick_dev(t, v >> 2, &ord);
        size_t size;
        switch ((w >> 3) % 4) {
        case 0: size = 0; break;
        case 1: size = sz % 64u; break;
        case 3: size = (size_t)(sz % 8u + 1u) << 17; break; /* 128 KiB .. 1 MiB */
        default: size = sz % 8192u; break;
        }
        cm_managed_t *h = NULL;
        st = CALL(cm_managed_create_at(d, size, &h, (w & 1) ? "fuzz managed" : NULL, __FILE__,
                                       __LINE__),
                  cmfz_managed_ok[ord] ? A_OK | A_OOM : A(CM_ERROR_NOT_SUPPORTED));
        note(t, "managed create slot %d %zu bytes device %d: %s", i, size, ord,
             cm_status_name(st));
        if (!created(t, st, h, "cm_managed_create")) return;
        m->h = h;
        m->dev = d;
        m->ord = ord;
        m->size = size;
        zm_alloc(&m->m, size);
        man_backdoor(t, m); /* unknown bytes: what the memory holds */
        return;
    }
    size_t off, len;
    bool valid;
    pick_range(t, m->size, &off, &len, &valid);
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    const bool stream_ok = s == NULL || t->s[ss].ord == m->ord;
    const bool cap = ss >= 0 && t->s[ss].capturing;
    const bool null_host = (x & 0x0f) == 0x0f;
    const unsigned op = w % 6;
    switch (op) {
    case 0:
        note(t, "managed destroy slot %d", i);
        man_destroy(t, i);
        return;
    case 1: { /* host to managed */
        unsigned char *tmp = calloc(1, valid && len > 0 ? len : 1);
        if (tmp == NULL) abort();
        if (valid) fill_random(t, tmp, len);
        const bool ok = valid && stream_ok && !(null_host && len > 0);
        st = CALL(cm_managed_copy_from_host(s, m->h, off, null_host ? NULL : tmp, len),
                  ok ? A_OK : A_INV);
        if (st == CM_OK && ok) {
            if (cap) {
                zm_forget(&m->m, 0, m->size);
                touch_handle(t, m->h);
            } else {
                zm_set(&m->m, off, tmp, len);
            }
        } else if (st != CM_OK && ok) {
            zm_forget(&m->m, off, len);
        }
        if (cap) quarantine(t, tmp); /* the graph reads it */
        else free(tmp);
        break;
    }
    case 2: { /* managed to host */
        unsigned char *tmp = malloc(valid && len > 0 ? len : 1);
        if (tmp == NULL) abort();
        memset(tmp, 0xa5, valid && len > 0 ? len : 1);
        const bool ok = valid && stream_ok && !(null_host && len > 0);
        st = CALL(cm_managed_copy_to_host(s, m->h, off, null_host ? NULL : tmp, len),
                  ok ? A_OK : A_INV);
        if (st == CM_OK && ok && !cap && !null_host)
            zm_compare(t, &m->m, m->ord, off, tmp, len, "managed copy_to_host");
        if (!ok && tmp[0] != 0xa5) fail(t, "a refused managed copy_to_host wrote its destination");
        if (cap) quarantine(t, tmp); /* the graph writes it */
        else free(tmp);
        break;
    }
    case 3: { /* prefetch */
        const int loc = locations[x % 8];
        const bool inv = !valid || !location_ok(loc) || !stream_ok;
        const bool none =
            !cmfz_concurrent[m->ord] || (loc >= 0 && loc < 2 && !cmfz_concurrent[loc]);
        st = CALL(cm_managed_prefetch(s, m->h, off, len, loc),
                  inv ? A_INV : none ? A(CM_ERROR_NOT_SUPPORTED) : A_OK);
        break;
    }
    case 4: { /* advice: 0 and 7 are not a cm_advice_t */
        const int loc = locations[(x >> 3) % 8];
        const int advice = (int)(x % 8);
        const bool uses = advice == 3 || advice == 5 || advice == 6;
        const bool inv = !valid || advice < 1 || advice > 6 || (uses && !location_ok(loc));
        const bool none = (advice == 3 || advice == 5) && loc >= 0 && loc < 2 &&
                          !cmfz_concurrent[loc];
        st = CALL(cm_managed_advise(m->h, off, len, (cm_advice_t)advice, loc),
                  inv ? A_INV : none ? A(CM_ERROR_NOT_SUPPORTED) : A_OK);
        break;
    }
    default: break;
    }
    note(t, "managed op %u slot %d off %zu len %zu stream %d: %s", op, i, off, len, ss,
         cm_status_name(st));
    if (t->cap_slot < 0) man_backdoor(t, m); /* a refused call wrote nothing */
}

/* An image slot other than none, from v on (of a kind: 0 pitched, 1 array, -1 either). */
static int live_img(zthread_t *t, unsigned v, int kind) {
    for (int i = 0; i < NI; ++i) {
        int k = (int)((v + (unsigned)i) % NI);
        if (t->img[k].h != NULL && (kind < 0 || (int)t->img[k].array == kind)) return k;
    }
    return -1;
}

/* A stale handle of a kind (kind2: another one, or -1), its kind in *kind_out; NULL if none. */
static void *grave_pick(const zthread_t *t, int kind, int kind2, unsigned v, int *kind_out) {
    int n = t->n_grave < NGRAVE ? t->n_grave : NGRAVE;
    for (int i = 0; i < n; ++i) {
        const zgrave_t *g = &t->grave[(v + (unsigned)i) % (unsigned)n];
        if (g->kind == kind || g->kind == kind2) {
            *kind_out = g->kind;
            return g->h;
        }
    }
    return NULL;
}

/* A rectangle between host memory (pageable, managed, NULL or device memory given as host
 * memory), pitched buffers and arrays: cm_copy_2d with random corners, sizes and pitches. */
static void op_copy2d(zthread_t *t) {
    unsigned v = u8(t), w = u8(t), sv = u8(t), p = u8(t);
    unsigned rw = u8(t), rh = u8(t), c[4] = {u8(t), u8(t), u8(t), u8(t)};
    bool host[2] = {(v & 1) != 0, (v & 2) != 0}; /* side 0: dst, side 1: src */
    zimg_t *im[2] = {NULL, NULL};
    const void *stale[2] = {NULL, NULL};
    int stale_kind[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
        if (host[k]) continue;
        if ((v & 0x80) && k == (int)((v >> 6) & 1))
            stale[k] = grave_pick(t, CM__KIND_PITCHED, CM__KIND_ARRAY, w, &stale_kind[k]);
        if (stale[k] != NULL) continue;
        int slot = live_img(t, w >> (2 * k), -1);
        if (slot < 0) return;
        im[k] = &t->img[slot];
    }
    /* the rectangle: within every image side (fit) or anywhere */
    size_t W = SIZE_MAX, H = SIZE_MAX;
    for (int k = 0; k < 2; ++k) {
        if (im[k] == NULL) continue;
        if (im[k]->width < W) W = im[k]->width;
        if (im[k]->height < H) H = im[k]->height;
    }
    if (W == SIZE_MAX) W = H = 64;
    const bool fit = (p & 0x80) == 0;
    const size_t width = fit ? rw % (W + 1) : rw % 128, height = fit ? rh % (H + 1) : rh % 64;
    size_t cx[2], cy[2];
    for (int k = 0; k < 2; ++k) {
        const size_t iw = im[k] != NULL ? im[k]->width : 64;
        const size_t ih = im[k] != NULL ? im[k]->height : 64;
        cx[k] = fit && width <= iw ? c[2 * k] % (iw - width + 1) : c[2 * k] % 128;
        cy[k] = fit && height <= ih ? c[2 * k + 1] % (ih - height + 1) : c[2 * k + 1] % 64;
    }
    /* elements of the handle side the library sizes the rows with (dst unless it is host) */
    const int ds = host[0] ? 1 : 0;
    const size_t elem = im[ds] != NULL ? im[ds]->elem : 4;
    const size_t row_bytes = width * elem;
    const bool empty = width == 0 || height == 0;
    size_t hp;
    switch (p & 3) {
    case 0: hp = 0; break; /* rows packed */
    case 1: hp = row_bytes + 8 * ((p >> 2) & 7); break;
    case 2: hp = row_bytes + 64 + ((p >> 2) & 31); break;
    default: hp = row_bytes > 0 ? row_bytes - 1 : 0; break; /* short on purpose */
    }
    const size_t hpe = hp != 0 ? hp : row_bytes;
    const bool hp_short = hp != 0 && hp < row_bytes;
    const size_t need = empty ? 0 : hpe * (height - 1) + row_bytes;
    /* the host side's memory */
    const int hk = (int)((v >> 2) & 3); /* 0, 1 pageable; 2 managed; 3 NULL or device memory */
    zman_t *hm = NULL;
    const void *hptr[2] = {NULL, NULL};
    unsigned char *tmp[2] = {NULL, NULL};
    bool devhost = false;
    for (int k = 0; k < 2; ++k) {
        if (!host[k]) continue;
        if (hk == 2 && !(host[0] && host[1]) && need > 0) {
            for (int j = 0; j < NM && hm == NULL; ++j) {
                zman_t *mm = &t->man[(j + (int)(w % NM)) % NM];
                if (mm->h != NULL && mm->size >= need) hm = mm;
            }
            if (hm != NULL) {
                void *mp = NULL;
                if (cm_managed_data(hm->h, &mp) != CM_OK || mp == NULL) hm = NULL;
                else hptr[k] = mp;
            }
        }
        if (hk == 3 && !(host[0] && host[1])) {
            int b = (p & 0x40) ? -1 : live_buf(t, w);
            void *dp = NULL;
            if (b >= 0 && cm_buffer_device_ptr(t->b[b].h, &dp) == CM_OK && dp != NULL) {
                hptr[k] = dp;
                devhost = true;
            }
            continue; /* NULL, or device memory */
        }
        if (hptr[k] != NULL) continue;
        tmp[k] = malloc(need ? need : 1);
        if (tmp[k] == NULL) abort();
        if (k == 0) memset(tmp[k], 0xa5, need ? need : 1);
        else fill_random(t, tmp[k], need ? need : 1);
        hptr[k] = tmp[k];
    }
    cm_place_t pl[2];
    for (int k = 0; k < 2; ++k) {
        if (host[k]) pl[k] = cm_place_host(hptr[k], hp);
        else if (stale[k] != NULL)
            pl[k] = stale_kind[k] == CM__KIND_ARRAY ? cm_place_array(stale[k], cx[k], cy[k])
                                                     : cm_place_pitched(stale[k], cx[k], cy[k]);
        else if (im[k]->array) pl[k] = cm_place_array(im[k]->h, cx[k], cy[k]);
        else pl[k] = cm_place_pitched(im[k]->h, cx[k], cy[k]);
    }
    bool inv = stale[0] != NULL || stale[1] != NULL || (host[0] && host[1]);
    if (((v >> 4) & 3) == 3) { /* not a place */
        pl[(p >> 5) & 1].kind = (p & 0x10) ? (cm_place_kind_t)7 : CM_PLACE_NONE;
        inv = true;
    }
    bool aa = false;
    if (im[0] != NULL && im[1] != NULL) {
        if (im[0]->elem != im[1]->elem || im[0]->ord != im[1]->ord) inv = true;
        aa = im[0]->array && im[1]->array;
    }
    for (int k = 0; k < 2; ++k) {
        if (im[k] != NULL && (cx[k] > im[k]->width || width > im[k]->width - cx[k] ||
                              cy[k] > im[k]->height || height > im[k]->height - cy[k]))
            inv = true;
        if (host[k] && ((hptr[k] == NULL && !empty) || hp_short)) inv = true;
    }
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    const int ord = im[ds] != NULL ? im[ds]->ord : 0;
    const bool stream_bad = s != NULL && t->s[ss].ord != ord;
    const unsigned allowed = inv ? A_INV : aa ? A(CM_ERROR_NOT_SUPPORTED) : stream_bad ? A_INV
                             : empty ? A_OK : devhost ? A_INV : A_OK;
    const bool ok = allowed == A_OK;
    cm_status_t st = CALL(cm_copy_2d(s, pl[0], pl[1], width, height), allowed);
    note(t, "copy_2d %s <- %s %zu x %zu at (%zu,%zu) <- (%zu,%zu) pitch %zu stream %d: %s",
         host[0] ? "host" : im[0] != NULL ? (im[0]->array ? "array" : "pitched") : "stale",
         host[1] ? "host" : im[1] != NULL ? (im[1]->array ? "array" : "pitched") : "stale",
         width, height, cx[0], cy[0], cx[1], cy[1], hp, ss, cm_status_name(st));
    const bool cap = ss >= 0 && t->s[ss].capturing;
    if (st == CM_OK && ok && !empty && cap) { /* runs at each launch of the graph */
        if (im[0] != NULL) {
            zm_forget(&im[0]->m, 0, im[0]->m.size);
            touch_handle(t, im[0]->h);
        } else if (hm != NULL) {
            zm_forget(&hm->m, 0, hm->size);
            touch_handle(t, hm->h);
        }
    } else if (st == CM_OK && ok && !empty) {
        for (size_t r = 0; r < height; ++r) {
            if (host[1]) { /* host to image */
                size_t o = img_off(im[0], cx[0], cy[0] + r);
                if (hm != NULL) zm_move(&im[0]->m, o, &hm->m, r * hpe, row_bytes);
                else zm_set(&im[0]->m, o, tmp[1] + r * hpe, row_bytes);
            } else if (host[0]) { /* image to host: what arrived, against the model */
                size_t o = img_off(im[1], cx[1], cy[1] + r);
                const unsigned char *got = (const unsigned char *)hptr[0] + r * hpe;
                zm_compare(t, &im[1]->m, im[1]->ord, o, got, row_bytes, "copy_2d to host");
                if (hm != NULL) zm_move(&hm->m, r * hpe, &im[1]->m, o, row_bytes);
                for (size_t b = row_bytes; hm == NULL && r + 1 < height && b < hpe; ++b)
                    if (tmp[0][r * hpe + b] != 0xa5) {
                        fail(t, "copy_2d to host wrote between the rows (byte %zu of row %zu)",
                             b, r);
                        break;
                    }
            } else { /* image to image */
                zm_move(&im[0]->m, img_off(im[0], cx[0], cy[0] + r), &im[1]->m,
                        img_off(im[1], cx[1], cy[1] + r), row_bytes);
            }
        }
        /* a copy within one image between overlapping rectangles: the result is undefined */
        if (im[0] != NULL && im[0] == im[1] && cx[0] < cx[1] + width && cx[1] < cx[0] + width &&
            cy[0] < cy[1] + height && cy[1] < cy[0] + height)
            for (size_t r = 0; r < height; ++r)
                zm_forget(&im[0]->m, img_off(im[0], cx[0], cy[0] + r), row_bytes);
        if (im[0] != NULL) img_backdoor(t, im[0]);
        if (hm != NULL) man_backdoor(t, hm);
    } else if (st != CM_OK && ok) { /* a failure under a fault: the rectangle may be written */
        if (im[0] != NULL) zm_forget(&im[0]->m, 0, im[0]->m.size);
        else if (hm != NULL) zm_forget(&hm->m, 0, hm->size);
    } else if (st != CM_OK) { /* refused: nothing written */
        if (host[0] && tmp[0] != NULL)
            for (size_t b = 0; b < need; ++b)
                if (tmp[0][b] != 0xa5) {
                    fail(t, "a refused copy_2d wrote its host destination (byte %zu)", b);
                    break;
                }
        if (im[0] != NULL && t->cap_slot < 0) img_backdoor(t, im[0]);
        if (hm != NULL && t->cap_slot < 0) man_backdoor(t, hm);
    }
    for (int k = 0; k < 2; ++k) {
        if (tmp[k] == NULL) continue;
        if (cap) quarantine(t, tmp[k]); /* the graph reads / writes it */
        else free(tmp[k]);
    }
}

/* The rules of a texture descriptor (memspace.h), restated: whether cm_texture_create_* must
 * accept it. kind: 0 a buffer's range, 1 a pitched buffer, 2 an array. */
static bool tex_rules_ok(int kind, const cm_texture_desc_t *d, cm_format_t memf, size_t range,
                         uintptr_t base, size_t width, size_t height, size_t pitch, int ord) {
    const int *a = cmf.attr_val[ord];
    const bool aok = (unsigned)d->address_mode <= 3u, fok = (unsigned)d->filter_mode <= 1u;
    const bool rok = (unsigned)d->read_mode <= 1u;
    bool ok = aok && fok && rok;
    cm_format_t f = CM_FORMAT_NONE;
    if (d->format != CM_FORMAT_NONE && cm_format_bytes(d->format) == 0) {
        ok = false;
    } else if (kind == 0) {
        ok = ok && d->format != CM_FORMAT_NONE;
        f = d->format;
    } else {
        f = memf;
        ok = ok && (d->format == CM_FORMAT_NONE || d->format == memf);
    }
    const bool fv = cm_format_bytes(f) > 0;
    const bool integer = cm_format_is_integer(f);
    const size_t bits = fv ? cm_format_bytes(f) / cm_format_channels(f) * 8 : 0;
    if (fv && fok && rok && kind != 0 && d->filter_mode == CM_FILTER_LINEAR && integer &&
        (bits == 32 || d->read_mode != CM_READ_NORMALIZED_FLOAT))
        ok = false; /* filtering gives floats */
    if (fv && rok && d->read_mode == CM_READ_NORMALIZED_FLOAT && integer && bits == 32)
        ok = false;
    if (kind == 0) { /* what CUDA ignores for linear textures is refused */
        if ((fok && d->filter_mode == CM_FILTER_LINEAR) ||
            (aok && d->address_mode != CM_ADDRESS_CLAMP) || d->normalized_coords)
            ok = false;
        if (fv && (range == 0 || range % cm_format_bytes(f) != 0)) ok = false;
        if (fv && range / cm_format_bytes(f) > (size_t)a[cudaDevAttrMaxTexture1DLinearWidth])
            ok = false;
    } else if (aok && !d->normalized_coords &&
               (d->address_mode == CM_ADDRESS_WRAP || d->address_mode == CM_ADDRESS_MIRROR)) {
        ok = false;
    }
    if (kind != 2 && base % (uintptr_t)a[cudaDevAttrTextureAlignment] != 0) ok = false;
    if (kind == 1 && (pitch % (size_t)a[cudaDevAttrTexturePitchAlignment] != 0 ||
                      width > (size_t)a[cudaDevAttrMaxTexture2DLinearWidth] ||
                      height > (size_t)a[cudaDevAttrMaxTexture2DLinearHeight] ||
                      pitch > (size_t)a[cudaDevAttrMaxTexture2DLinearPitch]))
        ok = false;
    if (kind == 2 && (width > (size_t)a[cudaDevAttrMaxTexture2DWidth] ||
                      height > (size_t)a[cudaDevAttrMaxTexture2DHeight]))
        ok = false;
    return ok;
}

/* Textures over a buffer's range, a pitched buffer or an array, surfaces over an array: create
 * (random descriptors, ranges, stale memory) or destroy. */
static void op_view(zthread_t *t) {
    unsigned v = u8(t), d1 = u8(t), d2 = u8(t), r = u8(t), ob = u16(t), lb = u16(t);
    int i = (int)(v % NV);
    zview_t *x = &t->view[i];
    if (x->h != NULL) {
        note(t, "%s destroy slot %d", x->surface ? "surface" : "texture", i);
        view_destroy(t, i);
        return;
    }
    const int kind = (int)((v >> 2) & 3); /* 0 buffer, 1 pitched, 2 array textures; 3 surface */
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    if ((d1 & 0xc0) != 0x40) { /* else every default */
        desc.address_mode = (cm_address_mode_t)(d1 & 3);
        desc.filter_mode = (cm_filter_mode_t)((d1 >> 2) & 1);
        desc.read_mode = (cm_read_mode_t)((d1 >> 3) & 1);
        desc.normalized_coords = (d1 >> 4) & 1;
    }
    if (d1 & 0x80) { /* a field outside its enum */
        switch ((d1 >> 5) & 3) {
        case 0: desc.address_mode = (cm_address_mode_t)(4 + (d2 & 3)); break;
        case 1: desc.filter_mode = (cm_filter_mode_t)2; break;
        case 2: desc.read_mode = (cm_read_mode_t)(2 + (d2 & 1)); break;
        default: break;
        }
    }
    const cm_texture_desc_t *dp = (v & 0x40) ? NULL : &desc;
    const bool want_stale = (v & 0x80) != 0;
    const void *mem = NULL;
    cm_device_t *dev = NULL;
    int ord = 0, skind = 0;
    bool valid = true;
    cm_format_t memf = CM_FORMAT_NONE;
    size_t off = 0, len = 0, width = 0, height = 0, pitch = 0;
    uintptr_t base = 0;
    unsigned flags = 0;
    if (kind == 0) {
        desc.format = (d2 & 4) ? pick_format(d2 >> 3) : (cm_format_t)((d2 >> 3) % 27);
        if (want_stale) mem = grave_pick(t, CM__KIND_BUFFER, -1, r, &skind);
        if (mem == NULL) {
            int b = live_buf(t, r);
            if (b < 0) return;
            zbuf_t *zb = &t->b[b];
            mem = zb->h;
            dev = zb->dev;
            ord = zb->ord;
            const size_t size = zb->size, elem = cm_format_bytes(desc.format);
            off = (r & 0x80) ? ob % (size + 64) : (size_t)(ob % 4) * 512;
            const size_t room = off <= size ? size - off : 0;
            len = (r & 0x40) ? lb % (room + 64) : lb % (room + 1);
            if (!(r & 0x20) && elem > 0) len -= len % elem;
            void *p = NULL;
            if (cm_buffer_device_ptr(zb->h, &p) != CM_OK) return;
            base = (uintptr_t)p + off;
            valid = off <= size && len <= size - off;
        }
    } else {
        if (want_stale)
            mem = grave_pick(t, kind == 1 ? CM__KIND_PITCHED : CM__KIND_ARRAY, -1, r, &skind);
        if (mem == NULL) {
            int k = live_img(t, r, kind == 1 ? 0 : 1);
            if (k < 0) return;
            zimg_t *m = &t->img[k];
            mem = m->h;
            dev = m->dev;
            ord = m->ord;
            memf = m->format;
            width = m->width;
            height = m->height;
            flags = m->flags;
            if (!m->array) {
                cm_pitched_info_t info;
                if (cm_pitched_info(m->h, &info) != CM_OK) return;
                pitch = info.pitch;
                base = (uintptr_t)info.device_ptr;
            }
        }
        if (d2 & 4) desc.format = (d2 & 2) ? memf : CM_FORMAT_NONE; /* the memory's own */
        else desc.format = (cm_format_t)((d2 >> 3) % 27);
    }
    const bool stale = dev == NULL;
    if (stale) valid = false;
    cm_texture_t *tx = NULL;
    cm_surface_t *sf = NULL;
    cm_status_t st;
    if (kind == 3) {
        valid = valid && (flags & CM_ARRAY_SURFACE_LOAD_STORE) != 0;
        st = CALL(cm_surface_create_at(mem, &sf, __FILE__, __LINE__), valid ? A_OK : A_INV);
    } else {
        const cm_texture_desc_t dflt = CM_TEXTURE_DESC_INIT;
        valid = valid && (dp != NULL || kind != 0) &&
                tex_rules_ok(kind, dp != NULL ? dp : &dflt, memf, len, base, width, height, pitch,
                             ord);
        const unsigned allowed = valid ? A_OK : A_INV;
        if (kind == 0)
            st = CALL(cm_texture_create_from_buffer_at(mem, off, len, dp, &tx, __FILE__, __LINE__),
                      allowed);
        else if (kind == 1)
            st = CALL(cm_texture_create_from_pitched_at(mem, dp, &tx, __FILE__, __LINE__), allowed);
        else
            st = CALL(cm_texture_create_from_array_at(mem, dp, &tx, __FILE__, __LINE__), allowed);
    }
    note(t, "%s create slot %d over %s%s (format %d addr %d filter %d read %d norm %d, off %zu "
         "len %zu): %s", kind == 3 ? "surface" : "texture", i,
         kind == 0 ? "buffer" : kind == 1 ? "pitched" : "array", stale ? " (stale)" : "",
         (int)desc.format, (int)desc.address_mode, (int)desc.filter_mode, (int)desc.read_mode,
         (int)desc.normalized_coords, off, len, cm_status_name(st));
    void *h = kind == 3 ? (void *)sf : (void *)tx;
    if (!created(t, st, h, kind == 3 ? "cm_surface_create" : "cm_texture_create")) return;
    *x = (zview_t){h, kind == 3, mem, dev};
    unsigned long long obj = 0;
    if (!view_alive(x, &obj) || obj == 0) {
        fail(t, "a new texture / surface has no CUDA object");
        return;
    }
    const cmf_obj_t *o = (const cmf_obj_t *)(uintptr_t)obj;
    if (o->kind != (kind == 3 ? CMF_SURFACE : CMF_TEXTURE) || !o->live || o->device != ord ||
        (kind == 0 && (o->ref_p != (const unsigned char *)base || o->ref_n != len)))
        fail(t, "a new texture / surface is not the simulated object over its memory");
    if (stale) view_destroy(t, i); /* accepted over a stale handle (a failure already) */
}

static const char not_a_symbol[SYM_BYTES] = "not a symbol";

/* Copies to and from the thread's symbol (on device 0 or 1), its address, and misuse. */
static void op_symbol(zthread_t *t) {
    unsigned v = u8(t), sv = u8(t);
    size_t off, len;
    bool valid;
    pick_range(t, SYM_BYTES, &off, &len, &valid);
    int ord = 0;
    cm_device_t *d = pick_dev(t, v, &ord);
    int ss = -1;
    cm_stream_t *s = pick_stream(t, sv, &ss);
    const bool cap = ss >= 0 && t->s[ss].capturing;
    if (s != NULL && t->s[ss].ord != ord) valid = false;
    const void *sym = t->sym;
    bool null_host = false;
    switch ((v >> 5) & 7) {
    case 5: sym = NULL; break;
    case 6: sym = not_a_symbol; break; /* cudaErrorInvalidSymbol */
    case 7: null_host = true; break;
    default: break;
    }
    if (sym != t->sym || (null_host && len > 0)) valid = false;
    zmodel_t *m = &t->symm[ord];
    const unsigned what = (v >> 2) & 7; /* 0-3 to the symbol, 4-6 from it, 7 its address */
    cm_status_t st;
    if (what == 7) {
        void *p = NULL;
        size_t n = 0;
        st = CALL(cm_symbol_address(d, sym, &p, (v & 2) ? NULL : &n), sym == t->sym ? A_OK : A_INV);
        if (st == CM_OK && (p != cmf_symbol_data(sym, ord) || ((v & 2) == 0 && n != SYM_BYTES)))
            fail(t, "cm_symbol_address gives %p and %zu bytes, the symbol is %p and %d bytes", p, n,
                 (void *)cmf_symbol_data(sym, ord), SYM_BYTES);
        note(t, "symbol address device %d: %s", ord, cm_status_name(st));
        return;
    }
    unsigned char *tmp = malloc(valid && len > 0 ? len : 1);
    if (tmp == NULL) abort();
    memset(tmp, 0xa5, valid && len > 0 ? len : 1);
    if (what < 4) {
        if (valid) fill_random(t, tmp, len);
        st = CALL(cm_symbol_copy_from_host(s, d, sym, off, null_host ? NULL : tmp, len),
                  valid ? A_OK : A_INV);
        if (st == CM_OK && valid) {
            if (cap) {
                zm_forget(m, 0, SYM_BYTES);
                touch_handle(t, t->sym);
            } else {
                zm_set(m, off, tmp, len);
            }
        } else if (st != CM_OK && valid) {
            zm_forget(m, off, len);
        }
    } else {
        st = CALL(cm_symbol_copy_to_host(s, d, sym, off, null_host ? NULL : tmp, len),
                  valid ? A_OK : A_INV);
        if (st == CM_OK && valid && !cap && !null_host)
            zm_compare(t, m, ord, off, tmp, len, "symbol copy_to_host");
        if (!valid && tmp[0] != 0xa5)
            fail(t, "a refused symbol copy_to_host wrote its destination");
    }
    note(t, "symbol %s device %d off %zu len %zu stream %d: %s", what < 4 ? "write" : "read", ord,
         off, len, ss, cm_status_name(st));
    if (cap) quarantine(t, tmp); /* the graph reads / writes it */
    else free(tmp);
    if (t->cap_slot < 0) sym_backdoor(t);
}

/* The calls of a memory-space kind on h, a handle that is not one of that kind (stale, of
 * another kind or never a handle): every one refused. */
static cm_status_t ms_refused_calls(zthread_t *t, void *h, int kind, bool destroy) {
    cm_status_t st = CM_OK;
    unsigned char buf[8] = {0};
    unsigned long long obj = 0;
    switch (kind) {
    case CM__KIND_PITCHED: {
        cm_pitched_info_t info;
        cm_texture_t *tx = NULL;
        st = CALL(cm_pitched_info(h, &info), A_INV);
        CALL(cm_texture_create_from_pitched(h, NULL, &tx), A_INV);
        CALL(cm_copy_2d(NULL, cm_place_host(buf, 0), cm_place_pitched(h, 0, 0), 1, 1), A_INV);
        if (tx != NULL) fail(t, "a refused texture create wrote out");
        if (destroy) st = CALL(cm_pitched_destroy(h), A_INV);
        break;
    }
    case CM__KIND_ARRAY: {
        cm_array_info_t info;
        cm_surface_t *sf = NULL;
        st = CALL(cm_array_info(h, &info), A_INV);
        CALL(cm_surface_create(h, &sf), A_INV);
        CALL(cm_copy_2d(NULL, cm_place_array(h, 0, 0), cm_place_host(buf, 0), 1, 1), A_INV);
        if (sf != NULL) fail(t, "a refused surface create wrote out");
        if (destroy) st = CALL(cm_array_destroy(h), A_INV);
        break;
    }
    case CM__KIND_MANAGED: {
        cm_managed_info_t info;
        st = CALL(cm_managed_info(h, &info), A_INV);
        CALL(cm_managed_prefetch(NULL, h, 0, 0, CM_LOCATION_HOST), A_INV);
        CALL(cm_managed_advise(h, 0, 0, CM_ADVISE_READ_MOSTLY, 0), A_INV);
        CALL(cm_managed_copy_to_host(NULL, h, 0, buf, sizeof buf), A_INV);
        if (destroy) st = CALL(cm_managed_destroy(h), A_INV);
        break;
    }
    case CM__KIND_TEXTURE:
        st = CALL(cm_texture_object(h, &obj), A_INV);
        if (destroy) st = CALL(cm_texture_destroy(h), A_INV);
        break;
    default:
        st = CALL(cm_surface_object(h, &obj), A_INV);
        if (destroy) st = CALL(cm_surface_destroy(h), A_INV);
        break;
    }
    return st;
}

/* Misuse of memspace.h: stale handles, handles of another kind, garbage pointers, NULL
 * arguments, destroy(NULL); and the images read back whole through the library. */
static void op_ms_misuse(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    static char not_a_handle[16];
    cm_status_t st = CM_OK;
    const unsigned what = v % 6;
    switch (what) {
    case 0: { /* a stale handle of a memory-space kind */
        int kind = 0;
        void *h = NULL;
        for (int k = 0; k < 5 && h == NULL; ++k)
            h = grave_pick(t, CM__KIND_PITCHED + (int)((w + (unsigned)k) % 5), -1, w, &kind);
        if (h == NULL) return;
        st = ms_refused_calls(t, h, kind, (v & 0x80) != 0);
        break;
    }
    case 1: { /* a live handle of another kind, refused and still alive */
        unsigned char buf[8];
        switch (w % 5) {
        case 0: {
            int b = live_buf(t, w >> 3);
            if (b < 0) return;
            st = ms_refused_calls(t, t->b[b].h, CM__KIND_PITCHED, (v & 0x80) != 0);
            if (cm_buffer_info(t->b[b].h, &(cm_buffer_info_t){0}) != CM_OK)
                fail(t, "a buffer passed as a pitched buffer is no longer live");
            break;
        }
        case 1: {
            int k = live_img(t, w >> 3, -1);
            if (k < 0) return;
            st = ms_refused_calls(t, t->img[k].h,
                                  t->img[k].array ? CM__KIND_PITCHED : CM__KIND_ARRAY,
                                  (v & 0x80) != 0);
            if (!img_alive(&t->img[k])) fail(t, "an image passed as the other kind is gone");
            break;
        }
        case 2: {
            zman_t *m = &t->man[(w >> 3) % NM];
            if (m->h == NULL) return;
            st = CALL(cm_buffer_info((const cm_buffer_t *)(const void *)m->h,
                                     &(cm_buffer_info_t){0}), A_INV);
            CALL(cm_buffer_copy_to_host(NULL, (const cm_buffer_t *)(const void *)m->h, 0, buf,
                                        sizeof buf), A_INV);
            if (v & 0x80) st = CALL(cm_buffer_destroy((cm_buffer_t *)(void *)m->h), A_INV);
            if (!man_alive(m)) fail(t, "a managed buffer passed as a buffer is gone");
            break;
        }
        case 3: {
            zview_t *x = &t->view[(w >> 3) % NV];
            if (x->h == NULL) return;
            st = ms_refused_calls(t, x->h, x->surface ? CM__KIND_TEXTURE : CM__KIND_SURFACE,
                                  (v & 0x80) != 0);
            unsigned long long obj = 0;
            if (!view_alive(x, &obj)) fail(t, "a view passed as the other view kind is gone");
            break;
        }
        default: {
            int k = live_img(t, w >> 3, -1);
            if (k < 0) return;
            st = ms_refused_calls(t, t->img[k].h, CM__KIND_MANAGED, (v & 0x80) != 0);
            if (!img_alive(&t->img[k])) fail(t, "an image passed as managed memory is gone");
            break;
        }
        }
        break;
    }
    case 2: { /* never a handle */
        void *h = (w & 1) ? (void *)not_a_handle : (void *)(uintptr_t)(0x1000u + w);
        st = ms_refused_calls(t, h, CM__KIND_PITCHED + (int)((w >> 1) % 5), (v & 0x80) != 0);
        break;
    }
    case 3: { /* NULL arguments and places that are none */
        unsigned char buf[8] = {0};
        cm_device_t *d = t->sdev[w & 1];
        int dk = 0;
        void *closed = grave_pick(t, CM__KIND_DEVICE, -1, w, &dk);
        st = CALL(cm_pitched_create(d, 4, 4, CM_FORMAT_U8, NULL), A_INV);
        CALL(cm_array_create(d, 4, 4, CM_FORMAT_U8, 0, NULL), A_INV);
        CALL(cm_managed_create(d, 16, NULL), A_INV);
        CALL(cm_symbol_address(d, NULL, NULL, NULL), A_INV);
        CALL(cm_symbol_copy_from_host(NULL, NULL, t->sym, 0, buf, 1), A_INV);
        CALL(cm_copy_2d(NULL, cm_place_host(buf, 0), cm_place_host(buf, 0), 1, 1), A_INV);
        CALL(cm_copy_2d(NULL, (cm_place_t){0}, (cm_place_t){0}, 1, 1), A_INV);
        if (closed != NULL) { /* a closed device object */
            cm_pitched_t *p = NULL;
            cm_managed_t *m = NULL;
            CALL(cm_pitched_create(closed, 4, 4, CM_FORMAT_U8, &p), A_INV);
            CALL(cm_managed_create(closed, 16, &m), A_INV);
            CALL(cm_symbol_copy_to_host(NULL, closed, t->sym, 0, buf, 1), A_INV);
            if (p != NULL || m != NULL) fail(t, "a create on a closed device wrote out");
        }
        int k = live_img(t, w >> 1, -1);
        if (k >= 0 && t->img[k].array) CALL(cm_array_info(t->img[k].h, NULL), A_INV);
        else if (k >= 0) CALL(cm_pitched_info(t->img[k].h, NULL), A_INV);
        zman_t *m = &t->man[(w >> 1) % NM];
        if (m->h != NULL) CALL(cm_managed_data(m->h, NULL), A_INV);
        zview_t *x = &t->view[(w >> 1) % NV];
        if (x->h != NULL && x->surface) CALL(cm_surface_object(x->h, NULL), A_INV);
        else if (x->h != NULL) CALL(cm_texture_object(x->h, NULL), A_INV);
        break;
    }
    case 4: /* NULL is a no-op for every destroy */
        st = CALL(cm_pitched_destroy(NULL), A_OK);
        CALL(cm_array_destroy(NULL), A_OK);
        CALL(cm_managed_destroy(NULL), A_OK);
        CALL(cm_texture_destroy(NULL), A_OK);
        CALL(cm_surface_destroy(NULL), A_OK);
        break;
    default: /* an image back through the library */
        for (int k = 0; k < NI; ++k)
            if (((w >> k) & 1) && t->img[k].h != NULL) img_readback(t, &t->img[k]);
        break;
    }
    note(t, "memspace misuse %u: %s", what, cm_status_name(st));
}

/* Opcodes 141, 161, 181, 201, 221, 241 (op % 20 == 1 with bit 0x80). */
static void op_memspace(zthread_t *t, unsigned op) {
    switch ((op - 141) / 20) {
    case 0: op_image(t); break;
    case 1: op_managed(t); break;
    case 2: op_copy2d(t); break;
    case 3: op_view(t); break;
    case 4: op_symbol(t); break;
    default: op_ms_misuse(t); break;
    }
}

/* Every memory-space handle of the thread against the model; stale ones refused. */
static void ms_sweep(zthread_t *t) {
    for (int i = 0; i < NI; ++i) img_backdoor(t, &t->img[i]);
    for (int i = 0; i < NM; ++i) man_backdoor(t, &t->man[i]);
    for (int i = 0; i < NV; ++i) {
        unsigned long long obj = 0;
        if (t->view[i].h != NULL && (!view_alive(&t->view[i], &obj) || obj == 0))
            fail(t, "a live texture or surface has no object");
    }
    sym_backdoor(t);
    for (int i = 0; i < (t->n_grave < NGRAVE ? t->n_grave : NGRAVE); ++i) {
        const zgrave_t g = t->grave[i];
        unsigned long long obj = 0;
        cm_pitched_info_t pi;
        cm_array_info_t ai;
        cm_managed_info_t mi;
        bool live = g.kind == CM__KIND_PITCHED ? cm_pitched_info(g.h, &pi) == CM_OK
                  : g.kind == CM__KIND_ARRAY   ? cm_array_info(g.h, &ai) == CM_OK
                  : g.kind == CM__KIND_MANAGED ? cm_managed_info(g.h, &mi) == CM_OK
                  : g.kind == CM__KIND_TEXTURE ? cm_texture_object(g.h, &obj) == CM_OK
                  : g.kind == CM__KIND_SURFACE ? cm_surface_object(g.h, &obj) == CM_OK
                                               : false;
        if (live) fail(t, "a destroyed handle of kind %d works again", g.kind);
    }
}

/* ---------------------------------------------------------------- misuse */

static void op_misuse(zthread_t *t) {
    unsigned v = u8(t), w = u8(t);
    static char not_a_handle[16];
    void *h;
    int kind;
    if (v % 3 == 0 && t->n_grave > 0) { /* a stale handle of its own kind */
        zgrave_t g = t->grave[(w % (unsigned)(t->n_grave < NGRAVE ? t->n_grave : NGRAVE))];
        h = g.h;
        kind = g.kind;
    } else if (v % 3 == 1) { /* a live handle of another kind */
        int i = live_stream(t, w);
        if (i < 0) return;
        h = t->s[i].h;
        kind = CM__KIND_BUFFER;
    } else { /* never a handle */
        h = (w & 1) ? (void *)not_a_handle : (void *)(uintptr_t)(0x1000u + w);
        kind = (int)(w % 10) + 1;
    }
    cm_status_t st = CM_OK;
    switch (kind) {
    case CM__KIND_DEVICE: {
        int o = 0;
        st = CALL(cm_device_ordinal(h, &o), A_INV);
        if (v & 0x80) st = CALL(cm_device_close(h), A_INV);
        break;
    }
    case CM__KIND_BUFFER: {
        cm_buffer_info_t info;
        st = CALL(cm_buffer_info(h, &info), A_INV);
        if (v & 0x80) st = CALL(cm_buffer_destroy(h), A_INV);
        unsigned char tmp[8];
        CALL(cm_buffer_copy_to_host(NULL, h, 0, tmp, sizeof tmp), A_INV);
        break;
    }
    case CM__KIND_HOST_BUFFER: {
        void *p = NULL;
        st = CALL(cm_host_buffer_data(h, &p), A_INV);
        if (v & 0x80) st = CALL(cm_host_buffer_destroy(h), A_INV);
        break;
    }
    case CM__KIND_STREAM:
        st = CALL(cm_stream_synchronize(h), A_INV);
        if (v & 0x80) st = CALL(cm_stream_release(h), A_INV);
        break;
    case CM__KIND_EVENT: {
        bool done = false;
        st = CALL(cm_event_query(h, &done), A_INV);
        if (v & 0x80) st = CALL(cm_event_release(h), A_INV);
        break;
    }
    case CM__KIND_TIMER:
        st = CALL(cm_timer_stop(h), A_INV);
        if (v & 0x80) st = CALL(cm_timer_destroy(h), A_INV);
        break;
    case CM__KIND_GRAPH: {
        size_t n = 0;
        st = CALL(cm_graph_node_count(h, &n), A_INV);
        if (v & 0x80) st = CALL(cm_graph_destroy(h), A_INV);
        break;
    }
    case CM__KIND_DEVICE_SET: {
        int n = 0;
        st = CALL(cm_device_set_count(h, &n), A_INV);
        if (v & 0x80) st = CALL(cm_device_set_close(h), A_INV);
        break;
    }
    case CM__KIND_SPLIT: {
        size_t n = 0;
        st = CALL(cm_split_info(h, &n, NULL, NULL), A_INV);
        if (v & 0x80) st = CALL(cm_split_destroy(h), A_INV);
        break;
    }
    case CM__KIND_PITCHED: case CM__KIND_ARRAY: case CM__KIND_MANAGED: case CM__KIND_TEXTURE:
    case CM__KIND_SURFACE: /* stale handles of memspace.h (the grave holds them too) */
        st = ms_refused_calls(t, h, kind, (v & 0x80) != 0);
        break;
    default: {
#if CM_HAVE_NCCL
        int n = 0;
        st = CALL(cm_comm_size(h, &n, NULL, NULL), A_INV);
        if (v & 0x80) st = CALL(cm_comm_destroy(h), A_INV);
#endif
        break;
    }
    }
    /* NULL is a no-op for every destroy and release */
    CALL(cm_buffer_destroy(NULL), A_OK);
    CALL(cm_stream_release(NULL), A_OK);
    CALL(cm_device_close(NULL), A_OK);
    note(t, "misuse kind %d: %s", kind, cm_status_name(st));
}

/* ---------------------------------------------------------------- sweeps, teardown */

static void sweep(zthread_t *t) {
    for (int i = 0; i < NB; ++i) {
        zbuf_t *b = &t->b[i];
        if (b->h == NULL) continue;
        cm_buffer_info_t info;
        if (CALL(cm_buffer_info(b->h, &info), A_OK) != CM_OK) continue;
        if (info.bytes != b->size || info.ordinal != b->ord || info.device != b->dev ||
            info.stream_ordered != b->ordered)
            fail(t, "cm_buffer_info disagrees with what was created (slot %d)", i);
        backdoor(t, b);
    }
    for (int k = 0; k < NH; ++k) {
        zhost_t *h = &t->hb[k];
        if (h->h == NULL) continue;
        cm_host_buffer_info_t info;
        if (CALL(cm_host_buffer_info(h->h, &info), A_OK) != CM_OK) continue;
        if (info.bytes != h->size || info.data != (void *)h->mem || info.registered != h->registered)
            fail(t, "cm_host_buffer_info disagrees with what was created (slot %d)", k);
        if (h->size > 0 && memcmp(h->mem, h->shadow, h->size) != 0)
            fail(t, "pinned host buffer %d changed behind the thread's back", k);
    }
    for (int i = 0; i < NS; ++i) {
        if (t->s[i].h == NULL) continue;
        cm_device_t *d = NULL;
        if (CALL(cm_stream_device(t->s[i].h, &d), A_OK) == CM_OK && d != t->s[i].dev)
            fail(t, "a stream names another device object");
    }
    for (int i = 0; i < (t->n_grave < NGRAVE ? t->n_grave : NGRAVE); ++i) {
        zgrave_t g = t->grave[i];
        bool live = g.kind == CM__KIND_STREAM ? cm_stream_device(g.h, &(cm_device_t *){NULL}) == CM_OK
                    : g.kind == CM__KIND_BUFFER ? cm_buffer_device_ptr(g.h, &(void *){NULL}) == CM_OK
                                               : false;
        if (live) fail(t, "a released handle of kind %d works again", g.kind);
    }
    ms_sweep(t);
}

static void teardown(zthread_t *t) {
    cmf_disarm();
    t->arm_mode = 0;
    if (t->cap_slot >= 0) capture_end(t, 0);
    for (int k = 0; k < NG; ++k)
        if (t->g[k].h != NULL) graph_destroy(t, k);
    for (int i = 0; i < NT; ++i)
        if (t->tm[i].h != NULL) CALL(cm_timer_destroy(t->tm[i].h), A_OK);
    for (int i = 0; i < NE; ++i)
        if (t->e[i].h != NULL) CALL(cm_event_release(t->e[i].h), A_OK);
    /* textures and surfaces before the memory they read */
    for (int i = 0; i < NV; ++i)
        if (t->view[i].h != NULL) view_destroy(t, i);
    sweep(t);
    for (int i = 0; i < NB; ++i) {
        if (t->b[i].h == NULL) continue;
        backdoor(t, &t->b[i]);
        /* and once through the library */
        if (t->b[i].size > 0 && !atomic_load(&cmfz_lost)) {
            unsigned char *out = malloc(t->b[i].size);
            if (out == NULL) abort();
            if (CALL(cm_buffer_copy_to_host(NULL, t->b[i].h, 0, out, t->b[i].size), A_OK) == CM_OK)
                compare(t, &t->b[i], 0, out, t->b[i].size, "final copy_to_host");
            free(out);
        }
        buf_destroy(t, i, 0);
    }
    for (int k = 0; k < NH; ++k)
        if (t->hb[k].h != NULL) host_destroy(t, k);
    for (int i = 0; i < NI; ++i) {
        if (t->img[i].h == NULL) continue;
        img_readback(t, &t->img[i]);
        img_destroy(t, i);
    }
    for (int i = 0; i < NM; ++i) {
        zman_t *m = &t->man[i];
        if (m->h == NULL) continue;
        /* once through the library */
        if (m->size > 0 && !atomic_load(&cmfz_lost)) {
            unsigned char *out = malloc(m->size);
            if (out == NULL) abort();
            if (CALL(cm_managed_copy_to_host(NULL, m->h, 0, out, m->size), A_OK) == CM_OK)
                zm_compare(t, &m->m, m->ord, 0, out, m->size, "final managed copy_to_host");
            free(out);
        }
        man_destroy(t, i);
    }
    /* whatever refused its destroy (it failed already): its model goes */
    for (int i = 0; i < NI; ++i) zm_free(&t->img[i].m);
    for (int i = 0; i < NM; ++i) zm_free(&t->man[i].m);
#if CM_HAVE_NCCL
    if (t->rank_comm != NULL) CALL(cm_comm_destroy(t->rank_comm), A_OK);
    if (t->set_comm != NULL) CALL(cm_comm_destroy(t->set_comm), A_OK);
#endif
    if (t->split != NULL) CALL(cm_split_destroy(t->split), A_OK);
    free(t->split_model);
    if (t->set != NULL) CALL(cm_device_set_close(t->set), A_OK);
    for (int i = 0; i < NS; ++i)
        if (t->s[i].h != NULL) stream_release(t, i);
    for (int k = 0; k < 2; ++k)
        if (t->tdev[k] != NULL) CALL(cm_device_close(t->tdev[k]), A_OK);
    for (size_t q = 0; q < t->n_quarantine; ++q) free(t->quarantine[q]);
    free(t->quarantine);
}

/* ---------------------------------------------------------------- the run */

static void run_ops(zthread_t *t) {
    t->cap_slot = -1;
    while (t->pos < t->len && !t->failed) {
        unsigned op = u8(t);
        t->fault_now = false;
        if (op % 20 != 19) arm_now(t);
        switch (op % 20) {
        case 0: op_buf_create(t); break;
        case 1: if (op & 0x80) op_memspace(t, op); else op_buf_create(t); break;
        case 2: op_buf_destroy(t); break;
        case 3: op_h2d(t); break;
        case 4: op_d2h(t); break;
        case 5: op_pinned(t); break;
        case 6: op_d2d(t); break;
        case 7: op_set_fill(t); break;
        case 8: op_host(t); break;
        case 9: op_stream(t); break;
        case 10: op_stream_use(t); break;
        case 11: op_event(t); break;
        case 12: op_timer(t); break;
        case 13: op_graph(t); break;
        case 14: op_launch(t); break;
        case 15: op_pool(t); break;
        case 16: if (op & 0x80) op_close(t); else op_vector_copy(t); break;
        case 17: if (op & 0x80) op_set(t); else op_rank_comm(t); break;
        case 18: op_misuse(t); break;
        case 19: op_arm(t); break;
        }
        t->faults += cmf_disarm();
        if (t->n_ops++ % 16 == 15 && t->cap_slot < 0) sweep(t);
    }
    /* also after a failure (the first reason is kept): the next input starts from nothing */
    teardown(t);
}

static void *thread_main(void *arg) {
    run_ops(arg);
    return NULL;
}

static zthread_t threads[MAX_THREADS];

int cmfz_run(const uint8_t *data, size_t size, cmfz_result_t *out) {
    memset(out, 0, sizeof *out);
    atomic_fetch_add(&cmfz_inputs_all, 1);
    if (size == 0) return 0;
    if (cmfz_verbose < 0) cmfz_verbose = getenv("CMFZ_VERBOSE") != NULL;
    if (cmfz_strict < 0) {
        /* CMFZ_STRICT=1: every known issue fails (none is tolerated at present) */
        const char *v = getenv("CMFZ_STRICT");
        cmfz_strict = v == NULL || v[0] == '\0' || strcmp(v, "0") == 0 ? 0 : 1;
    }
    cmf_trace_calls = getenv("CMFZ_TRACE_CUDA") != NULL;
    const unsigned head = data[0];
    const int nthreads = 1 + (int)((head & 3) % 3);
    size_t mem = (size_t)1 << 20;
    if (head & 0x40) mem = (size_t)256 << 10; /* small devices: out of memory is common */
    cmf_install(2, mem);
    if (head & 0x20) cmf.pools_supported[1] = 0; /* device 1 without memory pools */
    cmfz_managed_ok[1] = !(head & 0x04);
    cmfz_concurrent[1] = !(head & 0x08);
    if (head & 0x04) cmf_set_attr(1, cudaDevAttrManagedMemory, 0);
    if (head & 0x08) cmf_set_attr(1, cudaDevAttrConcurrentManagedAccess, 0);
    atomic_store(&cmfz_lost, 0);
    cm_sync_mode_set(nthreads == 1 && (head & 0x80));

    cm_device_t *sdev[2] = {NULL, NULL};
    int rc = 0;
    for (int d = 0; d < 2; ++d) {
        if (cm_device_open(d, &sdev[d]) != CM_OK) {
            snprintf(out->why, sizeof out->why, "cm_device_open(%d) failed: %s", d, cm_last_error()->message);
            rc = 1;
            continue;
        }
        /* small staging on the shared devices (their defaults are 8 MiB chunks from 1 MiB up):
         * pageable copies of a few KiB are staged, in parallel with a worker thread */
        const cm_staging_config_t sc = {4096, 3, 2, 8192};
        if (!(head & 0x10) && cm_device_staging_configure(sdev[d], &sc) != CM_OK) {
            snprintf(out->why, sizeof out->why, "cm_device_staging_configure failed: %s",
                     cm_last_error()->message);
            rc = 1;
        }
    }
    /* deal the operations to the threads: operation k to thread k % nthreads (an operation is
     * its opcode and a fixed number of argument bytes: 12, the most any operation reads) */
    for (int k = 0; k < nthreads; ++k) {
        zthread_t *t = &threads[k];
        memset(t, 0, sizeof *t);
        t->id = k;
        t->sdev[0] = sdev[0];
        t->sdev[1] = sdev[1];
        t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)k << 32) ^ size;
        t->sym = cmf_symbol(SYM_BYTES); /* the thread's own, zeroed on both devices */
        for (int d = 0; d < 2; ++d) {
            t->symm[d] = (zmodel_t){t->sym_data[d], t->sym_known[d], SYM_BYTES};
            memset(t->sym_known[d], 1, SYM_BYTES);
        }
    }
    size_t pos = 1;
    for (int op = 0; pos < size && op < MAX_OPS * nthreads; ++op) {
        zthread_t *t = &threads[op % nthreads];
        size_t n = size - pos < 12 ? size - pos : 12;
        if (t->len + 12 > sizeof t->prog) break;
        memcpy(t->prog + t->len, data + pos, n);
        memset(t->prog + t->len + n, 0, 12 - n);
        t->len += 12;
        pos += n;
    }
    if (rc == 0) {
        if (nthreads == 1) {
            run_ops(&threads[0]);
        } else {
            pthread_t th[MAX_THREADS];
            for (int k = 0; k < nthreads; ++k)
                if (pthread_create(&th[k], NULL, thread_main, &threads[k]) != 0) abort();
            for (int k = 0; k < nthreads; ++k) pthread_join(th[k], NULL);
        }
    }
    for (int k = 0; k < nthreads; ++k) {
        zthread_t *t = &threads[k];
        out->calls += t->calls;
        out->faults += (unsigned long)t->faults;
        if (t->failed && rc == 0) {
            rc = 1;
            size_t len = (size_t)snprintf(out->why, sizeof out->why, "thread %d of %d: %s\nlast operations:\n", k,
                                          nthreads, t->why);
            int first = t->n_trace > TRACE ? t->n_trace - TRACE : 0;
            for (int i = first; i < t->n_trace && len < sizeof out->why; ++i)
                len += (size_t)snprintf(out->why + len, sizeof out->why - len, "  %s\n", t->trace[i % TRACE]);
        }
    }
    cm_sync_mode_set(false);
    /* the shared devices close without a leak report */
    for (int d = 0; d < 2; ++d) {
        if (sdev[d] == NULL) continue;
        cm_status_t st = cm_device_close(sdev[d]);
        if (st != CM_OK && rc == 0 && !(st == CM_ERROR_CONTEXT_LOST && atomic_load(&cmfz_lost))) {
            rc = 1;
            snprintf(out->why, sizeof out->why, "closing shared device %d: %s: %s", d, cm_status_name(st),
                     cm_last_error()->message);
        }
    }
    if (rc == 0) {
        for (int k = 1; k < CM__KIND_COUNT; ++k) {
            size_t live = cm__handle_live_count((cm__kind_t)k);
            if (live != 0) {
                rc = 1;
                snprintf(out->why, sizeof out->why, "%zu live %s handle(s) after everything was released",
                         live, cm__kind_name((cm__kind_t)k));
                break;
            }
        }
    }
    char what[256];
    int left = cmf_outstanding(what, sizeof what);
    if (rc == 0 && left != 0) {
        rc = 1;
        snprintf(out->why, sizeof out->why, "the library still holds %d simulated resources: %s", left, what);
    }
    if (rc == 0 && cmf.violations != 0) {
        rc = 1;
        snprintf(out->why, sizeof out->why, "simulation violation: %s", cmf.last_violation);
    }
    if (rc == 0 && cmf.implicit_ctx != 0) {
        rc = 1;
        snprintf(out->why, sizeof out->why, "%lu runtime call(s) with no current context (first: %s)",
                 cmf.implicit_ctx, cmf.implicit_what);
    }
    /* Memory whose free CUDA refused during a capture (a cudaFree, or a failed cudaFreeAsync
     * whose fallback would be refused): cmf_outstanding leaves it out, so it is counted here.
     * The library refuses such a destroy or frees the memory later (at the end of the capture
     * or at the device's close): none may be left once everything is closed. */
    size_t held_bytes = 0;
    out->capture_leaks = 0;
    for (const cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next) {
        if (!a->refused_in_capture || a->orphan || cmf.lost[a->device]) continue;
        ++out->capture_leaks;
        held_bytes += a->n;
    }
    if (rc == 0 && out->capture_leaks != 0) {
        rc = 1;
        snprintf(out->why, sizeof out->why, "%lu allocation(s) (%zu bytes) whose free CUDA refused "
                 "inside a capture were never freed (%lu refusal(s) in all)", out->capture_leaks,
                 held_bytes, cmf.capture_leaks);
    }
    out->threads = nthreads;
    out->cuda_calls = (unsigned long)atomic_load(&cmf_gated_calls);
    cmf_uninstall();
    return rc;
}
