/*
 * The API-sequence fuzzer's driver (fuzz_driver.h).
 *
 * Input layout: byte 0 b chooses the threads (1 + (b & 3) % 3), the synchronous debug mode
 * (0x80, one thread only: it is process-wide), small devices of 256 KiB instead of 1 MiB (0x40:
 * out of memory is common), device 1 without memory pools (0x20) and the staging defaults on the
 * shared devices (0x10; otherwise 4 KiB chunks from 8 KiB on, with a worker thread). The rest is
 * a sequence of operations, each an opcode byte (op % 20) followed by the argument bytes it
 * reads (a read past the end gives 0). With several threads the bytes are dealt in 12-byte
 * slices, slice k to thread k % threads; each thread runs its bytes concurrently with the
 * others, on handles of its own (the headers' rule: one handle is used by one thread at a time)
 * and on two device objects shared by all (device objects, pools and the library's tables are
 * shared between threads by design). tests/fuzz/make_seeds.py writes inputs in this format.
 *
 * What the operations do: create, use, destroy every handle kind (device objects of the
 * thread's own that it closes and opens again; buffers, synchronous and stream-ordered;
 * pinned and registered host buffers; pooled and wrapped streams; events; timers; graphs;
 * device sets, split arrays and communicators), host/device/peer copies, sets and fills with
 * random offsets and sizes (out of range on purpose sometimes), launches of a simulated kernel
 * with random configurations, staging and pool settings, reports, misuse (stale handles,
 * handles of another kind, garbage pointers), and injected CUDA/NCCL failures (an opcode arms
 * a fault for the next operation: a given table entry, or the k-th CUDA call of any entry).
 *
 * After every call: the status is one of cm_status_t; a failure's cm_last_error() has that
 * status and a message; without an injected fault (and outside a capture, and before any
 * sticky error) the status is one the operation allows (a valid call succeeds, an invalid one
 * is refused with CM_ERROR_INVALID_ARGUMENT, a busy pool says BUSY...); the thread's context
 * stack is what it was before the call. The data model: the bytes of every device buffer and
 * pinned host buffer written by successful copies, sets, fills and launches are kept on the
 * host, and every copy back, every sweep (all live handles: info matches, memory matches; stale
 * handles are refused) and the end compare them (the simulation stores device memory in host
 * memory, so device contents are checked directly as well). At the end everything is destroyed,
 * the shared devices close without a leak report, no handle of any kind is live, the simulation
 * holds nothing of the library's (memory whose free CUDA refused during a capture included: the
 * library frees it later, at the end of the capture or at the device's close) and saw no call
 * outside its objects. A library issue found and not fixed yet may be counted instead of failing
 * (marked "Known library issue" here, with an input in tests/fuzz/regressions-pending/), unless
 * CMFZ_STRICT=1; none is at present.
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
#define NGRAVE 16
#define MAX_OPS 256
#define TRACE 24
#define MAX_THREADS 3

static atomic_ullong cmfz_calls_all, cmfz_inputs_all;
static int cmfz_strict = -1; /* CMFZ_STRICT=1: the known issues (none at present) fail too */
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

static void model_set(zbuf_t *b, size_t off, const unsigned char *src, size_t n) {
    if (n == 0) return;
    memcpy(b->data + off, src, n);
    memset(b->known + off, 1, n);
}
static void model_forget(zbuf_t *b, size_t off, size_t n) {
    if (b->known != NULL && n > 0) memset(b->known + off, 0, n);
}
static void model_forget_handle(zthread_t *t, const void *h) {
    for (int i = 0; i < NB; ++i)
        if (t->b[i].h == h && h != NULL) model_forget(&t->b[i], 0, t->b[i].size);
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
static void compare(zthread_t *t, zbuf_t *b, size_t off, const unsigned char *got, size_t n,
                    const char *what) {
    if (n == 0 || memcmp(got, b->data + off, n) == 0) return;
    for (size_t c = 0; c < n; c += 256) { /* blocks of 256 bytes: most of them equal */
        size_t m = n - c < 256 ? n - c : 256;
        if (memcmp(got + c, b->data + off + c, m) == 0) continue;
        for (size_t i = c; i < c + m; ++i) {
            if (!b->known[off + i]) {
                b->data[off + i] = got[i];
            } else if (got[i] != b->data[off + i]) {
                fail(t, "%s: byte %zu of a %zu-byte buffer (device %d) is 0x%02x, the model says "
                     "0x%02x", what, off + i, b->size, b->ord, got[i], b->data[off + i]);
                return;
            }
        }
    }
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
    if (s != NULL) {
        bool match = t->s[slot].ord == b->ord;
        st = CALL(cm_buffer_destroy_on_stream(s, b->h), match ? A_OK : A_INV);
        if (st == CM_ERROR_INVALID_ARGUMENT && !match) return; /* refused: still alive */
    } else {
        st = CALL(cm_buffer_destroy(b->h), A_OK);
    }
    /* refused before anything was released (a synchronous buffer while the thread captures,
     * or a device scope that cannot be entered): still alive, the destroy may be repeated */
    if (st != CM_OK && cm_buffer_info(b->h, &(cm_buffer_info_t){0}) == CM_OK) return;
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
    if (st != CM_OK) {
        if (h != NULL) fail(t, "a failed buffer create wrote out");
        return;
    }
    if (h == NULL) {
        fail(t, "cm_buffer_create returned CM_OK and no handle");
        return;
    }
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
        case 0: case 1: op_buf_create(t); break;
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
