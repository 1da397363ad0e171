/*
 * FAULT INJECTION: every entry of the core's CUDA call table (src/core/calls.h) is failed by a
 * public API sequence, on the complete simulation of test_full_fake.h.
 *
 * The walk goes over the table as the library builds it (the same X-macros: cm__cuda_count(),
 * cm__cuda_member_name()), so an entry added to calls.h is walked too. Each entry has a row in
 * `rows` below: a reach function that sets up what the path needs (devices, streams, buffers,
 * graphs, device sets, communicators), then makes one public call (TARGET) during which the
 * entry fails (cudaErrorUnknown, or ncclSystemError for NCCL, unless the row says otherwise),
 * then makes the call again with the entry restored (AGAIN: the library still works), then
 * releases everything. An entry without a row fails the walk (test "every entry is covered"), so
 * a new entry cannot be forgotten; the table holds only calls the library makes (a call nothing
 * makes is taken out of calls.h, not listed), and a source scan checks that no file of src/ but
 * core/calls.c calls the CUDA runtime, the driver or NCCL by name, so the table is every call
 * (test "src calls CUDA only through the table").
 *
 * For each row the walk checks:
 *   - the entry was reached and failed during TARGET (the gate counts it);
 *   - the status is one of cm_status_t; for a row that FAILS it is the row's status, not CM_OK,
 *     and cm_last_error() is consistent: same status, a hint, the call or message names the
 *     failing function (or the row's text), and the CUDA error is the injected one; a TOLERATED
 *     row (the library absorbs the failure by design: a fallback, an ignored cleanup error, a
 *     degraded text) returns the row's status (the row's note says what happens instead);
 *   - no leak: every handle kind of the core's table has no live handle left, the simulation
 *     holds nothing of the library's (except what the failed free itself kept), no copy, launch
 *     or handle went outside the simulation's objects, the thread's context stack is back to
 *     what it was, and no runtime call ran without a current context.
 * One CMocka test per table entry, named after it; the last test prints the count.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/launch.h>
#include <cudamodel/memspace.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>
#include <cudamodel/version.h>

#include "handle.h"
#include "stream_internal.h"
#include "test_full_fake.h"

#define MiB ((size_t)1 << 20)

/* ---------------------------------------------------------------- the walk's bookkeeping */

enum { FAILS = 1, TOLERATED = 2 };
enum { F_NOCODE = 1, F_CTX_LEFT = 2 };

typedef struct walk walk_t;

typedef struct row {
    const char *member;
    void (*reach)(walk_t *w);
    int expect;           /* FAILS or TOLERATED */
    cm_status_t status;   /* the status TARGET returns */
    const char *names;    /* text cm_last_error()'s call or message holds (NULL: the function) */
    int err;              /* the injected error (0: cudaErrorUnknown / ncclSystemError) */
    long skip;            /* calls of the entry let through first */
    long count;           /* failures (0: one; -1: every call during TARGET) */
    int flags;            /* F_NOCODE: the detail's CUDA error is not the injected one (the
                           * status comes from another call); F_CTX_LEFT: see the row */
    const char *note;     /* TOLERATED: what the library does instead */
} row_t;

struct walk {
    const row_t *row;
    int target;           /* gate index of the entry */
    int err;
    struct {
        int member;
        long skip, count;
        int err;
    } also[3];
    int n_also;
    int done;
    cm_status_t status;
    cm_error_t detail;
    long fired;
};

/* Also fail member (skip calls first, then count) during TARGET: the path to the entry. */
static void walk_also(walk_t *w, const char *member, long skip, long count, int err) {
    int m = cmf_member_index(member);
    assert_true(m >= 0);
    assert_true(w->n_also < 3);
    w->also[w->n_also].member = m;
    w->also[w->n_also].skip = skip;
    w->also[w->n_also].count = count;
    w->also[w->n_also].err = err;
    ++w->n_also;
}

static int walk_arm(walk_t *w) {
    cmf_arm(w->target, w->row->skip, w->row->count != 0 ? w->row->count : 1, w->err);
    for (int i = 0; i < w->n_also; ++i)
        cmf_arm(w->also[i].member, w->also[i].skip, w->also[i].count, w->also[i].err);
    cm_last_error_clear();
    return 0;
}

static cm_status_t walk_target(walk_t *w, cm_status_t st) {
    w->fired = cmf_tl_arms[0].fired;
    (void)cmf_disarm();
    w->n_also = 0;
    w->done = 1;
    w->status = st;
    w->detail = *cm_last_error();
    return st;
}

/* The call during which the entry fails. */
#define TARGET(expr) walk_target(w, (walk_arm(w), (expr)))
/* The library works again with the entry restored. */
#define AGAIN(expr) CM_ASSERT_OK(expr)
#define OK(expr) CM_ASSERT_OK(expr)

/* ---------------------------------------------------------------- helpers */

static cm_device_t *dev_open(int ordinal) {
    cm_device_t *d = NULL;
    OK(cm_device_open(ordinal, &d));
    return d;
}

static cm_stream_t *stream_get(cm_device_t *d) {
    cm_stream_t *s = NULL;
    OK(cm_stream_acquire(d, CM_STREAM_PRIORITY_LOW, &s));
    return s;
}

static cm_buffer_t *buf_new(cm_device_t *d, size_t bytes) {
    cm_buffer_t *b = NULL;
    OK(cm_buffer_create(d, bytes, &b));
    return b;
}

/* A launch of the simulated kernel: p[i] += v for i < n (one thread per byte). */
typedef struct launch_args {
    void *p;
    size_t n;
    unsigned char v;
    void *args[3];
    cm_launch_config_t cfg;
} launch_args_t;

static void launch_prepare(launch_args_t *a, cm_buffer_t *b, size_t n, unsigned char v) {
    OK(cm_buffer_device_ptr(b, &a->p));
    a->n = n;
    a->v = v;
    a->args[0] = &a->p;
    a->args[1] = &a->n;
    a->args[2] = &a->v;
    OK(cm_launch_config_1d(n, 128, &a->cfg));
}

static cm_comm_t *set_comm(cm_device_set_t *set) {
    cm_comm_t *c = NULL;
    OK(cm_comm_create(set, &c));
    return c;
}

static cm_device_set_t *set_open2(void) {
    int ords[2] = {0, 1};
    cm_device_set_t *set = NULL;
    OK(cm_device_set_open(ords, 2, &set));
    return set;
}

/* ---------------------------------------------------------------- reach functions */

static void reach_driver_get_version(walk_t *w) {
    walk_also(w, "get_device_count", 0, 1, cudaErrorInsufficientDriver);
    int n = -1;
    TARGET(cm_device_count(&n));
    assert_int_equal(n, 0);
    AGAIN(cm_device_count(&n));
    assert_int_equal(n, 2);
}

static void reach_runtime_get_version(walk_t *w) {
    walk_also(w, "get_device_count", 0, 1, cudaErrorInsufficientDriver);
    int n = -1;
    TARGET(cm_device_count(&n));
    AGAIN(cm_device_count(&n));
}

static void reach_get_device_count(walk_t *w) {
    int n = -1;
    TARGET(cm_device_count(&n));
    assert_int_equal(n, 0);
    AGAIN(cm_device_count(&n));
    assert_int_equal(n, 2);
}

static void reach_get_device(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = buf_new(d, 256);
    OK(cm_buffer_set(NULL, b, 0, 256, 1));
    launch_args_t a;
    launch_prepare(&a, b, 256, 2);
    TARGET(cm_launch(NULL, CMF_KERNEL_ADD, &a.cfg, a.args));
    AGAIN(cm_launch(NULL, CMF_KERNEL_ADD, &a.cfg, a.args));
    unsigned char out[256];
    OK(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
    for (size_t i = 0; i < sizeof out; ++i) assert_int_equal(out[i], 3); /* once, not twice */
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}

static void reach_open(walk_t *w) {
    cm_device_t *d = (cm_device_t *)(uintptr_t)0x1;
    TARGET(cm_device_open(0, &d));
    assert_ptr_equal(d, (cm_device_t *)(uintptr_t)0x1); /* out untouched */
    d = dev_open(0);
    OK(cm_device_close(d));
}

static void reach_device_get_p2p_attribute(walk_t *w) {
    cm_device_set_t *set = set_open2();
    cm_peer_info_t m[4];
    TARGET(cm_device_set_peer_matrix(set, 0, m, 4));
    assert_int_equal(m[1].performance_rank, -1); /* unknown, not an error */
    AGAIN(cm_device_set_peer_matrix(set, 0, m, 4));
    assert_int_equal(m[1].performance_rank, 0);
    OK(cm_device_set_close(set));
}

static void reach_device_synchronize(walk_t *w) {
    cm_device_t *d = dev_open(0);
    TARGET(cm_device_synchronize(d));
    AGAIN(cm_device_synchronize(d));
    OK(cm_device_close(d));
}

/* A copy between the devices: peer access set up, then the copy (sync, or on a stream). */
static void peer_copy(walk_t *w, bool on_stream) {
    cm_device_t *d0 = dev_open(0), *d1 = dev_open(1);
    cm_buffer_t *a = buf_new(d0, 64), *b = buf_new(d1, 64);
    unsigned char src[64], out[64];
    for (int i = 0; i < 64; ++i) src[i] = (unsigned char)(i + 5);
    OK(cm_buffer_copy_from_host(NULL, b, 0, src, sizeof src));
    cm_stream_t *s = on_stream ? stream_get(d0) : NULL;
    TARGET(cm_buffer_copy(s, a, 0, b, 0, 64));
    AGAIN(cm_buffer_copy(s, a, 0, b, 0, 64));
    if (s != NULL) OK(cm_stream_synchronize(s));
    OK(cm_buffer_copy_to_host(NULL, a, 0, out, sizeof out));
    assert_memory_equal(out, src, sizeof src);
    OK(cm_stream_release(s));
    OK(cm_buffer_destroy(a));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d0));
    OK(cm_device_close(d1));
}
static void reach_peer_sync(walk_t *w) {
    peer_copy(w, false);
}
static void reach_peer_stream(walk_t *w) {
    peer_copy(w, true);
}

static void reach_memory_info(walk_t *w) {
    size_t f = 0, t = 0;
    TARGET(cm_device_memory_info(0, &f, &t));
    AGAIN(cm_device_memory_info(0, &f, &t));
    assert_int_equal(t, 64 * MiB);
}

static void reach_ctx_pop_current(walk_t *w) {
    size_t f = 0, t = 0;
    TARGET(cm_device_memory_info(0, &f, &t));
    /* the failed pop left the library's push on this thread: take it off (F_CTX_LEFT) */
    assert_int_equal(cmf_ctx_depth(), 1);
    void *ctx = NULL;
    assert_int_equal(cmf_ctx_pop_current(&ctx), cudaSuccess);
    AGAIN(cm_device_memory_info(0, &f, &t));
}

static void reach_get_last_error(walk_t *w) {
    walk_also(w, "device_malloc", 0, 1, cudaErrorUnknown);
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = NULL;
    TARGET(cm_buffer_create(d, 100, &b));
    assert_null(b);
    AGAIN(cm_buffer_create(d, 100, &b));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}

static void reach_get_error_name(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cudaStream_t dead = cmf_user_stream(0);
    cmf_user_stream_destroy(dead);
    cm_stream_t *s = NULL;
    TARGET(cm_stream_wrap(d, dead, &s));
    assert_null(s);
    cudaStream_t live = cmf_user_stream(0);
    AGAIN(cm_stream_wrap(d, live, &s));
    OK(cm_stream_release(s));
    cmf_user_stream_destroy(live);
    OK(cm_device_close(d));
}

static void reach_get_error_string(walk_t *w) {
    walk_also(w, "get_device_properties", 0, 1, cudaErrorUnknown);
    cm_device_t *d = NULL;
    TARGET(cm_device_open(0, &d));
    assert_null(d);
    d = dev_open(0);
    OK(cm_device_close(d));
}

static void reach_mem_get_info(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_memory_report_t r;
    TARGET(cm_device_memory_report(d, &r));
    AGAIN(cm_device_memory_report(d, &r));
    assert_int_equal(r.device_total_bytes, 64 * MiB);
    OK(cm_device_close(d));
}

static void reach_device_malloc(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = NULL;
    TARGET(cm_buffer_create(d, 100, &b));
    assert_null(b);
    AGAIN(cm_buffer_create(d, 100, &b));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}

static void reach_device_free(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = buf_new(d, 100);
    TARGET(cm_buffer_destroy(b));
    /* the handle is released all the same */
    assert_int_equal(cm_buffer_destroy(b), CM_ERROR_INVALID_ARGUMENT);
    b = buf_new(d, 100);
    AGAIN(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}

/* cudaMallocAsync is the reduction's scratch while a stream is captured (a graph node). The
 * reduction kernel is a real launcher of kernels/ that bypasses the call table, so it must never
 * be reached here: the entry fails on every call, the precondition (the stream is capturing) is
 * checked first, and AGAIN is the end of the capture, not a second reduction. */
static void reach_malloc_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *x = buf_new(d, 4096), *r = buf_new(d, 64);
    OK(cm_graph_capture_begin(s));
    cudaStream_t cs = NULL;
    OK(cm_stream_cuda(s, &cs));
    assert_true(cm__stream_capturing(cs));
    TARGET(cm_reduce(s, CM_REDUCE_SUM, CM_DTYPE_F32, 16, x, 0, NULL, 0, r, 0));
    cm_graph_t *g = NULL;
    AGAIN(cm_graph_capture_end(s, &g));
    size_t nodes = 99;
    OK(cm_graph_node_count(g, &nodes));
    assert_int_equal(nodes, 0); /* nothing was queued */
    OK(cm_graph_destroy(g));
    OK(cm_stream_release(s));
    OK(cm_buffer_destroy(x));
    OK(cm_buffer_destroy(r));
    OK(cm_device_close(d));
}

static void reach_mem_pool_destroy(walk_t *w) {
    cm_device_t *d = dev_open(0);
    TARGET(cm_device_close(d));
    int o = -1;
    assert_int_equal(cm_device_ordinal(d, &o), CM_ERROR_INVALID_ARGUMENT); /* closed anyway */
    d = dev_open(0);
    AGAIN(cm_device_close(d));
}

static void reach_mem_pool_set_attribute(walk_t *w) {
    cm_device_t *d = dev_open(0);
    TARGET(cm_device_pool_set_release_threshold(d, MiB));
    AGAIN(cm_device_pool_set_release_threshold(d, MiB));
    OK(cm_device_close(d));
}

static void reach_mem_pool_get_attribute(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_memory_report_t r;
    TARGET(cm_device_memory_report(d, &r));
    AGAIN(cm_device_memory_report(d, &r));
    OK(cm_device_close(d));
}

static void reach_mem_pool_trim_to(walk_t *w) {
    cm_device_t *d = dev_open(0);
    TARGET(cm_device_pool_trim(d, 0));
    AGAIN(cm_device_pool_trim(d, 0));
    OK(cm_device_close(d));
}

static void reach_malloc_from_pool_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *b = NULL;
    TARGET(cm_buffer_create_on_stream(s, d, 100, &b));
    assert_null(b);
    AGAIN(cm_buffer_create_on_stream(s, d, 100, &b));
    OK(cm_buffer_destroy(b));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

static void reach_free_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *b = NULL;
    OK(cm_buffer_create_on_stream(s, d, 100, &b));
    TARGET(cm_buffer_destroy(b)); /* falls back to cudaFree: nothing leaks */
    OK(cm_buffer_create_on_stream(s, d, 100, &b));
    AGAIN(cm_buffer_destroy(b));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

static void reach_host_alloc(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_host_buffer_t *h = NULL;
    TARGET(cm_host_buffer_create(d, 100, 0, &h));
    assert_null(h);
    AGAIN(cm_host_buffer_create(d, 100, 0, &h));
    OK(cm_host_buffer_destroy(h));
    OK(cm_device_close(d));
}

static void reach_free_host(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_host_buffer_t *h = NULL;
    OK(cm_host_buffer_create(d, 100, 0, &h));
    TARGET(cm_host_buffer_destroy(h));
    assert_int_equal(cm_host_buffer_destroy(h), CM_ERROR_INVALID_ARGUMENT);
    OK(cm_host_buffer_create(d, 100, 0, &h));
    AGAIN(cm_host_buffer_destroy(h));
    OK(cm_device_close(d));
}

static unsigned char reg_mem[2][256];

static void reach_host_register(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_host_buffer_t *h = NULL;
    TARGET(cm_host_buffer_register(d, reg_mem[0], sizeof reg_mem[0], 0, &h));
    assert_null(h);
    AGAIN(cm_host_buffer_register(d, reg_mem[0], sizeof reg_mem[0], 0, &h));
    OK(cm_host_buffer_destroy(h));
    OK(cm_device_close(d));
}

static void reach_host_unregister(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_host_buffer_t *h = NULL;
    OK(cm_host_buffer_register(d, reg_mem[0], sizeof reg_mem[0], 0, &h));
    TARGET(cm_host_buffer_destroy(h));
    /* reg_mem[0] stays registered with CUDA (its unregister failed): use other memory */
    OK(cm_host_buffer_register(d, reg_mem[1], sizeof reg_mem[1], 0, &h));
    AGAIN(cm_host_buffer_destroy(h));
    OK(cm_device_close(d));
}

static void reach_host_get_device_pointer(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_host_buffer_t *h = NULL;
    TARGET(cm_host_buffer_create(d, 100, CM_HOST_BUFFER_MAPPED, &h));
    assert_null(h); /* and the pinned memory was freed (the leak check says) */
    AGAIN(cm_host_buffer_create(d, 100, CM_HOST_BUFFER_MAPPED, &h));
    OK(cm_host_buffer_destroy(h));
    OK(cm_device_close(d));
}

/* Host <-> device copies: the failing one, then the same copy, whose data must arrive. */
static void reach_copies(walk_t *w, int which) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *b = buf_new(d, 256);
    cm_host_buffer_t *h = NULL;
    OK(cm_host_buffer_create(d, 256, 0, &h));
    void *hp = NULL;
    OK(cm_host_buffer_data(h, &hp));
    unsigned char src[64], out[64];
    for (int i = 0; i < 64; ++i) src[i] = (unsigned char)(3 * i + 1);
    memset(out, 0, sizeof out);
    switch (which) {
    case 0: /* cudaPointerGetAttributes of a pageable source */
        TARGET(cm_buffer_copy_from_host(NULL, b, 0, src, sizeof src));
        AGAIN(cm_buffer_copy_from_host(NULL, b, 0, src, sizeof src));
        OK(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
        break;
    case 1: /* cudaMemcpy, device to pageable host */
        OK(cm_buffer_copy_from_host(NULL, b, 0, src, sizeof src));
        TARGET(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
        AGAIN(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
        break;
    case 2: /* cudaMemcpyAsync, device to pinned on a stream */
        OK(cm_buffer_copy_from_host(NULL, b, 0, src, sizeof src));
        TARGET(cm_buffer_copy_to_host_buffer(s, b, 0, h, 0, sizeof out));
        AGAIN(cm_buffer_copy_to_host_buffer(s, b, 0, h, 0, sizeof out));
        OK(cm_stream_synchronize(s));
        memcpy(out, hp, sizeof out);
        break;
    }
    assert_memory_equal(out, src, sizeof src);
    OK(cm_stream_release(s));
    OK(cm_host_buffer_destroy(h));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}
static void reach_pointer_get_attributes(walk_t *w) {
    reach_copies(w, 0);
}
static void reach_memcpy_sync(walk_t *w) {
    reach_copies(w, 1);
}
static void reach_memcpy_async(walk_t *w) {
    reach_copies(w, 2);
}

static void reach_set_fill(walk_t *w, bool fill) {
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = buf_new(d, 64);
    OK(cm_buffer_set(NULL, b, 0, 64, 0));
    const uint32_t pattern = 0x01020304u;
    if (fill) {
        TARGET(cm_buffer_fill(NULL, b, 0, 64, &pattern, sizeof pattern));
        AGAIN(cm_buffer_fill(NULL, b, 0, 64, &pattern, sizeof pattern));
    } else {
        TARGET(cm_buffer_set(NULL, b, 0, 64, 7));
        AGAIN(cm_buffer_set(NULL, b, 0, 64, 7));
    }
    unsigned char out[64];
    OK(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
    for (int i = 0; i < 64; i += 4) {
        if (fill) assert_memory_equal(out + i, &pattern, 4);
        else assert_int_equal(out[i], 7);
    }
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}
static void reach_memset_async(walk_t *w) {
    reach_set_fill(w, false);
}
static void reach_fill_async(walk_t *w) {
    reach_set_fill(w, true);
}

static void reach_stream_acquire(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = NULL;
    TARGET(cm_stream_acquire(d, CM_STREAM_PRIORITY_LOW, &s));
    assert_null(s);
    AGAIN(cm_stream_acquire(d, CM_STREAM_PRIORITY_LOW, &s));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

/* Destroy calls whose errors cm_device_close ignores (the pools' CUDA objects). */
static void reach_close_after(walk_t *w, int what) {
    cm_device_t *d = dev_open(0);
    if (what == 0) {
        cm_stream_t *s = stream_get(d);
        OK(cm_stream_release(s));
    } else {
        cm_event_t *e = NULL;
        OK(cm_event_acquire(d, CM_EVENT_TIMING, &e));
        OK(cm_event_release(e));
    }
    TARGET(cm_device_close(d));
    d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    OK(cm_stream_release(s));
    AGAIN(cm_device_close(d));
}
static void reach_stream_destroy(walk_t *w) {
    reach_close_after(w, 0);
}
static void reach_event_destroy(walk_t *w) {
    reach_close_after(w, 1);
}

/* cm_stream_wrap of an application stream (with the context query failed when asked). */
static void reach_wrap(walk_t *w, bool fail_ctx) {
    cm_device_t *d = dev_open(0);
    cudaStream_t us = cmf_user_stream(0);
    if (fail_ctx) walk_also(w, "stream_get_ctx", 0, 1, cudaErrorUnknown);
    cm_stream_t *s = NULL;
    cm_status_t st = TARGET(cm_stream_wrap(d, us, &s));
    if (st == CM_OK) OK(cm_stream_release(s));
    s = NULL;
    AGAIN(cm_stream_wrap(d, us, &s));
    OK(cm_stream_release(s));
    cmf_user_stream_destroy(us);
    OK(cm_device_close(d));
}
static void reach_stream_get_device(walk_t *w) {
    reach_wrap(w, true);
}
static void reach_stream_is_capturing(walk_t *w) {
    reach_wrap(w, true);
}
static void reach_stream_get_ctx(walk_t *w) {
    reach_wrap(w, false);
}

/* Calls on an acquired stream and event. */
static void reach_stream_calls(walk_t *w, int which) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_event_t *a = NULL, *b = NULL;
    OK(cm_event_acquire(d, CM_EVENT_TIMING, &a));
    OK(cm_event_acquire(d, CM_EVENT_TIMING, &b));
    bool idle = false, done = false;
    float ms = 0.0f;
    switch (which) {
    case 0:
        TARGET(cm_stream_synchronize(s));
        AGAIN(cm_stream_synchronize(s));
        break;
    case 1:
        TARGET(cm_stream_query(s, &idle));
        AGAIN(cm_stream_query(s, &idle));
        assert_true(idle);
        break;
    case 2:
        OK(cm_event_record(a, s));
        TARGET(cm_stream_wait_event(s, a));
        AGAIN(cm_stream_wait_event(s, a));
        break;
    case 3:
        TARGET(cm_event_record(a, s));
        AGAIN(cm_event_record(a, s));
        break;
    case 4:
        OK(cm_event_record(a, s));
        TARGET(cm_event_synchronize(a));
        AGAIN(cm_event_synchronize(a));
        break;
    case 5:
        OK(cm_event_record(a, s));
        TARGET(cm_event_query(a, &done));
        AGAIN(cm_event_query(a, &done));
        assert_true(done);
        break;
    case 6:
        OK(cm_event_record(a, s));
        OK(cm_event_record(b, s));
        TARGET(cm_event_elapsed_ms(a, b, &ms));
        AGAIN(cm_event_elapsed_ms(a, b, &ms));
        break;
    }
    OK(cm_event_release(a));
    OK(cm_event_release(b));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}
static void reach_stream_synchronize(walk_t *w) {
    reach_stream_calls(w, 0);
}
static void reach_stream_query(walk_t *w) {
    reach_stream_calls(w, 1);
}
static void reach_stream_wait_event(walk_t *w) {
    reach_stream_calls(w, 2);
}
static void reach_event_record(walk_t *w) {
    reach_stream_calls(w, 3);
}
static void reach_event_synchronize(walk_t *w) {
    reach_stream_calls(w, 4);
}
static void reach_event_query(walk_t *w) {
    reach_stream_calls(w, 5);
}
static void reach_event_elapsed(walk_t *w) {
    reach_stream_calls(w, 6);
}

static void host_fn(void *user) {
    ++*(int *)user;
}

static void reach_launch_host_func(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    int runs = 0;
    TARGET(cm_stream_host_callback(s, host_fn, &runs));
    assert_int_equal(runs, 0);
    AGAIN(cm_stream_host_callback(s, host_fn, &runs));
    assert_int_equal(runs, 1);
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

static void reach_event_create(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d); /* the exec part exists: the event is the first call */
    cm_event_t *e = NULL;
    TARGET(cm_event_acquire(d, CM_EVENT_TIMING, &e));
    assert_null(e);
    AGAIN(cm_event_acquire(d, CM_EVENT_TIMING, &e));
    OK(cm_event_release(e));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

/* Graphs: capture a set, end, launch, count, destroy; the row's call fails. */
static void reach_graphs(walk_t *w, int which) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *b = buf_new(d, 64);
    cm_graph_t *g = NULL;
    size_t n = 0;
    if (which == 0) {
        TARGET(cm_graph_capture_begin(s));
        OK(cm_stream_release(s)); /* not left capturing */
        s = stream_get(d);
        AGAIN(cm_graph_capture_begin(s));
        OK(cm_graph_capture_end(s, &g));
    } else {
        OK(cm_graph_capture_begin(s));
        OK(cm_buffer_set(s, b, 0, 64, 9));
        if (which == 1 || which == 2) {
            TARGET(cm_graph_capture_end(s, &g));
            assert_null(g);
            OK(cm_graph_capture_begin(s));
            OK(cm_buffer_set(s, b, 0, 64, 9));
            AGAIN(cm_graph_capture_end(s, &g));
        } else {
            OK(cm_graph_capture_end(s, &g));
        }
    }
    OK(cm_buffer_set(NULL, b, 0, 64, 0));
    if (which == 3) {
        TARGET(cm_graph_launch(g, s));
        AGAIN(cm_graph_launch(g, s));
    } else if (which == 4) {
        TARGET(cm_graph_node_count(g, &n));
        AGAIN(cm_graph_node_count(g, &n));
        assert_int_equal(n, 1);
    } else if (which == 5) {
        TARGET(cm_graph_destroy(g));
        assert_int_equal(cm_graph_destroy(g), CM_ERROR_INVALID_ARGUMENT);
        OK(cm_graph_capture_begin(s));
        OK(cm_graph_capture_end(s, &g));
        AGAIN(cm_graph_destroy(g));
        g = NULL;
    }
    if (which != 5 && which != 0) {
        /* the graph replays the set: the data says it ran once more */
        OK(cm_graph_launch(g, s));
        OK(cm_stream_synchronize(s));
        unsigned char out[64];
        OK(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
        assert_int_equal(out[0], 9);
        assert_int_equal(out[63], 9);
    }
    OK(cm_graph_destroy(g));
    OK(cm_stream_release(s));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}
static void reach_begin_capture(walk_t *w) {
    reach_graphs(w, 0);
}
static void reach_end_capture(walk_t *w) {
    reach_graphs(w, 1);
}
static void reach_graph_instantiate(walk_t *w) {
    reach_graphs(w, 2);
}
static void reach_graph_launch(walk_t *w) {
    reach_graphs(w, 3);
}
static void reach_graph_get_nodes(walk_t *w) {
    reach_graphs(w, 4);
}
static void reach_graph_destroy(walk_t *w) {
    reach_graphs(w, 5);
}

/* A launch on a stream (first of the kernel on the device: its attributes are read). */
static void reach_launch(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_buffer_t *b = buf_new(d, 512);
    OK(cm_buffer_set(NULL, b, 0, 512, 10));
    launch_args_t a;
    launch_prepare(&a, b, 300, 5);
    TARGET(cm_launch(s, CMF_KERNEL_ADD, &a.cfg, a.args));
    AGAIN(cm_launch(s, CMF_KERNEL_ADD, &a.cfg, a.args));
    OK(cm_stream_synchronize(s));
    unsigned char out[512];
    OK(cm_buffer_copy_to_host(NULL, b, 0, out, sizeof out));
    for (int i = 0; i < 512; ++i) assert_int_equal(out[i], i < 300 ? 15 : 10);
    OK(cm_buffer_destroy(b));
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}

static void reach_func_get_name(walk_t *w) {
    cm_kernel_attrs_t k;
    memset(&k, 0x7f, sizeof k);
    TARGET(cm_kernel_attrs_get(CMF_KERNEL_256, 0, &k));
    assert_int_equal(k.name[0], '\0'); /* no name, the attributes all the same */
    assert_int_equal(k.max_threads_per_block, 256);
    AGAIN(cm_kernel_attrs_get(CMF_KERNEL_256, 0, &k));
    assert_non_null(strstr(k.name, "cmf_kernel_256"));
}

#if CM_HAVE_NCCL
static void reach_nccl_get_version(walk_t *w) {
    cm_version_info_t v;
    TARGET(cm_version_info(&v));
    assert_int_equal(v.nccl, 0); /* unknown, not an error */
    AGAIN(cm_version_info(&v));
    assert_int_equal(v.nccl, NCCL_VERSION_CODE);
}

static void reach_comm_id(walk_t *w) {
    cm_comm_id_t id;
    TARGET(cm_comm_id_create(&id));
    AGAIN(cm_comm_id_create(&id));
}

static void reach_nccl_comm_init_all(walk_t *w) {
    cm_device_set_t *set = set_open2();
    cm_comm_t *c = NULL;
    TARGET(cm_comm_create(set, &c));
    assert_null(c);
    AGAIN(cm_comm_create(set, &c));
    OK(cm_comm_destroy(c));
    OK(cm_device_set_close(set));
}

/* A communicator of one rank on device 0 (its own stream from the pool). */
static cm_comm_t *rank_comm(cm_device_t *d) {
    cm_comm_id_t id;
    OK(cm_comm_id_create(&id));
    cm_comm_t *c = NULL;
    OK(cm_comm_create_rank(d, &id, 1, 0, &c));
    return c;
}

static void reach_nccl_comm_init_rank(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_comm_id_t id;
    OK(cm_comm_id_create(&id));
    cm_comm_t *c = NULL;
    TARGET(cm_comm_create_rank(d, &id, 1, 0, &c));
    assert_null(c);
    AGAIN(cm_comm_create_rank(d, &id, 1, 0, &c));
    OK(cm_comm_destroy(c));
    OK(cm_device_close(d)); /* the failed create gave its stream back */
}

static void reach_comm_destroy(walk_t *w, bool async_error) {
    cm_device_t *d = dev_open(0);
    cm_comm_t *c = rank_comm(d);
    if (async_error) walk_also(w, "nccl_comm_get_async_error", 0, 1, ncclRemoteError);
    TARGET(cm_comm_destroy(c));
    assert_int_equal(cm_comm_destroy(c), CM_ERROR_INVALID_ARGUMENT);
    c = rank_comm(d);
    AGAIN(cm_comm_destroy(c));
    OK(cm_device_close(d));
}
static void reach_nccl_comm_destroy(walk_t *w) {
    reach_comm_destroy(w, false);
}
static void reach_nccl_comm_abort(walk_t *w) {
    reach_comm_destroy(w, true);
}

/* A failing ncclCommGetAsyncError is NCCL's error: the wait aborts the communicator, which then
 * refuses further work with the same cause, is destroyed at once, and a new one works. */
static void reach_nccl_comm_get_async_error(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_comm_t *c = rank_comm(d);
    cm_status_t s = TARGET(cm_comm_synchronize(c));
    assert_int_equal(cm_comm_synchronize(c), s);
    assert_non_null(strstr(cm_last_error()->message, "the communicator was aborted"));
    OK(cm_comm_destroy(c));
    c = rank_comm(d);
    AGAIN(cm_comm_synchronize(c));
    OK(cm_comm_destroy(c));
    OK(cm_device_close(d));
}

static void reach_nccl_texts(walk_t *w) {
    walk_also(w, "nccl_get_unique_id", 0, 1, ncclSystemError);
    cm_comm_id_t id;
    TARGET(cm_comm_id_create(&id));
    AGAIN(cm_comm_id_create(&id));
}

/* A collective over a set of two devices: one buffer per member. */
static void reach_collective(walk_t *w, int which) {
    cm_device_set_t *set = set_open2();
    cm_comm_t *c = set_comm(set);
    cm_buffer_t *send[2], *recv[2];
    for (int k = 0; k < 2; ++k) {
        cm_device_t *d = NULL;
        OK(cm_device_set_device(set, k, &d));
        send[k] = buf_new(d, 64);
        recv[k] = buf_new(d, 128);
        OK(cm_buffer_set(NULL, send[k], 0, 64, 4));
    }
    if (which == 0) {
        TARGET(cm_comm_all_reduce(c, send, recv, 16, CM_DTYPE_F32, CM_COMM_SUM));
        AGAIN(cm_comm_all_reduce(c, send, recv, 16, CM_DTYPE_F32, CM_COMM_SUM));
    } else if (which == 1) {
        TARGET(cm_comm_broadcast(c, send, recv, 16, CM_DTYPE_F32, 0));
        AGAIN(cm_comm_broadcast(c, send, recv, 16, CM_DTYPE_F32, 0));
    } else {
        TARGET(cm_comm_all_gather(c, send, recv, 16, CM_DTYPE_F32));
        AGAIN(cm_comm_all_gather(c, send, recv, 16, CM_DTYPE_F32));
    }
    OK(cm_comm_synchronize(c));
    OK(cm_comm_destroy(c));
    for (int k = 0; k < 2; ++k) {
        OK(cm_buffer_destroy(send[k]));
        OK(cm_buffer_destroy(recv[k]));
    }
    OK(cm_device_set_close(set));
}
static void reach_all_reduce(walk_t *w) {
    reach_collective(w, 0);
}
static void reach_broadcast(walk_t *w) {
    reach_collective(w, 1);
}
static void reach_all_gather(walk_t *w) {
    reach_collective(w, 2);
}
#endif

/* ---------------------------------------------------------------- memory spaces (memspace.h) */

static void reach_symbol_copy(walk_t *w, bool on_stream) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = on_stream ? stream_get(d) : NULL;
    const void *sym = cmf_symbol(64);
    float v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    TARGET(cm_symbol_copy_from_host(s, d, sym, 8, v, sizeof v));
    AGAIN(cm_symbol_copy_from_host(s, d, sym, 8, v, sizeof v));
    if (s != NULL) OK(cm_stream_synchronize(s));
    assert_memory_equal(cmf_symbol_data(sym, 0) + 8, v, sizeof v);
    OK(cm_stream_release(s));
    OK(cm_device_close(d));
}
static void reach_get_symbol_size(walk_t *w) {
    reach_symbol_copy(w, false);
}
static void reach_memcpy_to_symbol_async(walk_t *w) {
    reach_symbol_copy(w, true);
}

static void reach_get_symbol_address(walk_t *w) {
    cm_device_t *d = dev_open(0);
    const void *sym = cmf_symbol(64);
    void *p = (void *)(uintptr_t)0x1;
    size_t n = 7;
    TARGET(cm_symbol_address(d, sym, &p, &n));
    assert_ptr_equal(p, (void *)(uintptr_t)0x1); /* outputs untouched */
    assert_int_equal(n, 7);
    AGAIN(cm_symbol_address(d, sym, &p, &n));
    assert_ptr_equal(p, cmf_symbol_data(sym, 0));
    assert_int_equal(n, 64);
    OK(cm_device_close(d));
}

static void reach_memcpy_from_symbol_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    const void *sym = cmf_symbol(16);
    memset(cmf_symbol_data(sym, 0), 0x5a, 16);
    unsigned char out[16] = {0};
    TARGET(cm_symbol_copy_to_host(NULL, d, sym, 0, out, sizeof out));
    AGAIN(cm_symbol_copy_to_host(NULL, d, sym, 0, out, sizeof out));
    for (int i = 0; i < 16; ++i) assert_int_equal(out[i], 0x5a);
    OK(cm_device_close(d));
}

static void reach_malloc_pitch(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_pitched_t *p = NULL;
    TARGET(cm_pitched_create(d, 100, 10, CM_FORMAT_F32, &p));
    assert_null(p);
    AGAIN(cm_pitched_create(d, 100, 10, CM_FORMAT_F32, &p));
    OK(cm_pitched_destroy(p));
    OK(cm_device_close(d));
}

static void reach_malloc_array(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_array_t *a = NULL;
    TARGET(cm_array_create(d, 64, 32, CM_FORMAT_U8X4, 0, &a));
    assert_null(a);
    AGAIN(cm_array_create(d, 64, 32, CM_FORMAT_U8X4, 0, &a));
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_free_array(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_array_t *a = NULL;
    OK(cm_array_create(d, 64, 32, CM_FORMAT_U8X4, 0, &a));
    TARGET(cm_array_destroy(a));
    /* the handle is released all the same */
    assert_int_equal(cm_array_destroy(a), CM_ERROR_INVALID_ARGUMENT);
    OK(cm_array_create(d, 64, 32, CM_FORMAT_U8X4, 0, &a));
    AGAIN(cm_array_destroy(a));
    OK(cm_device_close(d));
}

/* A 16 x 8 rectangle of floats from the host into a pitched buffer (2-D copy), and back. */
static void reach_memcpy_2d_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_pitched_t *p = NULL;
    OK(cm_pitched_create(d, 20, 10, CM_FORMAT_F32, &p));
    float in[8][16], out[8][16];
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 16; ++x) in[y][x] = (float)(y * 100 + x);
    TARGET(cm_copy_2d(s, cm_place_pitched(p, 2, 1), cm_place_host(in, 0), 16, 8));
    AGAIN(cm_copy_2d(s, cm_place_pitched(p, 2, 1), cm_place_host(in, 0), 16, 8));
    OK(cm_copy_2d(NULL, cm_place_host(out, sizeof out[0]), cm_place_pitched(p, 2, 1), 16, 8));
    assert_memory_equal(out, in, sizeof in);
    OK(cm_stream_release(s));
    OK(cm_pitched_destroy(p));
    OK(cm_device_close(d));
}

static cm_array_t *array_with(cm_device_t *d, unsigned char *in, size_t w, size_t h) {
    cm_array_t *a = NULL;
    OK(cm_array_create(d, w, h, CM_FORMAT_U8, CM_ARRAY_SURFACE_LOAD_STORE, &a));
    for (size_t i = 0; i < w * h; ++i) in[i] = (unsigned char)(i * 7 + 1);
    OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(in, 0), w, h));
    return a;
}

static void reach_memcpy_2d_to_array_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_array_t *a = NULL;
    OK(cm_array_create(d, 32, 4, CM_FORMAT_U16, 0, &a));
    unsigned short in[4][32];
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 32; ++x) in[y][x] = (unsigned short)(y * 1000 + x);
    TARGET(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(in, 0), 32, 4));
    AGAIN(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(in, 0), 32, 4));
    cm_array_info_t info;
    OK(cm_array_info(a, &info));
    size_t row = 0;
    const unsigned char *data = cmf_array_data(info.cuda_array, &row);
    assert_int_equal(row, sizeof in[0]);
    assert_memory_equal(data, in, sizeof in);
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_memcpy_2d_from_array_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    unsigned char in[24 * 6], out[24 * 6];
    cm_array_t *a = array_with(d, in, 24, 6);
    TARGET(cm_copy_2d(NULL, cm_place_host(out, 0), cm_place_array(a, 0, 0), 24, 6));
    AGAIN(cm_copy_2d(NULL, cm_place_host(out, 0), cm_place_array(a, 0, 0), 24, 6));
    assert_memory_equal(out, in, sizeof in);
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_create_texture_object(walk_t *w) {
    cm_device_t *d = dev_open(0);
    unsigned char in[16 * 16];
    cm_array_t *a = array_with(d, in, 16, 16);
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.filter_mode = CM_FILTER_LINEAR;
    desc.read_mode = CM_READ_NORMALIZED_FLOAT;
    cm_texture_t *t = NULL;
    TARGET(cm_texture_create_from_array(a, &desc, &t));
    assert_null(t);
    AGAIN(cm_texture_create_from_array(a, &desc, &t));
    OK(cm_texture_destroy(t));
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_destroy_texture_object(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_buffer_t *b = buf_new(d, 4096);
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.format = CM_FORMAT_F32;
    cm_texture_t *t = NULL;
    OK(cm_texture_create_from_buffer(b, 0, 4096, &desc, &t));
    TARGET(cm_texture_destroy(t));
    assert_int_equal(cm_texture_destroy(t), CM_ERROR_INVALID_ARGUMENT); /* released anyway */
    OK(cm_texture_create_from_buffer(b, 0, 4096, &desc, &t));
    AGAIN(cm_texture_destroy(t));
    OK(cm_buffer_destroy(b));
    OK(cm_device_close(d));
}

static void reach_create_surface_object(walk_t *w) {
    cm_device_t *d = dev_open(0);
    unsigned char in[8 * 8];
    cm_array_t *a = array_with(d, in, 8, 8);
    cm_surface_t *sf = NULL;
    TARGET(cm_surface_create(a, &sf));
    assert_null(sf);
    AGAIN(cm_surface_create(a, &sf));
    OK(cm_surface_destroy(sf));
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_destroy_surface_object(walk_t *w) {
    cm_device_t *d = dev_open(0);
    unsigned char in[8 * 8];
    cm_array_t *a = array_with(d, in, 8, 8);
    cm_surface_t *sf = NULL;
    OK(cm_surface_create(a, &sf));
    TARGET(cm_surface_destroy(sf));
    assert_int_equal(cm_surface_destroy(sf), CM_ERROR_INVALID_ARGUMENT);
    OK(cm_surface_create(a, &sf));
    AGAIN(cm_surface_destroy(sf));
    OK(cm_array_destroy(a));
    OK(cm_device_close(d));
}

static void reach_malloc_managed(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_managed_t *m = NULL;
    TARGET(cm_managed_create(d, 4096, &m));
    assert_null(m);
    AGAIN(cm_managed_create(d, 4096, &m));
    OK(cm_managed_destroy(m));
    OK(cm_device_close(d));
}

static void reach_mem_prefetch_async(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_stream_t *s = stream_get(d);
    cm_managed_t *m = NULL;
    OK(cm_managed_create(d, 1 << 16, &m));
    TARGET(cm_managed_prefetch(s, m, 4096, 8192, 0));
    AGAIN(cm_managed_prefetch(s, m, 4096, 8192, 0));
    void *p = NULL;
    OK(cm_managed_data(m, &p));
    assert_ptr_equal(cmf.last_prefetch_ptr, (unsigned char *)p + 4096);
    assert_int_equal(cmf.last_prefetch_n, 8192);
    OK(cm_stream_release(s));
    OK(cm_managed_destroy(m));
    OK(cm_device_close(d));
}

static void reach_mem_advise(walk_t *w) {
    cm_device_t *d = dev_open(0);
    cm_managed_t *m = NULL;
    OK(cm_managed_create(d, 1 << 16, &m));
    TARGET(cm_managed_advise(m, 0, 1 << 16, CM_ADVISE_PREFERRED_LOCATION, 1));
    AGAIN(cm_managed_advise(m, 0, 1 << 16, CM_ADVISE_PREFERRED_LOCATION, 1));
    assert_int_equal(cmf.last_advice, cudaMemAdviseSetPreferredLocation);
    assert_int_equal(cmf.last_advice_loc.id, 1);
    OK(cm_managed_destroy(m));
    OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- the table of rows */

#define E CM_ERROR_CUDA

static const row_t rows[] = {
    /* versions, devices, contexts */
    {"driver_get_version", reach_driver_get_version, FAILS, CM_ERROR_NO_DRIVER,
     "no NVIDIA driver is installed", 0, 0, 0, F_NOCODE,
     "cudaGetDeviceCount said the driver is insufficient and its version cannot be read: "
     "reported as no driver"},
    {"runtime_get_version", reach_runtime_get_version, TOLERATED, CM_ERROR_DRIVER_TOO_OLD,
     "cudaGetDeviceCount", 0, 0, 0, F_NOCODE,
     "the runtime version of the insufficient-driver message falls back to CUDART_VERSION"},
    {"get_device_count", reach_get_device_count, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"get_device", reach_get_device, FAILS, E, "no current device could be read", 0, 0, 0,
     F_NOCODE, NULL},
    {"get_device_properties", reach_open, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"device_get_attribute", reach_open, FAILS, E, "cudaDevAttrMemoryPoolsSupported", 0, 0, 0,
     0, NULL},
    {"device_get_p2p_attribute", reach_device_get_p2p_attribute, TOLERATED, CM_OK, NULL, 0, 0,
     0, 0, "an unreadable P2P attribute is -1 in the peer matrix"},
    {"device_synchronize", reach_device_synchronize, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"device_can_access_peer", reach_peer_sync, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"device_enable_peer_access", reach_peer_sync, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"ctx_get_current", reach_memory_info, TOLERATED, CM_OK, NULL, 0, 0, 0, 0,
     "an unknown current context is treated as none: the device's context is pushed and popped"},
    {"ctx_push_current", reach_memory_info, FAILS, E, "cuCtxPushCurrent", 0, 0, 0, 0, NULL},
    {"ctx_pop_current", reach_ctx_pop_current, TOLERATED, CM_OK, NULL, 0, 0, 0, F_CTX_LEFT,
     "cm__leave ignores a failed pop (only a broken driver fails a balanced pop): the context "
     "stays pushed on the thread"},
    {"primary_ctx_retain", reach_memory_info, FAILS, E, "cuDevicePrimaryCtxRetain", 0, 0, 0, 0,
     NULL},
    /* errors */
    {"get_last_error", reach_get_last_error, TOLERATED, E, "cudaMalloc", 0, 0, 0, 0,
     "clearing CUDA's last error after a recorded failure: its answer is not used"},
    {"get_error_name", reach_get_error_name, TOLERATED, CM_ERROR_INVALID_ARGUMENT,
     "not a valid CUDA stream", 0, 0, 0, F_NOCODE,
     "the message carries the runtime's text for an unknown code instead of the error's name"},
    {"get_error_string", reach_get_error_string, TOLERATED, E, "cudaGetDeviceProperties", 0, 0,
     0, 0, "the message carries the runtime's text for an unknown code"},
    /* memory */
    {"mem_get_info", reach_mem_get_info, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"device_malloc", reach_device_malloc, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"device_free", reach_device_free, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"malloc_async", reach_malloc_async, FAILS, E, NULL, 0, 0, -1, 0, NULL},
    {"mem_pool_create", reach_open, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_pool_destroy", reach_mem_pool_destroy, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_pool_set_attribute", reach_mem_pool_set_attribute, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_pool_get_attribute", reach_mem_pool_get_attribute, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_pool_trim_to", reach_mem_pool_trim_to, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_pool_set_access", reach_peer_sync, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"malloc_from_pool_async", reach_malloc_from_pool_async, FAILS, E, "cudaMallocFromPoolAsync",
     0, 0, 0, 0, NULL},
    {"free_async", reach_free_async, FAILS, E, "cudaFreeAsync", 0, 0, 0, 0, NULL},
    {"host_alloc", reach_host_alloc, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"free_host", reach_free_host, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"host_register", reach_host_register, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"host_unregister", reach_host_unregister, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"host_get_device_pointer", reach_host_get_device_pointer, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"pointer_get_attributes", reach_pointer_get_attributes, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_sync", reach_memcpy_sync, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_async", reach_memcpy_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_peer", reach_peer_sync, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_peer_async", reach_peer_stream, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memset_async", reach_memset_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"fill_async", reach_fill_async, FAILS, E, "fill kernel", 0, 0, 0, 0, NULL},
    /* memory spaces (memspace.h) */
    {"memcpy_2d_async", reach_memcpy_2d_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"get_symbol_size", reach_get_symbol_size, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"get_symbol_address", reach_get_symbol_address, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_to_symbol_async", reach_memcpy_to_symbol_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_from_symbol_async", reach_memcpy_from_symbol_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"malloc_pitch", reach_malloc_pitch, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"malloc_array", reach_malloc_array, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"free_array", reach_free_array, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_2d_to_array_async", reach_memcpy_2d_to_array_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"memcpy_2d_from_array_async", reach_memcpy_2d_from_array_async, FAILS, E, NULL, 0, 0, 0, 0,
     NULL},
    {"create_texture_object", reach_create_texture_object, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"destroy_texture_object", reach_destroy_texture_object, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"create_surface_object", reach_create_surface_object, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"destroy_surface_object", reach_destroy_surface_object, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"malloc_managed", reach_malloc_managed, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_prefetch_async", reach_mem_prefetch_async, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"mem_advise", reach_mem_advise, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    /* streams, events, graphs */
    {"priority_range", reach_stream_acquire, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"stream_create", reach_stream_acquire, FAILS, E, "cudaStreamCreateWithPriority", 0, 0, 0,
     0, NULL},
    {"stream_destroy", reach_stream_destroy, FAILS, E, "cudaStreamDestroy", 0, 0, 0, 0, NULL},
    {"stream_get_device", reach_stream_get_device, FAILS, E, "cudaStreamGetDevice", 0, 0, 0, 0,
     NULL},
    {"stream_synchronize", reach_stream_synchronize, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"stream_query", reach_stream_query, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"stream_wait_event", reach_stream_wait_event, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"stream_is_capturing", reach_stream_is_capturing, TOLERATED, CM_OK, NULL, 0, 0, 0, 0,
     "the stream check asks the stream's device next, which answers"},
    {"stream_get_ctx", reach_stream_get_ctx, TOLERATED, CM_OK, NULL, 0, 0, 0, 0,
     "the stream check falls back to asking the stream's device"},
    {"launch_host_func", reach_launch_host_func, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"event_create", reach_event_create, FAILS, E, "cudaEventCreateWithFlags", 0, 0, 0, 0, NULL},
    {"event_destroy", reach_event_destroy, FAILS, E, "cudaEventDestroy", 0, 0, 0, 0, NULL},
    {"event_record", reach_event_record, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"event_synchronize", reach_event_synchronize, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"event_query", reach_event_query, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"event_elapsed", reach_event_elapsed, FAILS, E, "cudaEventElapsedTime", 0, 0, 0, 0, NULL},
    {"begin_capture", reach_begin_capture, FAILS, E, "cudaStreamBeginCapture", 0, 0, 0, 0, NULL},
    {"end_capture", reach_end_capture, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"graph_instantiate", reach_graph_instantiate, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"graph_launch", reach_graph_launch, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"graph_get_nodes", reach_graph_get_nodes, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"graph_destroy", reach_graph_destroy, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"graph_exec_destroy", reach_graph_destroy, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    /* kernels */
    {"func_get_attributes", reach_launch, FAILS, E, NULL, 0, 0, 0, 0, NULL},
    {"func_get_name", reach_func_get_name, TOLERATED, CM_OK, NULL, 0, 0, 0, 0,
     "the attributes are returned without the kernel's name"},
    {"launch_kernel_ex", reach_launch, FAILS, E, "cudaLaunchKernelExC", 0, 0, 0, 0, NULL},
#if CM_HAVE_NCCL
    {"nccl_get_version", reach_nccl_get_version, TOLERATED, CM_OK, NULL, 0, 0, 0, 0,
     "cm_version_info reports NCCL's version as 0 (unknown)"},
    {"nccl_get_unique_id", reach_comm_id, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_comm_init_all", reach_nccl_comm_init_all, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_comm_init_rank", reach_nccl_comm_init_rank, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_comm_destroy", reach_nccl_comm_destroy, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_comm_abort", reach_nccl_comm_abort, FAILS, E, "ncclCommGetAsyncError", 0, 0, 0,
     F_NOCODE, NULL},
    {"nccl_comm_get_async_error", reach_nccl_comm_get_async_error, FAILS, E, NULL, 0, 0, 0,
     F_NOCODE, NULL},
    {"nccl_get_error_string", reach_nccl_texts, TOLERATED, E, "ncclGetUniqueId", 0, 0, 0,
     F_NOCODE, "the message carries \"unknown result code\" instead of NCCL's text"},
    {"nccl_get_last_error", reach_nccl_texts, TOLERATED, E, "ncclGetUniqueId", 0, 0, 0, F_NOCODE,
     "NULL from ncclGetLastError: the message has no NCCL detail"},
    {"nccl_group_start", reach_all_reduce, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_group_end", reach_all_reduce, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_all_reduce", reach_all_reduce, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_broadcast", reach_broadcast, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
    {"nccl_all_gather", reach_all_gather, FAILS, E, NULL, 0, 0, 0, F_NOCODE, NULL},
#endif
};
#undef E

/* ---------------------------------------------------------------- the walk */

static int walk_results[256]; /* per table entry: 1 reached and checked, -1 failed */

static const row_t *row_of(const char *member) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i)
        if (strcmp(rows[i].member, member) == 0) return &rows[i];
    return NULL;
}

static int setup(void **state) {
    (void)state;
    cmf_install(2, 64 * MiB);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    cmf_uninstall();
    return 0;
}

static bool is_nccl(const char *member) {
    return strncmp(member, "nccl_", 5) == 0;
}

static void check_contains(const cm_error_t *e, const char *text, const char *member) {
    if (strstr(e->call, text) != NULL || strstr(e->message, text) != NULL) return;
    fail_msg("%s: cm_last_error() does not name \"%s\": call \"%s\", message \"%s\"", member, text,
             e->call, e->message);
}

static void test_entry(void **state) {
    const size_t i = (size_t)(uintptr_t)*state - 1;
    const char *member = cm__cuda_member_name(i);
    const char *function = cm__cuda_function_name(i);
    walk_results[i] = -1;
    const row_t *r = row_of(member);
    if (r == NULL)
        fail_msg("call table entry %s (%s) has no reach function: add a row to "
                 "tests/host/test_call_table_faults.c (or take the entry out of calls.h when "
                 "the library no longer makes the call)", member, function);
    const int m = cmf_member_index(member);
    if (m < 0 || !cmf_gated(m))
        fail_msg("%s: the simulation has no gate for it (tests/host/test_full_fake.h)", member);

    walk_t w;
    memset(&w, 0, sizeof w);
    w.row = r;
    w.target = m;
    w.err = r->err != 0 ? r->err : is_nccl(member) ? (int)ncclSystemError : (int)cudaErrorUnknown;
    for (int k = 1; k < CM__KIND_COUNT; ++k)
        assert_int_equal(cm__handle_live_count((cm__kind_t)k), 0);
    r->reach(&w);

    /* reached, failed, and a documented status */
    if (!w.done) fail_msg("%s: the reach function made no TARGET call", member);
    if (w.fired == 0)
        fail_msg("%s: TARGET never called %s (status %s): the path does not reach the entry",
                 member, function, cm_status_name(w.status));
    assert_true((int)w.status >= 0 && (int)w.status < CM_STATUS_COUNT);
    if (w.status != r->status)
        fail_msg("%s: TARGET returned %s, the row expects %s (detail: %s)", member,
                 cm_status_name(w.status), cm_status_name(r->status), w.detail.message);
    if (r->expect == FAILS) assert_int_not_equal(w.status, CM_OK);
    if (w.status != CM_OK) {
        /* the detail is consistent with the status */
        assert_int_equal(w.detail.status, w.status);
        if (w.detail.hint[0] == '\0') fail_msg("%s: the detail has no hint", member);
        check_contains(&w.detail, r->names != NULL ? r->names : function, member);
        if (!(r->flags & F_NOCODE) && !is_nccl(member) && w.detail.cuda_error != w.err)
            fail_msg("%s: the detail's CUDA error is %d, the injected one %d", member,
                     w.detail.cuda_error, w.err);
    }
    /* nothing leaked, nothing outside the simulation */
    for (int k = 1; k < CM__KIND_COUNT; ++k) {
        size_t live = cm__handle_live_count((cm__kind_t)k);
        if (live != 0)
            fail_msg("%s: %zu live %s handle(s) left", member, live, cm__kind_name((cm__kind_t)k));
    }
    char what[256];
    int left = cmf_outstanding(what, sizeof what);
    if (left != 0) fail_msg("%s: the library still holds %d simulated resources (%s)", member, left, what);
    if (cmf.violations != 0) fail_msg("%s: simulation violation: %s", member, cmf.last_violation);
    if (cmf.capture_leaks != 0) fail_msg("%s: a free refused during a capture", member);
    if (cmf.implicit_ctx != 0)
        fail_msg("%s: %lu runtime call(s) made with no current context (first: %s)", member,
                 cmf.implicit_ctx, cmf.implicit_what);
    assert_int_equal(cmf_ctx_depth(), 0);
    assert_int_equal(cmf_ctx_bound(), -1);
    if (r->expect == TOLERATED) print_message("tolerated: %s: %s\n", member, r->note);
    walk_results[i] = 1;
}

/* The NVML calls have a table of their own (cm__nvml, calls.h) in builds that have it: its
 * entries must be listed as well (weak: absent from builds before it). */
extern size_t cm__nvml_count(void) __attribute__((weak));
extern const char *cm__nvml_member_name(size_t i) __attribute__((weak));
extern const char *cm__nvml_function_name(size_t i) __attribute__((weak));

/* Every entry of the table has a row, every row names an entry, and the X-macro list the gate
 * knows is the table's. The NVML table (cm__nvml) has a walk of its own in test_nvml.c
 * (test_every_nvml_entry_fails, on its fake NVML): counted here by name only. */
static void test_every_entry_is_covered(void **state) {
    (void)state;
    const size_t n = cm__cuda_count();
    size_t reached = 0, missing = 0, failed = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *member = cm__cuda_member_name(i);
        if (walk_results[i] == 1) {
            ++reached;
        } else if (row_of(member) == NULL) {
            ++missing;
            print_error("not covered: %s (%s)\n", member, cm__cuda_function_name(i));
        } else {
            ++failed;
            print_error("failed: %s\n", member);
        }
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        bool found = false;
        for (size_t j = 0; j < n && !found; ++j) found = strcmp(cm__cuda_member_name(j), rows[i].member) == 0;
        if (!found) fail_msg("row %s names no entry of the call table", rows[i].member);
    }
    for (int m = 0; m < CMF_N_MEMBERS; ++m)
        if (strcmp(cmf_member_names[m], cm__cuda_member_name((size_t)m)) != 0)
            fail_msg("the X-macro order differs from the table's at %d", m);
    print_message("call table: %zu entries: %zu failed by this walk, %zu not covered, %zu failed "
                  "their checks (the %zu of the NVML table: test_nvml's walk)\n",
                  n, reached, missing, failed, cm__nvml_count());
    assert_int_equal(missing, 0);
    assert_int_equal(failed, 0);
    assert_int_equal(reached, n);
}

/* ---------------------------------------------------------------- the source scan */

/* Blank (to spaces, newlines kept) the comments and the string and character literals of C
 * text t, so that only code is left. */
static void blank_non_code(char *t) {
    enum { CODE, LINE, BLOCK, STR, CHR } st = CODE;
    for (char *p = t; *p; ++p) {
        switch (st) {
        case CODE:
            if (p[0] == '/' && p[1] == '/') st = LINE, *p = ' ';
            else if (p[0] == '/' && p[1] == '*') st = BLOCK, *p = ' ', *++p = ' ';
            else if (*p == '"') st = STR;
            else if (*p == '\'') st = CHR;
            break;
        case LINE:
            if (*p == '\n') st = CODE;
            else *p = ' ';
            break;
        case BLOCK:
            if (p[0] == '*' && p[1] == '/') st = CODE, *p = ' ', *++p = ' ';
            else if (*p != '\n') *p = ' ';
            break;
        case STR:
        case CHR:
            if (*p == '\\' && p[1] != '\0') *p = ' ', *++p = ' ';
            else if (*p == (st == STR ? '"' : '\'')) st = CODE;
            else if (*p != '\n') *p = ' ';
            break;
        }
    }
}

/* Calls by name of a CUDA runtime (cuda...), driver (cu...) or NCCL (nccl...) function in one
 * file: an identifier with such a prefix and an upper-case letter after it, followed by "(".
 * Not counted: types (..._t, as in a function-pointer typedef) and the occupancy calculator
 * (cudaOcc..., a header of inline functions, no CUDA call). Each hit is printed. */
static int scan_file(const char *path, const char *shown) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)len + 1);
    assert_non_null(t);
    size_t got = fread(t, 1, (size_t)len, f);
    fclose(f);
    t[got] = '\0';
    blank_non_code(t);
    int hits = 0, line = 1;
    for (char *p = t; *p; ++p) {
        if (*p == '\n') ++line;
        if (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
        size_t pre = strncmp(p, "cuda", 4) == 0 ? 4 : strncmp(p, "nccl", 4) == 0 ? 4
                     : strncmp(p, "cu", 2) == 0 ? 2 : 0;
        if (pre == 0 || !isupper((unsigned char)p[pre])) continue;
        char *e = p;
        while (isalnum((unsigned char)*e) || *e == '_') ++e;
        char *q = e;
        while (*q == ' ' || *q == '\t' || *q == '\n') ++q;
        const size_t n = (size_t)(e - p);
        const bool type = n > 2 && e[-2] == '_' && e[-1] == 't';
        if (*q == '(' && !type && strncmp(p, "cudaOcc", 7) != 0) {
            print_error("%s:%d: %.*s( called by name, not through the call table\n", shown, line,
                        (int)n, p);
            ++hits;
        }
        p = e - 1;
    }
    free(t);
    return hits;
}

static int scan_dir(const char *dir, const char *rel, int *files) {
    DIR *d = opendir(dir);
    if (d == NULL) fail_msg("cannot open %s", dir);
    int hits = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char path[4096], shown[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        snprintf(shown, sizeof shown, "%s/%s", rel, de->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode)) {
            hits += scan_dir(path, shown, files);
            continue;
        }
        const size_t len = strlen(de->d_name);
        const bool c_or_h = len > 2 && de->d_name[len - 2] == '.' &&
                            (de->d_name[len - 1] == 'c' || de->d_name[len - 1] == 'h');
        /* core/calls.c is the table: the one file that names the functions */
        if (!c_or_h || strcmp(shown, "src/core/calls.c") == 0) continue;
        ++*files;
        hits += scan_file(path, shown);
    }
    closedir(d);
    return hits;
}

/* Every CUDA, driver and NCCL call of src/ goes through the table (so the walk above fails
 * every call the library makes): no other file calls one by name. kernels/ (the device code and
 * its launchers) is outside src/ and outside the table. The scanner itself is checked on a
 * planted call first. */
static void test_src_calls_cuda_only_through_the_table(void **state) {
    (void)state;
    char planted[] = "/* cudaMalloc(&p, 1) */ x = \"cudaFree(p)\"; cudaError_t (*f)(void);\n"
                     "int y = cudaOccMaxActiveBlocksPerMultiprocessor(a);\n"
                     "  err = cudaMemcpyAsync (d, s, n, k, st);\n";
    blank_non_code(planted);
    assert_null(strstr(planted, "cudaMalloc"));
    assert_null(strstr(planted, "cudaFree"));
    assert_non_null(strstr(planted, "cudaMemcpyAsync ("));
    char tmp[] = "/tmp/cm_scan_XXXXXX";
    int fd = mkstemp(tmp);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("/* cudaMalloc(&p, 1) */ x = \"cudaFree(p)\"; cudaError_t (*f)(void);\n"
          "int y = cudaOccMaxActiveBlocksPerMultiprocessor(a);\n"
          "  err = cudaMemcpyAsync (d, s, n, k, st);\n  r = ncclAllReduce(a);\n", f);
    fclose(f);
    assert_int_equal(scan_file(tmp, "planted.c"), 2); /* cudaMemcpyAsync and ncclAllReduce */
    unlink(tmp);
    int files = 0;
    const int hits = scan_dir(CM_TEST_SOURCE_DIR "/src", "src", &files);
    print_message("source scan: %d files of src/ besides core/calls.c, %d CUDA / NCCL calls by "
                  "name\n", files, hits);
    assert_true(files > 10);
    assert_int_equal(hits, 0);
}

int main(void) {
    const size_t n = cm__cuda_count();
    assert_true(n < sizeof walk_results / sizeof walk_results[0]);
    struct CMUnitTest *tests = calloc(n + 2, sizeof *tests);
    char **names = calloc(n, sizeof *names);
    if (tests == NULL || names == NULL) return 1;
    for (size_t i = 0; i < n; ++i) {
        names[i] = malloc(strlen(cm__cuda_member_name(i)) + 8);
        if (names[i] == NULL) return 1;
        sprintf(names[i], "fault %s", cm__cuda_member_name(i));
        tests[i] = (struct CMUnitTest){names[i], test_entry, setup, teardown, (void *)(uintptr_t)(i + 1)};
    }
    tests[n] = (struct CMUnitTest){"every entry is covered", test_every_entry_is_covered, NULL, NULL, NULL};
    tests[n + 1] = (struct CMUnitTest){"src calls CUDA only through the table",
                                       test_src_calls_cuda_only_through_the_table, NULL, NULL, NULL};
    int rc = _cmocka_run_group_tests("call_table_faults", tests, n + 2, NULL, NULL);
    for (size_t i = 0; i < n; ++i) free(names[i]);
    free(names);
    free(tests);
    return rc;
}
