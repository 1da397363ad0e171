/*
 * FAULT INJECTION: a simulated CUDA device for the host tests of the memory module.
 *
 * fake_install() replaces every CUDA call of the memory module (cm__cuda, src/internal.h) with
 * a simulation backed by host malloc: cudaMalloc, pools (reserved / used / trimmed like CUDA's),
 * pinned and registered host memory, pointer attributes, copies (checked against the simulated
 * allocations: a copy that leaves them counts as a violation instead of corrupting memory),
 * memsets, the fill kernel, streams of several devices, events and peer access. Device memory
 * is limited to fake.total bytes (minus fake.external, "other processes"), so out-of-memory is
 * real within the simulation. Any call can be made to fail: fake_fail(FAKE_X, err, nth).
 *
 * This is what lets CI (no GPU) run every path of buffer.c, host_buffer.c, staging.c,
 * device_object.c and oom_report.c, including their failure paths, and check that none of them
 * leaks (fake_outstanding()). NVML (the table cm__nvml) is made absent, as on a machine without
 * the driver, so that no test reaches a real GPU's NVML (test_nvml.c fakes it instead). Real-GPU behaviour is tested in tests/gpu/test_gpu_buffer*.c.
 * Not thread-safe (the library calls the hooks from the caller's thread only).
 */
#ifndef CM_TEST_BUFFER_FAKE_H
#define CM_TEST_BUFFER_FAKE_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/status.h>

#include "cm_test.h"
#include "internal.h"
#include "memory_internal.h"
#include "nvml_query.h"

enum fake_call {
    FAKE_GET_DEVICE_COUNT, FAKE_SET_DEVICE, FAKE_PROPS, FAKE_ATTR, FAKE_MEM_INFO, FAKE_MALLOC,
    FAKE_FREE, FAKE_POOL_CREATE, FAKE_POOL_DESTROY, FAKE_POOL_SET, FAKE_POOL_GET, FAKE_POOL_TRIM,
    FAKE_POOL_ACCESS, FAKE_MALLOC_ASYNC, FAKE_FREE_ASYNC, FAKE_HOST_ALLOC, FAKE_FREE_HOST,
    FAKE_HOST_REGISTER, FAKE_HOST_UNREGISTER, FAKE_HOST_DEVPTR, FAKE_PTR_ATTR, FAKE_MEMCPY,
    FAKE_MEMCPY_ASYNC, FAKE_MEMCPY_PEER, FAKE_MEMCPY_PEER_ASYNC, FAKE_MEMSET_ASYNC, FAKE_FILL,
    FAKE_STREAM_DEVICE, FAKE_STREAM_SYNC, FAKE_EVENT_CREATE, FAKE_EVENT_RECORD, FAKE_EVENT_SYNC,
    FAKE_EVENT_DESTROY, FAKE_CAN_PEER, FAKE_ENABLE_PEER, FAKE_CTX_RETAIN, FAKE_STREAM_CTX, FAKE_NCALLS
};

enum fake_kind { FAKE_DEV = 1, FAKE_POOLMEM, FAKE_PINNED, FAKE_REGISTERED };

typedef struct fake_alloc {
    unsigned char *p;
    size_t n;
    enum fake_kind kind;
    int device;
    int pool; /* index for FAKE_POOLMEM */
    struct fake_alloc *next;
} fake_alloc_t;

#define FAKE_MAX_POOLS 8

typedef struct fake_pool {
    int live;
    int device;
    size_t used, reserved, peak;
    unsigned long long threshold;
} fake_pool_t;

#define FAKE_CTX_DEPTH 16

static struct fake_state {
    int device_count;
    int current;
    int has_ctx;                  /* a context is current (else "none": CUDA's fresh thread) */
    int ctx_created[8];           /* a context was created on the device (retain, set_device) */
    int ctx_depth;                /* pushed contexts */
    int ctx_saved_current[FAKE_CTX_DEPTH], ctx_saved_has[FAKE_CTX_DEPTH];
    int pools_supported;
    int cc_major, cc_minor, sm_count; /* device attributes (0 unless a test sets them) */
    int peer_ok;
    size_t total;       /* per device */
    size_t external;    /* held by "other processes" */
    size_t max_piece;   /* largest single cudaMalloc that succeeds (0: any that fits), as if
                         * the free memory were fragmented */
    size_t largest_ask; /* the largest size cudaMalloc was asked for */
    size_t sync_used[4];
    fake_pool_t pools[FAKE_MAX_POOLS];
    fake_alloc_t *allocs;
    int events;         /* live events */
    unsigned long calls[FAKE_NCALLS];
    cudaError_t fail_err[FAKE_NCALLS];
    unsigned long fail_at[FAKE_NCALLS]; /* fail when calls reaches this (0: never) */
    int fail_always[FAKE_NCALLS];
    int violations;     /* copies or frees outside the simulated memory */
    char last_violation[160];
    cm__cuda_t saved;
    cm__nvml_calls_t saved_nvml;
} fake;

/* A stream of simulated device d (never dereferenced). */
#define FAKE_STREAM(d) ((cudaStream_t)(uintptr_t)(0x5000u + 0x10u * (unsigned)(d)))
#define FAKE_BAD_STREAM ((cudaStream_t)(uintptr_t)0x7777u)

/* Make the nth next call of kind `call` fail with err (always: every call from then on). */
static inline void fake_fail(enum fake_call call, cudaError_t err, unsigned long nth) {
    fake.fail_err[call] = err;
    fake.fail_at[call] = fake.calls[call] + nth;
    fake.fail_always[call] = 0;
}

static inline void fake_fail_always(enum fake_call call, cudaError_t err) {
    fake.fail_err[call] = err;
    fake.fail_at[call] = fake.calls[call] + 1;
    fake.fail_always[call] = 1;
}

static inline void fake_fail_clear(void) {
    memset(fake.fail_at, 0, sizeof fake.fail_at);
    memset(fake.fail_always, 0, sizeof fake.fail_always);
}

/* Count a call; true when it must fail (*err set). */
static inline int fake_enter(enum fake_call call, cudaError_t *err) {
    unsigned long n = ++fake.calls[call];
    if (fake.fail_at[call] != 0 && (n == fake.fail_at[call] || (fake.fail_always[call] && n > fake.fail_at[call]))) {
        *err = fake.fail_err[call];
        return 1;
    }
    return 0;
}

/* The library may call the hooks from several threads (test_buffer_threads.c): every hook
 * holds one recursive mutex from FAKE_ENTER to its return (cleanup attribute). The current
 * device is process-wide in the simulation (per thread in CUDA): threaded tests use one device. */
static pthread_mutex_t fake_mutex;

static inline void fake_unlock_at_return(int *unused) {
    (void)unused;
    pthread_mutex_unlock(&fake_mutex);
}

#define FAKE_ENTER(call)                                                                     \
    pthread_mutex_lock(&fake_mutex);                                                         \
    int fake_guard_ __attribute__((cleanup(fake_unlock_at_return))) = 0;                    \
    (void)fake_guard_;                                                                       \
    do {                                                                                     \
        cudaError_t fake_err_;                                                               \
        if (fake_enter((call), &fake_err_)) return fake_err_;                                \
    } while (0)

static inline void fake_violation(const char *what) {
    ++fake.violations;
    strncpy(fake.last_violation, what, sizeof fake.last_violation - 1);
}

static inline size_t fake_pool_reserved(int device) {
    size_t r = 0;
    for (int i = 0; i < FAKE_MAX_POOLS; ++i)
        if (fake.pools[i].live && fake.pools[i].device == device) r += fake.pools[i].reserved;
    return r;
}

static inline size_t fake_free_bytes(int device) {
    size_t used = fake.sync_used[device] + fake_pool_reserved(device) + fake.external;
    return used >= fake.total ? 0 : fake.total - used;
}

static inline fake_alloc_t *fake_find(const void *p, size_t n) {
    const unsigned char *q = p;
    for (fake_alloc_t *a = fake.allocs; a != NULL; a = a->next) {
        if (a->p == NULL) continue;
        if (q >= a->p && q < a->p + a->n && n <= (size_t)(a->p + a->n - q)) return a;
    }
    return NULL;
}

static inline fake_alloc_t *fake_find_exact(const void *p) {
    for (fake_alloc_t *a = fake.allocs; a != NULL; a = a->next)
        if (a->p == p) return a;
    return NULL;
}

static inline void fake_unlink(fake_alloc_t *x) {
    for (fake_alloc_t **a = &fake.allocs; *a != NULL; a = &(*a)->next) {
        if (*a == x) {
            *a = x->next;
            return;
        }
    }
}

static inline fake_alloc_t *fake_add(void *p, size_t n, enum fake_kind kind, int pool) {
    fake_alloc_t *a = calloc(1, sizeof *a);
    a->p = p;
    a->n = n;
    a->kind = kind;
    a->device = fake.current;
    a->pool = pool;
    a->next = fake.allocs;
    fake.allocs = a;
    return a;
}

static inline int fake_is_device(const fake_alloc_t *a) {
    return a != NULL && (a->kind == FAKE_DEV || a->kind == FAKE_POOLMEM);
}

/* ---------------------------------------------------------------- the hooks */

static inline cudaError_t fake_get_device_count(int *n) {
    FAKE_ENTER(FAKE_GET_DEVICE_COUNT);
    *n = fake.device_count;
    return cudaSuccess;
}
static inline cudaError_t fake_get_device(int *d) {
    pthread_mutex_lock(&fake_mutex);
    *d = fake.current;
    pthread_mutex_unlock(&fake_mutex);
    return cudaSuccess;
}
static inline cudaError_t fake_set_device(int d) {
    FAKE_ENTER(FAKE_SET_DEVICE);
    if (d < 0 || d >= fake.device_count) return cudaErrorInvalidDevice;
    fake.current = d;
    fake.has_ctx = 1;
    if (d < 8) fake.ctx_created[d] = 1; /* cudaSetDevice initialises the primary context */
    return cudaSuccess;
}
/* The driver's context stack, simulated: a context is (void *)(device + 1). A push counts as
 * FAKE_SET_DEVICE (both make a device current), so fake_fail(FAKE_SET_DEVICE) fails switches. */
static inline cudaError_t fake_ctx_retain(void **ctx, int d) {
    FAKE_ENTER(FAKE_CTX_RETAIN);
    if (d < 0 || d >= fake.device_count) return cudaErrorInvalidDevice;
    if (d < 8) fake.ctx_created[d] = 1;
    *ctx = (void *)(uintptr_t)(d + 1);
    return cudaSuccess;
}
static inline cudaError_t fake_ctx_get_current(void **ctx) {
    pthread_mutex_lock(&fake_mutex);
    *ctx = fake.has_ctx ? (void *)(uintptr_t)(fake.current + 1) : NULL;
    pthread_mutex_unlock(&fake_mutex);
    return cudaSuccess;
}
static inline cudaError_t fake_ctx_push(void *ctx) {
    FAKE_ENTER(FAKE_SET_DEVICE);
    int d = (int)(uintptr_t)ctx - 1;
    if (d < 0 || d >= fake.device_count || fake.ctx_depth >= FAKE_CTX_DEPTH)
        return cudaErrorInvalidValue;
    fake.ctx_saved_current[fake.ctx_depth] = fake.current;
    fake.ctx_saved_has[fake.ctx_depth] = fake.has_ctx;
    ++fake.ctx_depth;
    fake.current = d;
    fake.has_ctx = 1;
    return cudaSuccess;
}
static inline cudaError_t fake_ctx_pop(void **ctx) {
    pthread_mutex_lock(&fake_mutex);
    cudaError_t err = cudaErrorInvalidValue;
    if (fake.ctx_depth > 0) {
        if (ctx != NULL) *ctx = (void *)(uintptr_t)(fake.current + 1);
        --fake.ctx_depth;
        fake.current = fake.ctx_saved_current[fake.ctx_depth];
        fake.has_ctx = fake.ctx_saved_has[fake.ctx_depth];
        err = cudaSuccess;
    }
    pthread_mutex_unlock(&fake_mutex);
    return err;
}
static inline cudaError_t fake_props(struct cudaDeviceProp *p, int d) {
    FAKE_ENTER(FAKE_PROPS);
    if (d < 0 || d >= fake.device_count) return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "Fake GPU");
    p->major = 9;
    p->totalGlobalMem = fake.total;
    return cudaSuccess;
}
static inline cudaError_t fake_attr(int *v, enum cudaDeviceAttr attr, int d) {
    FAKE_ENTER(FAKE_ATTR);
    (void)d;
    *v = attr == cudaDevAttrMemoryPoolsSupported       ? fake.pools_supported
         : attr == cudaDevAttrComputeCapabilityMajor ? fake.cc_major
         : attr == cudaDevAttrComputeCapabilityMinor ? fake.cc_minor
         : attr == cudaDevAttrMultiProcessorCount    ? fake.sm_count
                                                     : 0;
    return cudaSuccess;
}
static inline cudaError_t fake_mem_info(size_t *f, size_t *t) {
    FAKE_ENTER(FAKE_MEM_INFO);
    *f = fake_free_bytes(fake.current);
    *t = fake.total;
    return cudaSuccess;
}
static inline cudaError_t fake_malloc(void **p, size_t n) {
    FAKE_ENTER(FAKE_MALLOC);
    if (n > fake.largest_ask) fake.largest_ask = n;
    if (n > fake_free_bytes(fake.current)) return cudaErrorMemoryAllocation;
    if (fake.max_piece != 0 && n > fake.max_piece) return cudaErrorMemoryAllocation;
    void *m = malloc(n ? n : 1);
    if (m == NULL) return cudaErrorMemoryAllocation;
    fake_add(m, n, FAKE_DEV, -1);
    fake.sync_used[fake.current] += n;
    *p = m;
    return cudaSuccess;
}
static inline cudaError_t fake_free(void *p) {
    FAKE_ENTER(FAKE_FREE);
    if (p == NULL) return cudaSuccess;
    fake_alloc_t *a = fake_find_exact(p);
    if (!fake_is_device(a)) {
        fake_violation("cudaFree of memory that is not a device allocation");
        return cudaErrorInvalidValue;
    }
    if (a->kind == FAKE_DEV) fake.sync_used[a->device] -= a->n;
    else fake.pools[a->pool].used -= a->n; /* cudaFree of pool memory: allowed by CUDA */
    fake_unlink(a);
    free(a->p);
    free(a);
    return cudaSuccess;
}
static inline cudaError_t fake_pool_create(cudaMemPool_t *pool, const struct cudaMemPoolProps *pp) {
    FAKE_ENTER(FAKE_POOL_CREATE);
    for (int i = 0; i < FAKE_MAX_POOLS; ++i) {
        if (!fake.pools[i].live) {
            memset(&fake.pools[i], 0, sizeof fake.pools[i]);
            fake.pools[i].live = 1;
            fake.pools[i].device = pp->location.id;
            *pool = (cudaMemPool_t)(void *)&fake.pools[i];
            return cudaSuccess;
        }
    }
    return cudaErrorMemoryAllocation;
}
static inline fake_pool_t *fake_pool_of(cudaMemPool_t pool) {
    fake_pool_t *p = (fake_pool_t *)(void *)pool;
    if (p < fake.pools || p >= fake.pools + FAKE_MAX_POOLS || !p->live) return NULL;
    return p;
}
static inline cudaError_t fake_pool_destroy(cudaMemPool_t pool) {
    FAKE_ENTER(FAKE_POOL_DESTROY);
    fake_pool_t *p = fake_pool_of(pool);
    if (p == NULL) return cudaErrorInvalidValue;
    if (p->used != 0) fake_violation("pool destroyed with live allocations");
    p->live = 0;
    return cudaSuccess;
}
static inline cudaError_t fake_pool_set(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *v) {
    FAKE_ENTER(FAKE_POOL_SET);
    fake_pool_t *p = fake_pool_of(pool);
    if (p == NULL) return cudaErrorInvalidValue;
    if (attr == cudaMemPoolAttrReleaseThreshold) p->threshold = *(unsigned long long *)v;
    return cudaSuccess;
}
static inline cudaError_t fake_pool_get(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void *v) {
    FAKE_ENTER(FAKE_POOL_GET);
    fake_pool_t *p = fake_pool_of(pool);
    if (p == NULL) return cudaErrorInvalidValue;
    unsigned long long *out = v;
    switch (attr) {
    case cudaMemPoolAttrReservedMemCurrent: *out = p->reserved; break;
    case cudaMemPoolAttrUsedMemCurrent: *out = p->used; break;
    case cudaMemPoolAttrReservedMemHigh: *out = p->peak; break;
    case cudaMemPoolAttrReleaseThreshold: *out = p->threshold; break;
    default: *out = 0; break;
    }
    return cudaSuccess;
}
static inline cudaError_t fake_pool_trim(cudaMemPool_t pool, size_t keep) {
    FAKE_ENTER(FAKE_POOL_TRIM);
    fake_pool_t *p = fake_pool_of(pool);
    if (p == NULL) return cudaErrorInvalidValue;
    size_t cached = p->reserved - p->used;
    p->reserved = p->used + (keep < cached ? keep : cached);
    return cudaSuccess;
}
static inline cudaError_t fake_pool_access(cudaMemPool_t pool, const struct cudaMemAccessDesc *d,
                                           size_t n) {
    FAKE_ENTER(FAKE_POOL_ACCESS);
    (void)d;
    (void)n;
    return fake_pool_of(pool) ? cudaSuccess : cudaErrorInvalidValue;
}
static inline int fake_stream_device(cudaStream_t s) {
    uintptr_t v = (uintptr_t)s;
    if (s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread) return fake.current;
    if (v < 0x5000u || (v - 0x5000u) % 0x10u != 0) return -1;
    int d = (int)((v - 0x5000u) / 0x10u);
    return d < fake.device_count ? d : -1;
}
static inline cudaError_t fake_malloc_async(void **ptr, size_t n, cudaMemPool_t pool,
                                            cudaStream_t s) {
    FAKE_ENTER(FAKE_MALLOC_ASYNC);
    fake_pool_t *p = fake_pool_of(pool);
    if (p == NULL || fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    size_t cached = p->reserved - p->used;
    if (n > cached) {
        size_t need = n - cached;
        if (need > fake_free_bytes(p->device)) return cudaErrorMemoryAllocation;
        p->reserved += need;
    }
    p->used += n;
    if (p->reserved > p->peak) p->peak = p->reserved;
    void *m = malloc(n ? n : 1);
    fake_add(m, n, FAKE_POOLMEM, (int)(p - fake.pools))->device = p->device;
    *ptr = m;
    return cudaSuccess;
}
static inline cudaError_t fake_free_async(void *ptr, cudaStream_t s) {
    FAKE_ENTER(FAKE_FREE_ASYNC);
    if (fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    fake_alloc_t *a = fake_find_exact(ptr);
    if (a == NULL || a->kind != FAKE_POOLMEM) {
        fake_violation("cudaFreeAsync of memory that is not a pool allocation");
        return cudaErrorInvalidValue;
    }
    fake.pools[a->pool].used -= a->n; /* the memory stays reserved: cached */
    fake_unlink(a);
    free(a->p);
    free(a);
    return cudaSuccess;
}
static inline cudaError_t fake_host_alloc(void **p, size_t n, unsigned flags) {
    FAKE_ENTER(FAKE_HOST_ALLOC);
    (void)flags;
    void *m = malloc(n ? n : 1);
    if (m == NULL) return cudaErrorMemoryAllocation;
    fake_add(m, n, FAKE_PINNED, -1);
    *p = m;
    return cudaSuccess;
}
static inline cudaError_t fake_free_host(void *p) {
    FAKE_ENTER(FAKE_FREE_HOST);
    fake_alloc_t *a = fake_find_exact(p);
    if (a == NULL || a->kind != FAKE_PINNED) {
        fake_violation("cudaFreeHost of memory that is not pinned");
        return cudaErrorInvalidValue;
    }
    fake_unlink(a);
    free(a->p);
    free(a);
    return cudaSuccess;
}
static inline cudaError_t fake_host_register(void *p, size_t n, unsigned flags) {
    FAKE_ENTER(FAKE_HOST_REGISTER);
    (void)flags;
    if (fake_find(p, 1) != NULL) return cudaErrorHostMemoryAlreadyRegistered;
    fake_add(p, n, FAKE_REGISTERED, -1);
    return cudaSuccess;
}
static inline cudaError_t fake_host_unregister(void *p) {
    FAKE_ENTER(FAKE_HOST_UNREGISTER);
    fake_alloc_t *a = fake_find_exact(p);
    if (a == NULL || a->kind != FAKE_REGISTERED) return cudaErrorHostMemoryNotRegistered;
    fake_unlink(a);
    free(a); /* the memory is the caller's */
    return cudaSuccess;
}
static inline cudaError_t fake_host_devptr(void **d, void *h, unsigned flags) {
    FAKE_ENTER(FAKE_HOST_DEVPTR);
    (void)flags;
    *d = h; /* the simulation maps host memory at the same address */
    return cudaSuccess;
}
static inline cudaError_t fake_ptr_attr(struct cudaPointerAttributes *attr, const void *p) {
    FAKE_ENTER(FAKE_PTR_ATTR);
    memset(attr, 0, sizeof *attr);
    fake_alloc_t *a = fake_find(p, 1);
    if (a == NULL) {
        attr->type = cudaMemoryTypeUnregistered;
        attr->device = -2;
    } else {
        attr->type = fake_is_device(a) ? cudaMemoryTypeDevice : cudaMemoryTypeHost;
        attr->device = a->device;
    }
    return cudaSuccess;
}
/* A copy is legal when each side lies in memory of the kind the copy names (host memory
 * that the simulation does not know is the caller's: allowed). */
static inline int fake_copy_ok(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
    fake_alloc_t *d = fake_find(dst, n), *s = fake_find(src, n);
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) return 1;
    if (dst_dev ? !fake_is_device(d) : fake_is_device(fake_find(dst, 1))) {
        fake_violation("copy destination outside the simulated memory of its kind");
        return 0;
    }
    if (src_dev ? !fake_is_device(s) : fake_is_device(fake_find(src, 1))) {
        fake_violation("copy source outside the simulated memory of its kind");
        return 0;
    }
    return 1;
}
static inline cudaError_t fake_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k) {
    FAKE_ENTER(FAKE_MEMCPY);
    if (!fake_copy_ok(dst, src, n, k)) return cudaErrorInvalidValue;
    memmove(dst, src, n);
    return cudaSuccess;
}
static inline cudaError_t fake_memcpy_async(void *dst, const void *src, size_t n,
                                            enum cudaMemcpyKind k, cudaStream_t s) {
    FAKE_ENTER(FAKE_MEMCPY_ASYNC);
    if (fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    if (!fake_copy_ok(dst, src, n, k)) return cudaErrorInvalidValue;
    memmove(dst, src, n);
    return cudaSuccess;
}
static inline cudaError_t fake_memcpy_peer(void *dst, int dd, const void *src, int sd, size_t n) {
    FAKE_ENTER(FAKE_MEMCPY_PEER);
    fake_alloc_t *d = fake_find(dst, n), *s = fake_find(src, n);
    if (!fake_is_device(d) || !fake_is_device(s) || d->device != dd || s->device != sd) {
        fake_violation("peer copy outside device memory of the named devices");
        return cudaErrorInvalidValue;
    }
    memmove(dst, src, n);
    return cudaSuccess;
}
static inline cudaError_t fake_memcpy_peer_async(void *dst, int dd, const void *src, int sd,
                                                 size_t n, cudaStream_t s) {
    FAKE_ENTER(FAKE_MEMCPY_PEER_ASYNC);
    if (fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    fake.calls[FAKE_MEMCPY_PEER]--; /* counted as async only */
    return fake_memcpy_peer(dst, dd, src, sd, n);
}
static inline cudaError_t fake_memset_async(void *p, int v, size_t n, cudaStream_t s) {
    FAKE_ENTER(FAKE_MEMSET_ASYNC);
    if (fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    if (!fake_is_device(fake_find(p, n))) {
        fake_violation("memset outside device memory");
        return cudaErrorInvalidValue;
    }
    memset(p, v, n);
    return cudaSuccess;
}
static inline cudaError_t fake_fill(void *p, size_t n, const void *pattern, size_t pb,
                                    cudaStream_t s) {
    FAKE_ENTER(FAKE_FILL);
    if (fake_stream_device(s) < 0) return cudaErrorInvalidValue;
    if (!fake_is_device(fake_find(p, n)) || n % pb != 0 || (uintptr_t)p % pb != 0) {
        fake_violation("fill outside device memory or misaligned");
        return cudaErrorInvalidValue;
    }
    for (size_t i = 0; i < n; i += pb) memcpy((unsigned char *)p + i, pattern, pb);
    return cudaSuccess;
}
/* No simulated stream is ever being captured (tests that need one wrap this). Never reaches the
 * real runtime, which would dereference a simulated stream. */
static inline cudaError_t fake_stream_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
    if (s == FAKE_BAD_STREAM) return cudaErrorInvalidResourceHandle;
    *st = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
static inline cudaError_t fake_stream_get_device(cudaStream_t s, int *d) {
    FAKE_ENTER(FAKE_STREAM_DEVICE);
    int dev = fake_stream_device(s);
    if (dev < 0) return cudaErrorInvalidResourceHandle;
    *d = dev;
    return cudaSuccess;
}
/* The context of a stream: the primary context of its device, (void *)(device + 1), as for
 * every stream the runtime creates. A query of a default stream is an error (the library never
 * asks: those streams follow the current context). */
static inline cudaError_t fake_stream_get_ctx(cudaStream_t s, void **ctx) {
    FAKE_ENTER(FAKE_STREAM_CTX);
    int dev = s == 0 || s == cudaStreamLegacy || s == cudaStreamPerThread ? -1 : fake_stream_device(s);
    if (dev < 0) return cudaErrorInvalidResourceHandle;
    *ctx = (void *)(uintptr_t)(dev + 1);
    return cudaSuccess;
}
/* The stream priorities of a simulated device (the execution part of a device object asks once,
 * when it is made: cm_stream_wrap() on a simulated stream needs it). */
static inline cudaError_t fake_priority_range(int *least, int *greatest) {
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}
static inline cudaError_t fake_stream_sync(cudaStream_t s) {
    FAKE_ENTER(FAKE_STREAM_SYNC);
    return fake_stream_device(s) < 0 ? cudaErrorInvalidResourceHandle : cudaSuccess;
}
static inline cudaError_t fake_event_create(cudaEvent_t *e, unsigned flags) {
    FAKE_ENTER(FAKE_EVENT_CREATE);
    (void)flags;
    *e = (cudaEvent_t)malloc(16);
    ++fake.events;
    return cudaSuccess;
}
static inline cudaError_t fake_event_record(cudaEvent_t e, cudaStream_t s) {
    FAKE_ENTER(FAKE_EVENT_RECORD);
    (void)e;
    return fake_stream_device(s) < 0 ? cudaErrorInvalidResourceHandle : cudaSuccess;
}
static inline cudaError_t fake_event_sync(cudaEvent_t e) {
    FAKE_ENTER(FAKE_EVENT_SYNC);
    (void)e;
    return cudaSuccess;
}
static inline cudaError_t fake_event_destroy(cudaEvent_t e) {
    FAKE_ENTER(FAKE_EVENT_DESTROY);
    free((void *)e);
    --fake.events;
    return cudaSuccess;
}
static inline cudaError_t fake_can_peer(int *can, int d, int p) {
    FAKE_ENTER(FAKE_CAN_PEER);
    (void)d;
    (void)p;
    *can = fake.peer_ok;
    return cudaSuccess;
}
static inline cudaError_t fake_enable_peer(int p, unsigned flags) {
    FAKE_ENTER(FAKE_ENABLE_PEER);
    (void)p;
    (void)flags;
    return cudaSuccess;
}

/* NVML as on a machine without it (libnvidia-ml.so.1 missing), so that the simulated device
 * never reaches a real GPU's NVML; tests of NVML install their own (test_nvml.c). */
static inline cm__nvml_return_t fake_nvml_absent(void) {
    return CM__NVML_ERROR_LIBRARY_NOT_FOUND;
}

/* ---------------------------------------------------------------- install, inspect */

/* Simulate `devices` GPUs of `total` bytes each, with memory pools. */
static inline void fake_install(int devices, size_t total) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&fake_mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    cm__nvml_reset_for_tests(); /* with the table NVML was initialised through */
    cm__cuda_t saved = cm__cuda;
    cm__nvml_calls_t saved_nvml = cm__nvml;
    memset(&fake, 0, sizeof fake);
    fake.saved = saved;
    fake.saved_nvml = saved_nvml;
    fake.device_count = devices;
    fake.total = total;
    fake.pools_supported = 1;
    fake.peer_ok = 1;
    cm__cuda.get_device_count = fake_get_device_count;
    cm__cuda.get_device = fake_get_device;
    cm__cuda.primary_ctx_retain = fake_ctx_retain;
    cm__cuda.ctx_get_current = fake_ctx_get_current;
    cm__cuda.ctx_push_current = fake_ctx_push;
    cm__cuda.ctx_pop_current = fake_ctx_pop;
    cm__cuda.get_device_properties = fake_props;
    cm__cuda.device_get_attribute = fake_attr;
    cm__cuda.mem_get_info = fake_mem_info;
    cm__cuda.device_malloc = fake_malloc;
    cm__cuda.device_free = fake_free;
    cm__cuda.mem_pool_create = fake_pool_create;
    cm__cuda.mem_pool_destroy = fake_pool_destroy;
    cm__cuda.mem_pool_set_attribute = fake_pool_set;
    cm__cuda.mem_pool_get_attribute = fake_pool_get;
    cm__cuda.mem_pool_trim_to = fake_pool_trim;
    cm__cuda.mem_pool_set_access = fake_pool_access;
    cm__cuda.malloc_from_pool_async = fake_malloc_async;
    cm__cuda.free_async = fake_free_async;
    cm__cuda.host_alloc = fake_host_alloc;
    cm__cuda.free_host = fake_free_host;
    cm__cuda.host_register = fake_host_register;
    cm__cuda.host_unregister = fake_host_unregister;
    cm__cuda.host_get_device_pointer = fake_host_devptr;
    cm__cuda.pointer_get_attributes = fake_ptr_attr;
    cm__cuda.memcpy_sync = fake_memcpy;
    cm__cuda.memcpy_async = fake_memcpy_async;
    cm__cuda.memcpy_peer = fake_memcpy_peer;
    cm__cuda.memcpy_peer_async = fake_memcpy_peer_async;
    cm__cuda.memset_async = fake_memset_async;
    cm__cuda.fill_async = fake_fill;
    cm__cuda.stream_get_device = fake_stream_get_device;
    cm__cuda.stream_get_ctx = fake_stream_get_ctx;
    cm__cuda.stream_is_capturing = fake_stream_is_capturing;
    cm__cuda.stream_synchronize = fake_stream_sync;
    cm__cuda.priority_range = fake_priority_range;
    cm__cuda.event_create = fake_event_create;
    cm__cuda.event_record = fake_event_record;
    cm__cuda.event_synchronize = fake_event_sync;
    cm__cuda.event_destroy = fake_event_destroy;
    cm__cuda.device_can_access_peer = fake_can_peer;
    cm__cuda.device_enable_peer_access = fake_enable_peer;
    cm__nvml.init = fake_nvml_absent;
    cm__context_reset_for_tests();
    cm__primary_reset_for_tests();
    cm_last_error_clear();
}

/* Simulated resources still held: allocations, events and pools. 0 means nothing leaked. */
static inline int fake_outstanding(void) {
    int n = fake.events;
    for (fake_alloc_t *a = fake.allocs; a != NULL; a = a->next) ++n;
    for (int i = 0; i < FAKE_MAX_POOLS; ++i) n += fake.pools[i].live;
    return n;
}

/* Restore the real hooks and free whatever the simulation still holds. */
static inline void fake_uninstall(void) {
    while (fake.allocs != NULL) {
        fake_alloc_t *a = fake.allocs;
        fake.allocs = a->next;
        if (a->kind != FAKE_REGISTERED) free(a->p);
        free(a);
    }
    cm__nvml_reset_for_tests();
    cm__cuda = fake.saved;
    cm__nvml = fake.saved_nvml;
    pthread_mutex_destroy(&fake_mutex);
    cm__context_reset_for_tests();
    cm__primary_reset_for_tests();
    cm_last_error_clear();
}

/* CMocka fixtures: two simulated devices of 1 GiB each; the teardown fails when the simulation
 * still holds anything or saw a copy outside its memory. */
static inline int fake_setup2(void **state) {
    (void)state;
    fake_install(2, (size_t)1 << 30);
    return 0;
}

static inline int fake_teardown_clean(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (left || violations) ? -1 : 0;
}

/* ---------------------------------------------------------------- library streams */

/* A library stream wrapping the simulated stream FAKE_STREAM(d) (cm_stream_wrap(): d must be
 * dev's ordinal). Release it with cm_stream_release() before closing dev. */
static inline cm_stream_t *fake_wrap(cm_device_t *dev, int d) {
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, FAKE_STREAM(d), &w));
    return w;
}

/* The size of a live buffer (cm_buffer_info()). */
static inline size_t fake_buffer_bytes(const cm_buffer_t *b) {
    cm_buffer_info_t info;
    CM_ASSERT_OK(cm_buffer_info(b, &info));
    return info.bytes;
}

/* ---------------------------------------------------------------- assertions */

/* The call returned st, its message contains sub (NULL: any), and a hint is there. */
#define EXPECT_FAIL(expr, st, sub) fake_expect_fail((expr), (st), (sub), #expr, __FILE__, __LINE__)
static inline void fake_expect_fail(int got, int st, const char *sub, const char *expr,
                                    const char *file, int line) {
    cm_test_assert_status(got, st, expr, file, line);
    const cm_error_t *e = cm_last_error();
    if (sub != NULL && strstr(e->message, sub) == NULL) {
        print_error("%s: message \"%s\" lacks \"%s\"\n", expr, e->message, sub);
        _fail(file, line);
    }
    if (e->hint[0] == '\0') {
        print_error("%s: no hint (message \"%s\")\n", expr, e->message);
        _fail(file, line);
    }
}

/* Nothing simulated is held any more, and no copy left the simulated memory. */
#define EXPECT_CLEAN() fake_expect_clean(__FILE__, __LINE__)
static inline void fake_expect_clean(const char *file, int line) {
    if (fake_outstanding() != 0 || fake.violations != 0) {
        print_error("simulation: %d resources still held, %d violations (%s)\n", fake_outstanding(),
                    fake.violations, fake.last_violation);
        _fail(file, line);
    }
}

#endif /* CM_TEST_BUFFER_FAKE_H */
