/*
 * The memory module under the explicit-device core: one test per guarantee, each on the
 * simulated devices of test_buffer_fake.h (fault injection) with two devices and the
 * application's current device DIFFERENT from the object's, so that any CUDA call made on
 * "whatever device is current" instead of the object's own shows up.
 *
 * The fake's hooks are wrapped here to observe what CUDA would see at each call (which device
 * is current; whether the core spin lock is held) and to simulate what the plain fake does not
 * (a stream value recycled for another device; a capturing stream).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "lock.h"
#include "test_buffer_fake.h"

#define INV CM_ERROR_INVALID_ARGUMENT
#define MiB ((size_t)1 << 20)

static int setup(void **state) {
    (void)state;
    fake_install(2, (size_t)1 << 30);
    /* the application works on device 0 */
    fake.current = 0;
    fake.has_ctx = 1;
    return 0;
}


/* The application's current device is where it left it: device `d`, nothing left pushed. */
#define EXPECT_CURRENT(d)                                                                    \
    do {                                                                                     \
        assert_int_equal(fake.current, (d));                                                 \
        assert_int_equal(fake.has_ctx, 1);                                                   \
        assert_int_equal(fake.ctx_depth, 0);                                                 \
    } while (0)

/* ---------------------------------------------------------------- which device CUDA sees */

/* A hook's record: how often it ran and on which current device (-1: no context). */
typedef struct seen {
    int calls;
    int wrong;       /* calls made while another device than `want` was current */
    int last_device;
} seen_t;

static int want_device;
static seen_t seen_malloc_async, seen_free_async, seen_mem_info, seen_malloc, seen_memset;

static void note(seen_t *s) {
    int d = fake.has_ctx ? fake.current : -1;
    ++s->calls;
    s->last_device = d;
    if (d != want_device) ++s->wrong;
}

static cudaError_t w_malloc_async(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
    note(&seen_malloc_async);
    return fake_malloc_async(p, n, pool, s);
}
static cudaError_t w_free_async(void *p, cudaStream_t s) {
    note(&seen_free_async);
    return fake_free_async(p, s);
}
static cudaError_t w_mem_info(size_t *f, size_t *t) {
    note(&seen_mem_info);
    return fake_mem_info(f, t);
}
static cudaError_t w_malloc(void **p, size_t n) {
    note(&seen_malloc);
    return fake_malloc(p, n);
}
static cudaError_t w_memset(void *p, int v, size_t n, cudaStream_t s) {
    note(&seen_memset);
    return fake_memset_async(p, v, n, s);
}

static void watch_devices(int want) {
    want_device = want;
    memset(&seen_malloc_async, 0, sizeof(seen_t));
    memset(&seen_free_async, 0, sizeof(seen_t));
    memset(&seen_mem_info, 0, sizeof(seen_t));
    memset(&seen_malloc, 0, sizeof(seen_t));
    memset(&seen_memset, 0, sizeof(seen_t));
    cm__cuda.malloc_from_pool_async = w_malloc_async;
    cm__cuda.free_async = w_free_async;
    cm__cuda.mem_get_info = w_mem_info;
    cm__cuda.device_malloc = w_malloc;
    cm__cuda.memset_async = w_memset;
}

static const char *watch_case = ""; /* what the test is doing, for the failure message */

#define EXPECT_SEEN_ON_WANTED(s, at_least)                                                   \
    do {                                                                                     \
        if ((s).calls < (at_least) || (s).wrong != 0)                                        \
            fail_msg("%s%s: %d calls (expected >= %d), %d of them with device %d not "       \
                     "current (last: %d)", watch_case, #s, (s).calls, (at_least), (s).wrong, \
                     want_device, (s).last_device);                                          \
    } while (0)

/* A buffer's allocation, the work queued on it and its free run with ITS device current, not
 * the caller's: synchronously (stream NULL: cudaMalloc and the legacy default stream, which CUDA
 * resolves through the current device) and stream-ordered on a stream of device 1 (the stream
 * names its device: checked for the pool it allocates from and the restored current device). */
static void test_stream_ordered_buffer_allocates_on_its_device_not_current(void **state) {
    (void)state;
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    EXPECT_CURRENT(0);
    cm_stream_t *w1 = fake_wrap(d1, 1);
    EXPECT_CURRENT(0);
    cm_stream_t *const streams[] = {NULL, w1};
    const char *const names[] = {"stream NULL (synchronous): ", "a stream of device 1: "};
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; ++i) {
        const int sync = streams[i] == NULL;
        for (int how = 0; how < 2; ++how) {
            watch_devices(1);
            watch_case = names[i];
            cm_buffer_t *b = NULL;
            CM_ASSERT_OK(cm_buffer_create_on_stream(streams[i], d1, 4096, &b));
            if (sync) EXPECT_SEEN_ON_WANTED(seen_malloc, 1);
            assert_int_equal(seen_malloc_async.calls, sync ? 0 : 1);
            assert_int_equal(seen_malloc.calls, sync ? 1 : 0);
            EXPECT_CURRENT(0);
            /* the memory is device 1's: in its pool, or allocated synchronously on it */
            size_t used1 = 0, used0 = 0;
            for (int p = 0; p < FAKE_MAX_POOLS; ++p) {
                if (!fake.pools[p].live) continue;
                if (fake.pools[p].device == 1) used1 += fake.pools[p].used;
                else used0 += fake.pools[p].used;
            }
            assert_int_equal(used1, sync ? 0 : 4096);
            assert_int_equal(used0, 0);
            assert_int_equal(fake.sync_used[1], sync ? 4096 : 0);
            assert_int_equal(fake.sync_used[0], 0);
            cm_buffer_info_t info;
            CM_ASSERT_OK(cm_buffer_info(b, &info));
            assert_ptr_equal(info.device, d1);
            assert_int_equal(info.ordinal, 1);
            assert_ptr_equal(info.stream, streams[i]);
            assert_int_equal(info.stream_ordered, !sync);
            /* work queued on it runs on its device too */
            CM_ASSERT_OK(cm_buffer_set(streams[i], b, 0, 4096, 0x5a));
            EXPECT_SEEN_ON_WANTED(seen_memset, 1);
            EXPECT_CURRENT(0);
            if (how == 0) CM_ASSERT_OK(cm_buffer_destroy(b));
            else CM_ASSERT_OK(cm_buffer_destroy_on_stream(w1, b));
            assert_int_equal(seen_free_async.calls, sync ? 0 : 1);
            assert_int_equal(fake.sync_used[1], 0);
            EXPECT_CURRENT(0);
        }
    }
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CURRENT(0);
    EXPECT_CLEAN();
}

/* The out-of-memory report of a buffer of device 1 gives device 1's numbers (free
 * memory, what the library holds there, the largest allocation that succeeds), measured with
 * device 1 current, while the application has device 0 current. */
static void test_oom_report_measures_the_buffers_device(void **state) {
    (void)state;
    fake.total = 64 * MiB; /* per device */
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *big = NULL;
    CM_ASSERT_OK(cm_buffer_create(d1, 60 * MiB, &big)); /* device 1: 4 MiB left; device 0: 64 */
    EXPECT_CURRENT(0);
    char free1[32], free0[32], held1[32], want_free1[48], bad_free0[48];
    cm__format_bytes(4 * MiB, free1, sizeof free1);
    cm__format_bytes(64 * MiB, free0, sizeof free0);
    cm__format_bytes(60 * MiB, held1, sizeof held1);
    snprintf(want_free1, sizeof want_free1, "%s free", free1);
    snprintf(bad_free0, sizeof bad_free0, "%s free", free0);

    cm_stream_t *w1 = fake_wrap(d1, 1);
    for (int stream_ordered = 1; stream_ordered >= 0; --stream_ordered) {
        watch_devices(1);
        cm_buffer_t *b = NULL;
        if (stream_ordered)
            EXPECT_FAIL(cm_buffer_create_on_stream(w1, d1, 16 * MiB, &b),
                        CM_ERROR_DEVICE_OUT_OF_MEMORY, "device 1");
        else
            EXPECT_FAIL(cm_buffer_create(d1, 16 * MiB, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                        "device 1");
        assert_null(b);
        const cm_error_t *e = cm_last_error();
        assert_int_equal(e->device, 1);
        if (strstr(e->message, want_free1) == NULL || strstr(e->message, bad_free0) != NULL ||
            strstr(e->message, held1) == NULL)
            fail_msg("report not of device 1 (expected \"%s\" and %s held): %s", want_free1,
                     held1, e->message);
        /* cudaMemGetInfo and the probing cudaMalloc calls ran with device 1 current */
        EXPECT_SEEN_ON_WANTED(seen_mem_info, 1);
        EXPECT_SEEN_ON_WANTED(seen_malloc, stream_ordered ? 0 : 1);
        EXPECT_CURRENT(0);
    }
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_buffer_destroy(big));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CURRENT(0);
    EXPECT_CLEAN();
}

/* The label given to a stream-ordered create is copied: the caller may free it at once (under
 * ASan a kept pointer is a use after free; without it the string is overwritten before it is
 * freed, so a kept pointer shows "XXXX"). The file (a string of static storage duration, as
 * cm_buffer_create_at() documents: the handle keeps the pointer) is reported with its line. */
static void test_interop_create_copies_file_string(void **state) {
    (void)state;
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *w1 = fake_wrap(d1, 1);
    const char *text = "heap_made_label";
    char *label = malloc(strlen(text) + 1);
    assert_non_null(label);
    strcpy(label, text);
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_at(w1, d1, 64, &b, label, "generated/static_file.c", 4242));
    memset(label, 'X', strlen(label));
    free(label);
    label = NULL;

    char rep[4096];
    size_t len = 0;
    CM_ASSERT_OK(cm_device_leak_report(d1, rep, sizeof rep, &len));
    if (strstr(rep, "static_file.c:4242 \"heap_made_label\"") == NULL ||
        strstr(rep, "XXXX") != NULL)
        fail_msg("leak report lost the label or the file: %s", rep);
    cm_buffer_info_t info;
    CM_ASSERT_OK(cm_buffer_info(b, &info));
    assert_string_equal(info.label, "heap_made_label");
    /* the refused close reports it too */
    cm_status_t st = cm_device_close(d1);
    assert_int_not_equal(st, CM_OK);
    assert_non_null(strstr(cm_last_error()->message, "heap_made_label"));
    assert_null(strstr(cm_last_error()->message, "XXXX"));

    CM_ASSERT_OK(cm_buffer_destroy(b));
    /* a stale use may say what the buffer was: then with the copied text */
    EXPECT_FAIL(cm_buffer_info(b, &info), INV, "buffer");
    const char *m = cm_last_error()->message;
    assert_null(strstr(m, "XXXX"));
    if (strstr(m, "created at") != NULL) assert_non_null(strstr(m, "static_file.c:4242"));
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

/* A destroyed buffer's handle stays stale across its device's close and reopen and
 * after any number of later creates: it never acts on a new buffer. */
static void expect_buffer_stale(cm_buffer_t *stale, cm_stream_t *stream, cm_buffer_t *const *live,
                                size_t n_live) {
    cm_buffer_info_t info, before;
    memset(&info, 0x77, sizeof info);
    memcpy(&before, &info, sizeof info);
    EXPECT_FAIL(cm_buffer_info(stale, &info), INV, "buffer");
    assert_null(strstr(cm_last_error()->message, "host buffer"));
    assert_memory_equal(&info, &before, sizeof info); /* nothing written */
    EXPECT_FAIL(cm_buffer_set(NULL, stale, 0, 1, 0), INV, "buffer");
    EXPECT_FAIL(cm_buffer_set(stream, stale, 0, 1, 0), INV, "buffer");
    EXPECT_FAIL(cm_buffer_destroy(stale), INV, "buffer");
    EXPECT_FAIL(cm_buffer_destroy_on_stream(stream, stale), INV, "buffer");
    for (size_t i = 0; i < n_live; ++i) assert_ptr_not_equal(stale, live[i]);
}

static void test_stale_buffer_after_device_reopen_never_aliases(void **state) {
    (void)state;
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *w1 = fake_wrap(d1, 1);
    cm_buffer_t *old_sync = NULL, *old_so = NULL;
    CM_ASSERT_OK(cm_buffer_create(d1, 100, &old_sync));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, 100, &old_so));
    CM_ASSERT_OK(cm_buffer_destroy(old_sync));
    CM_ASSERT_OK(cm_buffer_destroy(old_so));
    cm_device_t *old_dev = d1;
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d1));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    w1 = fake_wrap(d1, 1);

    enum { N = 8 };
    cm_buffer_t *fresh[N];
    for (size_t i = 0; i < N; ++i) {
        if (i % 2) CM_ASSERT_OK(cm_buffer_create(d1, 200 + i, &fresh[i]));
        else CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, 200 + i, &fresh[i]));
    }
    expect_buffer_stale(old_sync, w1, fresh, N);
    expect_buffer_stale(old_so, w1, fresh, N);
    int ord = -1;
    EXPECT_FAIL(cm_device_ordinal(old_dev, &ord), INV, "device");
    /* none of the fresh buffers was touched by the refused calls */
    for (size_t i = 0; i < N; ++i) assert_int_equal(fake_buffer_bytes(fresh[i]), 200 + i);
    cm_memory_report_t rep;
    CM_ASSERT_OK(cm_device_memory_report(d1, &rep));
    assert_int_equal(rep.live_buffers, N);

    /* 1000 releases later (every slot reused many times) */
    for (int i = 0; i < 1000; ++i) {
        cm_buffer_t *t = NULL;
        if (i % 2) CM_ASSERT_OK(cm_buffer_create(d1, 16, &t));
        else CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, 16, &t));
        assert_ptr_not_equal(t, old_sync);
        assert_ptr_not_equal(t, old_so);
        CM_ASSERT_OK(cm_buffer_destroy(t));
    }
    expect_buffer_stale(old_sync, w1, fresh, N);
    expect_buffer_stale(old_so, w1, fresh, N);
    CM_ASSERT_OK(cm_device_memory_report(d1, &rep));
    assert_int_equal(rep.live_buffers, N);
    for (size_t i = 0; i < N; ++i) CM_ASSERT_OK(cm_buffer_destroy(fresh[i]));
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CURRENT(0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- the core spin lock */

/* Whether another thread can take the core spin lock within 2 s. If the calling thread holds
 * it, the probe thread spins until the lock is dropped: it is joined later (join_probes()). */
#define MAX_PROBES 64
static pthread_t probes[MAX_PROBES];
static int n_probes;
static atomic_int probe_done[MAX_PROBES];

static void *probe_main(void *arg) {
    cm__core_lock();
    cm__core_unlock();
    atomic_store((atomic_int *)arg, 1);
    return NULL;
}

static int core_lock_free(void) {
    if (n_probes >= MAX_PROBES) return 1; /* enough evidence already */
    int k = n_probes++;
    atomic_store(&probe_done[k], 0);
    if (pthread_create(&probes[k], NULL, probe_main, &probe_done[k]) != 0) fail_msg("pthread_create");
    for (int i = 0; i < 2000 && !atomic_load(&probe_done[k]); ++i) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return atomic_load(&probe_done[k]);
}

static void join_probes(void) {
    for (int i = 0; i < n_probes; ++i) pthread_join(probes[i], NULL);
    n_probes = 0;
}

static int trims, trims_locked, calls_locked;
static char locked_call[64];

static cudaError_t l_trim(cudaMemPool_t pool, size_t keep) {
    ++trims;
    if (!core_lock_free()) {
        ++trims_locked;
        strcpy(locked_call, "cudaMemPoolTrimTo");
    }
    return fake_pool_trim(pool, keep);
}
#define LOCK_CHECKED(name, ret, params, args, fake_fn, cuda_name)                            \
    static ret name params {                                                                 \
        if (!core_lock_free()) {                                                             \
            ++calls_locked;                                                                  \
            strcpy(locked_call, cuda_name);                                                  \
        }                                                                                    \
        return fake_fn args;                                                                 \
    }
LOCK_CHECKED(l_malloc_async, cudaError_t, (void **p, size_t n, cudaMemPool_t pool, cudaStream_t s),
             (p, n, pool, s), fake_malloc_async, "cudaMallocFromPoolAsync")
LOCK_CHECKED(l_free_async, cudaError_t, (void *p, cudaStream_t s), (p, s), fake_free_async,
             "cudaFreeAsync")
LOCK_CHECKED(l_pool_get, cudaError_t, (cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v),
             (pool, a, v), fake_pool_get, "cudaMemPoolGetAttribute")
LOCK_CHECKED(l_mem_info, cudaError_t, (size_t *f, size_t *t), (f, t), fake_mem_info,
             "cudaMemGetInfo")
LOCK_CHECKED(l_pool_destroy, cudaError_t, (cudaMemPool_t pool), (pool), fake_pool_destroy,
             "cudaMemPoolDestroy")

/* CudaMemPoolTrimTo (and the pool calls around it) are never made with the core spin
 * lock held: not by cm_device_pool_trim(), not by the out-of-memory retry that trims every open
 * device object of the ordinal, not by a close. A call made inside the lock is seen by a probe
 * thread that cannot take the lock for 2 s. */
static void test_pool_trim_outside_spin_lock(void **state) {
    (void)state;
    fake.total = 64 * MiB;
    cm_device_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_device_open(1, &a));
    CM_ASSERT_OK(cm_device_open(1, &b)); /* two device objects of one ordinal: both trimmed */
    cm_stream_t *wa = fake_wrap(a, 1), *wb = fake_wrap(b, 1);
    cm_buffer_t *x = NULL, *y = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(wa, a, 8 * MiB, &x));
    CM_ASSERT_OK(cm_buffer_create_on_stream(wb, b, 8 * MiB, &y));
    CM_ASSERT_OK(cm_buffer_destroy(x)); /* cached in the pools */
    CM_ASSERT_OK(cm_buffer_destroy(y));

    trims = trims_locked = calls_locked = 0;
    cm__cuda.mem_pool_trim_to = l_trim;
    cm__cuda.malloc_from_pool_async = l_malloc_async;
    cm__cuda.free_async = l_free_async;
    cm__cuda.mem_pool_get_attribute = l_pool_get;
    cm__cuda.mem_get_info = l_mem_info;
    cm__cuda.mem_pool_destroy = l_pool_destroy;

    CM_ASSERT_OK(cm_device_pool_trim(a, 0));
    join_probes();
    int after_trim = trims;
    assert_true(after_trim >= 1);

    /* out of memory: 52 MiB free of 64 (4 live in a, 8 cached in b), a 62 MiB request: fails
     * also after the retry has trimmed every pool of device 1 (60 MiB free then) */
    cm_buffer_t *big = NULL, *hold = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(wa, a, 4 * MiB, &hold));
    CM_ASSERT_OK(cm_buffer_create_on_stream(wb, b, 8 * MiB, &big));
    CM_ASSERT_OK(cm_buffer_destroy(big)); /* 8 MiB cached in b's pool */
    big = NULL;
    join_probes();
    int before_oom = trims;
    EXPECT_FAIL(cm_buffer_create_on_stream(wa, a, 62 * MiB, &big), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "device 1");
    join_probes();
    assert_null(big);
    assert_true(trims > before_oom);

    CM_ASSERT_OK(cm_buffer_destroy(hold));
    CM_ASSERT_OK(cm_stream_release(wa));
    CM_ASSERT_OK(cm_stream_release(wb));
    CM_ASSERT_OK(cm_device_close(b));
    CM_ASSERT_OK(cm_device_close(a));
    join_probes();
    if (trims_locked != 0 || calls_locked != 0)
        fail_msg("%d of %d trims and %d other pool calls made with the core spin lock held "
                 "(last: %s)", trims_locked, trims, calls_locked, locked_call);
    EXPECT_CURRENT(0);
    EXPECT_CLEAN();
}

/* ---------------------------------------------------------------- streams as CUDA reports them */

static cudaStream_t recycled_stream;
static int recycled_to = -1; /* device CUDA now reports for recycled_stream (-1: as the fake) */
static int stream_queries;

static cudaError_t r_stream_get_device(cudaStream_t s, int *d) {
    ++stream_queries;
    if (recycled_to >= 0 && s == recycled_stream) {
        ++fake.calls[FAKE_STREAM_DEVICE];
        *d = recycled_to;
        return cudaSuccess;
    }
    return fake_stream_get_device(s, d);
}
/* CUDA's context of the recycled value follows: the new stream is in device 1's context. */
static cudaError_t r_stream_get_ctx(cudaStream_t s, void **ctx) {
    if (recycled_to >= 0 && s == recycled_stream) {
        ++fake.calls[FAKE_STREAM_CTX];
        *ctx = (void *)(uintptr_t)(recycled_to + 1);
        return cudaSuccess;
    }
    return fake_stream_get_ctx(s, ctx);
}

/* A cudaStream_t value once checked as a stream of device 0 can be destroyed (its wrapper
 * released first) and the same value handed out by CUDA for a stream of device 1: wrapping it
 * for device 0 again is refused (the library does not trust what it learned about the value
 * earlier: the driver is asked at each wrap), the old wrapper is dead, and a wrapper for device 1
 * is refused by every buffer operation of device 0 (the handle knows its device: no driver
 * query at the operations). */
static void test_stream_check_rejects_recycled_stream_of_other_device(void **state) {
    (void)state;
    fake.current = 1; /* the application works on device 1; the buffer is device 0's */
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 256, &b));
    cm__cuda.stream_get_device = r_stream_get_device;
    cm__cuda.stream_get_ctx = r_stream_get_ctx;
    recycled_stream = FAKE_STREAM(0);
    recycled_to = -1;
    stream_queries = 0;
    unsigned char host[256], back[256];
    memset(host, 0x11, sizeof host);
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d0, recycled_stream, &w));
    CM_ASSERT_OK(cm_buffer_set(w, b, 0, 256, 0x22));
    CM_ASSERT_OK(cm_buffer_copy_from_host(w, b, 0, host, 64));

    /* the wrapper is released and the stream destroyed; CUDA gives the same value to a new
     * stream of device 1 */
    CM_ASSERT_OK(cm_stream_release(w));
    recycled_to = 1;
    cm_stream_t *again = NULL;
    EXPECT_FAIL(cm_stream_wrap(d0, recycled_stream, &again), INV, "device 1");
    assert_null(again);
    assert_true(stream_queries >= 1);
    EXPECT_FAIL(cm_buffer_set(w, b, 0, 256, 0x33), INV, "stream was already released");
    cm_stream_t *w1 = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d1, recycled_stream, &w1));
    unsigned long ctxq = fake.calls[FAKE_STREAM_CTX], devq = fake.calls[FAKE_STREAM_DEVICE];
    int queries = stream_queries;
    const char *msg = "the stream belongs to device 1 but the buffer to device 0";
    EXPECT_FAIL(cm_buffer_set(w1, b, 0, 256, 0x33), INV, msg);
    EXPECT_FAIL(cm_buffer_copy_from_host(w1, b, 0, host, 256), INV, msg);
    uint32_t pat = 0x01020304u;
    EXPECT_FAIL(cm_buffer_fill(w1, b, 0, 256, &pat, 4), INV, msg);
    cm_buffer_t *c = NULL;
    EXPECT_FAIL(cm_buffer_create_on_stream(w1, d0, 64, &c), INV, msg);
    assert_null(c);
    EXPECT_FAIL(cm_buffer_destroy_on_stream(w1, b), INV, msg);
    assert_int_equal(fake.calls[FAKE_STREAM_CTX], ctxq);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE], devq);
    assert_int_equal(stream_queries, queries);
    CM_ASSERT_OK(cm_stream_release(w1));

    /* nothing was written by the refused calls, and the buffer is still alive */
    recycled_to = -1;
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, back, sizeof back));
    for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], i < 64 ? 0x11 : 0x22);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(d1));
    CM_ASSERT_OK(cm_device_close(d0));
    EXPECT_CURRENT(1);
    EXPECT_CLEAN();
}

static cudaStream_t capture_stream;
static int capturing;

/* CUDA's answers for a stream being captured: cudaStreamGetDevice is not allowed on it. */
static cudaError_t c_stream_get_device(cudaStream_t s, int *d) {
    if (capturing && s == capture_stream) {
        ++fake.calls[FAKE_STREAM_DEVICE];
        return cudaErrorStreamCaptureUnsupported;
    }
    return fake_stream_get_device(s, d);
}
/* cuStreamGetCtx is allowed during a capture; ctx_fails makes it fail (the full check then
 * asks whether the stream captures before it asks the device). */
static int ctx_fails;
static cudaError_t c_stream_get_ctx(cudaStream_t s, void **ctx) {
    if (ctx_fails) {
        ++fake.calls[FAKE_STREAM_CTX];
        return cudaErrorNotSupported;
    }
    return fake_stream_get_ctx(s, ctx);
}
static cudaError_t c_stream_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
    *st = capturing && s == capture_stream ? cudaStreamCaptureStatusActive
                                           : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

/* A stream that is being captured into a graph can be wrapped (cudaStreamGetDevice answers
 * cudaErrorStreamCaptureUnsupported there: that is not a bad stream), and copies, sets and fills
 * queued on it are accepted without asking the driver again. Pinned host memory only: pageable
 * copies cannot be captured by CUDA at all. */
static void test_copy_on_capturing_stream_is_accepted(void **state) {
    (void)state;
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_buffer_t *b = NULL, *b2 = NULL;
    cm_host_buffer_t *hb = NULL;
    CM_ASSERT_OK(cm_buffer_create(d1, 256, &b));
    CM_ASSERT_OK(cm_buffer_create(d1, 256, &b2));
    CM_ASSERT_OK(cm_host_buffer_create(d1, 256, CM_HOST_BUFFER_DEFAULT, &hb));
    cm__cuda.stream_get_device = c_stream_get_device;
    cm__cuda.stream_is_capturing = c_stream_is_capturing;
    cm__cuda.stream_get_ctx = c_stream_get_ctx;
    capture_stream = FAKE_STREAM(1);
    for (ctx_fails = 0; ctx_fails < 2; ++ctx_fails) {
        capturing = 1;
        cm_stream_t *w = NULL;
        CM_ASSERT_OK(cm_stream_wrap(d1, capture_stream, &w));
        unsigned long copies = fake.calls[FAKE_MEMCPY_ASYNC], sets = fake.calls[FAKE_MEMSET_ASYNC],
                      fills = fake.calls[FAKE_FILL], ctxq = fake.calls[FAKE_STREAM_CTX],
                      devq = fake.calls[FAKE_STREAM_DEVICE];
        uint32_t pat = 0x01020304u;
        CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(w, b, 0, hb, 0, 256));
        CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(w, b, 0, hb, 0, 256));
        CM_ASSERT_OK(cm_buffer_copy(w, b2, 0, b, 0, 256));
        CM_ASSERT_OK(cm_buffer_set(w, b, 0, 256, 7));
        CM_ASSERT_OK(cm_buffer_fill(w, b, 0, 256, &pat, 4));
        assert_true(fake.calls[FAKE_MEMCPY_ASYNC] - copies >= 3);
        assert_int_equal(fake.calls[FAKE_MEMSET_ASYNC] - sets, 1);
        assert_int_equal(fake.calls[FAKE_FILL] - fills, 1);
        assert_int_equal(fake.calls[FAKE_STREAM_CTX], ctxq); /* the handle knows its device */
        assert_int_equal(fake.calls[FAKE_STREAM_DEVICE], devq);
        EXPECT_CURRENT(0);
        CM_ASSERT_OK(cm_stream_release(w));
        /* a stream that is not capturing and fails the same way is still refused */
        capturing = 0;
        w = (cm_stream_t *)(uintptr_t)0x1;
        EXPECT_FAIL(cm_stream_wrap(d1, FAKE_BAD_STREAM, &w), INV, "not a valid CUDA stream");
        assert_null(w);
    }
    CM_ASSERT_OK(cm_host_buffer_destroy(hb));
    CM_ASSERT_OK(cm_buffer_destroy(b2));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CURRENT(0);
    EXPECT_CLEAN();
}

/* A stream of the buffer's device is recognised by its context alone (one driver query, no
 * device query); a stream in a context that is not the device's primary one (a context of the
 * caller's own, or another device's) takes the full check, which names the stream's device. */
static int other_ctx; /* 1: FAKE_STREAM(0) reports a context that is not a primary one */
static cudaError_t o_stream_get_ctx(cudaStream_t s, void **ctx) {
    if (other_ctx && s == FAKE_STREAM(0)) {
        ++fake.calls[FAKE_STREAM_CTX];
        *ctx = (void *)(uintptr_t)0x999;
        return cudaSuccess;
    }
    return fake_stream_get_ctx(s, ctx);
}

/* The check is made by cm_stream_wrap(), once per wrapped stream; the buffer operations on
 * the wrapper ask the driver nothing. */
static void test_stream_check_by_context_then_by_device(void **state) {
    (void)state;
    cm_device_t *d0 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    cm__cuda.stream_get_ctx = o_stream_get_ctx;
    other_ctx = 0;
    unsigned long ctxq = fake.calls[FAKE_STREAM_CTX], devq = fake.calls[FAKE_STREAM_DEVICE];
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d0, FAKE_STREAM(0), &w));
    assert_int_equal(fake.calls[FAKE_STREAM_CTX] - ctxq, 1);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE] - devq, 0);
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, d0, 256, &b));
    CM_ASSERT_OK(cm_buffer_set(w, b, 0, 256, 1));
    assert_int_equal(fake.calls[FAKE_STREAM_CTX] - ctxq, 1);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE] - devq, 0);
    /* the same device through another context: accepted after the device query */
    other_ctx = 1;
    cm_stream_t *w_other = NULL;
    CM_ASSERT_OK(cm_stream_wrap(d0, FAKE_STREAM(0), &w_other));
    assert_int_equal(fake.calls[FAKE_STREAM_CTX] - ctxq, 2);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE] - devq, 1);
    CM_ASSERT_OK(cm_buffer_set(w_other, b, 0, 256, 2));
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE] - devq, 1);
    /* a stream of device 1 is refused by the device query, whatever its context */
    cm_stream_t *w1 = (cm_stream_t *)(uintptr_t)0x1;
    EXPECT_FAIL(cm_stream_wrap(d0, FAKE_STREAM(1), &w1), INV,
                "the stream belongs to device 1 but the device object to device 0");
    assert_null(w1);
    assert_int_equal(fake.calls[FAKE_STREAM_DEVICE] - devq, 2);
    other_ctx = 0;
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w, b));
    CM_ASSERT_OK(cm_stream_release(w_other));
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(d0));
    EXPECT_CLEAN();
}

/* The pool allocation and free of a buffer on an explicit stream need no current context (the
 * driver's calls name the stream): a thread with none gets none pushed, and ends with none;
 * a synchronous buffer (stream NULL: cudaMalloc, cudaFree) gets the buffer's device pushed for
 * the call and popped after. */
static int pushes;
static cudaError_t p_ctx_push(void *ctx) {
    ++pushes;
    return fake_ctx_push(ctx);
}

static void test_ordered_buffer_on_explicit_stream_pushes_no_context(void **state) {
    (void)state;
    cm_device_t *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *w1 = fake_wrap(d1, 1);
    fake.has_ctx = 0; /* the thread has no current context */
    cm__cuda.ctx_push_current = p_ctx_push;
    pushes = 0;
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, 4096, &b));
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w1, b));
    assert_int_equal(pushes, 0);
    assert_int_equal(fake.has_ctx, 0);
    assert_int_equal(fake.ctx_depth, 0);
    CM_ASSERT_OK(cm_buffer_create_on_stream(NULL, d1, 4096, &b));
    assert_int_equal(pushes, 1);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    assert_int_equal(pushes, 2);
    assert_int_equal(fake.has_ctx, 0);
    assert_int_equal(fake.ctx_depth, 0);
    fake.has_ctx = 1;
    CM_ASSERT_OK(cm_stream_release(w1));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_stream_ordered_buffer_allocates_on_its_device_not_current,
                                        setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_oom_report_measures_the_buffers_device, setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_interop_create_copies_file_string, setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_stale_buffer_after_device_reopen_never_aliases, setup,
                                        fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_pool_trim_outside_spin_lock, setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_stream_check_rejects_recycled_stream_of_other_device,
                                        setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_copy_on_capturing_stream_is_accepted, setup, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_stream_check_by_context_then_by_device, setup,
                                        fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_ordered_buffer_on_explicit_stream_pushes_no_context,
                                        setup, fake_teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
