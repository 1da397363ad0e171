/*
 * Collectives through NCCL (multi.h): communicators over a device set in one process
 * (ncclCommInitAll) or one rank per process (ncclCommInitRank), all-reduce, broadcast and
 * all-gather of device buffers, and the communicator id as text.
 *
 * Everything that needs NCCL is behind CM_HAVE_NCCL (CMake: CUDAMODEL_WITH_NCCL). Without it,
 * every function of the collectives except the id text helpers and destroy(NULL) returns
 * CM_ERROR_NOT_SUPPORTED with a message that says the library was built without NCCL and how
 * to build it with NCCL; the NCCL versions of multi_internal.h (cm__nccl_version...) are 0.
 *
 * One host thread drives every local rank: a set's communicator queues each collective on all
 * members inside ncclGroupStart / ncclGroupEnd, on the set's streams. NCCL switches devices
 * inside InitAll, group and destroy calls and puts back the device it found: every NCCL call
 * runs in a device scope (cm__enter with the context made current, cm__leave), so NCCL finds a
 * member's context current and the caller gets back exactly the context state it had.
 *
 * Communicators are handles of kind CM__KIND_COMM (core/handle.h). A set's communicator counts
 * itself in the set (cm__set_comms_add), so that the set refuses to close under it; this file
 * uses nothing defined in multi.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/interop.h>
#include <cudamodel/multi.h>

#include "../core/handle.h"
#include "../core/internal.h"
#include "multi_internal.h"

#if CM_HAVE_NCCL
#include <nccl.h>
#endif

/* ================================================================== pure parts (any build) */

bool cm__nccl_built(void) {
    return CM_HAVE_NCCL != 0;
}

int cm__nccl_version_built(void) {
#if CM_HAVE_NCCL
    return NCCL_VERSION_CODE;
#else
    return 0;
#endif
}


cm_status_t cm__nccl_not_built(const char *func) {
    return cm__fail(CM_ERROR_NOT_SUPPORTED, -1, __FILE__, __LINE__, func,
                    "install NCCL (nccl.h and libnccl: the CUDA toolkit or the libnccl-dev "
                    "package ships them) and rebuild libcudamodel; CMake builds the collectives "
                    "when it finds NCCL (-DCUDAMODEL_WITH_NCCL=ON, -DNCCL_ROOT=<dir> for a "
                    "non-standard place); the nccl_built field of cm_version_info_t "
                    "tells at run time",
                    "not built: %s needs NCCL, and this libcudamodel was built without it "
                    "(CUDAMODEL_WITH_NCCL=OFF, or NCCL not found when it was configured)",
                    func);
}

cm_status_t cm_comm_id_to_hex(const cm_comm_id_t *id, char *buf, size_t size) {
    CM__REQUIRE(id != NULL, "pass the id from cm_comm_id_create()", "id is NULL");
    CM__REQUIRE(buf != NULL, "pass a buffer of CM_COMM_ID_HEX_SIZE bytes", "buf is NULL");
    CM__REQUIRE(size >= CM_COMM_ID_HEX_SIZE, "pass a buffer of CM_COMM_ID_HEX_SIZE (257) bytes",
                "buf has %zu bytes; the id's text needs %d", size, CM_COMM_ID_HEX_SIZE);
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < CM_COMM_ID_BYTES; ++i) {
        buf[2 * i] = digits[id->bytes[i] >> 4];
        buf[2 * i + 1] = digits[id->bytes[i] & 15u];
    }
    buf[2 * CM_COMM_ID_BYTES] = '\0';
    return CM_OK;
}

static int cm__hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

cm_status_t cm_comm_id_from_hex(const char *hex, cm_comm_id_t *out) {
    CM__REQUIRE(hex != NULL, "pass the text of cm_comm_id_to_hex()", "hex is NULL");
    CM__REQUIRE(out != NULL, "pass the address of a cm_comm_id_t", "out is NULL");
    const char *p = hex;
    while (*p != '\0' && isspace((unsigned char)*p)) ++p;
    size_t len = strlen(p);
    while (len > 0 && isspace((unsigned char)p[len - 1])) --len;
    const char *hint = "pass the 256 hex digits that cm_comm_id_to_hex() wrote on the process "
                       "that created the id (check that the whole text arrived)";
    for (size_t i = 0; i < len; ++i) {
        if (cm__hex_value(p[i]) < 0) {
            unsigned char c = (unsigned char)p[i];
            return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, hint,
                            "character %zu of the id's text is 0x%02x ('%c'), not a hex digit",
                            (size_t)(p - hex) + i, c, isprint(c) ? (char)c : '?');
        }
    }
    if (len != 2 * (size_t)CM_COMM_ID_BYTES) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, hint,
                        "the id's text has %zu hex digits; an id has exactly %d", len,
                        2 * CM_COMM_ID_BYTES);
    }
    for (size_t i = 0; i < CM_COMM_ID_BYTES; ++i)
        out->bytes[i] = (unsigned char)(cm__hex_value(p[2 * i]) * 16 + cm__hex_value(p[2 * i + 1]));
    return CM_OK;
}

#if !CM_HAVE_NCCL
/* ================================================================== built without NCCL */

int cm__nccl_version(void) {
    return 0;
}

cm_status_t cm_comm_id_create(cm_comm_id_t *out) {
    (void)out;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_create(cm_device_set_t *set, cm_comm_t **out) {
    (void)set;
    (void)out;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_create_rank(cm_device_t *dev, const cm_comm_id_t *id, int nranks, int rank,
                                cm_comm_t **out) {
    (void)dev;
    (void)id;
    (void)nranks;
    (void)rank;
    (void)out;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_destroy(cm_comm_t *comm) {
    if (comm == NULL) return CM_OK;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_size(const cm_comm_t *comm, int *nranks, int *local, int *first_rank) {
    (void)comm;
    (void)nranks;
    (void)local;
    (void)first_rank;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_stream(const cm_comm_t *comm, int local, cm_stream_t **stream) {
    (void)comm;
    (void)local;
    (void)stream;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_synchronize(cm_comm_t *comm) {
    (void)comm;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_set_timeout(cm_comm_t *comm, uint32_t timeout_ms) {
    (void)comm;
    (void)timeout_ms;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_timeout(const cm_comm_t *comm, uint32_t *timeout_ms) {
    (void)comm;
    (void)timeout_ms;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_all_reduce(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                               size_t count, cm_dtype_t dtype, cm_comm_op_t op) {
    (void)comm;
    (void)send;
    (void)recv;
    (void)count;
    (void)dtype;
    (void)op;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_broadcast(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                              size_t count, cm_dtype_t dtype, int root) {
    (void)comm;
    (void)send;
    (void)recv;
    (void)count;
    (void)dtype;
    (void)root;
    return cm__nccl_not_built(__func__);
}

cm_status_t cm_comm_all_gather(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                               size_t count, cm_dtype_t dtype) {
    (void)comm;
    (void)send;
    (void)recv;
    (void)count;
    (void)dtype;
    return cm__nccl_not_built(__func__);
}

#else
/* ================================================================== with NCCL */

_Static_assert(sizeof(ncclUniqueId) == CM_COMM_ID_BYTES, "cm_comm_id_t must hold an ncclUniqueId");

struct cm__comm {
    void *handle;                /* this object's handle value (cm_comm_t *) */
    struct cm__device_set *set;  /* a set's communicator (the set outlives it: close refuses);
                                  * NULL for one rank of many processes */
    cm_device_t *dev;            /* the rank's device handle (rank mode) */
    int nranks, local, first_rank;
    int ordinals[CM_DEVICE_SET_MAX];
    cm_stream_t *streams[CM_DEVICE_SET_MAX];
    cudaStream_t cuda_streams[CM_DEVICE_SET_MAX];
    bool own_stream;            /* rank mode: the stream was acquired for the communicator */
    ncclComm_t comms[CM_DEVICE_SET_MAX]; /* NULL once freed or aborted */
    _Atomic uint32_t timeout_ms; /* rank mode; a set's communicator uses its set's */
    /* CM_OK while usable; the status of the timeout / NCCL error that aborted every rank */
    cm_status_t dead;
    cm_error_t dead_detail;
};

static uint32_t cm__comm_timeout_ms(const struct cm__comm *c) {
    return c->set != NULL ? atomic_load_explicit(&c->set->timeout_ms, memory_order_relaxed)
                          : atomic_load_explicit(&c->timeout_ms, memory_order_relaxed);
}

#define CM__HINT_ABORTED                                                                      \
    "the communicator's ranks were aborted after a collective timed out or NCCL reported an " \
    "error: destroy it (cm_comm_destroy() returns at once) and make a new one on every rank " \
    "(for a set's communicator the set is unusable too: close it and open a new one)"

/* CM_OK while comm (and its set) can run collectives; else the recorded cause, again. */
static cm_status_t cm__comm_usable(const struct cm__comm *c, const char *func) {
    if (c->dead != CM_OK)
        return cm__fail(c->dead, c->dead_detail.device, __FILE__, __LINE__, func,
                        CM__HINT_ABORTED, "%s refused: the communicator was aborted: %s", func,
                        c->dead_detail.message);
    if (c->set != NULL) return cm__set_usable_check(c->set, func);
    return CM_OK;
}

static cm_status_t cm__nccl_status(ncclResult_t r) {
    switch (r) {
    case ncclSuccess: return CM_OK;
    case ncclInvalidArgument: case ncclInvalidUsage: return CM_ERROR_INVALID_ARGUMENT;
    case ncclInProgress: return CM_ERROR_BUSY;
    default: return CM_ERROR_CUDA;
    }
}

static const char *cm__nccl_hint(ncclResult_t r) {
    switch (r) {
    case ncclUnhandledCudaError:
        return "a CUDA call inside NCCL failed: check the devices with cudamodel-doctor; run with "
               "NCCL_DEBUG=WARN to see NCCL's own report";
    case ncclSystemError:
        return "NCCL could not use a system resource (sockets for its bootstrap, shared memory in "
               "/dev/shm, file descriptors): run with NCCL_DEBUG=WARN to see which; on machines "
               "without a network interface set NCCL_SOCKET_IFNAME=lo";
    case ncclInternalError:
        return "NCCL failed internally: run with NCCL_DEBUG=INFO and report it with NCCL's log";
    case ncclInvalidArgument:
        return "NCCL refused an argument: check the counts, types and devices of every rank";
    case ncclInvalidUsage:
        return "every rank must call the same collectives with the same count, type and root in "
               "the same order, and each rank needs its own GPU";
    case ncclRemoteError:
        return "another rank failed or exited: look at its error first";
    default:
        return "run with NCCL_DEBUG=WARN to see NCCL's own report";
    }
}

static cm_status_t cm__nccl_fail(ncclResult_t r, ncclComm_t comm, int device, const char *file,
                                 int line, const char *call, const char *fmt, ...)
    CM__PRINTF(7, 8);

static cm_status_t cm__nccl_fail(ncclResult_t r, ncclComm_t comm, int device, const char *file,
                                 int line, const char *call, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *last = cm__cuda.nccl_get_last_error(comm);
    (void)cm__cuda.get_last_error(); /* a CUDA error behind it is in NCCL's text, not ours */
    return cm__fail(cm__nccl_status(r), device, file, line, call, cm__nccl_hint(r),
                    "%s failed: %s (ncclResult_t %d)%s%s", what,
                    cm__cuda.nccl_get_error_string(r), (int)r,
                    last != NULL && last[0] != '\0' ? ": " : "", last != NULL ? last : "");
}

#define CM__NCCL_FAIL(r, comm, device, call, ...)                                               \
    cm__nccl_fail((r), (comm), (device), __FILE__, __LINE__, (call), __VA_ARGS__)

int cm__nccl_version(void) {
    int v = 0;
    if (cm__cuda.nccl_get_version(&v) != ncclSuccess) v = 0;
    return v;
}

cm_status_t cm_comm_id_create(cm_comm_id_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_comm_id_t", "out is NULL");
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t r = cm__cuda.nccl_get_unique_id(&id);
    if (r != ncclSuccess) return CM__NCCL_FAIL(r, NULL, -1, "ncclGetUniqueId", "ncclGetUniqueId");
    memcpy(out->bytes, &id, CM_COMM_ID_BYTES);
    return CM_OK;
}

static cm_status_t cm__comm_new(struct cm__comm **out, const char *func) {
    struct cm__comm *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, -1, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the communicator (%zu bytes)",
                        sizeof *c);
    }
    *out = c;
    return CM_OK;
}

/*
 * Free NCCL's state of local rank i: ncclCommDestroy, or ncclCommAbort when the rank's device
 * lost its context or NCCL reported an asynchronous error (destroy would wait for work that
 * never ends). Runs with the rank's context current (NCCL switches to it and back).
 */
static cm_status_t cm__comm_free_rank(struct cm__comm *c, int i, bool abort_it) {
    const int ordinal = c->ordinals[i];
    if (c->comms[i] == NULL) return CM_OK; /* aborted before */
    cm__scope_t sc;
    const bool entered = cm__enter(ordinal, 1, &sc) == CM_OK;
    ncclResult_t r = abort_it ? cm__cuda.nccl_comm_abort(c->comms[i])
                              : cm__cuda.nccl_comm_destroy(c->comms[i]);
    if (entered) cm__leave(&sc);
    c->comms[i] = NULL;
    if (r == ncclSuccess) return CM_OK;
    const char *call = abort_it ? "ncclCommAbort" : "ncclCommDestroy";
    return CM__NCCL_FAIL(r, NULL, ordinal, call, "%s(rank %d, device %d)", call,
                         c->first_rank + i, ordinal);
}

/* Give the communicator its handle; on host OOM free its NCCL state and record the failure. */
static cm_status_t cm__comm_publish(struct cm__comm *c, const cm__epitaph_t *ep) {
    c->handle = cm__handle_new(CM__KIND_COMM, c, ep);
    if (c->handle != NULL) return CM_OK;
    for (int i = 0; i < c->local; ++i) (void)cm__comm_free_rank(c, i, false);
    return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, -1, "free host memory",
                    "cannot grow the handle table for the communicator");
}

cm_status_t cm_comm_create(cm_device_set_t *set_h, cm_comm_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_comm_t * to receive the communicator",
                "out is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_usable_check(set, __func__));
    for (int k = 0; k < set->count; ++k) CM_TRY(cm__context_guard(set->ordinals[k]));
    struct cm__comm *c = NULL;
    CM_TRY(cm__comm_new(&c, __func__));
    c->set = set;
    c->nranks = c->local = set->count;
    c->first_rank = 0;
    for (int k = 0; k < set->count; ++k) {
        c->ordinals[k] = set->ordinals[k];
        c->streams[k] = set->streams[k];
        c->cuda_streams[k] = set->cuda_streams[k];
    }
    cm__scope_t sc;
    cm_status_t s = cm__enter(set->ordinals[0], 1, &sc);
    if (s != CM_OK) {
        free(c);
        return s;
    }
    ncclResult_t r = cm__cuda.nccl_comm_init_all(c->comms, set->count, set->ordinals);
    cm__leave(&sc);
    if (r != ncclSuccess) {
        free(c);
        return CM__NCCL_FAIL(r, NULL, -1, "ncclCommInitAll",
                             "ncclCommInitAll(%d devices, first device %d)", set->count,
                             set->ordinals[0]);
    }
    const cm__epitaph_t ep = {.file = NULL, .device = set->ordinals[0]};
    s = cm__comm_publish(c, &ep);
    if (s != CM_OK) {
        free(c);
        return s;
    }
    cm__set_comms_add(set, +1);
    *out = (cm_comm_t *)c->handle;
    return CM_OK;
}

cm_status_t cm_comm_create_rank(cm_device_t *dev, const cm_comm_id_t *id, int nranks, int rank,
                                cm_comm_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_comm_t * to receive the communicator",
                "out is NULL");
    CM__REQUIRE(id != NULL, "pass the id made by cm_comm_id_create() on one process and handed "
                "to every rank (cm_comm_id_from_hex())", "id is NULL");
    CM__REQUIRE(nranks >= 1, "nranks is the number of ranks (processes) in total",
                "nranks is %d", nranks);
    CM__REQUIRE(rank >= 0 && rank < nranks, "ranks run from 0 to nranks - 1, one per process",
                "rank %d is out of range for %d rank%s", rank, nranks, nranks == 1 ? "" : "s");
    int ordinal = -1;
    CM_TRY(cm_device_ordinal(dev, &ordinal));
    CM_TRY(cm__context_guard(ordinal));
    struct cm__comm *c = NULL;
    CM_TRY(cm__comm_new(&c, __func__));
    c->dev = dev;
    c->nranks = nranks;
    c->local = 1;
    c->first_rank = rank;
    c->ordinals[0] = ordinal;
    c->own_stream = true;
    atomic_init(&c->timeout_ms, cm__collective_timeout_default());
    cm_status_t s = cm_stream_acquire_at(dev, CM_STREAM_PRIORITY_LOW, &c->streams[0], __FILE__,
                                         __LINE__);
    if (s == CM_OK) s = cm_stream_cuda(c->streams[0], &c->cuda_streams[0]);
    if (s == CM_OK) {
        ncclUniqueId uid;
        memcpy(&uid, id->bytes, sizeof uid);
        cm__scope_t sc;
        s = cm__enter(ordinal, 1, &sc); /* ncclCommInitRank uses the current device */
        if (s == CM_OK) {
            ncclResult_t r = cm__cuda.nccl_comm_init_rank(&c->comms[0], nranks, uid, rank);
            cm__leave(&sc);
            if (r != ncclSuccess)
                s = CM__NCCL_FAIL(r, NULL, ordinal, "ncclCommInitRank",
                                  "ncclCommInitRank(%d ranks, rank %d, device %d)", nranks, rank,
                                  ordinal);
        }
    }
    if (s == CM_OK) {
        const cm__epitaph_t ep = {.file = NULL, .device = ordinal};
        s = cm__comm_publish(c, &ep);
    }
    if (s != CM_OK) {
        cm_error_t detail = *cm_last_error();
        (void)cm_stream_release(c->streams[0]);
        free(c);
        *cm__detail() = detail;
        return s;
    }
    *out = (cm_comm_t *)c->handle;
    return CM_OK;
}

/* What a polling round of cm__comm_sync checks: NCCL's asynchronous error of every rank. */
typedef struct cm__comm_poll {
    struct cm__comm *c;
    const char *func;
    bool nccl_failed; /* the failure is NCCL's (abort every rank), not a stream's */
} cm__comm_poll_t;

static cm_status_t cm__comm_poll_async(void *user) {
    cm__comm_poll_t *p = user;
    struct cm__comm *c = p->c;
    for (int i = 0; i < c->local; ++i) {
        if (c->comms[i] == NULL) continue;
        ncclResult_t async = ncclSuccess;
        ncclResult_t r = cm__cuda.nccl_comm_get_async_error(c->comms[i], &async);
        if (r != ncclSuccess) async = r;
        if (async != ncclSuccess && async != ncclInProgress) {
            p->nccl_failed = true;
            return CM__NCCL_FAIL(async, c->comms[i], c->ordinals[i], "ncclCommGetAsyncError",
                                 "a collective of rank %d (device %d) in %s (NCCL's "
                                 "asynchronous error; every local rank was aborted)",
                                 c->first_rank + i, c->ordinals[i], p->func);
        }
    }
    return CM_OK;
}

/*
 * Abort every rank still alive (ncclCommAbort: NCCL's kernels in flight end too) and make the
 * communicator, and its set, refuse further work with the current detail as the cause.
 */
static void cm__comm_abort_all(struct cm__comm *c, cm_status_t cause) {
    const cm_error_t detail = *cm_last_error();
    for (int i = 0; i < c->local; ++i) (void)cm__comm_free_rank(c, i, true);
    c->dead = cause;
    c->dead_detail = detail;
    if (c->set != NULL) cm__set_break(c->set, cause, &detail);
    *cm__detail() = detail;
}

/*
 * Wait for every local rank's stream while polling NCCL's asynchronous error, for at most the
 * collective timeout. A timeout or an NCCL error aborts every rank (cm__comm_abort_all) and is
 * returned; a stream's own failure (a fault, a lost context) is returned with bad[i] set for
 * that rank when bad is not NULL (destroy aborts such a rank instead of destroying it).
 */
static cm_status_t cm__comm_sync(struct cm__comm *c, const char *func, bool *bad) {
    if (bad != NULL)
        for (int i = 0; i < c->local; ++i) bad[i] = false;
    CM_TRY(cm__comm_usable(c, func));
    cm__comm_poll_t poll = {.c = c, .func = func, .nccl_failed = false};
    const uint32_t timeout = cm__comm_timeout_ms(c);
    int pending = -1, failed = -1;
    cm_status_t s = cm__wait_streams(c->streams, c->ordinals, c->local, timeout,
                                     cm__comm_poll_async, &poll, &pending, &failed);
    if (s == CM_OK) return CM_OK;
    if (poll.nccl_failed) {
        cm__comm_abort_all(c, s);
        return s;
    }
    if (pending >= 0) {
        (void)cm__fail(CM_ERROR_BUSY, c->ordinals[pending], __FILE__, __LINE__,
                       "cudaStreamQuery / ncclCommGetAsyncError",
                       "another rank did not join the collective (it exited, hangs, or called "
                       "different collectives or counts): look at the other ranks' errors; then "
                       "destroy this communicator and make a new one on every rank. If the "
                       "collectives are merely slow, raise the timeout "
                       "(CUDAMODEL_COLLECTIVE_TIMEOUT_MS, or the setters of multi.h)",
                       "%s: the collectives of rank %d (device %d) did not finish within the "
                       "collective timeout of %u ms: every local rank was aborted "
                       "(ncclCommAbort) and the communicator%s refuses further work",
                       func, c->first_rank + pending, c->ordinals[pending], timeout,
                       c->set != NULL ? " and its device set" : "");
        cm__comm_abort_all(c, CM_ERROR_BUSY);
        return CM_ERROR_BUSY;
    }
    if (bad != NULL && failed >= 0) bad[failed] = true;
    return s;
}

cm_status_t cm_comm_destroy(cm_comm_t *comm_h) {
    if (comm_h == NULL) return CM_OK;
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    (void)cm__handle_end(comm_h, CM__KIND_COMM);
    bool bad[CM_DEVICE_SET_MAX] = {false};
    /* an aborted communicator is released at once: its failure was reported when it happened,
     * and its streams are not waited for (the aborted kernels end on their own) */
    cm_status_t first = CM_OK;
    cm_error_t detail;
    memset(&detail, 0, sizeof detail);
    if (comm->dead == CM_OK) {
        if (comm->set != NULL && cm__set_broken(comm->set) != CM_OK) {
            for (int i = 0; i < comm->local; ++i) bad[i] = true; /* abort, never wait */
        } else {
            first = cm__comm_sync(comm, __func__, bad);
            detail = *cm_last_error();
        }
    }
    for (int i = 0; i < comm->local; ++i) {
        cm_status_t s = cm__comm_free_rank(comm, i, bad[i]);
        if (s != CM_OK && first == CM_OK) {
            first = s;
            detail = *cm_last_error();
        }
    }
    if (comm->own_stream) {
        cm_status_t s = cm_stream_release(comm->streams[0]);
        if (s != CM_OK && first == CM_OK) {
            first = s;
            detail = *cm_last_error();
        }
    }
    if (comm->set != NULL) cm__set_comms_add(comm->set, -1);
    free(comm);
    if (first != CM_OK) *cm__detail() = detail;
    return first;
}

cm_status_t cm_comm_size(const cm_comm_t *comm_h, int *nranks, int *local, int *first_rank) {
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    if (nranks != NULL) *nranks = comm->nranks;
    if (local != NULL) *local = comm->local;
    if (first_rank != NULL) *first_rank = comm->first_rank;
    return CM_OK;
}

cm_status_t cm_comm_stream(const cm_comm_t *comm_h, int local, cm_stream_t **stream) {
    CM__REQUIRE(stream != NULL, "pass the address of a cm_stream_t *", "stream is NULL");
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    CM__REQUIRE(local >= 0 && local < comm->local, "local ranks run from 0 to local - 1 "
                "(cm_comm_size())", "local rank %d does not exist: this process has %d",
                local, comm->local);
    *stream = comm->streams[local];
    return CM_OK;
}

cm_status_t cm_comm_synchronize(cm_comm_t *comm_h) {
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    return cm__comm_sync(comm, __func__, NULL);
}

cm_status_t cm_comm_set_timeout(cm_comm_t *comm_h, uint32_t timeout_ms) {
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    if (comm->set != NULL)
        atomic_store_explicit(&comm->set->timeout_ms, timeout_ms, memory_order_relaxed);
    else
        atomic_store_explicit(&comm->timeout_ms, timeout_ms, memory_order_relaxed);
    return CM_OK;
}

cm_status_t cm_comm_timeout(const cm_comm_t *comm_h, uint32_t *timeout_ms) {
    CM__REQUIRE(timeout_ms != NULL, "pass the address of a uint32_t", "timeout_ms is NULL");
    struct cm__comm *comm;
    CM__GET(comm, comm_h, CM__KIND_COMM, "comm");
    *timeout_ms = cm__comm_timeout_ms(comm);
    return CM_OK;
}

/* ---------------------------------------------------------------- the collectives */

static bool cm__nccl_dtype(cm_dtype_t d, ncclDataType_t *out) {
    switch (d) {
    case CM_DTYPE_I8: *out = ncclInt8; return true;
    case CM_DTYPE_U8: *out = ncclUint8; return true;
    case CM_DTYPE_I32: *out = ncclInt32; return true;
    case CM_DTYPE_U32: *out = ncclUint32; return true;
    case CM_DTYPE_I64: *out = ncclInt64; return true;
    case CM_DTYPE_U64: *out = ncclUint64; return true;
    case CM_DTYPE_F16: *out = ncclFloat16; return true;
    case CM_DTYPE_F32: *out = ncclFloat32; return true;
    case CM_DTYPE_F64: *out = ncclFloat64; return true;
    case CM_DTYPE_BF16: *out = ncclBfloat16; return true;
    }
    return false;
}

static bool cm__nccl_op(cm_comm_op_t op, ncclRedOp_t *out) {
    switch (op) {
    case CM_COMM_SUM: *out = ncclSum; return true;
    case CM_COMM_PROD: *out = ncclProd; return true;
    case CM_COMM_MIN: *out = ncclMin; return true;
    case CM_COMM_MAX: *out = ncclMax; return true;
    case CM_COMM_AVG: *out = ncclAvg; return true;
    }
    return false;
}

/* Local rank i's buffer: live, on its device, at least need bytes; *ptr its device address. */
static cm_status_t cm__coll_buffer(const struct cm__comm *c, int i, const cm_buffer_t *b,
                                   const char *arg, size_t need, size_t count, void **ptr,
                                   const char *func) {
    char name[32];
    snprintf(name, sizeof name, "%s[%d]", arg, i);
    void *obj = NULL;
    CM_TRY(cm__handle_get(b, CM__KIND_BUFFER, name, func, &obj));
    cm_buffer_info_t info;
    CM_TRY(cm_buffer_info(b, &info));
    const int ordinal = info.ordinal;
    const size_t bytes = info.bytes;
    if (ordinal != c->ordinals[i]) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "local rank %d runs on device %d: pass a buffer of that "
                 "device (entries are in local rank order)", i, c->ordinals[i]);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                        "%s is memory of device %d, but local rank %d is device %d; nothing was "
                        "queued", name, ordinal, i, c->ordinals[i]);
    }
    if (bytes < need) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "pass a larger buffer or a smaller count",
                        "%s has %zu bytes but the collective needs %zu (%zu elements); nothing "
                        "was queued", name, bytes, need, count);
    }
    CM_TRY(cm_buffer_device_ptr(b, ptr));
    return CM_OK;
}

enum { CM__COLL_ALL_REDUCE, CM__COLL_BROADCAST, CM__COLL_ALL_GATHER };

static cm_status_t cm__collective(int kind, cm_comm_t *comm_h, cm_buffer_t *const *send,
                                  cm_buffer_t *const *recv, size_t count, cm_dtype_t dtype,
                                  cm_comm_op_t op, int root, const char *func) {
    void *obj = NULL;
    CM_TRY(cm__handle_get(comm_h, CM__KIND_COMM, "comm", func, &obj));
    struct cm__comm *comm = obj;
    CM__REQUIRE(recv != NULL, "pass an array of one buffer per local rank", "%s: recv is NULL",
                func);
    CM__REQUIRE(send != NULL, "pass an array of one buffer per local rank (it may be recv for "
                "in place)", "%s: send is NULL", func);
    ncclDataType_t nd = ncclFloat32;
    ncclRedOp_t nop = ncclSum;
    CM__REQUIRE(cm__nccl_dtype(dtype, &nd), "pass a cm_dtype_t (CM_DTYPE_F32, ...)",
                "%s: unknown dtype %d", func, (int)dtype);
    if (kind == CM__COLL_ALL_REDUCE) {
        CM__REQUIRE(cm__nccl_op(op, &nop), "pass a cm_comm_op_t (CM_COMM_SUM, ...)",
                    "%s: unknown op %d", func, (int)op);
    }
    if (kind == CM__COLL_BROADCAST) {
        CM__REQUIRE(root >= 0 && root < comm->nranks, "the root is a rank, 0 .. nranks - 1",
                    "%s: root %d is out of range for %d rank%s", func, root, comm->nranks,
                    comm->nranks == 1 ? "" : "s");
    }
    const size_t esize = cm_dtype_size(dtype);
    const size_t nr = kind == CM__COLL_ALL_GATHER ? (size_t)comm->nranks : 1u;
    CM__REQUIRE(count <= SIZE_MAX / esize / nr, "pass a smaller count",
                "%s: %zu elements of %zu bytes (x %zu ranks) overflow size_t", func, count, esize,
                nr);
    const size_t bytes = count * esize;
    void *sp[CM_DEVICE_SET_MAX], *rp[CM_DEVICE_SET_MAX];
    for (int i = 0; i < comm->local; ++i) {
        const int rank = comm->first_rank + i;
        CM_TRY(cm__coll_buffer(comm, i, recv[i], "recv", bytes * nr, count * nr, &rp[i], func));
        sp[i] = rp[i];
        if (kind == CM__COLL_BROADCAST && rank != root) continue; /* send read on the root only */
        if (kind == CM__COLL_ALL_GATHER && send[i] == recv[i]) {
            sp[i] = (unsigned char *)rp[i] + (size_t)rank * bytes; /* in place */
            continue;
        }
        CM_TRY(cm__coll_buffer(comm, i, send[i], "send", bytes, count, &sp[i], func));
    }
    for (int i = 0; i < comm->local; ++i) CM_TRY(cm__context_guard(comm->ordinals[i]));
    CM_TRY(cm__comm_usable(comm, func));
    if (count == 0) return CM_OK;

    /* NCCL switches to each rank's device inside the group and back to the one it found */
    cm__scope_t sc;
    CM_TRY(cm__enter(comm->ordinals[0], 1, &sc));
    ncclResult_t r = cm__cuda.nccl_group_start();
    cm_status_t status = CM_OK;
    if (r != ncclSuccess) {
        status = CM__NCCL_FAIL(r, NULL, -1, "ncclGroupStart", "ncclGroupStart in %s", func);
        cm__leave(&sc);
        return status;
    }
    const char *call = kind == CM__COLL_ALL_REDUCE   ? "ncclAllReduce"
                       : kind == CM__COLL_BROADCAST ? "ncclBroadcast"
                                                     : "ncclAllGather";
    for (int i = 0; i < comm->local && status == CM_OK; ++i) {
        switch (kind) {
        case CM__COLL_ALL_REDUCE:
            r = cm__cuda.nccl_all_reduce(sp[i], rp[i], count, nd, nop, comm->comms[i], comm->cuda_streams[i]);
            break;
        case CM__COLL_BROADCAST:
            r = cm__cuda.nccl_broadcast(sp[i], rp[i], count, nd, root, comm->comms[i], comm->cuda_streams[i]);
            break;
        default:
            r = cm__cuda.nccl_all_gather(sp[i], rp[i], count, nd, comm->comms[i], comm->cuda_streams[i]);
            break;
        }
        if (r != ncclSuccess)
            status = CM__NCCL_FAIL(r, comm->comms[i], comm->ordinals[i], call,
                                   "%s(%zu elements) of rank %d (device %d)", call, count,
                                   comm->first_rank + i, comm->ordinals[i]);
    }
    r = cm__cuda.nccl_group_end(); /* always closes the group, also after a failure */
    if (r != ncclSuccess && status == CM_OK)
        status = CM__NCCL_FAIL(r, comm->local == 1 ? comm->comms[0] : NULL, -1, "ncclGroupEnd",
                               "ncclGroupEnd after %s(%zu elements)", call, count);
    cm__leave(&sc);
    if (status == CM_OK && cm_sync_mode()) status = cm__comm_sync(comm, func, NULL);
    return status;
}

cm_status_t cm_comm_all_reduce(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                               size_t count, cm_dtype_t dtype, cm_comm_op_t op) {
    return cm__collective(CM__COLL_ALL_REDUCE, comm, send, recv, count, dtype, op, 0, __func__);
}

cm_status_t cm_comm_broadcast(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                              size_t count, cm_dtype_t dtype, int root) {
    return cm__collective(CM__COLL_BROADCAST, comm, send, recv, count, dtype, CM_COMM_SUM, root,
                          __func__);
}

cm_status_t cm_comm_all_gather(cm_comm_t *comm, cm_buffer_t *const *send, cm_buffer_t *const *recv,
                               size_t count, cm_dtype_t dtype) {
    return cm__collective(CM__COLL_ALL_GATHER, comm, send, recv, count, dtype, CM_COMM_SUM, 0,
                          __func__);
}

#endif /* CM_HAVE_NCCL */
