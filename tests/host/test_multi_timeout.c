/*
 * FAULT INJECTION: collectives that fail in bounded time (multi.h, "Collectives that fail
 * instead of hang"), on the complete simulation of test_full_fake.h.
 *
 * Over the simulation's gates this test puts four wrappers of its own:
 *   - cudaStreamQuery answers cudaErrorNotReady for every stream of a "hung" device: the NCCL
 *     kernel of a collective whose peer never arrives;
 *   - cudaStreamSynchronize and cudaDeviceSynchronize on a hung device would block forever on a
 *     GPU: here they return at once and are counted (`blocking`), and every test asserts that
 *     none was made;
 *   - ncclCommAbort is counted and, as on a GPU (NCCL's kernels poll an abort flag), ends the
 *     hang of its device unless the test says the hang outlives the abort;
 *   - ncclCommGetAsyncError reports ncclRemoteError for a chosen device (a peer that exited).
 *
 * Checked: the default timeout and CUDAMODEL_COLLECTIVE_TIMEOUT_MS, the setters; a normal
 * collective with the timeout machinery active; a peer that never completes turns into
 * CM_ERROR_BUSY within the timeout (+ margin) naming the rank, device and milliseconds, every
 * rank aborted, then the communicator and the set refuse further work with the same cause while
 * destroy / close release everything (no handle, no simulated resource left); the same through
 * cm_comm_destroy() alone; an NCCL asynchronous error aborts at once even with no time limit; a
 * hang that outlives the abort still lets the set close in bounded time; a rank communicator
 * (cm_comm_create_rank) times out the same way.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>

#include "handle.h"
#include "multi_internal.h"
#include "test_full_fake.h"

#define MiB ((size_t)1 << 20)
/* A wait may overrun its timeout by one polling pause (<= 1 ms) plus the scheduling of a loaded
 * CI machine (ASan, two jobs): a generous margin, still far below "forever". */
#define MARGIN_MS 3000.0

#if CM_HAVE_NCCL

static struct {
    unsigned hung;          /* bit d: device d's streams never finish */
    int hang_outlives_abort;
    int async_dev;          /* ncclCommGetAsyncError reports ncclRemoteError on it; -1: none */
    int aborts, destroys, queries, blocking;
    cm__cuda_t gates;       /* the simulation's gates under the wrappers */
} tw;

static int stream_dev(cudaStream_t s) {
    cmf_obj_t *o = cmf_any(s, CMF_STREAM);
    return o != NULL ? o->device : -1;
}

static cudaError_t tw_stream_query(cudaStream_t s) {
    ++tw.queries;
    int d = stream_dev(s);
    if (d >= 0 && ((tw.hung >> d) & 1u)) {
        (void)tw.gates.stream_query(s); /* counted by the gate, answered here */
        return cudaErrorNotReady;
    }
    return tw.gates.stream_query(s);
}
static cudaError_t tw_stream_synchronize(cudaStream_t s) {
    int d = stream_dev(s);
    if (d >= 0 && ((tw.hung >> d) & 1u)) ++tw.blocking; /* would never return on a GPU */
    return tw.gates.stream_synchronize(s);
}
static cudaError_t tw_device_synchronize(void) {
    if (tw.hung != 0) ++tw.blocking;
    return tw.gates.device_synchronize();
}
static ncclResult_t tw_comm_abort(ncclComm_t c) {
    ++tw.aborts;
    cmf_obj_t *o = cmf_any(c, CMF_COMM);
    if (o != NULL && !tw.hang_outlives_abort) tw.hung &= ~(1u << o->device);
    return tw.gates.nccl_comm_abort(c);
}
static ncclResult_t tw_comm_destroy(ncclComm_t c) {
    ++tw.destroys;
    cmf_obj_t *o = cmf_any(c, CMF_COMM);
    if (o != NULL && ((tw.hung >> o->device) & 1u)) ++tw.blocking; /* waits for the kernels */
    return tw.gates.nccl_comm_destroy(c);
}
static ncclResult_t tw_get_async_error(ncclComm_t c, ncclResult_t *e) {
    ncclResult_t r = tw.gates.nccl_comm_get_async_error(c, e);
    cmf_obj_t *o = cmf_any(c, CMF_COMM);
    if (r == ncclSuccess && o != NULL && o->device == tw.async_dev) *e = ncclRemoteError;
    return r;
}

static int setup(void **state) {
    (void)state;
    unsetenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS");
    cmf_install(2, 64 * MiB);
    memset(&tw, 0, sizeof tw);
    tw.async_dev = -1;
    tw.gates = cm__cuda;
    cm__cuda.stream_query = tw_stream_query;
    cm__cuda.stream_synchronize = tw_stream_synchronize;
    cm__cuda.device_synchronize = tw_device_synchronize;
    cm__cuda.nccl_comm_abort = tw_comm_abort;
    cm__cuda.nccl_comm_destroy = tw_comm_destroy;
    cm__cuda.nccl_comm_get_async_error = tw_get_async_error;
    return 0;
}

/* Nothing left: no live handle of any kind, nothing held in the simulation, no violation and no
 * call that would have blocked forever on a GPU. */
static int teardown(void **state) {
    (void)state;
    int bad = cmf_leftovers_report() ? -1 : 0;
    if (tw.blocking != 0) {
        print_error("%d call(s) that block forever on a hung GPU\n", tw.blocking);
        bad = -1;
    }
    cmf_uninstall();
    unsetenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS");
    return bad;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void expect_text(const char *field, const char *text) {
    if (strstr(field, text) == NULL) fail_msg("\"%s\" does not contain \"%s\"", field, text);
}

static cm_device_set_t *set_open2(void) {
    int ords[2] = {0, 1};
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open(ords, 2, &set));
    return set;
}

/* A set of two, its communicator and one float buffer of n elements per member (send = recv,
 * in place), the host data 1, 2, 3... on member k scaled by k + 1. */
typedef struct rig {
    cm_device_set_t *set;
    cm_comm_t *comm;
    cm_buffer_t *buf[2];
    size_t n;
} rig_t;

static void rig_open(rig_t *r, uint32_t timeout_ms) {
    memset(r, 0, sizeof *r);
    r->set = set_open2();
    CM_ASSERT_OK(cm_device_set_set_collective_timeout(r->set, timeout_ms));
    CM_ASSERT_OK(cm_comm_create(r->set, &r->comm));
    r->n = 256;
    for (int k = 0; k < 2; ++k) {
        cm_device_t *d = NULL;
        CM_ASSERT_OK(cm_device_set_device(r->set, k, &d));
        CM_ASSERT_OK(cm_buffer_create(d, r->n * sizeof(float), &r->buf[k]));
        float host[256];
        for (size_t i = 0; i < r->n; ++i) host[i] = (float)(i + 1) * (float)(k + 1);
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, r->buf[k], 0, host, sizeof host));
    }
}

static void rig_close(rig_t *r, cm_status_t destroy_status) {
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_comm_destroy(r->comm), destroy_status);
    for (int k = 0; k < 2; ++k) CM_ASSERT_OK(cm_buffer_destroy(r->buf[k]));
    CM_ASSERT_OK(cm_device_set_close(r->set));
    if (now_ms() - t0 > MARGIN_MS) fail_msg("releasing took %.0f ms", now_ms() - t0);
}

static cm_status_t all_reduce(rig_t *r) {
    return cm_comm_all_reduce(r->comm, r->buf, r->buf, r->n, CM_DTYPE_F32, CM_COMM_SUM);
}

/* Every refusal of an unusable set / aborted communicator: the same status, the cause repeated,
 * and nothing queued. */
static void expect_refusals(rig_t *r, cm_status_t cause, const char *cause_text) {
    CM_ASSERT_STATUS(all_reduce(r), cause);
    expect_text(cm_last_error()->message, "the communicator was aborted");
    expect_text(cm_last_error()->message, cause_text);
    expect_text(cm_last_error()->hint, "cm_comm_destroy()");
    CM_ASSERT_STATUS(cm_comm_broadcast(r->comm, r->buf, r->buf, r->n, CM_DTYPE_F32, 0), cause);
    CM_ASSERT_STATUS(cm_comm_all_gather(r->comm, r->buf, r->buf, 1, CM_DTYPE_F32), cause);
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_comm_synchronize(r->comm), cause);
    if (now_ms() - t0 > 100.0) fail_msg("a refused synchronize waited %.0f ms", now_ms() - t0);
    CM_ASSERT_STATUS(cm_device_set_synchronize(r->set), cause);
    expect_text(cm_last_error()->message, "the device set is unusable");
    expect_text(cm_last_error()->message, cause_text);
    expect_text(cm_last_error()->hint, "cm_device_set_close()");
    cm_comm_t *c2 = NULL;
    CM_ASSERT_STATUS(cm_comm_create(r->set, &c2), cause);
    assert_null(c2);
    cm_split_t *sp = NULL;
    CM_ASSERT_STATUS(cm_split_create(r->set, 100, sizeof(float), &sp), cause);
    assert_null(sp);
    bool usable = true;
    CM_ASSERT_OK(cm_device_set_usable(r->set, &usable));
    assert_false(usable);
    /* what does not run work still answers */
    int count = 0;
    CM_ASSERT_OK(cm_device_set_count(r->set, &count));
    assert_int_equal(count, 2);
    int nranks = 0;
    CM_ASSERT_OK(cm_comm_size(r->comm, &nranks, NULL, NULL));
    assert_int_equal(nranks, 2);
}

/* ---------------------------------------------------------------- the setting */

static void test_timeout_setting(void **state) {
    (void)state;
    cm_device_set_t *set = set_open2();
    uint32_t ms = 1;
    CM_ASSERT_OK(cm_device_set_collective_timeout(set, &ms));
    assert_int_equal(ms, CM_COLLECTIVE_TIMEOUT_DEFAULT_MS);
    assert_int_equal(CM_COLLECTIVE_TIMEOUT_DEFAULT_MS, 600000u);
    CM_ASSERT_OK(cm_device_set_set_collective_timeout(set, 1234));
    CM_ASSERT_OK(cm_device_set_collective_timeout(set, &ms));
    assert_int_equal(ms, 1234);
    /* a set's communicator shares the set's setting, both ways */
    cm_comm_t *c = NULL;
    CM_ASSERT_OK(cm_comm_create(set, &c));
    CM_ASSERT_OK(cm_comm_timeout(c, &ms));
    assert_int_equal(ms, 1234);
    CM_ASSERT_OK(cm_comm_set_timeout(c, CM_COLLECTIVE_TIMEOUT_NONE));
    CM_ASSERT_OK(cm_device_set_collective_timeout(set, &ms));
    assert_int_equal(ms, 0);
    bool usable = false;
    CM_ASSERT_OK(cm_device_set_usable(set, &usable));
    assert_true(usable);
    /* argument checks */
    CM_ASSERT_STATUS(cm_device_set_set_collective_timeout(NULL, 5), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_device_set_collective_timeout(set, NULL), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_device_set_collective_timeout(NULL, &ms), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_device_set_usable(set, NULL), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_comm_set_timeout(NULL, 5), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_comm_timeout(c, NULL), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_OK(cm_comm_destroy(c));
    CM_ASSERT_STATUS(cm_comm_timeout(c, &ms), CM_ERROR_INVALID_ARGUMENT); /* stale */
    CM_ASSERT_OK(cm_device_set_close(set));
    CM_ASSERT_STATUS(cm_device_set_usable(set, &usable), CM_ERROR_INVALID_ARGUMENT);

    /* the environment variable: read when a set or a rank communicator is made */
    static const struct { const char *text; uint32_t want; } env[] = {
        {"250", 250}, {"0", 0}, {" 77\n", 77}, {"abc", CM_COLLECTIVE_TIMEOUT_DEFAULT_MS},
        {"-5", CM_COLLECTIVE_TIMEOUT_DEFAULT_MS}, {"12ms", CM_COLLECTIVE_TIMEOUT_DEFAULT_MS},
        {"99999999999", CM_COLLECTIVE_TIMEOUT_DEFAULT_MS}, {"", CM_COLLECTIVE_TIMEOUT_DEFAULT_MS}};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; ++i) {
        setenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS", env[i].text, 1);
        set = set_open2();
        CM_ASSERT_OK(cm_device_set_collective_timeout(set, &ms));
        if (ms != env[i].want)
            fail_msg("CUDAMODEL_COLLECTIVE_TIMEOUT_MS=\"%s\" gave %u ms, want %u", env[i].text,
                     ms, env[i].want);
        CM_ASSERT_OK(cm_device_set_close(set));
    }
    setenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS", "4321", 1);
    cm_device_t *d = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d));
    cm_comm_id_t id;
    CM_ASSERT_OK(cm_comm_id_create(&id));
    CM_ASSERT_OK(cm_comm_create_rank(d, &id, 1, 0, &c));
    CM_ASSERT_OK(cm_comm_timeout(c, &ms));
    assert_int_equal(ms, 4321);
    CM_ASSERT_OK(cm_comm_set_timeout(c, 9));
    CM_ASSERT_OK(cm_comm_timeout(c, &ms));
    assert_int_equal(ms, 9);
    CM_ASSERT_OK(cm_comm_destroy(c));
    CM_ASSERT_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- normal completion */

static void test_normal_completion(void **state) {
    (void)state;
    rig_t r;
    rig_open(&r, 200);
    for (int round = 0; round < 3; ++round) {
        CM_ASSERT_OK(all_reduce(&r));
        const int q0 = tw.queries;
        double t0 = now_ms();
        CM_ASSERT_OK(cm_comm_synchronize(r.comm));
        if (now_ms() - t0 > 100.0) fail_msg("an idle wait took %.0f ms", now_ms() - t0);
        assert_true(tw.queries > q0); /* the wait polls */
    }
    float host[256];
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, r.buf[1], 0, host, sizeof host));
    assert_true(host[9] == 20.0f); /* the simulation's single-rank all-reduce keeps the data */
    CM_ASSERT_OK(cm_device_set_synchronize(r.set));
    bool usable = false;
    CM_ASSERT_OK(cm_device_set_usable(r.set, &usable));
    assert_true(usable);
    /* a stream that is merely busy for a while is waited for, not aborted */
    tw.hung = 2u;
    CM_ASSERT_OK(all_reduce(&r));
    tw.hung = 0;
    CM_ASSERT_OK(cm_comm_synchronize(r.comm));
    assert_int_equal(tw.aborts, 0);
    rig_close(&r, CM_OK);
    assert_int_equal(tw.aborts, 0);
    assert_int_equal(tw.destroys, 2);
}

/* ---------------------------------------------------------------- a peer that never arrives */

static void test_peer_never_arrives(void **state) {
    (void)state;
    rig_t r;
    rig_open(&r, 200);
    CM_ASSERT_OK(all_reduce(&r));
    tw.hung = 2u; /* rank 1's collective never completes */
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_comm_synchronize(r.comm), CM_ERROR_BUSY);
    double took = now_ms() - t0;
    print_message("timed out after %.1f ms (timeout 200 ms)\n", took);
    if (took < 199.0 || took > 200.0 + MARGIN_MS)
        fail_msg("the wait took %.1f ms for a timeout of 200 ms", took);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->status, CM_ERROR_BUSY);
    expect_text(e->message, "did not finish within the collective timeout of 200 ms");
    expect_text(e->message, "rank 1 (device 1)");
    expect_text(e->message, "ncclCommAbort");
    expect_text(e->hint, "CUDAMODEL_COLLECTIVE_TIMEOUT_MS");
    assert_int_equal(e->device, 1);
    assert_int_equal(tw.aborts, 2); /* every local rank */
    assert_int_equal(tw.hung, 0u);  /* the abort ended the hung kernels */
    expect_refusals(&r, CM_ERROR_BUSY, "timeout of 200 ms");
    assert_int_equal(tw.aborts, 2);
    rig_close(&r, CM_OK); /* aborted: destroyed at once, nothing destroyed twice */
    assert_int_equal(tw.destroys, 0);
}

/* No synchronize of its own: cm_comm_destroy() waits within the timeout, aborts, releases. A
 * split made before the failure is destroyed and the set closes. */
static void test_destroy_with_dead_peer(void **state) {
    (void)state;
    rig_t r;
    rig_open(&r, 150);
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(r.set, 1000, sizeof(float), &sp));
    CM_ASSERT_OK(all_reduce(&r));
    tw.hung = 1u;
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_comm_destroy(r.comm), CM_ERROR_BUSY);
    double took = now_ms() - t0;
    if (took < 149.0 || took > 150.0 + MARGIN_MS)
        fail_msg("destroy took %.1f ms for a timeout of 150 ms", took);
    expect_text(cm_last_error()->message, "rank 0 (device 0)");
    expect_text(cm_last_error()->message, "cm_comm_destroy");
    assert_int_equal(tw.aborts, 2);
    assert_int_equal(tw.destroys, 0);
    CM_ASSERT_STATUS(cm_comm_destroy(r.comm), CM_ERROR_INVALID_ARGUMENT); /* gone */
    /* the set refuses work, its split's operations too, but everything is released */
    CM_ASSERT_STATUS(cm_split_scale_f32(2.0f, sp, sp), CM_ERROR_BUSY);
    expect_text(cm_last_error()->message, "the device set is unusable");
    float host[1000] = {0};
    CM_ASSERT_STATUS(cm_split_scatter_from_host(sp, host, 1000), CM_ERROR_BUSY);
    float sum = 0;
    CM_ASSERT_STATUS(cm_split_sum_f32(sp, &sum), CM_ERROR_BUSY);
    CM_ASSERT_OK(cm_split_destroy(sp));
    for (int k = 0; k < 2; ++k) CM_ASSERT_OK(cm_buffer_destroy(r.buf[k]));
    CM_ASSERT_OK(cm_device_set_close(r.set));
}

/* ---------------------------------------------------------------- NCCL's asynchronous error */

static void test_async_error_aborts(void **state) {
    (void)state;
    rig_t r;
    rig_open(&r, CM_COLLECTIVE_TIMEOUT_NONE); /* no time limit: the error alone ends the wait */
    CM_ASSERT_OK(all_reduce(&r));
    tw.hung = 3u;
    tw.async_dev = 1;
    double t0 = now_ms();
    cm_status_t s = cm_comm_synchronize(r.comm);
    CM_ASSERT_STATUS(s, CM_ERROR_CUDA);
    if (now_ms() - t0 > MARGIN_MS) fail_msg("the error took %.0f ms", now_ms() - t0);
    const cm_error_t *e = cm_last_error();
    expect_text(e->message, "remote process exited");
    expect_text(e->message, "rank 1 (device 1)");
    expect_text(e->message, "aborted");
    expect_text(e->hint, "another rank failed or exited");
    assert_int_equal(tw.aborts, 2);
    tw.async_dev = -1;
    expect_refusals(&r, CM_ERROR_CUDA, "remote process exited");
    rig_close(&r, CM_OK);
    assert_int_equal(tw.destroys, 0);
}

/* ---------------------------------------------------------------- the hang outlives the abort */

static void test_hang_outlives_abort(void **state) {
    (void)state;
    rig_t r;
    rig_open(&r, 100);
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(r.set, 64, sizeof(float), &sp));
    CM_ASSERT_OK(all_reduce(&r));
    tw.hung = 2u;
    tw.hang_outlives_abort = 1;
    CM_ASSERT_STATUS(cm_comm_synchronize(r.comm), CM_ERROR_BUSY);
    assert_int_equal(tw.aborts, 2);
    assert_int_equal(tw.hung, 2u);
    CM_ASSERT_OK(cm_comm_destroy(r.comm));
    /* the split's and the set's waits are bounded by the timeout too */
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_split_destroy(sp), CM_ERROR_BUSY);
    expect_text(cm_last_error()->message, "did not finish within 100 ms");
    for (int k = 0; k < 2; ++k) CM_ASSERT_OK(cm_buffer_destroy(r.buf[k]));
    /* what the driver would do with the stream is not simulated: the kernels stop here */
    cm_status_t close_status = cm_device_set_close(r.set);
    tw.hung = 0;
    CM_ASSERT_STATUS(close_status, CM_ERROR_BUSY);
    double took = now_ms() - t0;
    if (took > 2 * 100.0 + MARGIN_MS) fail_msg("destroy and close took %.0f ms", took);
}

/* ---------------------------------------------------------------- a rank's communicator */

static void test_rank_comm_timeout(void **state) {
    (void)state;
    cm_device_t *d = NULL;
    CM_ASSERT_OK(cm_device_open(1, &d));
    cm_comm_id_t id;
    CM_ASSERT_OK(cm_comm_id_create(&id));
    cm_comm_t *c = NULL;
    CM_ASSERT_OK(cm_comm_create_rank(d, &id, 1, 0, &c));
    CM_ASSERT_OK(cm_comm_set_timeout(c, 120));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(d, 4096, &b));
    CM_ASSERT_OK(cm_comm_all_reduce(c, &b, &b, 1024, CM_DTYPE_F32, CM_COMM_MAX));
    CM_ASSERT_OK(cm_comm_synchronize(c));
    CM_ASSERT_OK(cm_comm_all_reduce(c, &b, &b, 1024, CM_DTYPE_F32, CM_COMM_MAX));
    tw.hung = 2u;
    double t0 = now_ms();
    CM_ASSERT_STATUS(cm_comm_synchronize(c), CM_ERROR_BUSY);
    double took = now_ms() - t0;
    if (took < 119.0 || took > 120.0 + MARGIN_MS) fail_msg("the wait took %.1f ms", took);
    expect_text(cm_last_error()->message, "timeout of 120 ms");
    assert_null(strstr(cm_last_error()->message, "device set"));
    assert_int_equal(tw.aborts, 1);
    CM_ASSERT_STATUS(cm_comm_all_reduce(c, &b, &b, 1, CM_DTYPE_F32, CM_COMM_SUM), CM_ERROR_BUSY);
    expect_text(cm_last_error()->message, "the communicator was aborted");
    CM_ASSERT_OK(cm_comm_destroy(c));
    /* the device itself is fine: a new communicator works */
    CM_ASSERT_OK(cm_comm_create_rank(d, &id, 1, 0, &c));
    CM_ASSERT_OK(cm_comm_all_reduce(c, &b, &b, 1024, CM_DTYPE_F32, CM_COMM_SUM));
    CM_ASSERT_OK(cm_comm_synchronize(c));
    CM_ASSERT_OK(cm_comm_destroy(c));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_timeout_setting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_normal_completion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_never_arrives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_dead_peer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_async_error_aborts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hang_outlives_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_comm_timeout, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* built without NCCL: the collectives are not there to time out */

static void test_not_built(void **state) {
    (void)state;
    skip();
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_not_built)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
