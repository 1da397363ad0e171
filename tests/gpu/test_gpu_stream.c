/*
 * stream.h against the real runtime: ordering through cm_stream_wait (a kernel on B sees A's
 * writes while A was delayed on purpose), timers against a host clock on a long kernel, host
 * callbacks in stream order, graph replay equal to direct launches (kernels and copies),
 * captured pageable copies reading and writing the caller's memory at each launch, the
 * pools from 8 host threads at once (no loss, no double hand-out, each thread's results
 * right), launches on released streams refused, and the interop accessors.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/launch.h>
#include <cudamodel/stream.h>

#include "lock.h" /* cm__core_lock_held_for_tests (src/core/) */

/* from test_gpu_stream_kernels.cu */
const void *gs_spin_then_fill_kernel(void);
const void *gs_copy_kernel(void);
const void *gs_axpb_kernel(void);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static cm_device_t *open0(void) {
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    return dev;
}

static void *dptr(cm_buffer_t *b) {
    void *p = NULL;
    CM_ASSERT_OK(cm_buffer_device_ptr(b, &p));
    return p;
}

/* A 1-D configuration over n elements (the stream is cm_launch's first argument). */
static cm_launch_config_t cfg_1d(unsigned n) {
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    CM_ASSERT_OK(cm_launch_config_1d(n, 256, &c));
    if (c.grid.x > 1024) c.grid.x = 1024; /* the kernels are grid-stride */
    return c;
}

static void test_b_waits_for_a(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *a = NULL, *b = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &a));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &b));
    unsigned n = 1u << 20;
    cm_buffer_t *x = NULL, *y = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(unsigned), &x));
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(unsigned), &y));
    CM_ASSERT_OK(cm_buffer_set(NULL, x, 0, n * sizeof(unsigned), 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, y, 0, n * sizeof(unsigned), 0xff));

    for (int round = 0; round < 3; ++round) {
        void *px = dptr(x), *py = dptr(y);
        unsigned value = 1000u * (unsigned)(round + 1);
        unsigned long long ns = 20ull * 1000 * 1000; /* A is slow: 20 ms before it writes */
        void *args_a[] = {&px, &n, &value, &ns};
        cm_launch_config_t ca = cfg_1d(n);
        CM_ASSERT_OK(CM_LAUNCH(a, gs_spin_then_fill_kernel(), &ca, args_a));
        CM_ASSERT_OK(cm_stream_wait(b, a));
        void *args_b[] = {&py, &px, &n};
        cm_launch_config_t cb = cfg_1d(n);
        CM_ASSERT_OK(CM_LAUNCH(b, gs_copy_kernel(), &cb, args_b));
        CM_ASSERT_OK(cm_stream_synchronize(b));
        unsigned *h = malloc(n * sizeof *h);
        assert_non_null(h);
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, y, 0, h, n * sizeof *h));
        for (unsigned i = 0; i < n; ++i) {
            if (h[i] != value + i) fail_msg("round %d: y[%u] = %u, expected %u", round, i, h[i], value + i);
        }
        free(h);
    }
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(y));
    CM_ASSERT_OK(cm_stream_release(a));
    CM_ASSERT_OK(cm_stream_release(b));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void test_timer_agrees_with_host_clock(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_buffer_t *x = NULL;
    unsigned n = 256;
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(unsigned), &x));
    void *px = dptr(x);
    unsigned value = 1;
    unsigned long long ns = 200ull * 1000 * 1000; /* 200 ms */
    void *args[] = {&px, &n, &value, &ns};
    cm_launch_config_t c = cfg_1d(n);
    CM_ASSERT_OK(CM_LAUNCH(s, gs_spin_then_fill_kernel(), &c, args)); /* warm-up: module load */
    CM_ASSERT_OK(cm_stream_synchronize(s));

    cm_timer_t *t = NULL;
    CM_ASSERT_OK(cm_timer_create(dev, &t));
    double h0 = now_ms();
    CM_ASSERT_OK(cm_timer_start(t, s));
    CM_ASSERT_OK(CM_LAUNCH(s, gs_spin_then_fill_kernel(), &c, args));
    CM_ASSERT_OK(cm_timer_stop(t));
    float ms = 0.0f;
    CM_ASSERT_OK(cm_timer_elapsed_ms(t, &ms));
    double host = now_ms() - h0;
    print_message("timer %.3f ms, host clock %.3f ms (kernel spins 200 ms)\n", (double)ms, host);
    assert_true(ms >= 199.0f);
    assert_true((double)ms <= host + 1.0);        /* the GPU interval is inside the host's */
    assert_true(host - (double)ms < 0.1 * host);  /* and close to it (launch + sync overhead) */

    CM_ASSERT_OK(cm_timer_destroy(t));
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
}

typedef struct {
    void *px;
    unsigned n;
} spin_ctx_t;

static cm_status_t spin_2ms(void *user, cm_stream_t *s) {
    spin_ctx_t *c = user;
    unsigned value = 7;
    unsigned long long ns = 2ull * 1000 * 1000;
    void *args[] = {&c->px, &c->n, &value, &ns};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = 1;
    cfg.block.x = 32;
    return CM_LAUNCH(s, gs_spin_then_fill_kernel(), &cfg, args);
}

static void test_time_callable(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_buffer_t *x = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 32 * sizeof(unsigned), &x));
    spin_ctx_t c = {dptr(x), 32};
    cm_timing_stats_t st;
    CM_ASSERT_OK(cm_time_callable(s, spin_2ms, &c, 2, 9, &st));
    print_message("2 ms spin: min %.3f median %.3f max %.3f ms\n", st.min_ms, st.median_ms, st.max_ms);
    assert_int_equal(st.reps, 9);
    assert_true(st.min_ms >= 1.99 && st.min_ms <= st.median_ms && st.median_ms <= st.max_ms);
    if (!cm_test_under_sanitizer()) assert_true(st.median_ms < 3.0); /* no bound under a sanitizer */
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
}

static void host_mark(void *user) {
    atomic_store((atomic_int *)user, 1);
}

static void test_host_callback_in_order(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_buffer_t *x = NULL;
    unsigned n = 32;
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(unsigned), &x));
    void *px = dptr(x);
    unsigned value = 3;
    unsigned long long ns = 50ull * 1000 * 1000;
    void *args[] = {&px, &n, &value, &ns};
    cm_launch_config_t c = cfg_1d(n);
    static atomic_int flag;
    atomic_store(&flag, 0);
    CM_ASSERT_OK(CM_LAUNCH(s, gs_spin_then_fill_kernel(), &c, args));
    CM_ASSERT_OK(cm_stream_host_callback(s, host_mark, &flag));
    assert_int_equal(atomic_load(&flag), 0); /* the kernel still spins */
    bool idle = true;
    CM_ASSERT_OK(cm_stream_query(s, &idle));
    assert_false(idle);
    CM_ASSERT_OK(cm_stream_synchronize(s));
    assert_int_equal(atomic_load(&flag), 1);
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
}

#define GRAPH_LAUNCHES 100

static void issue_work(cm_stream_t *s, cm_buffer_t *x, cm_buffer_t *copy, unsigned n) {
    void *px = dptr(x);
    for (int i = 0; i < GRAPH_LAUNCHES; ++i) {
        float a = 1.0f + 0.001f * (float)i, b = 0.5f - 0.01f * (float)i;
        void *args[] = {&px, &a, &b, &n};
        cm_launch_config_t c = cfg_1d(n);
        CM_ASSERT_OK(CM_LAUNCH(s, gs_axpb_kernel(), &c, args));
    }
    CM_ASSERT_OK(cm_buffer_copy(s, copy, 0, x, 0, n * sizeof(float)));
}

static void test_graph_replay_equals_direct(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    unsigned n = 4096;
    size_t bytes = n * sizeof(float);
    cm_buffer_t *x = NULL, *copy = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, bytes, &x));
    CM_ASSERT_OK(cm_buffer_create(dev, bytes, &copy));
    cm_host_buffer_t *init = NULL, *out = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, bytes, CM_HOST_BUFFER_DEFAULT, &init));
    CM_ASSERT_OK(cm_host_buffer_create(dev, bytes, CM_HOST_BUFFER_DEFAULT, &out));
    float *hi = NULL, *ho = NULL;
    CM_ASSERT_OK(cm_host_buffer_data(init, (void **)&hi));
    CM_ASSERT_OK(cm_host_buffer_data(out, (void **)&ho));
    for (unsigned i = 0; i < n; ++i) hi[i] = (float)i * 0.25f - 100.0f;

    /* direct */
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(s, x, 0, init, 0, bytes));
    issue_work(s, x, copy, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(s, copy, 0, out, 0, bytes));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    float *ref = malloc(bytes);
    assert_non_null(ref);
    memcpy(ref, ho, bytes);

    /* captured: the upload, 100 launches, a device copy and the download */
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    CM_ASSERT_OK(cm_buffer_copy_from_host_buffer(s, x, 0, init, 0, bytes));
    issue_work(s, x, copy, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host_buffer(s, copy, 0, out, 0, bytes));
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    size_t nodes = 0;
    CM_ASSERT_OK(cm_graph_node_count(g, &nodes));
    assert_int_equal(nodes, GRAPH_LAUNCHES + 3);
    for (int rep = 0; rep < 3; ++rep) {
        memset(ho, 0, bytes);
        CM_ASSERT_OK(cm_graph_launch(g, s));
        CM_ASSERT_OK(cm_stream_synchronize(s));
        assert_memory_equal(ho, ref, bytes);
    }
    CM_ASSERT_OK(cm_graph_destroy(g));
    free(ref);
    CM_ASSERT_OK(cm_host_buffer_destroy(init));
    CM_ASSERT_OK(cm_host_buffer_destroy(out));
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(copy));
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* Copies between a buffer and pageable host memory captured into a graph: not staged (a staged
 * copy's nodes would read the device's staging buffers, which other copies refill), so each
 * launch reads the caller's source as it is then and writes the caller's destination. Sizes
 * above the staging threshold and staged copies between the launches, which would expose a
 * captured staging buffer. */
static void test_graph_pageable_copies(void **state) {
    (void)state;
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cm_staging_config_t cfg;
    CM_ASSERT_OK(cm_device_staging_config(dev, &cfg));
    const size_t sizes[] = {cfg.min_bytes, 3 * cfg.chunk_bytes + 4093};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const size_t n = sizes[k];
        unsigned char *src = malloc(n), *dst = malloc(n), *junk = malloc(n);
        assert_non_null(src);
        assert_non_null(dst);
        assert_non_null(junk);
        cm_buffer_t *b = NULL, *other = NULL;
        CM_ASSERT_OK(cm_buffer_create(dev, n, &b));
        CM_ASSERT_OK(cm_buffer_create(dev, n, &other));
        memset(src, 0x11, n);
        memset(dst, 0xa5, n);
        cm_graph_t *g = NULL;
        CM_ASSERT_OK(cm_graph_capture_begin(s));
        CM_ASSERT_OK(cm_buffer_copy_from_host(s, b, 0, src, n));
        CM_ASSERT_OK(cm_buffer_copy_to_host(s, b, 0, dst, n));
        CM_ASSERT_OK(cm_graph_capture_end(s, &g));
        size_t nodes = 0;
        CM_ASSERT_OK(cm_graph_node_count(g, &nodes));
        assert_int_equal(nodes, 2); /* one copy each way */
        for (size_t i = 0; i < n; ++i) assert_int_equal(dst[i], 0xa5); /* nothing ran yet */
        for (int rep = 0; rep < 3; ++rep) {
            const unsigned char v = (unsigned char)(0x20 + 7 * rep);
            for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)(v + i % 251);
            memset(junk, 0xee, n);
            CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, other, 0, junk, n)); /* staged */
            CM_ASSERT_OK(cm_graph_launch(g, s));
            CM_ASSERT_OK(cm_stream_synchronize(s));
            if (memcmp(dst, src, n) != 0) {
                size_t i = 0;
                while (dst[i] == src[i]) ++i;
                fail_msg("%zu bytes, launch %d: byte %zu is 0x%02x, the source 0x%02x", n, rep,
                         i, dst[i], src[i]);
            }
        }
        CM_ASSERT_OK(cm_graph_destroy(g));
        CM_ASSERT_OK(cm_buffer_destroy(b));
        CM_ASSERT_OK(cm_buffer_destroy(other));
        free(src);
        free(dst);
        free(junk);
    }
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ---------------------------------------------------------------- 8 threads */

#define THREADS 8
#define ROUNDS (cm_test_under_sanitizer() ? 20 : 200)

static cm_device_t *tdev;
static cm_buffer_t *tbuf;
static atomic_uintptr_t holder[THREADS];
static atomic_int bad;

/* Each worker's current step and round, so that a worker that never returns is named with the
 * call it is in: the watchdog prints them all and ends the test (a failure with a cause, not a
 * timeout without one). */
enum { PH_IDLE, PH_ACQUIRE, PH_LAUNCH, PH_EVENT_ACQUIRE, PH_RECORD, PH_EVENT_SYNC, PH_RELEASE_EVENT,
       PH_COPY, PH_RELEASE, PH_DONE };
static const char *const phase_name[] = {"idle", "cm_stream_acquire", "CM_LAUNCH",
                                         "cm_event_acquire", "cm_event_record",
                                         "cm_event_synchronize", "cm_event_release",
                                         "cudaMemcpyAsync + cudaStreamSynchronize",
                                         "cm_stream_release", "done"};
static atomic_int phase[THREADS], round_of[THREADS];
static atomic_int workers_done;
#define WATCHDOG_S 30 /* the test takes ~1 s, under racecheck a few */

static void *watchdog(void *arg) {
    (void)arg;
    const double t0 = now_ms();
    while (atomic_load(&workers_done) == 0) {
        if (now_ms() - t0 > 1e3 * WATCHDOG_S) {
            fprintf(stderr, "test_pools_from_8_threads: workers not done after %d s:\n",
                    WATCHDOG_S);
            for (int i = 0; i < THREADS; ++i)
                fprintf(stderr, "  worker %d: round %d, in %s\n", i, atomic_load(&round_of[i]),
                        phase_name[atomic_load(&phase[i])]);
            /* held in every sample: a thread stuck under the library's lock; free: the workers
             * are inside CUDA calls */
            int held = 0;
            for (int i = 0; i < 10; ++i) {
                held += cm__core_lock_held_for_tests();
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            fprintf(stderr, "  the core spin lock: held in %d of 10 samples 20 ms apart\n", held);
            /* a second look 10 s later: workers that moved on are slow (a sanitizer serialising
             * the launches), workers still in the same round and call are stuck */
            int first_round[THREADS], first_phase[THREADS];
            for (int i = 0; i < THREADS; ++i) {
                first_round[i] = atomic_load(&round_of[i]);
                first_phase[i] = atomic_load(&phase[i]);
            }
            struct timespec later = {10, 0};
            nanosleep(&later, NULL);
            int moved = 0;
            fprintf(stderr, "  10 s later:\n");
            for (int i = 0; i < THREADS; ++i) {
                const int r = atomic_load(&round_of[i]), ph = atomic_load(&phase[i]);
                const int same = r == first_round[i] && ph == first_phase[i];
                moved += !same && first_phase[i] != PH_DONE;
                fprintf(stderr, "  worker %d: round %d, in %s%s\n", i, r, phase_name[ph],
                        same && ph != PH_DONE ? " (no progress)" : "");
            }
            fprintf(stderr, "  %d unfinished worker(s) moved on in 10 s (0: stuck)\n", moved);
            fflush(stderr);
            _Exit(3);
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    if (cudaSetDevice(0) != cudaSuccess) {
        atomic_fetch_add(&bad, 1);
        return NULL;
    }
    unsigned n = 1024;
    unsigned *h = malloc(n * sizeof *h);
    char *base = NULL;
    if (h == NULL || cm_buffer_device_ptr(tbuf, (void **)&base) != CM_OK) {
        atomic_fetch_add(&bad, 1);
        free(h);
        return NULL;
    }
    void *px = base + (size_t)id * n * sizeof(unsigned);
    for (int r = 0; r < ROUNDS; ++r) {
        cm_stream_t *s = NULL;
        atomic_store(&round_of[id], r);
        atomic_store(&phase[id], PH_ACQUIRE);
        cm_status_t st = cm_stream_acquire(tdev, r % 4 == 0 ? CM_STREAM_PRIORITY_HIGH : CM_STREAM_PRIORITY_LOW, &s);
        if (st == CM_ERROR_BUSY) continue;
        if (st != CM_OK) {
            atomic_fetch_add(&bad, 1);
            break;
        }
        for (int k = 0; k < THREADS; ++k) /* nobody else holds it */
            if (k != id && atomic_load(&holder[k]) == (uintptr_t)s) atomic_fetch_add(&bad, 1);
        atomic_store(&holder[id], (uintptr_t)s);
        unsigned value = (unsigned)(id * 100000 + r);
        unsigned long long ns = 0;
        void *args[] = {&px, &n, &value, &ns};
        cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
        c.grid.x = 4;
        c.block.x = 256;
        cm_event_t *e = NULL;
        if ((atomic_store(&phase[id], PH_LAUNCH),
             CM_LAUNCH(s, gs_spin_then_fill_kernel(), &c, args) != CM_OK) ||
            (atomic_store(&phase[id], PH_EVENT_ACQUIRE),
             cm_event_acquire(tdev, CM_EVENT_SYNC_ONLY, &e) != CM_OK) ||
            (atomic_store(&phase[id], PH_RECORD), cm_event_record(e, s) != CM_OK) ||
            (atomic_store(&phase[id], PH_EVENT_SYNC), cm_event_synchronize(e) != CM_OK) ||
            (atomic_store(&phase[id], PH_RELEASE_EVENT), cm_event_release(e) != CM_OK)) {
            atomic_fetch_add(&bad, 1);
        } else {
            cudaStream_t cs = NULL;
            atomic_store(&phase[id], PH_COPY);
            if (cm_stream_cuda(s, &cs) != CM_OK ||
                cudaMemcpyAsync(h, px, n * sizeof *h, cudaMemcpyDeviceToHost, cs) != cudaSuccess ||
                cudaStreamSynchronize(cs) != cudaSuccess) {
                atomic_fetch_add(&bad, 1);
            } else {
                for (unsigned i = 0; i < n; ++i)
                    if (h[i] != value + i) {
                        atomic_fetch_add(&bad, 1);
                        break;
                    }
            }
        }
        atomic_store(&holder[id], 0);
        atomic_store(&phase[id], PH_RELEASE);
        if (cm_stream_release(s) != CM_OK) atomic_fetch_add(&bad, 1);
    }
    atomic_store(&phase[id], PH_DONE);
    free(h);
    return NULL;
}

static void test_pools_from_8_threads(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    tdev = open0();
    cm_stream_pool_config_t cfg = {4, 2}; /* fewer streams than threads */
    CM_ASSERT_OK(cm_stream_pool_configure(tdev, &cfg));
    CM_ASSERT_OK(cm_buffer_create(tdev, THREADS * 1024 * sizeof(unsigned), &tbuf));
    atomic_store(&bad, 0);
    atomic_store(&workers_done, 0);
    for (int i = 0; i < THREADS; ++i) atomic_store(&phase[i], PH_IDLE);
    pthread_t th[THREADS], dog;
    assert_int_equal(pthread_create(&dog, NULL, watchdog, NULL), 0);
    for (int i = 0; i < THREADS; ++i)
        assert_int_equal(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; ++i) pthread_join(th[i], NULL);
    atomic_store(&workers_done, 1);
    pthread_join(dog, NULL);
    assert_int_equal(atomic_load(&bad), 0);
    cm_stream_pool_stats_t st;
    CM_ASSERT_OK(cm_stream_pool_stats(tdev, &st));
    assert_int_equal(st.acquired[0] + st.acquired[1], 0);
    assert_int_equal(st.events_acquired, 0);
    CM_ASSERT_OK(cm_buffer_destroy(tbuf));
    CM_ASSERT_OK(cm_device_close(tdev));
}

static void test_released_stream_refused(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cudaStream_t cs = NULL;
    CM_ASSERT_OK(cm_stream_cuda(s, &cs));
    int dev_of = -1;
    assert_int_equal(cudaStreamGetDevice(cs, &dev_of), cudaSuccess);
    assert_int_equal(dev_of, 0);
    unsigned flags = 0;
    assert_int_equal(cudaStreamGetFlags(cs, &flags), cudaSuccess);
    assert_true(flags & cudaStreamNonBlocking);
    CM_ASSERT_OK(cm_stream_release(s));
    cm_buffer_t *x = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 64, &x));
    void *px = dptr(x);
    unsigned n = 16, value = 0;
    unsigned long long ns = 0;
    void *args[] = {&px, &n, &value, &ns};
    cm_launch_config_t c = cfg_1d(n);
    CM_ASSERT_STATUS(CM_LAUNCH(s, gs_spin_then_fill_kernel(), &c, args), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "released"));
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* A stream the application created, wrapped: the library's kernels, a launch and a reduction
 * to the host run on it in order; releasing the wrapper leaves the CUDA stream usable. */
static void test_wrapped_cuda_stream(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open0();
    cudaStream_t cs = NULL;
    assert_int_equal(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking), cudaSuccess);
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, cs, &w));
    const size_t n = 100003;
    cm_buffer_t *x = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, n * sizeof(float), &x));
    const float half = 0.5f, four = 4.0f;
    CM_ASSERT_OK(cm_vector(w, CM_VECTOR_FILL, CM_DTYPE_F32, n, &half, x, 0, NULL, 0, NULL, 0));
    CM_ASSERT_OK(cm_vector(w, CM_VECTOR_SCALE, CM_DTYPE_F32, n, &four, x, 0, x, 0, NULL, 0));
    double sum = 0.0;
    float fsum = 0.0f;
    CM_ASSERT_OK(cm_reduce_to_host(w, CM_REDUCE_SUM, CM_DTYPE_F32, n, x, 0, NULL, 0, &fsum, NULL));
    sum = fsum;
    assert_true(sum == 2.0 * (double)n);
    /* a launch of the test's own kernel on it, and the result copied back on it (a pageable
     * destination is complete on return) */
    unsigned un = 1000, value = 42;
    unsigned long long ns = 0;
    cm_buffer_t *u = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, un * sizeof(unsigned), &u));
    void *pu = dptr(u);
    void *args[] = {&pu, &un, &value, &ns};
    cm_launch_config_t lc = cfg_1d(un);
    CM_ASSERT_OK(CM_LAUNCH(w, gs_spin_then_fill_kernel(), &lc, args));
    unsigned *hu = malloc(un * sizeof *hu);
    assert_non_null(hu);
    CM_ASSERT_OK(cm_buffer_copy_to_host(w, u, 0, hu, un * sizeof *hu));
    for (unsigned i = 0; i < un; ++i) assert_int_equal(hu[i], value + i);
    free(hu);
    CM_ASSERT_OK(cm_buffer_destroy(u));
    CM_ASSERT_OK(cm_stream_synchronize(w));
    /* the legacy default stream is not wrapped (a NULL cm_stream_t * means it) */
    cm_stream_t *refused = NULL;
    CM_ASSERT_STATUS(cm_stream_wrap(dev, cudaStreamLegacy, &refused), CM_ERROR_INVALID_ARGUMENT);
    assert_null(refused);
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_STATUS(cm_stream_synchronize(w), CM_ERROR_INVALID_ARGUMENT);
    /* the CUDA stream is still the application's */
    assert_int_equal(cudaStreamSynchronize(cs), cudaSuccess);
    assert_int_equal(cudaStreamDestroy(cs), cudaSuccess);
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_device_close(dev));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_b_waits_for_a),
        cmocka_unit_test(test_timer_agrees_with_host_clock),
        cmocka_unit_test(test_time_callable),
        cmocka_unit_test(test_host_callback_in_order),
        cmocka_unit_test(test_graph_replay_equals_direct),
        cmocka_unit_test(test_graph_pageable_copies),
        cmocka_unit_test(test_pools_from_8_threads),
        cmocka_unit_test(test_released_stream_refused),
        cmocka_unit_test(test_wrapped_cuda_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
