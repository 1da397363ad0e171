/*
 * FAULT INJECTION: a complete simulated CUDA runtime, driver and NCCL under every member of the
 * core's call table (src/core/calls.h), with a fault gate in front of each member.
 *
 * Used by the table walk (test_call_table_faults.c), the API fuzzer (tests/fuzz/) and the fork
 * test. Unlike test_buffer_fake.h / test_stream_fake.h it simulates the whole table coherently,
 * so that any public call sequence can run on it:
 *   - devices (cmf.devices of cmf.total bytes each), their primary contexts and a per-thread
 *     context stack (a thread with no current context gets the runtime's implicit binding,
 *     which is counted: the library promises never to rely on it);
 *   - device memory (host memory that really holds the bytes: copies, sets, fills and the
 *     simulated kernel read and write it), memory pools, pinned and registered host memory; a
 *     copy, set or launch outside the simulated memory of its kind is refused and counted as a
 *     violation, never followed;
 *   - streams, events, graphs (work queued on a capturing stream is recorded and replayed by
 *     cudaGraphLaunch; synchronising calls of the capturing thread invalidate the capture, as
 *     CUDA's thread-local mode does), host callbacks (run at once), peer access;
 *   - two simulated kernels (cmf_kernel_add: p[i] += v for i < min(n, threads); cmf_kernel_256:
 *     the same with __launch_bounds__(256)) with attributes, names and CUDA's launch checks;
 *   - NCCL communicators with single-rank data semantics (all-reduce copies send to recv...).
 * Every simulated object is validated by address before use (a destroyed or unknown handle is a
 * violation, never dereferenced) and kept until cmf_uninstall(), so a stale handle never aliases
 * a new one. cmf_outstanding() counts what the library still holds (leak check), leaving out
 * what an injected failure of a free/destroy left behind (cmf_orphan: the failed call kept it)
 * and everything of a device whose context an injected sticky error lost.
 *
 * The gate: every member of cm__cuda is replaced by cmf_gate_<member>, which counts the call and
 * fails it when the calling thread armed a fault for it (cmf_arm(): skip k calls, then fail n
 * of them, or fail the k-th gated call of any member: cmf_arm_any()), else calls the
 * simulation. Faults are per thread, so the failing call is always the caller's. A member the
 * gate list lacks (an entry added to calls.h since) keeps whatever cm__cuda held: cmf_gated()
 * says so, and the table walk reports it.
 *
 * Nothing here ever calls the real CUDA runtime, driver or NCCL (host tests run on the GPU
 * machine too), except cudaGetErrorName / cudaGetErrorString, which are pure text lookups.
 * Thread-safe: one recursive mutex around each simulated call.
 */
#ifndef CM_TEST_FULL_FAKE_H
#define CM_TEST_FULL_FAKE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "calls.h"
#include "handle.h"
#include "internal.h"

#if CM_HAVE_NCCL
#  include <nccl.h>
#endif

#define CMF_MAX_DEV 4
#define CMF_CTX_DEPTH 64
#define CMF_MAX_ARMS 4

/* ---------------------------------------------------------------- members */

/* The members the gate knows, in the order of calls.h (same X-macros). */
#define CMF_IDX_ENUM(member, fn) CMF_IDX_##member,
enum cmf_member {
    CM__CUDA_CALLS(CMF_IDX_ENUM)
    CM__NCCL_CALLS(CMF_IDX_ENUM)
    CMF_N_MEMBERS
};
#undef CMF_IDX_ENUM

#define CMF_NAME_ROW(member, fn) #member,
static const char *const cmf_member_names[CMF_N_MEMBERS] = {
    CM__CUDA_CALLS(CMF_NAME_ROW)
    CM__NCCL_CALLS(CMF_NAME_ROW)
};
#undef CMF_NAME_ROW

/* Index of a member by name, -1 when the gate does not know it. */
static inline int cmf_member_index(const char *name) {
    for (int i = 0; i < CMF_N_MEMBERS; ++i)
        if (strcmp(cmf_member_names[i], name) == 0) return i;
    return -1;
}

/* ---------------------------------------------------------------- state */

typedef enum cmf_kind {
    CMF_STREAM = 1, CMF_EVENT, CMF_GRAPH, CMF_EXEC, CMF_POOL, CMF_COMM,
    CMF_ARRAY, CMF_TEXTURE, CMF_SURFACE, CMF_SYMBOL
} cmf_kind_t;

/* Work recorded by a capture (and held by graphs): replayed by cudaGraphLaunch. */
typedef enum cmf_op_kind { CMF_OP_COPY = 1, CMF_OP_SET, CMF_OP_FILL, CMF_OP_ADD } cmf_op_kind_t;
typedef struct cmf_op {
    cmf_op_kind_t kind;
    unsigned char *dst;
    const unsigned char *src;
    size_t n;
    size_t pattern_bytes;
    unsigned char pattern[8];
    /* a copy's end in pageable host memory (not the simulation's): a graph replaying the copy
     * reads / writes it as CUDA does, so the test keeps it alive while the graph may run */
    unsigned char pageable_dst, pageable_src;
} cmf_op_t;

typedef struct cmf_obj {
    cmf_kind_t kind;
    int device;
    int live;     /* 0 once destroyed: kept (never freed) until cmf_uninstall */
    int orphan;   /* an injected failure of its destroy kept it: not a leak */
    int user;     /* made by the test (cmf_user_stream): not the library's */
    struct cmf_obj *all_next;
    /* streams */
    int capturing, invalidated;
    pthread_t capturer;   /* the thread that began the capture */
    cmf_op_t *ops; /* capture in progress, graph or executable */
    size_t n_ops, cap_ops;
    /* events */
    int timing, recorded;
    /* pools */
    size_t used, reserved, peak;
    unsigned long long threshold;
    /* communicators */
    int rank, nranks, async_error;
    /* arrays: rows x row_bytes bytes of data (not addressable memory: no cmf_alloc) */
    unsigned char *data;
    size_t row_bytes, rows, elem;
    unsigned array_flags;
    struct cudaChannelFormatDesc array_desc;
    /* textures and surfaces: what they read (an array, or n bytes of device memory at p) */
    struct cmf_obj *ref_array;
    const unsigned char *ref_p;
    size_t ref_n;
    /* symbols (the test's): size, and each device's storage */
    size_t sym_size;
    unsigned char *sym_data[CMF_MAX_DEV];
} cmf_obj_t;

typedef enum cmf_mem {
    CMF_MEM_DEV = 1, CMF_MEM_POOL, CMF_MEM_PINNED, CMF_MEM_REGISTERED, CMF_MEM_MANAGED
} cmf_mem_t;

typedef struct cmf_alloc {
    unsigned char *p;
    size_t n;
    cmf_mem_t kind;
    int device;
    cmf_obj_t *pool;  /* CMF_MEM_POOL */
    int mapped;
    int orphan;
    int user;               /* the test's (a symbol's storage): not a leak */
    int counted;            /* managed memory counted in sync_used (no concurrent access) */
    int refused_in_capture; /* its cudaFree was refused: the freeing thread was capturing */
    struct cmf_alloc *next;
} cmf_alloc_t;

typedef struct cmf_arm {
    int member;      /* -1: any gated member (cmf_arm_any) */
    long skip;       /* calls let through first */
    long count;      /* failures left (-1: every call) */
    int err;
    long fired;
    int err_nccl;    /* member -1: the error of an NCCL member (an ncclResult_t) */
} cmf_arm_t;

static struct cmf_state {
    int installed;
    int devices;
    size_t total;
    int pools_supported[CMF_MAX_DEV];
    int peer_ok;
    int driver_version;
    size_t sync_used[CMF_MAX_DEV];
    int peer_enabled[CMF_MAX_DEV][CMF_MAX_DEV];
    int ctx_created[CMF_MAX_DEV];
    int lost[CMF_MAX_DEV];              /* the sticky error that lost the device's context */
    cmf_obj_t *objs;
    cmf_alloc_t *allocs;
    void **set;                         /* hash set of every object ever made */
    size_t set_cap, set_n;
    unsigned long violations;
    char last_violation[256];
    unsigned long implicit_ctx;         /* runtime calls made with no current context */
    char implicit_what[96];
    unsigned long stale_replays;        /* graph work skipped: its memory was freed since */
    unsigned long capture_leaks;        /* cudaFree refused inside a capture (the library then
                                           dropped the memory: see cmf_outstanding) */
    unsigned ignore_stream_devs;        /* bit d: cmf_outstanding leaves out device d's streams
                                           (a test tolerating a known leak of them) */
    unsigned char uid;
    float elapsed_ms;
    /* device attributes the simulation answers (cmf_set_attr; the memory-space ones are set by
     * cmf_install), by cudaDeviceAttr value */
    int attr_val[CMF_MAX_DEV][256];
    unsigned char attr_has[CMF_MAX_DEV][256];
    size_t pitch_align;                 /* cudaMallocPitch rounds rows up to it */
    size_t managed_limit;               /* managed bytes with concurrent access (host memory) */
    size_t managed_used;
    /* the last prefetch and advice (tests check what reached CUDA) */
    const void *last_prefetch_ptr;
    size_t last_prefetch_n;
    struct cudaMemLocation last_prefetch_loc;
    int last_advice;
    struct cudaMemLocation last_advice_loc;
    cm__cuda_t under;                   /* the simulation, beneath the gates */
    cm__cuda_t saved;                   /* cm__cuda before cmf_install */
    const char *fail_text[CMF_N_MEMBERS]; /* what a failed text call returns */
} cmf;

static atomic_ulong cmf_hits[CMF_N_MEMBERS];    /* gated calls per member */
static atomic_ulong cmf_fails[CMF_N_MEMBERS];   /* of which failed by a fault */
static atomic_ulong cmf_gated_calls;            /* all gated calls */
/* 1 in a child forked after cmf_install: CUDA (and NCCL) cannot be used there, every call of the
 * table fails (cudaErrorInitializationError, ncclSystemError), as CUDA does after fork() */
static volatile int cmf_forked_child;
static void cmf_atfork_child(void) {
    cmf_forked_child = 1;
}
static int cmf_trace_calls;                     /* print every gated call (debugging) */
static pthread_mutex_t cmf_mu;
static int cmf_mu_ready;

/* per thread: the context stack, the runtime's binding, captures, last error, faults */
static _Thread_local int cmf_tl_ctx[CMF_CTX_DEPTH];
static _Thread_local int cmf_tl_depth;
static _Thread_local int cmf_tl_bound = -1;
static _Thread_local int cmf_tl_runtime_dev;
static _Thread_local int cmf_tl_capturing;
static _Thread_local int cmf_tl_last_error;
static _Thread_local const char *cmf_tl_implicit_what; /* the call that bound a context implicitly */
static _Thread_local int cmf_tl_group;
static _Thread_local cmf_arm_t cmf_tl_arms[CMF_MAX_ARMS];
static _Thread_local int cmf_tl_n_arms;

static inline void cmf_unlock_at(int *unused) {
    (void)unused;
    pthread_mutex_unlock(&cmf_mu);
}
#define CMF_LOCK()                                                                            \
    pthread_mutex_lock(&cmf_mu);                                                              \
    int cmf_guard_ __attribute__((cleanup(cmf_unlock_at))) = 0;                              \
    (void)cmf_guard_

static inline void cmf_violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void cmf_violation(const char *fmt, ...) {
    if (cmf.violations++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmf.last_violation, sizeof cmf.last_violation, fmt, ap);
        va_end(ap);
    }
}

static char cmf_ctx_tag[CMF_MAX_DEV];
static inline void *cmf_ctx_of(int d) {
    return &cmf_ctx_tag[d];
}
static inline int cmf_dev_of_ctx(const void *ctx) {
    for (int d = 0; d < CMF_MAX_DEV; ++d)
        if (ctx == (const void *)&cmf_ctx_tag[d]) return d < cmf.devices ? d : -1;
    return -1;
}

/* The thread's current device (-1: no current context). */
static inline int cmf_cur_dev(void) {
    if (cmf_tl_depth > 0) return cmf_tl_ctx[cmf_tl_depth - 1];
    return cmf_tl_bound;
}

/* A runtime call that needs a context: with none current the runtime binds its current
 * device's primary context to the thread for good (counted: the library must not rely on it). */
static inline int cmf_need_ctx(const char *what) {
    int d = cmf_cur_dev();
    if (d >= 0) return d;
    if (cmf.implicit_ctx++ == 0) snprintf(cmf.implicit_what, sizeof cmf.implicit_what, "%s", what);
    cmf_tl_implicit_what = what;
    cmf_tl_bound = cmf_tl_runtime_dev;
    cmf.ctx_created[cmf_tl_bound] = 1;
    return cmf_tl_bound;
}

static inline cudaError_t cmf_err(cudaError_t e) {
    if (e != cudaSuccess) cmf_tl_last_error = (int)e;
    return e;
}

/* ---------------------------------------------------------------- objects */

static inline size_t cmf_hash(const void *p, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static inline void cmf_set_add(void *p) {
    if (cmf.set_n * 2 >= cmf.set_cap) {
        size_t ncap = cmf.set_cap ? cmf.set_cap * 2 : 256;
        void **ns = calloc(ncap, sizeof *ns);
        if (ns == NULL) abort();
        for (size_t i = 0; i < cmf.set_cap; ++i) {
            if (cmf.set[i] == NULL) continue;
            size_t j = cmf_hash(cmf.set[i], ncap);
            while (ns[j] != NULL) j = (j + 1) & (ncap - 1);
            ns[j] = cmf.set[i];
        }
        free(cmf.set);
        cmf.set = ns;
        cmf.set_cap = ncap;
    }
    size_t j = cmf_hash(p, cmf.set_cap);
    while (cmf.set[j] != NULL) j = (j + 1) & (cmf.set_cap - 1);
    cmf.set[j] = p;
    ++cmf.set_n;
}

static inline int cmf_set_has(const void *p) {
    if (p == NULL || cmf.set_cap == 0) return 0;
    size_t j = cmf_hash(p, cmf.set_cap);
    while (cmf.set[j] != NULL) {
        if (cmf.set[j] == p) return 1;
        j = (j + 1) & (cmf.set_cap - 1);
    }
    return 0;
}

static inline cmf_obj_t *cmf_new(cmf_kind_t kind, int device) {
    cmf_obj_t *o = calloc(1, sizeof *o);
    if (o == NULL) abort();
    o->kind = kind;
    o->device = device;
    o->live = 1;
    o->all_next = cmf.objs;
    cmf.objs = o;
    cmf_set_add(o);
    return o;
}

/* Any object ever made of this kind (live or not), else NULL: never dereferences p first. */
static inline cmf_obj_t *cmf_any(const void *p, cmf_kind_t kind) {
    if (!cmf_set_has(p)) return NULL;
    cmf_obj_t *o = (cmf_obj_t *)(uintptr_t)p;
    return o->kind == kind ? o : NULL;
}

/* A live object of this kind, else NULL with a violation naming what (the library handed CUDA a
 * destroyed or foreign handle). */
static inline cmf_obj_t *cmf_live(const void *p, cmf_kind_t kind, const char *what) {
    cmf_obj_t *o = cmf_any(p, kind);
    if (o != NULL && o->live) return o;
    cmf_violation("%s: %s handle %p", what, o != NULL ? "destroyed" : "unknown", p);
    return NULL;
}

static inline int cmf_stream_is_default(cudaStream_t s) {
    return s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

/* The device of a stream (default streams: the current context's), -1 when not a live stream. */
static inline int cmf_stream_dev(cudaStream_t s, const char *what, cmf_obj_t **out) {
    if (out != NULL) *out = NULL;
    if (cmf_stream_is_default(s)) return cmf_need_ctx(what);
    cmf_obj_t *o = cmf_live(s, CMF_STREAM, what);
    if (o == NULL) return -1;
    if (out != NULL) *out = o;
    return o->device;
}

static inline void cmf_op_push(cmf_obj_t *o, const cmf_op_t *op) {
    if (o->n_ops == o->cap_ops) {
        size_t nc = o->cap_ops ? o->cap_ops * 2 : 8;
        cmf_op_t *n = realloc(o->ops, nc * sizeof *n);
        if (n == NULL) abort();
        o->ops = n;
        o->cap_ops = nc;
    }
    o->ops[o->n_ops++] = *op;
}

/* The thread began a capture: synchronising calls invalidate every capture it has open. */
static inline cudaError_t cmf_capture_violation(void) {
    for (cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next)
        if (o->kind == CMF_STREAM && o->live && o->capturing &&
            pthread_equal(o->capturer, pthread_self()))
            o->invalidated = 1;
    return cudaErrorStreamCaptureUnsupported;
}

/* ---------------------------------------------------------------- memory */

static inline cmf_alloc_t *cmf_find(const void *p, size_t n) {
    const unsigned char *q = p;
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next)
        if (q >= a->p && q < a->p + a->n && n <= (size_t)(a->p + a->n - q)) return a;
    return NULL;
}

static inline cmf_alloc_t *cmf_find_byte(const void *p) {
    const unsigned char *q = p;
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next)
        if (q >= a->p && q < a->p + a->n) return a;
    return NULL;
}

static inline cmf_alloc_t *cmf_find_exact(const void *p) {
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next)
        if (a->p == p) return a;
    return NULL;
}

static inline int cmf_is_dev_mem(const cmf_alloc_t *a) {
    return a != NULL && (a->kind == CMF_MEM_DEV || a->kind == CMF_MEM_POOL);
}

static inline cmf_alloc_t *cmf_add(void *p, size_t n, cmf_mem_t kind, int device) {
    cmf_alloc_t *a = calloc(1, sizeof *a);
    if (a == NULL) abort();
    a->p = p;
    a->n = n;
    a->kind = kind;
    a->device = device;
    a->next = cmf.allocs;
    cmf.allocs = a;
    return a;
}

static inline void cmf_remove(cmf_alloc_t *x) {
    for (cmf_alloc_t **a = &cmf.allocs; *a != NULL; a = &(*a)->next) {
        if (*a == x) {
            *a = x->next;
            break;
        }
    }
    if (x->kind != CMF_MEM_REGISTERED) free(x->p);
    free(x);
}

/* Device memory: 512-byte aligned like cudaMalloc's on the GPUs the library supports (their
 * textureAlignment: a texture may start at any allocation); not zeroed (the first 64 KiB say so) */
static inline void *cmf_memory(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 512, n ? n : 1) != 0) return NULL;
    memset(p, 0xcd, n < 65536 ? (n ? n : 1) : 65536);
    return p;
}

static inline size_t cmf_pool_reserved(int device) {
    size_t r = 0;
    for (cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next)
        if (o->kind == CMF_POOL && o->live && o->device == device) r += o->reserved;
    return r;
}

static inline size_t cmf_free_bytes(int device) {
    size_t used = cmf.sync_used[device] + cmf_pool_reserved(device);
    return used >= cmf.total ? 0 : cmf.total - used;
}

/* n device bytes at p on device dev (dev -1: any device). */
static inline int cmf_dev_range(const void *p, size_t n, int dev, const char *what) {
    if (n == 0) return 1;
    cmf_alloc_t *a = cmf_find(p, n);
    if (!cmf_is_dev_mem(a)) {
        cmf_violation("%s: %zu bytes at %p are not simulated device memory", what, n, p);
        return 0;
    }
    if (dev >= 0 && a->device != dev) {
        cmf_violation("%s: memory of device %d used on device %d", what, a->device, dev);
        return 0;
    }
    return 1;
}

/* n host bytes at p: not device memory; inside one pinned allocation when it starts in one. */
static inline int cmf_host_range(const void *p, size_t n, const char *what) {
    if (n == 0) return 1;
    cmf_alloc_t *a = cmf_find_byte(p);
    if (a == NULL) return 1; /* the caller's own memory: not known here */
    if (cmf_is_dev_mem(a)) {
        cmf_violation("%s: %p is device memory where host memory was expected", what, p);
        return 0;
    }
    if (n > (size_t)(a->p + a->n - (const unsigned char *)p)) {
        cmf_violation("%s: %zu bytes at %p overrun a pinned buffer of %zu bytes", what, n, p, a->n);
        return 0;
    }
    return 1;
}

static inline void cmf_run_op(const cmf_op_t *op) {
    switch (op->kind) {
    case CMF_OP_COPY: memmove(op->dst, op->src, op->n); break;
    case CMF_OP_SET: memset(op->dst, op->pattern[0], op->n); break;
    case CMF_OP_FILL:
        for (size_t i = 0; i + op->pattern_bytes <= op->n; i += op->pattern_bytes)
            memcpy(op->dst + i, op->pattern, op->pattern_bytes);
        break;
    case CMF_OP_ADD:
        for (size_t i = 0; i < op->n; ++i) op->dst[i] = (unsigned char)(op->dst[i] + op->pattern[0]);
        break;
    }
}

/* Run op now, or record it when the stream is being captured. */
static inline void cmf_queue(cmf_obj_t *stream, const cmf_op_t *op) {
    if (stream != NULL && stream->capturing) cmf_op_push(stream, op);
    else cmf_run_op(op);
}

/* ---------------------------------------------------------------- the simulation */

static inline cudaError_t cmf_lost_check(int dev) {
    return dev >= 0 && dev < CMF_MAX_DEV && cmf.lost[dev] ? (cudaError_t)cmf.lost[dev] : cudaSuccess;
}
#define CMF_LOST(dev)                                                                          \
    do {                                                                                       \
        cudaError_t lost_ = cmf_lost_check(dev);                                               \
        if (lost_ != cudaSuccess) return cmf_err(lost_);                                       \
    } while (0)

static inline cudaError_t cmf_driver_get_version(int *v) {
    *v = cmf.driver_version;
    return cudaSuccess;
}
static inline cudaError_t cmf_runtime_get_version(int *v) {
    *v = CUDART_VERSION;
    return cudaSuccess;
}
static inline cudaError_t cmf_get_device_count(int *n) {
    CMF_LOCK();
    *n = cmf.devices;
    return cmf.devices > 0 ? cudaSuccess : cmf_err(cudaErrorNoDevice);
}
static inline cudaError_t cmf_get_device(int *d) {
    CMF_LOCK();
    int c = cmf_cur_dev();
    *d = c >= 0 ? c : cmf_tl_runtime_dev;
    return cudaSuccess;
}
static inline cudaError_t cmf_set_device(int d) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices) return cmf_err(cudaErrorInvalidDevice);
    cmf_tl_runtime_dev = d;
    if (cmf_tl_depth > 0) cmf_tl_ctx[cmf_tl_depth - 1] = d;
    else cmf_tl_bound = d;
    cmf.ctx_created[d] = 1;
    return cudaSuccess;
}
static inline cudaError_t cmf_get_device_properties(struct cudaDeviceProp *p, int d) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices) return cmf_err(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "Simulated GPU %d", d);
    p->major = 9;
    p->minor = 0;
    p->totalGlobalMem = cmf.total;
    p->multiProcessorCount = 132;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->reservedSharedMemPerBlock = 1024;
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->l2CacheSize = 50 * 1024 * 1024;
    p->clusterLaunch = 1;
    p->pciBusID = 0x10 + d;
    return cudaSuccess;
}
static inline cudaError_t cmf_device_get_attribute(int *v, enum cudaDeviceAttr attr, int d) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices) return cmf_err(cudaErrorInvalidDevice);
    if ((unsigned)attr < 256u && cmf.attr_has[d][attr]) {
        *v = cmf.attr_val[d][attr];
        return cudaSuccess;
    }
    switch (attr) {
    case cudaDevAttrMemoryPoolsSupported: *v = cmf.pools_supported[d]; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrMultiProcessorCount: *v = 132; break;
    case cudaDevAttrMaxThreadsPerBlock: *v = 1024; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    default: *v = 0; break;
    }
    return cudaSuccess;
}
static inline cudaError_t cmf_device_get_p2p_attribute(int *v, enum cudaDeviceP2PAttr attr, int s,
                                                       int d) {
    CMF_LOCK();
    if (s < 0 || s >= cmf.devices || d < 0 || d >= cmf.devices || s == d)
        return cmf_err(cudaErrorInvalidDevice);
    *v = attr == cudaDevP2PAttrPerformanceRank ? 0 : cmf.peer_ok;
    return cudaSuccess;
}
static inline cudaError_t cmf_device_synchronize(void) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaDeviceSynchronize");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    return cudaSuccess;
}
static inline cudaError_t cmf_device_can_access_peer(int *can, int d, int p) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices || p < 0 || p >= cmf.devices) return cmf_err(cudaErrorInvalidDevice);
    *can = cmf.peer_ok && d != p;
    return cudaSuccess;
}
static inline cudaError_t cmf_device_enable_peer_access(int p, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaDeviceEnablePeerAccess");
    CMF_LOST(d);
    if (flags != 0) return cmf_err(cudaErrorInvalidValue);
    if (p < 0 || p >= cmf.devices || p == d) return cmf_err(cudaErrorInvalidDevice);
    CMF_LOST(p); /* mapping the peer's memory needs its context too */
    if (!cmf.peer_ok) return cmf_err(cudaErrorPeerAccessUnsupported);
    if (cmf.peer_enabled[d][p]) return cmf_err(cudaErrorPeerAccessAlreadyEnabled);
    cmf.peer_enabled[d][p] = 1;
    return cudaSuccess;
}
static inline cudaError_t cmf_ctx_get_current(void **ctx) {
    CMF_LOCK();
    int d = cmf_cur_dev();
    *ctx = d >= 0 ? cmf_ctx_of(d) : NULL;
    return cudaSuccess;
}
static inline cudaError_t cmf_ctx_push_current(void *ctx) {
    CMF_LOCK();
    int d = cmf_dev_of_ctx(ctx);
    if (d < 0) {
        cmf_violation("cuCtxPushCurrent of %p, not a retained primary context", ctx);
        return cudaErrorDeviceUninitialized;
    }
    if (cmf_tl_depth == CMF_CTX_DEPTH) {
        cmf_violation("context stack deeper than %d: pushes are not popped", CMF_CTX_DEPTH);
        return cudaErrorInvalidValue;
    }
    cmf_tl_ctx[cmf_tl_depth++] = d;
    cmf.ctx_created[d] = 1;
    return cudaSuccess;
}
static inline cudaError_t cmf_ctx_pop_current(void **ctx) {
    CMF_LOCK();
    if (cmf_tl_depth == 0) {
        cmf_violation("cuCtxPopCurrent with nothing the library pushed");
        return cudaErrorDeviceUninitialized;
    }
    int d = cmf_tl_ctx[--cmf_tl_depth];
    if (ctx != NULL) *ctx = cmf_ctx_of(d);
    return cudaSuccess;
}
static inline cudaError_t cmf_primary_ctx_retain(void **ctx, int d) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices) return cudaErrorInvalidDevice;
    *ctx = cmf_ctx_of(d);
    return cudaSuccess;
}
static inline cudaError_t cmf_primary_ctx_state(int d, unsigned int *flags, int *active) {
    CMF_LOCK();
    if (d < 0 || d >= cmf.devices) return cudaErrorInvalidDevice;
    *flags = 0;
    *active = cmf.ctx_created[d];
    return cudaSuccess;
}
static inline cudaError_t cmf_get_last_error(void) {
    cudaError_t e = (cudaError_t)cmf_tl_last_error;
    cmf_tl_last_error = 0;
    return e;
}
static inline const char *cmf_get_error_name(cudaError_t e) {
    return cudaGetErrorName(e); /* a pure text lookup of the runtime */
}
static inline const char *cmf_get_error_string(cudaError_t e) {
    return cudaGetErrorString(e);
}
static inline cudaError_t cmf_mem_get_info(size_t *f, size_t *t) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMemGetInfo");
    CMF_LOST(d);
    *f = cmf_free_bytes(d);
    *t = cmf.total;
    return cudaSuccess;
}
static inline cudaError_t cmf_device_malloc(void **p, size_t n) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMalloc");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (n > cmf_free_bytes(d)) return cmf_err(cudaErrorMemoryAllocation);
    void *m = cmf_memory(n);
    if (m == NULL) return cmf_err(cudaErrorMemoryAllocation);
    cmf_add(m, n, CMF_MEM_DEV, d);
    cmf.sync_used[d] += n;
    *p = m;
    return cudaSuccess;
}
/* A live texture or surface object reads memory of [p, p + n) (the library promises never to free
 * memory under one): its description, or NULL. */
static inline const cmf_obj_t *cmf_reader_of(const unsigned char *p, size_t n, const cmf_obj_t *array) {
    for (const cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next) {
        /* (an object whose destroy an injected fault failed is unreachable: not a reader) */
        if (!o->live || o->orphan || (o->kind != CMF_TEXTURE && o->kind != CMF_SURFACE)) continue;
        if (array != NULL ? o->ref_array == array
                          : (o->ref_p != NULL && o->ref_p < p + n && p < o->ref_p + o->ref_n))
            return o;
    }
    return NULL;
}
static inline void cmf_release_dev_alloc(cmf_alloc_t *a) {
    if (cmf_reader_of(a->p, a->n, NULL) != NULL)
        cmf_violation("memory of %zu bytes at %p freed while a texture object reads it", a->n,
                      (void *)a->p);
    if (a->kind == CMF_MEM_MANAGED) {
        if (a->counted) cmf.sync_used[a->device] -= a->n;
        else cmf.managed_used -= a->n;
    } else if (a->kind == CMF_MEM_DEV) cmf.sync_used[a->device] -= a->n;
    else if (a->pool != NULL) a->pool->used -= a->n; /* the memory stays reserved: cached */
    cmf_remove(a);
}
static inline cudaError_t cmf_device_free(void *p) {
    CMF_LOCK();
    if (p == NULL) return cudaSuccess;
    cmf_alloc_t *a = cmf_find_exact(p);
    if (!cmf_is_dev_mem(a) && (a == NULL || a->kind != CMF_MEM_MANAGED)) {
        cmf_violation("cudaFree(%p): not a device allocation", p);
        return cmf_err(cudaErrorInvalidValue);
    }
    int d = cmf_need_ctx("cudaFree");
    (void)d;
    CMF_LOST(a->device);
    if (cmf_tl_capturing) { /* CUDA refuses a synchronising free while the thread captures */
        if (!a->refused_in_capture) ++cmf.capture_leaks;
        a->refused_in_capture = 1;
        return cmf_err(cmf_capture_violation());
    }
    cmf_release_dev_alloc(a);
    return cudaSuccess;
}
/* Stream-ordered allocation of pool (NULL: the device's default pool, unlimited here). */
static inline cudaError_t cmf_pool_alloc(void **ptr, size_t n, cmf_obj_t *pool, cudaStream_t s,
                                         const char *what) {
    int sd = cmf_stream_dev(s, what, NULL);
    if (sd < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    int d = pool != NULL ? pool->device : sd;
    CMF_LOST(d);
    if (pool != NULL) {
        size_t cached = pool->reserved - pool->used;
        if (n > cached) {
            size_t need = n - cached;
            if (need > cmf_free_bytes(d)) return cmf_err(cudaErrorMemoryAllocation);
            pool->reserved += need;
        }
        pool->used += n;
        if (pool->reserved > pool->peak) pool->peak = pool->reserved;
    } else if (n > cmf_free_bytes(d)) {
        return cmf_err(cudaErrorMemoryAllocation);
    }
    void *m = cmf_memory(n);
    if (m == NULL) return cmf_err(cudaErrorMemoryAllocation);
    cmf_alloc_t *a = cmf_add(m, n, pool != NULL ? CMF_MEM_POOL : CMF_MEM_DEV, d);
    a->pool = pool;
    if (pool == NULL) cmf.sync_used[d] += n;
    *ptr = m;
    return cudaSuccess;
}
static inline cudaError_t cmf_malloc_async(void **p, size_t n, cudaStream_t s) {
    CMF_LOCK();
    return cmf_pool_alloc(p, n, NULL, s, "cudaMallocAsync");
}
static inline cudaError_t cmf_mem_pool_create(cudaMemPool_t *pool, const struct cudaMemPoolProps *pp) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolCreate");
    int d = pp->location.id;
    if (pp->location.type != cudaMemLocationTypeDevice || d < 0 || d >= cmf.devices)
        return cmf_err(cudaErrorInvalidValue);
    CMF_LOST(d);
    cmf_obj_t *o = cmf_new(CMF_POOL, d);
    *pool = (cudaMemPool_t)(void *)o;
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_pool_destroy(cudaMemPool_t pool) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolDestroy"); /* a runtime call: it binds a context when none is current */
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cudaMemPoolDestroy");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    size_t orphaned = 0;
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next)
        if (a->pool == o && (a->orphan || a->refused_in_capture)) orphaned += a->n;
    if (o->used > orphaned && !cmf.lost[o->device])
        cmf_violation("cudaMemPoolDestroy with %zu bytes of live allocations", o->used - orphaned);
    o->live = 0;
    o->reserved = 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_pool_set_attribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolSetAttribute"); /* a runtime call: it binds a context when none is current */
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cudaMemPoolSetAttribute");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    if (a == cudaMemPoolAttrReleaseThreshold) o->threshold = *(unsigned long long *)v;
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_pool_get_attribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolGetAttribute"); /* a runtime call: it binds a context when none is current */
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cudaMemPoolGetAttribute");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    unsigned long long *out = v;
    switch (a) {
    case cudaMemPoolAttrReservedMemCurrent: *out = o->reserved; break;
    case cudaMemPoolAttrUsedMemCurrent: *out = o->used; break;
    case cudaMemPoolAttrReservedMemHigh: *out = o->peak; break;
    case cudaMemPoolAttrReleaseThreshold: *out = o->threshold; break;
    default: *out = 0; break;
    }
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_pool_trim_to(cudaMemPool_t pool, size_t keep) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolTrimTo"); /* a runtime call: it binds a context when none is current */
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cudaMemPoolTrimTo");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    size_t cached = o->reserved - o->used;
    o->reserved = o->used + (keep < cached ? keep : cached);
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_pool_set_access(cudaMemPool_t pool, const struct cudaMemAccessDesc *d,
                                                  size_t n) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemPoolSetAccess"); /* a runtime call: it binds a context when none is current */
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cudaMemPoolSetAccess");
    if (o == NULL || d == NULL || n == 0) return cmf_err(cudaErrorInvalidValue);
    CMF_LOST(o->device); /* the pool's device maps its memory for the peer */
    return cudaSuccess;
}
static inline cudaError_t cmf_malloc_from_pool_async(void **p, size_t n, cudaMemPool_t pool,
                                                     cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(pool, CMF_POOL, "cuMemAllocFromPoolAsync");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    return cmf_pool_alloc(p, n, o, s, "cuMemAllocFromPoolAsync");
}
static inline cudaError_t cmf_free_async(void *p, cudaStream_t s) {
    CMF_LOCK();
    if (cmf_stream_dev(s, "cuMemFreeAsync", NULL) < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    cmf_alloc_t *a = cmf_find_exact(p);
    if (!cmf_is_dev_mem(a)) {
        cmf_violation("cuMemFreeAsync(%p): not a device allocation", p);
        return cmf_err(cudaErrorInvalidValue);
    }
    CMF_LOST(a->device);
    cmf_release_dev_alloc(a);
    return cudaSuccess;
}
static inline cudaError_t cmf_host_alloc(void **p, size_t n, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaHostAlloc");
    CMF_LOST(d);
    void *m = cmf_memory(n);
    if (m == NULL) return cmf_err(cudaErrorMemoryAllocation);
    cmf_alloc_t *a = cmf_add(m, n, CMF_MEM_PINNED, d);
    a->mapped = (flags & cudaHostAllocMapped) != 0;
    *p = m;
    return cudaSuccess;
}
static inline cudaError_t cmf_free_host(void *p) {
    CMF_LOCK();
    cmf_alloc_t *a = cmf_find_exact(p);
    if (a == NULL || a->kind != CMF_MEM_PINNED) {
        cmf_violation("cudaFreeHost(%p): not pinned memory of cudaHostAlloc", p);
        return cmf_err(cudaErrorInvalidValue);
    }
    (void)cmf_need_ctx("cudaFreeHost");
    cmf_remove(a);
    return cudaSuccess;
}
static inline cudaError_t cmf_host_register(void *p, size_t n, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaHostRegister");
    CMF_LOST(d);
    if (p == NULL || n == 0) return cmf_err(cudaErrorInvalidValue);
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next) {
        const unsigned char *q = p;
        if (q < a->p + a->n && a->p < q + n) return cmf_err(cudaErrorHostMemoryAlreadyRegistered);
    }
    cmf_alloc_t *a = cmf_add(p, n, CMF_MEM_REGISTERED, d);
    a->mapped = (flags & cudaHostRegisterMapped) != 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_host_unregister(void *p) {
    CMF_LOCK();
    cmf_alloc_t *a = cmf_find_exact(p);
    if (a == NULL || a->kind != CMF_MEM_REGISTERED) return cmf_err(cudaErrorHostMemoryNotRegistered);
    (void)cmf_need_ctx("cudaHostUnregister");
    cmf_remove(a);
    return cudaSuccess;
}
static inline cudaError_t cmf_host_get_device_pointer(void **d, void *h, unsigned flags) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaHostGetDevicePointer");
    cmf_alloc_t *a = cmf_find_byte(h);
    if (flags != 0 || a == NULL || (a->kind != CMF_MEM_PINNED && a->kind != CMF_MEM_REGISTERED))
        return cmf_err(cudaErrorInvalidValue);
    *d = h; /* mapped at the same address (unified addressing) */
    return cudaSuccess;
}
static inline cudaError_t cmf_pointer_get_attributes(struct cudaPointerAttributes *attr, const void *p) {
    CMF_LOCK();
    memset(attr, 0, sizeof *attr);
    cmf_alloc_t *a = cmf_find_byte(p);
    if (a == NULL) {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
    } else {
        attr->type = cmf_is_dev_mem(a)              ? cudaMemoryTypeDevice
                     : a->kind == CMF_MEM_MANAGED ? cudaMemoryTypeManaged
                                                  : cudaMemoryTypeHost;
        attr->device = a->device;
        attr->devicePointer = (void *)(uintptr_t)p;
        if (!cmf_is_dev_mem(a)) attr->hostPointer = (void *)(uintptr_t)p;
    }
    return cudaSuccess;
}
/* The checks of a copy of kind between dst and src. */
static inline int cmf_copy_ok(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, int dev,
                              const char *what) {
    int dst_dev = k == cudaMemcpyHostToDevice || k == cudaMemcpyDeviceToDevice;
    int src_dev = k == cudaMemcpyDeviceToHost || k == cudaMemcpyDeviceToDevice;
    if (k == cudaMemcpyDefault) {
        cmf_alloc_t *d = cmf_find_byte(dst), *s = cmf_find_byte(src);
        dst_dev = cmf_is_dev_mem(d);
        src_dev = cmf_is_dev_mem(s);
    }
    if (dst_dev ? !cmf_dev_range(dst, n, k == cudaMemcpyDeviceToDevice ? -1 : dev, what)
                : !cmf_host_range(dst, n, what))
        return 0;
    if (src_dev ? !cmf_dev_range(src, n, k == cudaMemcpyDeviceToDevice ? -1 : dev, what)
                : !cmf_host_range(src, n, what))
        return 0;
    return 1;
}
static inline cudaError_t cmf_memcpy_sync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMemcpy");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (!cmf_copy_ok(dst, src, n, k, d, "cudaMemcpy")) return cmf_err(cudaErrorInvalidValue);
    memmove(dst, src, n);
    return cudaSuccess;
}
static inline cudaError_t cmf_memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
                                           cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemcpyAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (!cmf_copy_ok(dst, src, n, k, d, "cudaMemcpyAsync")) return cmf_err(cudaErrorInvalidValue);
    /* a copy with pageable host memory is captured like any other (an H200 with driver 580
     * captures it and each graph launch reads / writes the pageable memory anew) */
    cmf_op_t op = {CMF_OP_COPY, dst, src, n, 0, {0}, 0, 0};
    if (n > 0 && k != cudaMemcpyDeviceToDevice) {
        op.pageable_dst = cmf_find_byte(dst) == NULL;
        op.pageable_src = cmf_find_byte(src) == NULL;
    }
    cmf_queue(so, &op);
    return cudaSuccess;
}
static inline cudaError_t cmf_memcpy_2d_async(void *dst, size_t dpitch, const void *src, size_t spitch,
                                              size_t width, size_t height, enum cudaMemcpyKind k,
                                              cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemcpy2DAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (width > dpitch || width > spitch) return cmf_err(cudaErrorInvalidPitchValue);
    for (size_t r = 0; r < height; ++r) {
        unsigned char *to = (unsigned char *)dst + r * dpitch;
        const unsigned char *from = (const unsigned char *)src + r * spitch;
        if (!cmf_copy_ok(to, from, width, k, d, "cudaMemcpy2DAsync")) return cmf_err(cudaErrorInvalidValue);
    }
    for (size_t r = 0; r < height; ++r) {
        cmf_op_t op = {CMF_OP_COPY, (unsigned char *)dst + r * dpitch,
                       (const unsigned char *)src + r * spitch, width, 0, {0}, 0, 0};
        if (width > 0 && k != cudaMemcpyDeviceToDevice) { /* pageable ends: as cmf_memcpy_async */
            op.pageable_dst = cmf_find_byte(op.dst) == NULL;
            op.pageable_src = cmf_find_byte(op.src) == NULL;
        }
        cmf_queue(so, &op);
    }
    return cudaSuccess;
}
static inline int cmf_peer_ok(void *dst, int dd, const void *src, int sd, size_t n, const char *what) {
    if (dd < 0 || dd >= cmf.devices || sd < 0 || sd >= cmf.devices) return 0;
    return cmf_dev_range(dst, n, dd, what) && cmf_dev_range(src, n, sd, what);
}
static inline cudaError_t cmf_memcpy_peer(void *dst, int dd, const void *src, int sd, size_t n) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaMemcpyPeer");
    CMF_LOST(dd);
    CMF_LOST(sd);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (!cmf_peer_ok(dst, dd, src, sd, n, "cudaMemcpyPeer")) return cmf_err(cudaErrorInvalidValue);
    memmove(dst, src, n);
    return cudaSuccess;
}
static inline cudaError_t cmf_memcpy_peer_async(void *dst, int dd, const void *src, int sd, size_t n,
                                                cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemcpyPeerAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(dd);
    CMF_LOST(sd);
    if (!cmf_peer_ok(dst, dd, src, sd, n, "cudaMemcpyPeerAsync")) return cmf_err(cudaErrorInvalidValue);
    cmf_op_t op = {CMF_OP_COPY, dst, src, n, 0, {0}, 0, 0};
    cmf_queue(so, &op);
    return cudaSuccess;
}
static inline cudaError_t cmf_memset_async(void *p, int v, size_t n, cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemsetAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (!cmf_dev_range(p, n, d, "cudaMemsetAsync")) return cmf_err(cudaErrorInvalidValue);
    cmf_op_t op = {CMF_OP_SET, p, NULL, n, 1, {(unsigned char)v}, 0, 0};
    cmf_queue(so, &op);
    return cudaSuccess;
}
static inline cudaError_t cmf_fill_async(void *p, size_t n, const void *pattern, size_t pb,
                                         cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "fill kernel", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (pb == 0 || pb > 8 || n % pb != 0 || (uintptr_t)p % pb != 0) {
        cmf_violation("fill kernel: %zu bytes at %p with a %zu-byte pattern", n, p, pb);
        return cmf_err(cudaErrorInvalidValue);
    }
    if (!cmf_dev_range(p, n, d, "fill kernel")) return cmf_err(cudaErrorInvalidValue);
    cmf_op_t op = {CMF_OP_FILL, p, NULL, n, pb, {0}, 0, 0};
    memcpy(op.pattern, pattern, pb);
    cmf_queue(so, &op);
    return cudaSuccess;
}
static inline cudaError_t cmf_priority_range(int *least, int *greatest) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaDeviceGetStreamPriorityRange");
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_create(cudaStream_t *s, unsigned flags, int prio) {
    CMF_LOCK();
    (void)flags;
    int d = cmf_need_ctx("cudaStreamCreateWithPriority");
    CMF_LOST(d);
    if (prio > 0 || prio < -5) return cmf_err(cudaErrorInvalidValue);
    *s = (cudaStream_t)(void *)cmf_new(CMF_STREAM, d);
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_destroy(cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(s, CMF_STREAM, "cudaStreamDestroy");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (o->user) cmf_violation("cudaStreamDestroy of the application's own stream");
    if (o->capturing) {
        o->capturing = 0;
        --cmf_tl_capturing;
    }
    o->live = 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_get_device(cudaStream_t s, int *d) {
    CMF_LOCK();
    if (cmf_stream_is_default(s)) {
        *d = cmf_need_ctx("cudaStreamGetDevice");
        return cudaSuccess;
    }
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o == NULL || !o->live) return cmf_err(cudaErrorInvalidResourceHandle); /* checked by the library */
    if (o->capturing) return cmf_err(cudaErrorStreamCaptureUnsupported);
    *d = o->device;
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_synchronize(cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaStreamSynchronize", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (cmf_tl_capturing || (so != NULL && so->capturing)) return cmf_err(cmf_capture_violation());
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_query(cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaStreamQuery", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (cmf_tl_capturing || (so != NULL && so->capturing)) return cmf_err(cmf_capture_violation());
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_wait_event(cudaStream_t s, cudaEvent_t e, unsigned flags) {
    CMF_LOCK();
    (void)flags;
    int d = cmf_stream_dev(s, "cudaStreamWaitEvent", NULL);
    cmf_obj_t *eo = cmf_live(e, CMF_EVENT, "cudaStreamWaitEvent");
    if (d < 0 || eo == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
    CMF_LOCK();
    *st = cudaStreamCaptureStatusNone;
    if (cmf_stream_is_default(s)) return cudaSuccess;
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o == NULL || !o->live) return cudaErrorInvalidResourceHandle;
    if (o->capturing)
        *st = o->invalidated ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}
static inline cudaError_t cmf_stream_get_ctx(cudaStream_t s, void **ctx) {
    CMF_LOCK();
    if (cmf_stream_is_default(s)) return cudaErrorInvalidResourceHandle;
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o == NULL || !o->live) return cudaErrorInvalidResourceHandle;
    *ctx = cmf_ctx_of(o->device);
    return cudaSuccess;
}
static inline cudaError_t cmf_launch_host_func(cudaStream_t s, cudaHostFn_t fn, void *user) {
    {
        CMF_LOCK();
        int d = cmf_stream_dev(s, "cudaLaunchHostFunc", NULL);
        if (d < 0 || fn == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
        CMF_LOST(d);
    }
    fn(user); /* runs at once, outside the simulation's lock */
    return cudaSuccess;
}
static inline cudaError_t cmf_event_create(cudaEvent_t *e, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaEventCreateWithFlags");
    CMF_LOST(d);
    cmf_obj_t *o = cmf_new(CMF_EVENT, d);
    o->timing = (flags & cudaEventDisableTiming) == 0;
    *e = (cudaEvent_t)(void *)o;
    return cudaSuccess;
}
static inline cudaError_t cmf_event_destroy(cudaEvent_t e) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(e, CMF_EVENT, "cudaEventDestroy");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    o->live = 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_event_record(cudaEvent_t e, cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *eo = cmf_live(e, CMF_EVENT, "cudaEventRecord");
    int d = cmf_stream_dev(s, "cudaEventRecord", NULL);
    if (eo == NULL || d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (eo->device != d) {
        cmf_violation("cudaEventRecord: event of device %d on a stream of device %d", eo->device, d);
        return cmf_err(cudaErrorInvalidResourceHandle);
    }
    eo->recorded = 1;
    return cudaSuccess;
}
static inline cudaError_t cmf_event_synchronize(cudaEvent_t e) {
    CMF_LOCK();
    cmf_obj_t *eo = cmf_live(e, CMF_EVENT, "cudaEventSynchronize");
    if (eo == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(eo->device);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    return cudaSuccess;
}
static inline cudaError_t cmf_event_query(cudaEvent_t e) {
    CMF_LOCK();
    cmf_obj_t *eo = cmf_live(e, CMF_EVENT, "cudaEventQuery");
    if (eo == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(eo->device);
    return cudaSuccess;
}
static inline cudaError_t cmf_event_elapsed(float *ms, cudaEvent_t a, cudaEvent_t b) {
    CMF_LOCK();
    cmf_obj_t *x = cmf_live(a, CMF_EVENT, "cudaEventElapsedTime");
    cmf_obj_t *y = cmf_live(b, CMF_EVENT, "cudaEventElapsedTime");
    if (x == NULL || y == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (!x->timing || !y->timing || !x->recorded || !y->recorded || x->device != y->device)
        return cmf_err(cudaErrorInvalidResourceHandle);
    *ms = cmf.elapsed_ms;
    cmf.elapsed_ms += 0.25f;
    return cudaSuccess;
}
static inline cudaError_t cmf_begin_capture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
    CMF_LOCK();
    (void)mode;
    if (cmf_stream_is_default(s)) return cmf_err(cudaErrorStreamCaptureUnsupported);
    cmf_obj_t *o = cmf_live(s, CMF_STREAM, "cudaStreamBeginCapture");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(o->device);
    if (o->capturing) return cmf_err(cudaErrorIllegalState);
    o->capturing = 1;
    o->invalidated = 0;
    o->capturer = pthread_self();
    o->n_ops = 0;
    ++cmf_tl_capturing;
    return cudaSuccess;
}
/* End the capture of s, whatever the outcome (also when the end is failed by a fault). */
static inline cmf_obj_t *cmf_capture_stop(cmf_obj_t *o) {
    o->capturing = 0;
    if (cmf_tl_capturing > 0) --cmf_tl_capturing;
    return o;
}
static inline cudaError_t cmf_end_capture(cudaStream_t s, cudaGraph_t *g) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(s, CMF_STREAM, "cudaStreamEndCapture");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (!o->capturing) return cmf_err(cudaErrorIllegalState);
    cmf_capture_stop(o);
    if (o->invalidated) {
        *g = NULL;
        o->n_ops = 0;
        return cmf_err(cudaErrorStreamCaptureInvalidated);
    }
    cmf_obj_t *gr = cmf_new(CMF_GRAPH, o->device);
    for (size_t i = 0; i < o->n_ops; ++i) cmf_op_push(gr, &o->ops[i]);
    o->n_ops = 0;
    *g = (cudaGraph_t)(void *)gr;
    return cudaSuccess;
}
static inline cudaError_t cmf_graph_instantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long f) {
    CMF_LOCK();
    (void)f;
    cmf_obj_t *go = cmf_live(g, CMF_GRAPH, "cudaGraphInstantiate");
    if (go == NULL) return cmf_err(cudaErrorInvalidValue);
    int d = cmf_need_ctx("cudaGraphInstantiate");
    (void)d;
    CMF_LOST(go->device);
    cmf_obj_t *xo = cmf_new(CMF_EXEC, go->device);
    for (size_t i = 0; i < go->n_ops; ++i) cmf_op_push(xo, &go->ops[i]);
    *x = (cudaGraphExec_t)(void *)xo;
    return cudaSuccess;
}
static inline int cmf_op_valid(const cmf_op_t *op) {
    if (op->n == 0) return 1;
    if (!op->pageable_dst && cmf_find(op->dst, op->n) == NULL) return 0;
    if (op->kind == CMF_OP_COPY && !op->pageable_src && cmf_find(op->src, op->n) == NULL) return 0;
    return 1;
}
static inline cudaError_t cmf_graph_launch(cudaGraphExec_t x, cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *xo = cmf_live(x, CMF_EXEC, "cudaGraphLaunch");
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaGraphLaunch", &so);
    if (xo == NULL || d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (xo->device != d) {
        cmf_violation("cudaGraphLaunch: graph of device %d on a stream of device %d", xo->device, d);
        return cmf_err(cudaErrorInvalidValue);
    }
    for (size_t i = 0; i < xo->n_ops; ++i) {
        if (!cmf_op_valid(&xo->ops[i])) { /* its memory was freed since the capture */
            ++cmf.stale_replays;
            continue;
        }
        cmf_queue(so, &xo->ops[i]);
    }
    return cudaSuccess;
}
static inline cudaError_t cmf_graph_get_nodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n) {
    CMF_LOCK();
    cmf_obj_t *go = cmf_live(g, CMF_GRAPH, "cudaGraphGetNodes");
    if (go == NULL || n == NULL) return cmf_err(cudaErrorInvalidValue);
    if (nodes != NULL) return cmf_err(cudaErrorNotSupported);
    *n = go->n_ops;
    return cudaSuccess;
}
static inline cudaError_t cmf_graph_destroy(cudaGraph_t g) {
    CMF_LOCK();
    cmf_obj_t *go = cmf_live(g, CMF_GRAPH, "cudaGraphDestroy");
    if (go == NULL) return cmf_err(cudaErrorInvalidValue);
    go->live = 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_graph_exec_destroy(cudaGraphExec_t x) {
    CMF_LOCK();
    cmf_obj_t *xo = cmf_live(x, CMF_EXEC, "cudaGraphExecDestroy");
    if (xo == NULL) return cmf_err(cudaErrorInvalidValue);
    xo->live = 0;
    return cudaSuccess;
}

/* The simulated kernels: two distinct addresses name them (nothing is ever called there). The
 * arguments of both are (unsigned char *p, size_t n, unsigned char v). */
static const char cmf_kernels[2];
#define CMF_KERNEL_ADD ((const void *)&cmf_kernels[0])
#define CMF_KERNEL_256 ((const void *)&cmf_kernels[1])
static inline int cmf_kernel_max_threads(const void *f) {
    return f == CMF_KERNEL_ADD ? 1024 : f == CMF_KERNEL_256 ? 256 : 0;
}

static inline cudaError_t cmf_func_get_attributes(struct cudaFuncAttributes *a, const void *f) {
    CMF_LOCK();
    (void)cmf_need_ctx("cudaFuncGetAttributes");
    int max = cmf_kernel_max_threads(f);
    if (max == 0) return cmf_err(cudaErrorInvalidDeviceFunction);
    memset(a, 0, sizeof *a);
    a->numRegs = 32;
    a->maxThreadsPerBlock = max;
    a->maxDynamicSharedSizeBytes = 48 * 1024;
    a->binaryVersion = 90;
    a->ptxVersion = 90;
    return cudaSuccess;
}
static inline cudaError_t cmf_func_set_attribute(const void *f, enum cudaFuncAttribute attr, int v) {
    CMF_LOCK();
    (void)attr;
    (void)v;
    return cmf_kernel_max_threads(f) ? cudaSuccess : cmf_err(cudaErrorInvalidDeviceFunction);
}
static inline cudaError_t cmf_func_get_name(const char **name, const void *f) {
    CMF_LOCK();
    if (f == CMF_KERNEL_ADD) *name = "cmf_kernel_add";
    else if (f == CMF_KERNEL_256) *name = "_Z14cmf_kernel_256Phmh";
    else return cmf_err(cudaErrorInvalidDeviceFunction);
    return cudaSuccess;
}
/* Launch checks of CUDA (a refusal of a configuration the library validated is a violation). */
static inline cudaError_t cmf_launch_kernel_ex(const cudaLaunchConfig_t *c, const void *f, void **args) {
    CMF_LOCK();
    int max = cmf_kernel_max_threads(f);
    if (max == 0) return cmf_err(cudaErrorInvalidDeviceFunction);
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(c->stream, "cudaLaunchKernelExC", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    unsigned long long threads = (unsigned long long)c->blockDim.x * c->blockDim.y * c->blockDim.z;
    unsigned long long blocks = (unsigned long long)c->gridDim.x * c->gridDim.y * c->gridDim.z;
    int bad = threads == 0 || blocks == 0 || threads > (unsigned long long)max ||
              c->blockDim.x > 1024 || c->blockDim.y > 1024 || c->blockDim.z > 64 ||
              c->gridDim.x > 2147483647u || c->gridDim.y > 65535 || c->gridDim.z > 65535 ||
              c->dynamicSmemBytes > 48 * 1024;
    for (unsigned i = 0; i < c->numAttrs && !bad; ++i) {
        if (c->attrs[i].id != cudaLaunchAttributeClusterDimension) continue;
        const unsigned cx = c->attrs[i].val.clusterDim.x, cy = c->attrs[i].val.clusterDim.y,
                       cz = c->attrs[i].val.clusterDim.z;
        bad = cx * cy * cz == 0 || cx * cy * cz > 8 || c->gridDim.x % cx || c->gridDim.y % cy ||
              c->gridDim.z % cz;
    }
    if (bad) {
        cmf_violation("cudaLaunchKernelExC refused a configuration the library let through: "
                      "grid (%u,%u,%u) block (%u,%u,%u) %zu bytes", c->gridDim.x, c->gridDim.y,
                      c->gridDim.z, c->blockDim.x, c->blockDim.y, c->blockDim.z, c->dynamicSmemBytes);
        return cmf_err(cudaErrorInvalidConfiguration);
    }
    if (args == NULL) return cmf_err(cudaErrorInvalidValue);
    unsigned char *p = *(unsigned char **)args[0];
    size_t n = *(size_t *)args[1];
    unsigned char v = *(unsigned char *)args[2];
    size_t count = (unsigned long long)n < threads * blocks ? n : (size_t)(threads * blocks);
    if (!cmf_dev_range(p, count, d, "simulated kernel")) return cmf_err(cudaErrorIllegalAddress);
    cmf_op_t op = {CMF_OP_ADD, p, NULL, count, 1, {v}, 0, 0};
    cmf_queue(so, &op);
    return cudaSuccess;
}

/* ---------------------------------------------------------------- NCCL */
#if CM_HAVE_NCCL
static inline size_t cmf_nccl_size(ncclDataType_t t) {
    switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 1;
    }
}
static inline ncclResult_t cmf_nccl_get_version(int *v) {
    *v = NCCL_VERSION_CODE;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_get_unique_id(ncclUniqueId *id) {
    CMF_LOCK();
    memset(id, ++cmf.uid, sizeof *id);
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_comm_init_all(ncclComm_t *comms, int n, const int *devs) {
    CMF_LOCK();
    if (comms == NULL || n < 1 || n > cmf.devices) return ncclInvalidArgument;
    for (int i = 0; i < n; ++i) {
        int d = devs != NULL ? devs[i] : i;
        if (d < 0 || d >= cmf.devices) return ncclInvalidArgument;
        if (cmf.lost[d]) return ncclUnhandledCudaError;
    }
    for (int i = 0; i < n; ++i) {
        cmf_obj_t *o = cmf_new(CMF_COMM, devs != NULL ? devs[i] : i);
        o->rank = i;
        o->nranks = n;
        comms[i] = (ncclComm_t)(void *)o;
    }
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_comm_init_rank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    CMF_LOCK();
    (void)id;
    int d = cmf_cur_dev();
    if (d < 0) {
        cmf_violation("ncclCommInitRank with no current device");
        return ncclInvalidUsage;
    }
    if (nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    if (cmf.lost[d]) return ncclUnhandledCudaError;
    cmf_obj_t *o = cmf_new(CMF_COMM, d);
    o->rank = rank;
    o->nranks = nranks;
    *comm = (ncclComm_t)(void *)o;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_comm_destroy(ncclComm_t c) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(c, CMF_COMM, "ncclCommDestroy");
    if (o == NULL) return ncclInvalidArgument;
    o->live = 0;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_comm_abort(ncclComm_t c) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(c, CMF_COMM, "ncclCommAbort");
    if (o == NULL) return ncclInvalidArgument;
    o->live = 0;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_comm_get_async_error(ncclComm_t c, ncclResult_t *e) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(c, CMF_COMM, "ncclCommGetAsyncError");
    if (o == NULL) return ncclInvalidArgument;
    *e = (ncclResult_t)o->async_error;
    return ncclSuccess;
}
static inline const char *cmf_nccl_get_error_string(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (simulated)";
    case ncclSystemError: return "unhandled system error (simulated)";
    case ncclInternalError: return "internal error (simulated)";
    case ncclInvalidArgument: return "invalid argument (simulated)";
    case ncclInvalidUsage: return "invalid usage (simulated)";
    case ncclRemoteError: return "remote process exited or there was a network error (simulated)";
    case ncclInProgress: return "NCCL operation in progress (simulated)";
    default: return "unknown result code (simulated)";
    }
}
static inline const char *cmf_nccl_get_last_error(ncclComm_t c) {
    (void)c;
    return "";
}
static inline ncclResult_t cmf_nccl_group_start(void) {
    ++cmf_tl_group;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_group_end(void) {
    CMF_LOCK();
    if (cmf_tl_group == 0) {
        cmf_violation("ncclGroupEnd without ncclGroupStart");
        return ncclInvalidUsage;
    }
    --cmf_tl_group;
    return ncclSuccess;
}
/* The communicator, its stream (same device) and the device ranges of a collective. */
static inline ncclResult_t cmf_coll_check(ncclComm_t c, cudaStream_t s, const void *send,
                                          size_t send_bytes, void *recv, size_t recv_bytes,
                                          const char *what, cmf_obj_t **co, cmf_obj_t **so) {
    *co = cmf_live(c, CMF_COMM, what);
    if (*co == NULL) return ncclInvalidArgument;
    if (cmf.lost[(*co)->device]) return ncclUnhandledCudaError;
    int d = cmf_stream_dev(s, what, so);
    if (d != (*co)->device) {
        cmf_violation("%s: stream of device %d for the communicator of device %d", what, d,
                      (*co)->device);
        return ncclInvalidArgument;
    }
    if ((send != NULL && !cmf_dev_range(send, send_bytes, d, what)) ||
        !cmf_dev_range(recv, recv_bytes, d, what))
        return ncclInvalidArgument;
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_all_reduce(const void *send, void *recv, size_t count,
                                               ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                                               cudaStream_t s) {
    CMF_LOCK();
    (void)op;
    cmf_obj_t *co, *so;
    size_t bytes = count * cmf_nccl_size(t);
    ncclResult_t r = cmf_coll_check(c, s, send, bytes, recv, bytes, "ncclAllReduce", &co, &so);
    if (r != ncclSuccess) return r;
    cmf_op_t o = {CMF_OP_COPY, recv, send, bytes, 0, {0}, 0, 0};
    cmf_queue(so, &o);
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_broadcast(const void *send, void *recv, size_t count,
                                              ncclDataType_t t, int root, ncclComm_t c,
                                              cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *co, *so;
    size_t bytes = count * cmf_nccl_size(t);
    cmf_obj_t *peek = cmf_any(c, CMF_COMM);
    const int is_root = peek != NULL && peek->rank == root;
    ncclResult_t r = cmf_coll_check(c, s, is_root ? send : NULL, bytes, recv, bytes,
                                    "ncclBroadcast", &co, &so);
    if (r != ncclSuccess) return r;
    if (root < 0 || root >= co->nranks) return ncclInvalidArgument;
    if (is_root) {
        cmf_op_t o = {CMF_OP_COPY, recv, send, bytes, 0, {0}, 0, 0};
        cmf_queue(so, &o);
    }
    return ncclSuccess;
}
static inline ncclResult_t cmf_nccl_all_gather(const void *send, void *recv, size_t count,
                                               ncclDataType_t t, ncclComm_t c, cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *co, *so;
    size_t bytes = count * cmf_nccl_size(t);
    cmf_obj_t *peek = cmf_any(c, CMF_COMM);
    size_t nr = peek != NULL ? (size_t)peek->nranks : 1u;
    ncclResult_t r = cmf_coll_check(c, s, send, bytes, recv, bytes * nr, "ncclAllGather", &co, &so);
    if (r != ncclSuccess) return r;
    cmf_op_t o = {CMF_OP_COPY, (unsigned char *)recv + (size_t)co->rank * bytes, send, bytes, 0, {0}, 0, 0};
    cmf_queue(so, &o);
    return ncclSuccess;
}
#endif /* CM_HAVE_NCCL */

/* ---------------------------------------------------------------- memory spaces (memspace.h) */

/* Bytes of one element of a channel description. */
static inline size_t cmf_desc_bytes(const struct cudaChannelFormatDesc *d) {
    return (size_t)(d->x + d->y + d->z + d->w) / 8u;
}
static inline cudaError_t cmf_symbol_of(const void *sym, cmf_obj_t **out) {
    cmf_obj_t *o = cmf_any(sym, CMF_SYMBOL);
    if (o == NULL || !o->live) return cmf_err(cudaErrorInvalidSymbol);
    *out = o;
    return cudaSuccess;
}
static inline cudaError_t cmf_get_symbol_size(size_t *n, const void *sym) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaGetSymbolSize");
    CMF_LOST(d);
    cmf_obj_t *o;
    cudaError_t e = cmf_symbol_of(sym, &o);
    if (e != cudaSuccess) return e;
    *n = o->sym_size;
    return cudaSuccess;
}
static inline cudaError_t cmf_get_symbol_address(void **p, const void *sym) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaGetSymbolAddress");
    CMF_LOST(d);
    cmf_obj_t *o;
    cudaError_t e = cmf_symbol_of(sym, &o);
    if (e != cudaSuccess) return e;
    *p = o->sym_data[d];
    return cudaSuccess;
}
/* A copy to (to_sym) or from a symbol of the stream's device: the range is the library's to
 * check (a copy past the symbol is a violation, never followed). */
static inline cudaError_t cmf_symbol_copy(const void *sym, void *other, size_t n, size_t off,
                                          enum cudaMemcpyKind k, cudaStream_t s, int to_sym,
                                          const char *what) {
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, what, &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    cmf_obj_t *o;
    cudaError_t e = cmf_symbol_of(sym, &o);
    if (e != cudaSuccess) return e;
    if (off > o->sym_size || n > o->sym_size - off) {
        cmf_violation("%s: %zu bytes at offset %zu of a %zu-byte symbol", what, n, off, o->sym_size);
        return cmf_err(cudaErrorInvalidValue);
    }
    unsigned char *at = o->sym_data[d] + off;
    if (!(to_sym ? cmf_copy_ok(at, other, n, k, d, what) : cmf_copy_ok(other, at, n, k, d, what)))
        return cmf_err(cudaErrorInvalidValue);
    cmf_op_t op = {CMF_OP_COPY, to_sym ? at : (unsigned char *)other,
                   to_sym ? (const unsigned char *)other : at, n, 0, {0}, 0, 0};
    cmf_queue(so, &op);
    return cudaSuccess;
}
static inline cudaError_t cmf_memcpy_to_symbol_async(const void *sym, const void *src, size_t n,
                                                     size_t off, enum cudaMemcpyKind k,
                                                     cudaStream_t s) {
    CMF_LOCK();
    return cmf_symbol_copy(sym, (void *)(uintptr_t)src, n, off, k, s, 1, "cudaMemcpyToSymbolAsync");
}
static inline cudaError_t cmf_memcpy_from_symbol_async(void *dst, const void *sym, size_t n,
                                                       size_t off, enum cudaMemcpyKind k,
                                                       cudaStream_t s) {
    CMF_LOCK();
    return cmf_symbol_copy(sym, dst, n, off, k, s, 0, "cudaMemcpyFromSymbolAsync");
}
static inline cudaError_t cmf_malloc_pitch(void **p, size_t *pitch, size_t w, size_t h) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMallocPitch");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (w == 0 || h == 0) return cmf_err(cudaErrorInvalidValue);
    size_t pt = (w + cmf.pitch_align - 1) / cmf.pitch_align * cmf.pitch_align;
    if (h > cmf.total / pt || pt * h > cmf_free_bytes(d)) return cmf_err(cudaErrorMemoryAllocation);
    void *m = cmf_memory(pt * h);
    if (m == NULL) return cmf_err(cudaErrorMemoryAllocation);
    cmf_add(m, pt * h, CMF_MEM_DEV, d);
    cmf.sync_used[d] += pt * h;
    *p = m;
    *pitch = pt;
    return cudaSuccess;
}
static inline cudaError_t cmf_malloc_array(cudaArray_t *arr, const struct cudaChannelFormatDesc *desc,
                                           size_t w, size_t h, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMallocArray");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    size_t elem = desc != NULL ? cmf_desc_bytes(desc) : 0;
    if (elem == 0 || w == 0 || (flags & ~(unsigned)cudaArraySurfaceLoadStore) != 0)
        return cmf_err(cudaErrorInvalidValue);
    size_t rows = h ? h : 1, bytes = w * elem * rows;
    if (bytes > cmf_free_bytes(d)) return cmf_err(cudaErrorMemoryAllocation);
    cmf_obj_t *o = cmf_new(CMF_ARRAY, d);
    o->data = calloc(1, bytes);
    if (o->data == NULL) abort();
    o->row_bytes = w * elem;
    o->rows = rows;
    o->elem = elem;
    o->array_flags = flags;
    o->array_desc = *desc;
    cmf.sync_used[d] += bytes;
    *arr = (cudaArray_t)(void *)o;
    return cudaSuccess;
}
static inline cudaError_t cmf_free_array(cudaArray_t arr) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_live(arr, CMF_ARRAY, "cudaFreeArray");
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    (void)cmf_need_ctx("cudaFreeArray");
    CMF_LOST(o->device);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (cmf_reader_of(NULL, 0, o) != NULL)
        cmf_violation("cudaFreeArray while a texture or surface object reads the array");
    cmf.sync_used[o->device] -= o->row_bytes * o->rows;
    free(o->data);
    o->data = NULL;
    o->live = 0;
    return cudaSuccess;
}
/* A rectangle of a 2-D copy on the side that is not an array: rows of width bytes, pitch apart. */
static inline int cmf_rows_ok(const void *p, size_t pitch, size_t width, size_t height,
                              enum cudaMemcpyKind k, int is_dst, int dev, const char *what) {
    if (width > pitch) {
        cmf_violation("%s: width %zu over pitch %zu", what, width, pitch);
        return 0;
    }
    int device_side = k == cudaMemcpyDeviceToDevice ||
                      (is_dst ? k == cudaMemcpyHostToDevice : k == cudaMemcpyDeviceToHost);
    if (k == cudaMemcpyDefault) device_side = cmf_is_dev_mem(cmf_find_byte(p));
    for (size_t r = 0; r < height; ++r) {
        const unsigned char *row = (const unsigned char *)p + r * pitch;
        if (device_side ? !cmf_dev_range(row, width, dev, what) : !cmf_host_range(row, width, what))
            return 0;
    }
    return 1;
}
/* The rectangle within an array (x in bytes). */
static inline int cmf_array_rect_ok(const cmf_obj_t *o, size_t x, size_t y, size_t width,
                                    size_t height, const char *what) {
    if (x > o->row_bytes || width > o->row_bytes - x || y > o->rows || height > o->rows - y) {
        cmf_violation("%s: %zu x %zu bytes at (%zu, %zu) outside a %zu x %zu array", what, width,
                      height, x, y, o->row_bytes, o->rows);
        return 0;
    }
    return 1;
}
static inline cudaError_t cmf_memcpy_2d_to_array_async(cudaArray_t arr, size_t x, size_t y,
                                                       const void *src, size_t sp, size_t width,
                                                       size_t height, enum cudaMemcpyKind k,
                                                       cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemcpy2DToArrayAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    cmf_obj_t *o = cmf_live(arr, CMF_ARRAY, "cudaMemcpy2DToArrayAsync");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (!cmf_array_rect_ok(o, x, y, width, height, "cudaMemcpy2DToArrayAsync") ||
        !cmf_rows_ok(src, sp, width, height, k, 0, d, "cudaMemcpy2DToArrayAsync"))
        return cmf_err(cudaErrorInvalidValue);
    for (size_t r = 0; r < height; ++r) {
        cmf_op_t op = {CMF_OP_COPY, o->data + (y + r) * o->row_bytes + x,
                       (const unsigned char *)src + r * sp, width, 0, {0}, 0, 0};
        cmf_run_op(&op); /* array data is not addressable memory: copied at once */
    }
    return cudaSuccess;
}
static inline cudaError_t cmf_memcpy_2d_from_array_async(void *dst, size_t dp, cudaArray_const_t arr,
                                                         size_t x, size_t y, size_t width,
                                                         size_t height, enum cudaMemcpyKind k,
                                                         cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *so = NULL;
    int d = cmf_stream_dev(s, "cudaMemcpy2DFromArrayAsync", &so);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    cmf_obj_t *o = cmf_live(arr, CMF_ARRAY, "cudaMemcpy2DFromArrayAsync");
    if (o == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (!cmf_array_rect_ok(o, x, y, width, height, "cudaMemcpy2DFromArrayAsync") ||
        !cmf_rows_ok(dst, dp, width, height, k, 1, d, "cudaMemcpy2DFromArrayAsync"))
        return cmf_err(cudaErrorInvalidValue);
    for (size_t r = 0; r < height; ++r) {
        cmf_op_t op = {CMF_OP_COPY, (unsigned char *)dst + r * dp,
                       o->data + (y + r) * o->row_bytes + x, width, 0, {0}, 0, 0};
        cmf_run_op(&op);
    }
    return cudaSuccess;
}
/* CUDA's own refusals of a texture: what the library must have refused before asking. */
static inline int cmf_texture_desc_ok(const struct cudaChannelFormatDesc *cd,
                                      const struct cudaTextureDesc *td, int linear) {
    int integer = cd->f != cudaChannelFormatKindFloat;
    if (!linear && td->filterMode == cudaFilterModeLinear && integer &&
        (td->readMode != cudaReadModeNormalizedFloat || cd->x == 32))
        return 0; /* linear filtering returns floats */
    if (!linear && !td->normalizedCoords &&
        (td->addressMode[0] == cudaAddressModeWrap || td->addressMode[0] == cudaAddressModeMirror))
        return 0; /* CUDA would clamp silently: the library refuses it */
    return 1;
}
static inline cudaError_t cmf_create_texture_object(cudaTextureObject_t *t,
                                                    const struct cudaResourceDesc *r,
                                                    const struct cudaTextureDesc *td,
                                                    const struct cudaResourceViewDesc *v) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaCreateTextureObject");
    CMF_LOST(d);
    if (r == NULL || td == NULL || v != NULL) return cmf_err(cudaErrorInvalidValue);
    cmf_obj_t *arr = NULL;
    const unsigned char *p = NULL;
    size_t n = 0;
    struct cudaChannelFormatDesc cd;
    memset(&cd, 0, sizeof cd);
    switch (r->resType) {
    case cudaResourceTypeArray:
        arr = cmf_live(r->res.array.array, CMF_ARRAY, "cudaCreateTextureObject");
        if (arr == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
        cd = arr->array_desc;
        break;
    case cudaResourceTypeLinear:
        p = r->res.linear.devPtr;
        n = r->res.linear.sizeInBytes;
        cd = r->res.linear.desc;
        if (!cmf_dev_range(p, n, d, "cudaCreateTextureObject (linear)")) return cmf_err(cudaErrorInvalidValue);
        break;
    case cudaResourceTypePitch2D: {
        const size_t rowb = r->res.pitch2D.width * cmf_desc_bytes(&r->res.pitch2D.desc);
        p = r->res.pitch2D.devPtr;
        n = r->res.pitch2D.pitchInBytes * (r->res.pitch2D.height - 1) + rowb;
        cd = r->res.pitch2D.desc;
        if (r->res.pitch2D.height == 0 || rowb == 0 || rowb > r->res.pitch2D.pitchInBytes ||
            !cmf_dev_range(p, n, d, "cudaCreateTextureObject (pitch 2-D)"))
            return cmf_err(cudaErrorInvalidValue);
        break;
    }
    default: return cmf_err(cudaErrorInvalidValue);
    }
    if (!cmf_texture_desc_ok(&cd, td, r->resType == cudaResourceTypeLinear)) {
        cmf_violation("cudaCreateTextureObject with a descriptor CUDA refuses or changes");
        return cmf_err(cudaErrorInvalidValue);
    }
    cmf_obj_t *o = cmf_new(CMF_TEXTURE, d);
    o->ref_array = arr;
    o->ref_p = p;
    o->ref_n = n;
    *t = (cudaTextureObject_t)(uintptr_t)o;
    return cudaSuccess;
}
static inline cudaError_t cmf_destroy_view(unsigned long long h, cmf_kind_t kind, const char *what) {
    CMF_LOCK();
    (void)cmf_need_ctx(what);
    cmf_obj_t *o = cmf_live((const void *)(uintptr_t)h, kind, what);
    if (o == NULL) return cmf_err(cudaErrorInvalidValue);
    o->live = 0;
    return cudaSuccess;
}
static inline cudaError_t cmf_destroy_texture_object(cudaTextureObject_t t) {
    return cmf_destroy_view(t, CMF_TEXTURE, "cudaDestroyTextureObject");
}
static inline cudaError_t cmf_create_surface_object(cudaSurfaceObject_t *sf,
                                                    const struct cudaResourceDesc *r) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaCreateSurfaceObject");
    CMF_LOST(d);
    if (r == NULL || r->resType != cudaResourceTypeArray) return cmf_err(cudaErrorInvalidValue);
    cmf_obj_t *arr = cmf_live(r->res.array.array, CMF_ARRAY, "cudaCreateSurfaceObject");
    if (arr == NULL) return cmf_err(cudaErrorInvalidResourceHandle);
    if (!(arr->array_flags & cudaArraySurfaceLoadStore)) {
        cmf_violation("cudaCreateSurfaceObject on an array without cudaArraySurfaceLoadStore");
        return cmf_err(cudaErrorInvalidValue);
    }
    cmf_obj_t *o = cmf_new(CMF_SURFACE, d);
    o->ref_array = arr;
    *sf = (cudaSurfaceObject_t)(uintptr_t)o;
    return cudaSuccess;
}
static inline cudaError_t cmf_destroy_surface_object(cudaSurfaceObject_t sf) {
    return cmf_destroy_view(sf, CMF_SURFACE, "cudaDestroySurfaceObject");
}
static inline cudaError_t cmf_malloc_managed(void **p, size_t n, unsigned flags) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMallocManaged");
    CMF_LOST(d);
    if (cmf_tl_capturing) return cmf_err(cmf_capture_violation());
    if (n == 0 || flags != cudaMemAttachGlobal) return cmf_err(cudaErrorInvalidValue);
    /* with concurrent access managed memory is host memory that migrates; without, it takes
     * device memory at once */
    int concurrent = cmf.attr_val[d][cudaDevAttrConcurrentManagedAccess];
    if (concurrent ? n > cmf.managed_limit - cmf.managed_used : n > cmf_free_bytes(d))
        return cmf_err(cudaErrorMemoryAllocation);
    void *m = cmf_memory(n);
    if (m == NULL) return cmf_err(cudaErrorMemoryAllocation);
    cmf_alloc_t *a = cmf_add(m, n, CMF_MEM_MANAGED, d);
    a->counted = !concurrent;
    if (concurrent) cmf.managed_used += n;
    else cmf.sync_used[d] += n;
    *p = m;
    return cudaSuccess;
}
/* n bytes at p lie in one managed allocation. */
static inline int cmf_managed_range(const void *p, size_t n, const char *what) {
    cmf_alloc_t *a = cmf_find(p, n);
    if (a != NULL && a->kind == CMF_MEM_MANAGED) return 1;
    cmf_violation("%s: %zu bytes at %p are not managed memory", what, n, p);
    return 0;
}
static inline int cmf_location_ok(struct cudaMemLocation loc) {
    if (loc.type == cudaMemLocationTypeHost) return 1;
    return loc.type == cudaMemLocationTypeDevice && loc.id >= 0 && loc.id < cmf.devices;
}
static inline cudaError_t cmf_mem_prefetch_async(const void *p, size_t n, struct cudaMemLocation loc,
                                                 unsigned flags, cudaStream_t s) {
    CMF_LOCK();
    int d = cmf_stream_dev(s, "cudaMemPrefetchAsync", NULL);
    if (d < 0) return cmf_err(cudaErrorInvalidResourceHandle);
    CMF_LOST(d);
    if (flags != 0 || !cmf_location_ok(loc) || !cmf_managed_range(p, n, "cudaMemPrefetchAsync"))
        return cmf_err(cudaErrorInvalidValue);
    if (!cmf.attr_val[d][cudaDevAttrConcurrentManagedAccess] ||
        (loc.type == cudaMemLocationTypeDevice &&
         !cmf.attr_val[loc.id][cudaDevAttrConcurrentManagedAccess]))
        return cmf_err(cudaErrorInvalidDevice);
    cmf.last_prefetch_ptr = p;
    cmf.last_prefetch_n = n;
    cmf.last_prefetch_loc = loc;
    return cudaSuccess;
}
static inline cudaError_t cmf_mem_advise(const void *p, size_t n, enum cudaMemoryAdvise a,
                                         struct cudaMemLocation loc) {
    CMF_LOCK();
    int d = cmf_need_ctx("cudaMemAdvise");
    CMF_LOST(d);
    if ((int)a < 1 || (int)a > 6 || !cmf_location_ok(loc) ||
        !cmf_managed_range(p, n, "cudaMemAdvise"))
        return cmf_err(cudaErrorInvalidValue);
    int needs_device = a == cudaMemAdviseSetPreferredLocation || a == cudaMemAdviseSetAccessedBy;
    if (needs_device && loc.type == cudaMemLocationTypeDevice &&
        !cmf.attr_val[loc.id][cudaDevAttrConcurrentManagedAccess])
        return cmf_err(cudaErrorInvalidDevice);
    cmf.last_advice = (int)a;
    cmf.last_advice_loc = loc;
    return cudaSuccess;
}


/* ---------------------------------------------------------------- orphans (failed frees) */

static inline void cmf_orphan_alloc(const void *p) {
    CMF_LOCK();
    cmf_alloc_t *a = cmf_find_exact(p);
    if (a != NULL) a->orphan = 1;
}
/* A failed cuMemFreeAsync while the thread captures a graph: the synchronous fallback a library
 * can take (cudaFree) is refused then, so the memory is counted as a capture leak, as a refused
 * cudaFree is (cmf.capture_leaks). */
static inline void cmf_free_async_failed(const void *p) {
    CMF_LOCK();
    cmf_alloc_t *a = cmf_find_exact(p);
    if (a == NULL || !cmf_tl_capturing) return;
    if (!a->refused_in_capture) ++cmf.capture_leaks;
    a->refused_in_capture = 1;
}
static inline void cmf_orphan_obj(const void *p) {
    CMF_LOCK();
    if (!cmf_set_has(p)) return;
    ((cmf_obj_t *)(uintptr_t)p)->orphan = 1;
}
static inline void cmf_abort_capture(cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o != NULL && o->live && o->capturing) {
        cmf_capture_stop(o);
        o->n_ops = 0;
    }
}

/* The captures the calling thread began and CUDA has not ended (0 once every one ended). */
static inline int cmf_thread_captures(void) {
    return cmf_tl_capturing;
}

/* End every capture the calling thread began (a test's cleanup when the library lost track of
 * one); returns how many it ended. */
static inline int cmf_abort_thread_captures(void) {
    CMF_LOCK();
    int n = 0;
    for (cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next) {
        if (o->kind == CMF_STREAM && o->live && o->capturing &&
            pthread_equal(o->capturer, pthread_self())) {
            cmf_capture_stop(o);
            o->n_ops = 0;
            ++n;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- the gate */

typedef const char *cmf_cstr;

static inline int cmf_member_is_nccl(int m) {
    return strncmp(cmf_member_names[m], "nccl_", 5) == 0;
}

/* The members the library implements with the driver API (cm__drv_*, calls.c): like cuCtxGetCurrent
 * or cuMemFreeAsync, their failures leave the runtime's last error (cudaGetLastError) as it was. */
#define CMF_FN_ROW(member, fn) #fn,
static const char *const cmf_member_fns[CMF_N_MEMBERS] = {
    CM__CUDA_CALLS(CMF_FN_ROW)
    CM__NCCL_CALLS(CMF_FN_ROW)
};
#undef CMF_FN_ROW
static inline int cmf_member_is_drv(int m) {
    return strncmp(cmf_member_fns[m], "cm__drv_", 8) == 0;
}

/* Whether the calling thread's faults fail this call of member m (*err: the error). */
static inline int cmf_gate_enter(int m, int *err) {
    if (cmf_forked_child) {
        *err = cmf_member_is_nccl(m) ? 2 /* ncclSystemError */ : (int)cudaErrorInitializationError;
        return 1;
    }
    atomic_fetch_add_explicit(&cmf_hits[m], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&cmf_gated_calls, 1, memory_order_relaxed);
    if (cmf_trace_calls)
        fprintf(stderr, "    cuda %lx: %s (depth %d, current %d)\n", (unsigned long)pthread_self() & 0xffff,
                cmf_member_names[m], cmf_tl_depth, cmf_cur_dev());
    for (int i = 0; i < cmf_tl_n_arms; ++i) {
        cmf_arm_t *a = &cmf_tl_arms[i];
        if (a->count == 0 || (a->member >= 0 && a->member != m)) continue;
        /* a failed pop would leave the thread's context stack changed for good, which no
         * driver does on a balanced stack: random faults leave it alone */
        if (a->member < 0 && m == CMF_IDX_ctx_pop_current) continue;
        if (a->skip > 0) {
            --a->skip;
            continue;
        }
        if (a->count > 0) --a->count;
        ++a->fired;
        *err = a->member < 0 && cmf_member_is_nccl(m) ? a->err_nccl : a->err;
        atomic_fetch_add_explicit(&cmf_fails[m], 1, memory_order_relaxed);
        return 1;
    }
    return 0;
}

/* A sticky error loses the context of the library call's device (every device when it has none,
 * as the library charges it), so the simulation refuses that device's work from then on. */
static inline void cmf_after_sticky(int err) {
    if (!cm_cuda_error_is_sticky((cudaError_t)err)) return;
    CMF_LOCK();
    int d = cm__scope_device();
    for (int i = 0; i < cmf.devices; ++i)
        if ((d < 0 || d == i) && cmf.lost[i] == 0) cmf.lost[i] = err;
}

static inline cudaError_t cmf_fail_cudaError_t(int m, int err) {
    cmf_after_sticky(err);
    /* a failed call leaves its error as the thread's last error, but cudaGetLastError returns
     * the last error and resets it: its injected failure reports err and leaves none behind */
    cmf_tl_last_error = m == CMF_IDX_get_last_error ? (int)cudaSuccess : err;
    return (cudaError_t)err;
}
static inline cmf_cstr cmf_fail_cmf_cstr(int m, int err) {
    (void)err;
    return cmf.fail_text[m];
}
#if CM_HAVE_NCCL
static inline ncclResult_t cmf_fail_ncclResult_t(int m, int err) {
    (void)m;
    return (ncclResult_t)err;
}
#endif

#define CMF_GATE(m, R, params, args, on_fail)                                                  \
    static inline R cmf_gate_##m params {                                                      \
        const int cmf_saved_ = cmf_tl_last_error;                                              \
        int cmf_e_ = 0;                                                                        \
        R cmf_r_;                                                                              \
        if (cmf_gate_enter(CMF_IDX_##m, &cmf_e_)) {                                            \
            on_fail;                                                                           \
            cmf_r_ = cmf_fail_##R(CMF_IDX_##m, cmf_e_);                                        \
        } else {                                                                               \
            cmf_r_ = cmf.under.m args;                                                         \
        }                                                                                      \
        if (cmf_member_is_drv(CMF_IDX_##m)) cmf_tl_last_error = cmf_saved_;                    \
        return cmf_r_;                                                                         \
    }                                                                                          \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&cmf_gate_##m),                     \
                                                __typeof__(((cm__cuda_t *)0)->m)),             \
                   "gate of " #m " has the wrong type");

#define CMF_NOTHING ((void)0)

/* G(member, return type, parameters, arguments, what a failure leaves behind) */
#define CMF_CUDA_GATES(G)                                                                      \
    G(driver_get_version, cudaError_t, (int *a), (a), CMF_NOTHING)                             \
    G(runtime_get_version, cudaError_t, (int *a), (a), CMF_NOTHING)                            \
    G(get_device_count, cudaError_t, (int *a), (a), CMF_NOTHING)                               \
    G(get_device, cudaError_t, (int *a), (a), CMF_NOTHING)                                     \
    G(get_device_properties, cudaError_t, (struct cudaDeviceProp *a, int b), (a, b), CMF_NOTHING) \
    G(device_get_attribute, cudaError_t, (int *a, enum cudaDeviceAttr b, int c), (a, b, c),    \
      CMF_NOTHING)                                                                             \
    G(device_get_p2p_attribute, cudaError_t, (int *a, enum cudaDeviceP2PAttr b, int c, int d), \
      (a, b, c, d), CMF_NOTHING)                                                               \
    G(device_synchronize, cudaError_t, (void), (), CMF_NOTHING)                                \
    G(device_can_access_peer, cudaError_t, (int *a, int b, int c), (a, b, c), CMF_NOTHING)     \
    G(device_enable_peer_access, cudaError_t, (int a, unsigned int b), (a, b), CMF_NOTHING)    \
    G(ctx_get_current, cudaError_t, (void **a), (a), CMF_NOTHING)                              \
    G(ctx_push_current, cudaError_t, (void *a), (a), CMF_NOTHING)                              \
    G(ctx_pop_current, cudaError_t, (void **a), (a), CMF_NOTHING)                              \
    G(primary_ctx_retain, cudaError_t, (void **a, int b), (a, b), CMF_NOTHING)                 \
    G(get_last_error, cudaError_t, (void), (), CMF_NOTHING)                                    \
    G(get_error_name, cmf_cstr, (cudaError_t a), (a), CMF_NOTHING)                             \
    G(get_error_string, cmf_cstr, (cudaError_t a), (a), CMF_NOTHING)                           \
    G(mem_get_info, cudaError_t, (size_t *a, size_t *b), (a, b), CMF_NOTHING)                  \
    G(device_malloc, cudaError_t, (void **a, size_t b), (a, b), CMF_NOTHING)                   \
    G(device_free, cudaError_t, (void *a), (a), cmf_orphan_alloc(a))                           \
    G(malloc_async, cudaError_t, (void **a, size_t b, cudaStream_t c), (a, b, c), CMF_NOTHING) \
    G(mem_pool_create, cudaError_t, (cudaMemPool_t *a, const struct cudaMemPoolProps *b),      \
      (a, b), CMF_NOTHING)                                                                     \
    G(mem_pool_destroy, cudaError_t, (cudaMemPool_t a), (a), cmf_orphan_obj(a))                \
    G(mem_pool_set_attribute, cudaError_t, (cudaMemPool_t a, enum cudaMemPoolAttr b, void *c), \
      (a, b, c), CMF_NOTHING)                                                                  \
    G(mem_pool_get_attribute, cudaError_t, (cudaMemPool_t a, enum cudaMemPoolAttr b, void *c), \
      (a, b, c), CMF_NOTHING)                                                                  \
    G(mem_pool_trim_to, cudaError_t, (cudaMemPool_t a, size_t b), (a, b), CMF_NOTHING)         \
    G(mem_pool_set_access, cudaError_t,                                                        \
      (cudaMemPool_t a, const struct cudaMemAccessDesc *b, size_t c), (a, b, c), CMF_NOTHING)  \
    G(malloc_from_pool_async, cudaError_t,                                                     \
      (void **a, size_t b, cudaMemPool_t c, cudaStream_t d), (a, b, c, d), CMF_NOTHING)        \
    G(free_async, cudaError_t, (void *a, cudaStream_t b), (a, b), cmf_free_async_failed(a))    \
    G(host_alloc, cudaError_t, (void **a, size_t b, unsigned int c), (a, b, c), CMF_NOTHING)   \
    G(free_host, cudaError_t, (void *a), (a), cmf_orphan_alloc(a))                             \
    G(host_register, cudaError_t, (void *a, size_t b, unsigned int c), (a, b, c), CMF_NOTHING) \
    G(host_unregister, cudaError_t, (void *a), (a), cmf_orphan_alloc(a))                       \
    G(host_get_device_pointer, cudaError_t, (void **a, void *b, unsigned int c), (a, b, c),    \
      CMF_NOTHING)                                                                             \
    G(pointer_get_attributes, cudaError_t, (struct cudaPointerAttributes *a, const void *b),   \
      (a, b), CMF_NOTHING)                                                                     \
    G(memcpy_sync, cudaError_t, (void *a, const void *b, size_t c, enum cudaMemcpyKind d),     \
      (a, b, c, d), CMF_NOTHING)                                                               \
    G(memcpy_async, cudaError_t,                                                               \
      (void *a, const void *b, size_t c, enum cudaMemcpyKind d, cudaStream_t e),               \
      (a, b, c, d, e), CMF_NOTHING)                                                            \
    G(memcpy_2d_async, cudaError_t,                                                            \
      (void *a, size_t b, const void *c, size_t d, size_t e, size_t f, enum cudaMemcpyKind g,  \
       cudaStream_t h),                                                                        \
      (a, b, c, d, e, f, g, h), CMF_NOTHING)                                                   \
    G(memcpy_peer, cudaError_t, (void *a, int b, const void *c, int d, size_t e),              \
      (a, b, c, d, e), CMF_NOTHING)                                                            \
    G(memcpy_peer_async, cudaError_t,                                                          \
      (void *a, int b, const void *c, int d, size_t e, cudaStream_t f), (a, b, c, d, e, f),    \
      CMF_NOTHING)                                                                             \
    G(memset_async, cudaError_t, (void *a, int b, size_t c, cudaStream_t d), (a, b, c, d),     \
      CMF_NOTHING)                                                                             \
    G(fill_async, cudaError_t, (void *a, size_t b, const void *c, size_t d, cudaStream_t e),   \
      (a, b, c, d, e), CMF_NOTHING)                                                            \
    G(get_symbol_size, cudaError_t, (size_t *a, const void *b), (a, b), CMF_NOTHING)         \
    G(get_symbol_address, cudaError_t, (void **a, const void *b), (a, b), CMF_NOTHING)         \
    G(memcpy_to_symbol_async, cudaError_t,                                                     \
      (const void *a, const void *b, size_t c, size_t d, enum cudaMemcpyKind e, cudaStream_t f), \
      (a, b, c, d, e, f), CMF_NOTHING)                                                         \
    G(memcpy_from_symbol_async, cudaError_t,                                                   \
      (void *a, const void *b, size_t c, size_t d, enum cudaMemcpyKind e, cudaStream_t f),     \
      (a, b, c, d, e, f), CMF_NOTHING)                                                         \
    G(malloc_pitch, cudaError_t, (void **a, size_t *b, size_t c, size_t d), (a, b, c, d),      \
      CMF_NOTHING)                                                                             \
    G(malloc_array, cudaError_t,                                                               \
      (cudaArray_t *a, const struct cudaChannelFormatDesc *b, size_t c, size_t d, unsigned int e), \
      (a, b, c, d, e), CMF_NOTHING)                                                            \
    G(free_array, cudaError_t, (cudaArray_t a), (a), cmf_orphan_obj(a))                        \
    G(memcpy_2d_to_array_async, cudaError_t,                                                   \
      (cudaArray_t a, size_t b, size_t c, const void *d, size_t e, size_t f, size_t g,         \
       enum cudaMemcpyKind h, cudaStream_t i),                                                 \
      (a, b, c, d, e, f, g, h, i), CMF_NOTHING)                                                \
    G(memcpy_2d_from_array_async, cudaError_t,                                                 \
      (void *a, size_t b, cudaArray_const_t c, size_t d, size_t e, size_t f, size_t g,         \
       enum cudaMemcpyKind h, cudaStream_t i),                                                 \
      (a, b, c, d, e, f, g, h, i), CMF_NOTHING)                                                \
    G(create_texture_object, cudaError_t,                                                      \
      (cudaTextureObject_t *a, const struct cudaResourceDesc *b, const struct cudaTextureDesc *c, \
       const struct cudaResourceViewDesc *d),                                                  \
      (a, b, c, d), CMF_NOTHING)                                                               \
    G(destroy_texture_object, cudaError_t, (cudaTextureObject_t a), (a),                       \
      cmf_orphan_obj((const void *)(uintptr_t)a))                                              \
    G(create_surface_object, cudaError_t,                                                      \
      (cudaSurfaceObject_t *a, const struct cudaResourceDesc *b), (a, b), CMF_NOTHING)         \
    G(destroy_surface_object, cudaError_t, (cudaSurfaceObject_t a), (a),                       \
      cmf_orphan_obj((const void *)(uintptr_t)a))                                              \
    G(malloc_managed, cudaError_t, (void **a, size_t b, unsigned int c), (a, b, c), CMF_NOTHING) \
    G(mem_prefetch_async, cudaError_t,                                                         \
      (const void *a, size_t b, struct cudaMemLocation c, unsigned int d, cudaStream_t e),     \
      (a, b, c, d, e), CMF_NOTHING)                                                            \
    G(mem_advise, cudaError_t,                                                                 \
      (const void *a, size_t b, enum cudaMemoryAdvise c, struct cudaMemLocation d), (a, b, c, d), \
      CMF_NOTHING)                                                                             \
    G(priority_range, cudaError_t, (int *a, int *b), (a, b), CMF_NOTHING)                      \
    G(stream_create, cudaError_t, (cudaStream_t *a, unsigned int b, int c), (a, b, c),         \
      CMF_NOTHING)                                                                             \
    G(stream_destroy, cudaError_t, (cudaStream_t a), (a), cmf_orphan_obj(a))                   \
    G(stream_get_device, cudaError_t, (cudaStream_t a, int *b), (a, b), CMF_NOTHING)           \
    G(stream_synchronize, cudaError_t, (cudaStream_t a), (a), CMF_NOTHING)                     \
    G(stream_query, cudaError_t, (cudaStream_t a), (a), CMF_NOTHING)                           \
    G(stream_wait_event, cudaError_t, (cudaStream_t a, cudaEvent_t b, unsigned int c),         \
      (a, b, c), CMF_NOTHING)                                                                  \
    G(stream_is_capturing, cudaError_t, (cudaStream_t a, enum cudaStreamCaptureStatus *b),     \
      (a, b), CMF_NOTHING)                                                                     \
    G(stream_get_ctx, cudaError_t, (cudaStream_t a, void **b), (a, b), CMF_NOTHING)            \
    G(launch_host_func, cudaError_t, (cudaStream_t a, cudaHostFn_t b, void *c), (a, b, c),     \
      CMF_NOTHING)                                                                             \
    G(event_create, cudaError_t, (cudaEvent_t *a, unsigned int b), (a, b), CMF_NOTHING)        \
    G(event_destroy, cudaError_t, (cudaEvent_t a), (a), cmf_orphan_obj(a))                     \
    G(event_record, cudaError_t, (cudaEvent_t a, cudaStream_t b), (a, b), CMF_NOTHING)         \
    G(event_synchronize, cudaError_t, (cudaEvent_t a), (a), CMF_NOTHING)                       \
    G(event_query, cudaError_t, (cudaEvent_t a), (a), CMF_NOTHING)                             \
    G(event_elapsed, cudaError_t, (float *a, cudaEvent_t b, cudaEvent_t c), (a, b, c),         \
      CMF_NOTHING)                                                                             \
    G(begin_capture, cudaError_t, (cudaStream_t a, enum cudaStreamCaptureMode b), (a, b),      \
      CMF_NOTHING)                                                                             \
    G(end_capture, cudaError_t, (cudaStream_t a, cudaGraph_t *b), (a, b), cmf_abort_capture(a)) \
    G(graph_instantiate, cudaError_t, (cudaGraphExec_t *a, cudaGraph_t b, unsigned long long c), \
      (a, b, c), CMF_NOTHING)                                                                  \
    G(graph_launch, cudaError_t, (cudaGraphExec_t a, cudaStream_t b), (a, b), CMF_NOTHING)     \
    G(graph_get_nodes, cudaError_t, (cudaGraph_t a, cudaGraphNode_t *b, size_t *c), (a, b, c), \
      CMF_NOTHING)                                                                             \
    G(graph_destroy, cudaError_t, (cudaGraph_t a), (a), cmf_orphan_obj(a))                     \
    G(graph_exec_destroy, cudaError_t, (cudaGraphExec_t a), (a), cmf_orphan_obj(a))            \
    G(func_get_attributes, cudaError_t, (struct cudaFuncAttributes *a, const void *b), (a, b), \
      CMF_NOTHING)                                                                             \
    G(func_get_name, cudaError_t, (const char **a, const void *b), (a, b), CMF_NOTHING)        \
    G(launch_kernel_ex, cudaError_t, (const cudaLaunchConfig_t *a, const void *b, void **c),   \
      (a, b, c), CMF_NOTHING)

#if CM_HAVE_NCCL
#  define CMF_NCCL_GATES(G)                                                                    \
    G(nccl_get_version, ncclResult_t, (int *a), (a), CMF_NOTHING)                              \
    G(nccl_get_unique_id, ncclResult_t, (ncclUniqueId *a), (a), CMF_NOTHING)                   \
    G(nccl_comm_init_all, ncclResult_t, (ncclComm_t *a, int b, const int *c), (a, b, c),       \
      CMF_NOTHING)                                                                             \
    G(nccl_comm_init_rank, ncclResult_t, (ncclComm_t *a, int b, ncclUniqueId c, int d),        \
      (a, b, c, d), CMF_NOTHING)                                                               \
    G(nccl_comm_destroy, ncclResult_t, (ncclComm_t a), (a), cmf_orphan_obj(a))                 \
    G(nccl_comm_abort, ncclResult_t, (ncclComm_t a), (a), cmf_orphan_obj(a))                   \
    G(nccl_comm_get_async_error, ncclResult_t, (ncclComm_t a, ncclResult_t *b), (a, b),        \
      CMF_NOTHING)                                                                             \
    G(nccl_get_error_string, cmf_cstr, (ncclResult_t a), (a), CMF_NOTHING)                     \
    G(nccl_get_last_error, cmf_cstr, (ncclComm_t a), (a), CMF_NOTHING)                         \
    G(nccl_group_start, ncclResult_t, (void), (), CMF_NOTHING)                                 \
    G(nccl_group_end, ncclResult_t, (void), (), CMF_NOTHING)                                   \
    G(nccl_all_reduce, ncclResult_t,                                                           \
      (const void *a, void *b, size_t c, ncclDataType_t d, ncclRedOp_t e, ncclComm_t f,        \
       cudaStream_t g),                                                                        \
      (a, b, c, d, e, f, g), CMF_NOTHING)                                                      \
    G(nccl_broadcast, ncclResult_t,                                                            \
      (const void *a, void *b, size_t c, ncclDataType_t d, int e, ncclComm_t f, cudaStream_t g), \
      (a, b, c, d, e, f, g), CMF_NOTHING)                                                      \
    G(nccl_all_gather, ncclResult_t,                                                           \
      (const void *a, void *b, size_t c, ncclDataType_t d, ncclComm_t e, cudaStream_t f),      \
      (a, b, c, d, e, f), CMF_NOTHING)
#else
#  define CMF_NCCL_GATES(G)
#endif

CMF_CUDA_GATES(CMF_GATE)
CMF_NCCL_GATES(CMF_GATE)

/* Whether the gate covers member m (its index in cmf_member_names). */
static inline int cmf_gated(int m) {
#define CMF_GATED_CASE(mm, R, params, args, on_fail) case CMF_IDX_##mm: return 1;
    switch (m) {
        CMF_CUDA_GATES(CMF_GATED_CASE)
        CMF_NCCL_GATES(CMF_GATED_CASE)
    default: return 0;
    }
#undef CMF_GATED_CASE
}

/* ---------------------------------------------------------------- faults */

/* From the next gated call of member m on this thread: let `skip` through, then fail `count`
 * (-1: every one) with err (a cudaError_t, or an ncclResult_t for NCCL members). */
static inline void cmf_arm(int m, long skip, long count, int err) {
    if (cmf_tl_n_arms == CMF_MAX_ARMS) abort();
    cmf_tl_arms[cmf_tl_n_arms++] = (cmf_arm_t){m, skip, count, err, 0, err};
}
/* Fail the (skip+1)-th gated call of any member on this thread, once, with err (err_nccl when
 * it is an NCCL member). */
static inline void cmf_arm_any(long skip, int err, int err_nccl) {
    cmf_arm(-1, skip, 1, err);
    cmf_tl_arms[cmf_tl_n_arms - 1].err_nccl = err_nccl;
}
/* Failures this thread's arms made; the arms are dropped. */
static inline long cmf_disarm(void) {
    long fired = 0;
    for (int i = 0; i < cmf_tl_n_arms; ++i) fired += cmf_tl_arms[i].fired;
    cmf_tl_n_arms = 0;
    return fired;
}
static inline long cmf_fired(void) {
    long fired = 0;
    for (int i = 0; i < cmf_tl_n_arms; ++i) fired += cmf_tl_arms[i].fired;
    return fired;
}

/* ---------------------------------------------------------------- install, inspect */

/* Simulate `devices` GPUs of `total` bytes each (memory pools on every device, peer access
 * between all) under gates, and reset the library's process-wide caches. */
static inline void cmf_install(int devices, size_t total) {
    if (!cmf_mu_ready) {
        pthread_mutexattr_t attr;
        pthread_mutexattr_init(&attr);
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
        pthread_mutex_init(&cmf_mu, &attr);
        pthread_mutexattr_destroy(&attr);
        pthread_atfork(NULL, NULL, cmf_atfork_child);
        cmf_mu_ready = 1;
    }
    cm__cuda_t saved = cm__cuda;
    memset(&cmf, 0, sizeof cmf);
    cmf.saved = saved;
    cmf.installed = 1;
    cmf.devices = devices < CMF_MAX_DEV ? devices : CMF_MAX_DEV;
    cmf.total = total;
    for (int d = 0; d < CMF_MAX_DEV; ++d) cmf.pools_supported[d] = 1;
    cmf.peer_ok = 1;
    cmf.driver_version = 13000;
    cmf.elapsed_ms = 1.0f;
    cmf.pitch_align = 512;
    cmf.managed_limit = (size_t)4 * total;
    for (int d = 0; d < CMF_MAX_DEV; ++d) { /* an H200's texture limits, managed memory on Linux */
        static const struct { enum cudaDeviceAttr a; int v; } attrs[] = {
            {cudaDevAttrTextureAlignment, 512}, {cudaDevAttrTexturePitchAlignment, 32},
            {cudaDevAttrMaxTexture1DLinearWidth, 1 << 28},
            {cudaDevAttrMaxTexture2DLinearWidth, 131072}, {cudaDevAttrMaxTexture2DLinearHeight, 65000},
            {cudaDevAttrMaxTexture2DLinearPitch, 2097120}, {cudaDevAttrMaxTexture2DWidth, 131072},
            {cudaDevAttrMaxTexture2DHeight, 65536}, {cudaDevAttrMaxSurface2DWidth, 131072},
            {cudaDevAttrMaxSurface2DHeight, 65536}, {cudaDevAttrManagedMemory, 1},
            {cudaDevAttrConcurrentManagedAccess, 1}, {cudaDevAttrPageableMemoryAccess, 0}};
        for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; ++i) {
            cmf.attr_val[d][attrs[i].a] = attrs[i].v;
            cmf.attr_has[d][attrs[i].a] = 1;
        }
    }
    for (int m = 0; m < CMF_N_MEMBERS; ++m) {
        cmf.fail_text[m] = "unrecognized error code";
        atomic_store(&cmf_hits[m], 0);
        atomic_store(&cmf_fails[m], 0);
    }
    atomic_store(&cmf_gated_calls, 0);
#if CM_HAVE_NCCL
    cmf.fail_text[CMF_IDX_nccl_get_last_error] = NULL;
    cmf.fail_text[CMF_IDX_nccl_get_error_string] = "unknown result code";
#endif
    cmf_tl_depth = 0;
    cmf_tl_bound = -1;
    cmf_tl_runtime_dev = 0;
    cmf_tl_capturing = 0;
    cmf_tl_last_error = 0;
    cmf_tl_group = 0;
    cmf_tl_n_arms = 0;
    cmf_tl_implicit_what = NULL;
#define CMF_SET_UNDER(m, R, params, args, on_fail) cmf.under.m = cmf_##m;
#define CMF_SET_GATE(m, R, params, args, on_fail) cm__cuda.m = cmf_gate_##m;
    CMF_CUDA_GATES(CMF_SET_UNDER)
    CMF_NCCL_GATES(CMF_SET_UNDER)
    CMF_CUDA_GATES(CMF_SET_GATE)
    CMF_NCCL_GATES(CMF_SET_GATE)
#undef CMF_SET_UNDER
#undef CMF_SET_GATE
    cm__context_reset_for_tests();
    cm__primary_reset_for_tests();
    cm__launch_cache_reset_for_tests();
    cm__parked_devices_forget_for_tests();
    cm_last_error_clear();
}

/* What the library still holds in the simulation (0: nothing leaked). Leaves out what a failed
 * free kept (orphans), the test's own streams, everything of a lost device, and (counted apart
 * in cmf.capture_leaks) memory whose cudaFree CUDA refused during a capture of the thread. */
static inline int cmf_outstanding(char *why, size_t size) {
    CMF_LOCK();
    int n = 0;
    if (why != NULL && size > 0) why[0] = '\0';
    for (cmf_alloc_t *a = cmf.allocs; a != NULL; a = a->next) {
        if (a->orphan || a->user || a->refused_in_capture || cmf.lost[a->device]) continue;
        if (n++ == 0 && why != NULL)
            snprintf(why, size, "%s of %zu bytes on device %d",
                     a->kind == CMF_MEM_DEV ? "device memory" : a->kind == CMF_MEM_POOL ? "pool memory"
                     : a->kind == CMF_MEM_PINNED ? "pinned memory"
                     : a->kind == CMF_MEM_MANAGED ? "managed memory" : "a host registration",
                     a->n, a->device);
    }
    static const char *const kinds[] = {"?", "stream", "event", "graph", "graph executable",
                                        "memory pool", "NCCL communicator", "CUDA array",
                                        "texture object", "surface object", "symbol"};
    for (cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next) {
        if (!o->live || o->orphan || o->user || cmf.lost[o->device]) continue;
        if (o->kind == CMF_STREAM && ((cmf.ignore_stream_devs >> o->device) & 1u)) continue;
        if (n++ == 0 && why != NULL) snprintf(why, size, "a %s of device %d", kinds[o->kind], o->device);
    }
    return n;
}

/* What the library left behind after a test, each printed: live handles of any kind, simulated
 * resources it still holds, simulation violations. 0 when nothing (teardowns add their own). */
static inline int cmf_leftovers_report(void) {
    int bad = 0;
    for (int k = 1; k < CM__KIND_COUNT; ++k) {
        size_t live = cm__handle_live_count((cm__kind_t)k);
        if (live != 0) {
            fprintf(stderr, "%zu live %s handle(s) left\n", live, cm__kind_name((cm__kind_t)k));
            bad = 1;
        }
    }
    char what[256];
    int left = cmf_outstanding(what, sizeof what);
    if (left != 0) {
        fprintf(stderr, "the library still holds %d simulated resources (%s)\n", left, what);
        bad = 1;
    }
    if (cmf.violations != 0) {
        fprintf(stderr, "simulation violation: %s\n", cmf.last_violation);
        bad = 1;
    }
    return bad;
}

/* Restore the table, free the simulation, reset the library's caches. */
static inline void cmf_uninstall(void) {
    cm__cuda = cmf.saved;
    while (cmf.allocs != NULL) {
        cmf_alloc_t *a = cmf.allocs;
        cmf.allocs = a->next;
        if (a->kind != CMF_MEM_REGISTERED) free(a->p);
        free(a);
    }
    while (cmf.objs != NULL) {
        cmf_obj_t *o = cmf.objs;
        cmf.objs = o->all_next;
        free(o->ops);
        free(o->data);
        free(o);
    }
    free(cmf.set);
    cmf.set = NULL;
    cmf.set_cap = cmf.set_n = 0;
    cmf.installed = 0;
    cmf_tl_n_arms = 0;
    cmf_tl_depth = 0;
    cmf_tl_bound = -1;
    cmf_tl_capturing = 0;
    cm__context_reset_for_tests();
    cm__primary_reset_for_tests();
    cm__launch_cache_reset_for_tests();
    cm__parked_devices_forget_for_tests();
    cm_last_error_clear();
}

/* A CUDA stream of the application on device d (for cm_stream_wrap()), never the library's. */
static inline cudaStream_t cmf_user_stream(int d) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_new(CMF_STREAM, d);
    o->user = 1;
    return (cudaStream_t)(void *)o;
}
static inline void cmf_user_stream_destroy(cudaStream_t s) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    if (o != NULL) o->live = 0;
}

/* The device of the simulated allocation holding p (-1: none) and its kind. */
static inline int cmf_alloc_device(const void *p, cmf_mem_t *kind) {
    CMF_LOCK();
    cmf_alloc_t *a = cmf_find_byte(p);
    if (kind != NULL) *kind = a != NULL ? a->kind : (cmf_mem_t)0;
    return a != NULL ? a->device : -1;
}

/* The device of a simulated object (stream, event...), -1 when p is none. */
static inline int cmf_obj_device(const void *p) {
    CMF_LOCK();
    if (!cmf_set_has(p)) return -1;
    return ((const cmf_obj_t *)p)->device;
}

/* Forget this thread's implicit binding, counted once (a known issue the caller tolerates). */
static inline void cmf_forgive_implicit(void) {
    CMF_LOCK();
    if (cmf_tl_bound >= 0 && cmf.implicit_ctx > 0) --cmf.implicit_ctx;
    if (cmf.implicit_ctx == 0) cmf.implicit_what[0] = '\0';
    cmf_tl_bound = -1;
    cmf_tl_implicit_what = NULL;
}

/* The runtime call that last bound a context implicitly on this thread (NULL: none). */
static inline const char *cmf_implicit_call(void) {
    return cmf_tl_bound >= 0 ? cmf_tl_implicit_what : NULL;
}

/* The thread's context stack depth and binding (the library gives back what it found). */
static inline int cmf_ctx_depth(void) {
    return cmf_tl_depth;
}
static inline int cmf_ctx_bound(void) {
    return cmf_tl_bound;
}

/* ---------------------------------------------------------------- memory spaces: the test's side */

/* A __constant__ / __device__ symbol of `size` bytes on every simulated device (its storage is
 * device memory of the test, zeroed): the address to pass as the symbol. */
static inline const void *cmf_symbol(size_t size) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_new(CMF_SYMBOL, 0);
    o->user = 1;
    o->sym_size = size;
    for (int d = 0; d < cmf.devices; ++d) {
        void *m = cmf_memory(size);
        if (m == NULL) abort();
        memset(m, 0, size ? size : 1);
        cmf_add(m, size, CMF_MEM_DEV, d)->user = 1;
        o->sym_data[d] = m;
    }
    return o;
}
/* The storage of a symbol on device d. */
static inline unsigned char *cmf_symbol_data(const void *sym, int d) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_any(sym, CMF_SYMBOL);
    return o != NULL ? o->sym_data[d] : NULL;
}
/* Set a device attribute the simulation answers. */
static inline void cmf_set_attr(int d, enum cudaDeviceAttr a, int v) {
    CMF_LOCK();
    cmf.attr_val[d][a] = v;
    cmf.attr_has[d][a] = 1;
}
/* Live simulated objects of a kind (arrays, textures...), the library's and the test's. */
static inline int cmf_live_objects(cmf_kind_t kind) {
    CMF_LOCK();
    int n = 0;
    for (cmf_obj_t *o = cmf.objs; o != NULL; o = o->all_next) n += o->live && o->kind == kind;
    return n;
}
/* The data of a simulated array (rows of row_bytes), for checks. */
static inline const unsigned char *cmf_array_data(const void *cuda_array, size_t *row_bytes) {
    CMF_LOCK();
    cmf_obj_t *o = cmf_any(cuda_array, CMF_ARRAY);
    if (o == NULL) return NULL;
    if (row_bytes != NULL) *row_bytes = o->row_bytes;
    return o->data;
}

#endif /* CM_TEST_FULL_FAKE_H */
