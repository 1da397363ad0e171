/*
 * FAULT INJECTION: simulated CUDA streams, events and graphs for the host tests of the
 * execution module (stream.c), on top of the simulated device of test_buffer_fake.h.
 *
 * xfake_install() replaces cm__cuda (src/stream_internal.h): streams, events, graphs and
 * graph executables are small host allocations counted while alive, so a test can check that
 * the pools create each CUDA object once and destroy all of them at cm_device_close()
 * (xfake_live()). Any call can be made to fail once or always: xfake_fail(XF_X, err, nth).
 * Elapsed times come from xfake.elapsed_next (incremented by xfake.elapsed_step per call).
 * Thread-safe (atomics and a mutex), for the 8-thread pool test.
 */
#ifndef CM_TEST_STREAM_FAKE_H
#define CM_TEST_STREAM_FAKE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"
#include "test_buffer_fake.h"

enum xfake_call {
    XF_RANGE, XF_STREAM_CREATE, XF_STREAM_DESTROY, XF_STREAM_SYNC, XF_STREAM_QUERY, XF_WAIT_EVENT,
    XF_HOST_FUNC, XF_DEVICE_SYNC, XF_EVENT_CREATE, XF_EVENT_DESTROY, XF_EVENT_RECORD,
    XF_EVENT_SYNC, XF_EVENT_QUERY, XF_ELAPSED, XF_BEGIN_CAPTURE, XF_END_CAPTURE, XF_INSTANTIATE,
    XF_GRAPH_LAUNCH, XF_GRAPH_NODES, XF_GRAPH_DESTROY, XF_EXEC_DESTROY, XF_NCALLS
};

static struct xfake_state {
    atomic_long calls[XF_NCALLS];
    cudaError_t fail_err[XF_NCALLS];
    long fail_at[XF_NCALLS];
    int fail_always[XF_NCALLS];
    atomic_int streams, events, graphs, execs; /* live simulated objects */
    float elapsed_next, elapsed_step;
    size_t nodes;          /* node count of captured graphs */
    int capturing;         /* a capture is open */
    pthread_mutex_t lock;
    cm__cuda_t saved;
} xfake;

static inline void xfake_fail(enum xfake_call c, cudaError_t err, long nth) {
    xfake.fail_err[c] = err;
    xfake.fail_at[c] = atomic_load(&xfake.calls[c]) + nth;
    xfake.fail_always[c] = 0;
}

static inline void xfake_fail_always(enum xfake_call c, cudaError_t err) {
    xfake_fail(c, err, 1);
    xfake.fail_always[c] = 1;
}

static inline void xfake_fail_clear(void) {
    memset(xfake.fail_at, 0, sizeof xfake.fail_at);
    memset(xfake.fail_always, 0, sizeof xfake.fail_always);
}

static inline int xfake_enter(enum xfake_call c, cudaError_t *err) {
    long n = atomic_fetch_add(&xfake.calls[c], 1) + 1;
    if (xfake.fail_at[c] != 0 && (n == xfake.fail_at[c] || (xfake.fail_always[c] && n > xfake.fail_at[c]))) {
        *err = xfake.fail_err[c];
        return 1;
    }
    return 0;
}

#define XFAKE_ENTER(c)                                                                        \
    do {                                                                                      \
        cudaError_t xf_err_;                                                                  \
        if (xfake_enter((c), &xf_err_)) return xf_err_;                                       \
    } while (0)

static inline cudaError_t xf_range(int *least, int *greatest) {
    XFAKE_ENTER(XF_RANGE);
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}
/* A simulated stream: a node of the list of live ones, so that xfake_uninstall() can free the
 * streams the library never destroys (those of a device whose context was lost, as CUDA frees
 * them with the context). */
typedef struct xf_stream_node {
    struct xf_stream_node *prev, *next;
} xf_stream_node_t;
static xf_stream_node_t xf_streams_live = {&xf_streams_live, &xf_streams_live};

static inline cudaError_t xf_stream_create(cudaStream_t *s, unsigned flags, int prio) {
    XFAKE_ENTER(XF_STREAM_CREATE);
    (void)flags;
    (void)prio;
    xf_stream_node_t *n = malloc(sizeof *n);
    if (n == NULL) return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&xfake.lock);
    n->prev = &xf_streams_live;
    n->next = xf_streams_live.next;
    xf_streams_live.next->prev = n;
    xf_streams_live.next = n;
    pthread_mutex_unlock(&xfake.lock);
    *s = (cudaStream_t)n;
    atomic_fetch_add(&xfake.streams, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_stream_destroy(cudaStream_t s) {
    XFAKE_ENTER(XF_STREAM_DESTROY);
    xf_stream_node_t *n = (xf_stream_node_t *)s;
    pthread_mutex_lock(&xfake.lock);
    n->prev->next = n->next;
    n->next->prev = n->prev;
    pthread_mutex_unlock(&xfake.lock);
    free(n);
    atomic_fetch_sub(&xfake.streams, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_stream_sync(cudaStream_t s) {
    XFAKE_ENTER(XF_STREAM_SYNC);
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t xf_stream_query(cudaStream_t s) {
    XFAKE_ENTER(XF_STREAM_QUERY);
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t xf_wait_event(cudaStream_t s, cudaEvent_t e, unsigned f) {
    XFAKE_ENTER(XF_WAIT_EVENT);
    (void)s;
    (void)e;
    (void)f;
    return cudaSuccess;
}
static inline cudaError_t xf_host_func(cudaStream_t s, cudaHostFn_t fn, void *user) {
    XFAKE_ENTER(XF_HOST_FUNC);
    (void)s;
    fn(user); /* the simulation runs it at once */
    return cudaSuccess;
}
static inline cudaError_t xf_device_sync(void) {
    XFAKE_ENTER(XF_DEVICE_SYNC);
    return cudaSuccess;
}
static inline cudaError_t xf_event_create(cudaEvent_t *e, unsigned flags) {
    XFAKE_ENTER(XF_EVENT_CREATE);
    (void)flags;
    *e = (cudaEvent_t)malloc(8);
    atomic_fetch_add(&xfake.events, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_event_destroy(cudaEvent_t e) {
    XFAKE_ENTER(XF_EVENT_DESTROY);
    free((void *)e);
    atomic_fetch_sub(&xfake.events, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_event_record(cudaEvent_t e, cudaStream_t s) {
    XFAKE_ENTER(XF_EVENT_RECORD);
    (void)e;
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t xf_event_sync(cudaEvent_t e) {
    XFAKE_ENTER(XF_EVENT_SYNC);
    (void)e;
    return cudaSuccess;
}
static inline cudaError_t xf_event_query(cudaEvent_t e) {
    XFAKE_ENTER(XF_EVENT_QUERY);
    (void)e;
    return cudaSuccess;
}
static inline cudaError_t xf_elapsed(float *ms, cudaEvent_t a, cudaEvent_t b) {
    XFAKE_ENTER(XF_ELAPSED);
    (void)a;
    (void)b;
    pthread_mutex_lock(&xfake.lock);
    *ms = xfake.elapsed_next;
    xfake.elapsed_next += xfake.elapsed_step;
    pthread_mutex_unlock(&xfake.lock);
    return cudaSuccess;
}
/* The simulated streams capture while a capture is open (never the real runtime's answer: it
 * would dereference a simulated stream). */
static inline cudaError_t xf_stream_is_capturing(cudaStream_t s, enum cudaStreamCaptureStatus *st) {
    (void)s;
    *st = xfake.capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
static inline cudaError_t xf_begin_capture(cudaStream_t s, enum cudaStreamCaptureMode m) {
    XFAKE_ENTER(XF_BEGIN_CAPTURE);
    (void)s;
    (void)m;
    xfake.capturing = 1;
    return cudaSuccess;
}
static inline cudaError_t xf_end_capture(cudaStream_t s, cudaGraph_t *g) {
    XFAKE_ENTER(XF_END_CAPTURE);
    (void)s;
    xfake.capturing = 0;
    *g = (cudaGraph_t)malloc(8);
    atomic_fetch_add(&xfake.graphs, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_instantiate(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long f) {
    XFAKE_ENTER(XF_INSTANTIATE);
    (void)g;
    (void)f;
    *x = (cudaGraphExec_t)malloc(8);
    atomic_fetch_add(&xfake.execs, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_graph_launch(cudaGraphExec_t x, cudaStream_t s) {
    XFAKE_ENTER(XF_GRAPH_LAUNCH);
    (void)x;
    (void)s;
    return cudaSuccess;
}
static inline cudaError_t xf_graph_nodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n) {
    XFAKE_ENTER(XF_GRAPH_NODES);
    (void)g;
    (void)nodes;
    *n = xfake.nodes;
    return cudaSuccess;
}
static inline cudaError_t xf_graph_destroy(cudaGraph_t g) {
    XFAKE_ENTER(XF_GRAPH_DESTROY);
    free((void *)g);
    atomic_fetch_sub(&xfake.graphs, 1);
    return cudaSuccess;
}
static inline cudaError_t xf_exec_destroy(cudaGraphExec_t x) {
    XFAKE_ENTER(XF_EXEC_DESTROY);
    free((void *)x);
    atomic_fetch_sub(&xfake.execs, 1);
    return cudaSuccess;
}

/* Simulate `devices` GPUs (memory through test_buffer_fake.h) with streams, events, graphs. */
static inline void xfake_install(int devices) {
    fake_install(devices, (size_t)1 << 30);
    cm__cuda_t saved = cm__cuda;
    memset(&xfake, 0, sizeof xfake);
    pthread_mutex_init(&xfake.lock, NULL);
    xfake.saved = saved;
    xfake.elapsed_next = 1.0f;
    xfake.elapsed_step = 1.0f;
    xfake.nodes = 3;
    cm__cuda.priority_range = xf_range;
    cm__cuda.stream_create = xf_stream_create;
    cm__cuda.stream_destroy = xf_stream_destroy;
    cm__cuda.stream_synchronize = xf_stream_sync;
    cm__cuda.stream_query = xf_stream_query;
    cm__cuda.stream_wait_event = xf_wait_event;
    cm__cuda.launch_host_func = xf_host_func;
    cm__cuda.device_synchronize = xf_device_sync;
    cm__cuda.event_create = xf_event_create;
    cm__cuda.event_destroy = xf_event_destroy;
    cm__cuda.event_record = xf_event_record;
    cm__cuda.event_synchronize = xf_event_sync;
    cm__cuda.event_query = xf_event_query;
    cm__cuda.event_elapsed = xf_elapsed;
    cm__cuda.begin_capture = xf_begin_capture;
    cm__cuda.stream_is_capturing = xf_stream_is_capturing;
    cm__cuda.end_capture = xf_end_capture;
    cm__cuda.graph_instantiate = xf_instantiate;
    cm__cuda.graph_launch = xf_graph_launch;
    cm__cuda.graph_get_nodes = xf_graph_nodes;
    cm__cuda.graph_destroy = xf_graph_destroy;
    cm__cuda.graph_exec_destroy = xf_exec_destroy;
}

/* Simulated CUDA objects of the execution module still alive. */
static inline int xfake_live(void) {
    return atomic_load(&xfake.streams) + atomic_load(&xfake.events) + atomic_load(&xfake.graphs) +
           atomic_load(&xfake.execs);
}

static inline void xfake_uninstall(void) {
    cm__cuda = xfake.saved;
    while (xf_streams_live.next != &xf_streams_live) { /* left to a lost context */
        xf_stream_node_t *n = xf_streams_live.next;
        xf_streams_live.next = n->next;
        free(n);
    }
    xf_streams_live.prev = &xf_streams_live;
    pthread_mutex_destroy(&xfake.lock);
    fake_uninstall();
}

/* CMocka fixtures over two simulated devices, and a device object of one of them. */
static inline int xfake_setup2(void **state) {
    (void)state;
    xfake_install(2);
    return 0;
}

static inline int xfake_teardown(void **state) {
    (void)state;
    xfake_uninstall();
    return 0;
}

static inline cm_device_t *xfake_open_dev(int ordinal) {
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(ordinal, &dev));
    return dev;
}

#endif /* CM_TEST_STREAM_FAKE_H */
