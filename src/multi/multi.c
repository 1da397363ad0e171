/*
 * Several GPUs (multi.h): device sets, peer access, split arithmetic, split arrays (scatter,
 * gather, the kernels.h operations on every part, reductions combined on the host). The
 * collectives are in src/multi/collectives.c, which uses nothing of this file (a set counts its
 * communicators; it never destroys them).
 *
 * Concurrency without threads: every call queues its work on each member's set stream first
 * and waits only afterwards, so the GPUs run at the same time while one host thread drives them.
 * Every entry point looks its handles up in the handle table and checks all of its arguments
 * before it queues anything. The work on a member runs in a device scope of that member
 * (cm__enter / cm__leave), which gives the caller back exactly the context state it had.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/kernels.h>
#include <cudamodel/multi.h>

#include "../core/device.h"
#include "../core/handle.h"
#include "../core/internal.h"
#include "../core/lock.h"
#include "kernels.h"
#include "../memory/memory_internal.h"
#include "multi_internal.h"

/* ================================================================== small helpers */

static cm_status_t cm__member_index(const struct cm__device_set *set, int index,
                                    const char *func) {
    if (index >= 0 && index < set->count) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "members of this set are numbered 0 to %d", set->count - 1);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "member %d does not exist: the set has %d member%s", index, set->count,
                    set->count == 1 ? "" : "s");
}

/* A live buffer handle (the failure names arg, func and what b is: NULL, stale, not one). */
static cm_status_t cm__buffer_live(const cm_buffer_t *b, const char *arg, const char *func) {
    void *obj = NULL;
    return cm__handle_get(b, CM__KIND_BUFFER, arg, func, &obj);
}

/* Wait for every member's set stream; the first failure (in member order) is returned. On a set
 * an aborted collective made unusable, the wait polls within the collective timeout (the aborted
 * kernels end on their own; a stream still busy after that is reported, never waited for). */
static cm_status_t cm__set_sync_all(struct cm__device_set *set) {
    if (cm__set_broken(set) != CM_OK) {
        uint32_t t = atomic_load_explicit(&set->timeout_ms, memory_order_relaxed);
        return cm__wait_streams(set->streams, set->ordinals, set->count,
                                t != 0 ? t : CM_COLLECTIVE_TIMEOUT_DEFAULT_MS, NULL, NULL, NULL,
                                NULL);
    }
    cm_status_t first = CM_OK;
    cm_error_t saved;
    memset(&saved, 0, sizeof saved);
    for (int k = 0; k < set->count; ++k) {
        cm_status_t s = cm__context_guard(set->ordinals[k]); /* a lost member is not waited */
        if (s == CM_OK) s = cm_stream_synchronize(set->streams[k]);
        if (s != CM_OK && first == CM_OK) {
            first = s;
            saved = *cm_last_error();
        }
    }
    if (first != CM_OK) *cm__detail() = saved;
    return first;
}

/* Keep the first failure's status and detail while later calls go on (cleanup paths). */
typedef struct cm__first {
    cm_status_t status;
    cm_error_t detail;
} cm__first_t;

static void cm__first_note(cm__first_t *f, cm_status_t s) {
    if (s != CM_OK && f->status == CM_OK) {
        f->status = s;
        f->detail = *cm_last_error();
    }
}

static cm_status_t cm__first_result(const cm__first_t *f) {
    if (f->status != CM_OK) *cm__detail() = f->detail;
    return f->status;
}

/* ================================================================== device sets */

/*
 * Release what the set holds: its result slots, its streams and its device objects. A member
 * whose context was lost is released on the host side only (the library's calls skip CUDA on a
 * lost device); the slots live in the first member's context and went with it when that one
 * was lost. Every failure is noted in f; nothing stops the release.
 */
static void cm__set_release(struct cm__device_set *set, cm__first_t *f) {
    if (set->slots != NULL) {
        cm_status_t s = cm__context_guard(set->ordinals[0]);
        const bool lost = s != CM_OK;
        cm__scope_t sc;
        if (s == CM_OK) s = cm__enter(set->ordinals[0], 1, &sc);
        if (s == CM_OK) {
            cudaError_t err = cm__cuda.free_host(set->slots);
            if (err != cudaSuccess) /* recorded inside the scope: charged to the slots' device */
                s = cm__cuda_fail(err, __FILE__, __LINE__,
                                  "cudaFreeHost(the set's result slots, device %d)",
                                  set->ordinals[0]);
            cm__leave(&sc);
        } else if (!lost) {
            /* the scope could not be entered but the context lives: the first member's device
             * object frees the slots at its close (or at a capture end), in a scope of its own */
            struct cm__device *d0 = cm__device_obj(set->devs[0]);
            if (d0 != NULL)
                (void)cm__defer_free_host(d0, set->slots,
                                          (size_t)set->count * CM__SET_SLOT_BYTES);
        }
        cm__first_note(f, s);
        set->slots = NULL;
    }
    for (int k = 0; k < set->count; ++k) {
        if (set->streams[k] != NULL) cm__first_note(f, cm_stream_release(set->streams[k]));
        set->streams[k] = NULL;
        if (set->devs[k] != NULL) cm__first_note(f, cm__device_release(set->devs[k]));
        set->devs[k] = NULL;
    }
}

/* Pinned, portable result slots, allocated in the first member's context (so that no other
 * device gets a context it does not need). */
static cm_status_t cm__set_alloc_slots(struct cm__device_set *set, const char *func) {
    const size_t bytes = (size_t)set->count * CM__SET_SLOT_BYTES;
    cm__scope_t sc;
    CM_TRY(cm__enter(set->ordinals[0], 1, &sc));
    void *p = NULL;
    cudaError_t err = cm__cuda.host_alloc(&p, bytes, cudaHostAllocPortable);
    cm_status_t status = CM_OK;
    if (err == cudaErrorMemoryAllocation) {
        (void)cm__cuda.get_last_error();
        status = cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, set->ordinals[0], __FILE__, __LINE__,
                          "cudaHostAlloc", "free host memory, or raise the locked-memory limit "
                          "(ulimit -l)", "cannot pin %zu bytes of host memory for the set's "
                          "result slots in %s", bytes, func);
    } else if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__,
                               "cudaHostAlloc(%zu bytes of result slots, portable) in %s", bytes,
                               func);
    }
    cm__leave(&sc);
    if (status == CM_OK) set->slots = p;
    return status;
}

static cm_status_t cm__set_open(const int *ordinals, int count, cm_device_set_t **out,
                                const char *func) {
    if (out == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of a cm_device_set_t * to receive the set",
                        "out is NULL");
    }
    if (ordinals == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass an array of device ordinals, or use cm_device_set_open_all()",
                        "ordinals is NULL");
    }
    if (count < 1 || count > CM_DEVICE_SET_MAX) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "a set has 1 to %d members", CM_DEVICE_SET_MAX);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "count is %d", count);
    }
    for (int i = 0; i < count; ++i) {
        for (int j = 0; j < i; ++j) {
            if (ordinals[i] == ordinals[j]) {
                return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinals[i], __FILE__, __LINE__, func,
                                "list each device once: a device cannot be two members of a set",
                                "device %d is given twice (ordinals[%d] and ordinals[%d])",
                                ordinals[i], j, i);
            }
        }
    }
    for (int i = 0; i < count; ++i) {
        cm_status_t s = cm__check_ordinal(ordinals[i]);
        if (s != CM_OK) {
            cm_error_t *e = cm__detail();
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (ordinals[%d] of %s)", i, func);
            return s;
        }
    }
    struct cm__device_set *set = calloc(1, sizeof *set);
    if (set == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, -1, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the set (%zu bytes)", sizeof *set);
    }
    set->count = count;
    atomic_init(&set->n_splits, 0);
    atomic_init(&set->n_comms, 0);
    atomic_init(&set->timeout_ms, cm__collective_timeout_default());
    atomic_init(&set->broken, 0);
    cm__first_t f;
    memset(&f, 0, sizeof f);
    cm_status_t status = CM_OK;
    for (int k = 0; k < count; ++k) {
        set->ordinals[k] = ordinals[k];
        CM_TRY_GOTO(cm_device_open(ordinals[k], &set->devs[k]), status, fail);
        CM_TRY_GOTO(cm_stream_acquire_at(set->devs[k], CM_STREAM_PRIORITY_LOW, &set->streams[k],
                                         __FILE__, __LINE__),
                    status, fail);
        CM_TRY_GOTO(cm_stream_cuda(set->streams[k], &set->cuda_streams[k]), status, fail);
    }
    CM_TRY_GOTO(cm__set_alloc_slots(set, func), status, fail);
    {
        const cm__epitaph_t ep = {.file = NULL, .device = ordinals[0]};
        set->handle = cm__handle_new(CM__KIND_DEVICE_SET, set, &ep);
    }
    if (set->handle == NULL) {
        status = cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, -1, __FILE__, __LINE__, func,
                          "free host memory", "cannot grow the handle table for the set");
        goto fail;
    }
    *out = (cm_device_set_t *)set->handle;
    return CM_OK;
fail:;
    cm_error_t detail = *cm_last_error();
    cm__set_release(set, &f);
    free(set);
    *cm__detail() = detail;
    return status;
}

cm_status_t cm_device_set_open(const int *ordinals, int count, cm_device_set_t **out) {
    return cm__set_open(ordinals, count, out, __func__);
}

cm_status_t cm_device_set_open_all(cm_device_set_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_device_set_t * to receive the set",
                "out is NULL");
    int n = 0;
    CM_TRY(cm_device_count(&n));
    if (n > CM_DEVICE_SET_MAX) n = CM_DEVICE_SET_MAX;
    int ordinals[CM_DEVICE_SET_MAX];
    for (int i = 0; i < n; ++i) ordinals[i] = i;
    return cm__set_open(ordinals, n, out, __func__);
}

/*
 * CM_ERROR_BUSY unless the set's devices hold nothing but the set's own stream. Host-side
 * counts only (no CUDA call), so that a member whose context was lost does not block the close.
 */
static cm_status_t cm__set_close_check(struct cm__device_set *set, const char *func) {
    /* the members' closes free memory and destroy pools: CUDA refuses that during a capture */
    if (cm__thread_captures > 0) {
        return cm__fail(CM_ERROR_BUSY, set->ordinals[0], __FILE__, __LINE__, func,
                        "end the capture (cm_graph_capture_end()), then close the set",
                        "a set cannot be closed while this thread captures a graph (CUDA refuses "
                        "the frees of its members' closes during a capture); nothing was closed");
    }
    int splits = atomic_load_explicit(&set->n_splits, memory_order_acquire);
    int comms = atomic_load_explicit(&set->n_comms, memory_order_acquire);
    if (splits > 0 || comms > 0) {
        return cm__fail(CM_ERROR_BUSY, -1, __FILE__, __LINE__, func,
                        "destroy the set's split arrays (cm_split_destroy()) and communicators "
                        "(cm_comm_destroy()) first, then close the set",
                        "the set still has %d live split arra%s and %d communicator%s; nothing "
                        "was closed", splits, splits == 1 ? "y" : "ys", comms,
                        comms == 1 ? "" : "s");
    }
    for (int k = 0; k < set->count; ++k) {
        size_t buffers = 0, bytes = 0, host_buffers = 0;
        cm__core_lock();
        struct cm__device *dev = cm__device_obj(set->devs[k]);
        if (dev != NULL) { /* memspace.h's objects (pitched, arrays, textures...) count too */
            buffers = dev->n_buffers + dev->n_spaces;
            bytes = dev->buffer_bytes + dev->space_bytes;
            host_buffers = dev->n_host_buffers;
        }
        cm__core_unlock();
        cm_stream_pool_stats_t st;
        CM_TRY(cm_stream_pool_stats(set->devs[k], &st));
        unsigned lent = st.acquired[0] + st.acquired[1];
        if (buffers + host_buffers > 0 || lent > 1 || st.events_acquired > 0) {
            char hint[CM_ERROR_HINT_MAX];
            snprintf(hint, sizeof hint, "destroy the buffers and release the streams and events "
                     "of member %d's device object (cm_device_set_device(); "
                     "cm_device_leak_report() lists the buffers), then close the set", k);
            return cm__fail(CM_ERROR_BUSY, set->ordinals[k], __FILE__, __LINE__, func, hint,
                            "member %d (device %d) still has %zu live buffer%s (%zu bytes), %zu "
                            "pinned host buffer%s, %u lent stream%s besides the set's own and %u "
                            "lent event%s; nothing was closed", k, set->ordinals[k], buffers,
                            buffers == 1 ? "" : "s", bytes, host_buffers,
                            host_buffers == 1 ? "" : "s", lent > 0 ? lent - 1 : 0,
                            lent == 2 ? "" : "s", st.events_acquired,
                            st.events_acquired == 1 ? "" : "s");
        }
    }
    return CM_OK;
}

/*
 * multi.h: refused (CM_ERROR_BUSY) only while something of the set is alive; otherwise the set
 * is closed whatever else happens. A member whose context was lost is not waited for (its
 * stream cannot run anything any more) and is released on the host side; the close then
 * returns CM_ERROR_CONTEXT_LOST (the first failure in member order), and the handle is gone.
 */
cm_status_t cm_device_set_close(cm_device_set_t *set_h) {
    if (set_h == NULL) return CM_OK;
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_close_check(set, __func__));
    cm__first_t f;
    memset(&f, 0, sizeof f);
    cm__first_note(&f, cm__set_sync_all(set));
    (void)cm__handle_end(set_h, CM__KIND_DEVICE_SET);
    cm__set_release(set, &f);
    free(set);
    return cm__first_result(&f);
}

cm_status_t cm_device_set_count(const cm_device_set_t *set_h, int *count) {
    CM__REQUIRE(count != NULL, "pass the address of an int", "count is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    *count = set->count;
    return CM_OK;
}

cm_status_t cm_device_set_device(const cm_device_set_t *set_h, int index, cm_device_t **dev) {
    CM__REQUIRE(dev != NULL, "pass the address of a cm_device_t *", "dev is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__member_index(set, index, __func__));
    *dev = set->devs[index];
    return CM_OK;
}

cm_status_t cm_device_set_ordinal(const cm_device_set_t *set_h, int index, int *ordinal) {
    CM__REQUIRE(ordinal != NULL, "pass the address of an int", "ordinal is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__member_index(set, index, __func__));
    *ordinal = set->ordinals[index];
    return CM_OK;
}

cm_status_t cm_device_set_stream(const cm_device_set_t *set_h, int index, cm_stream_t **stream) {
    CM__REQUIRE(stream != NULL, "pass the address of a cm_stream_t *", "stream is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__member_index(set, index, __func__));
    *stream = set->streams[index];
    return CM_OK;
}

cm_status_t cm_device_set_synchronize(cm_device_set_t *set_h) {
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_usable_check(set, __func__));
    return cm__set_sync_all(set);
}

cm_status_t cm_device_set_set_collective_timeout(cm_device_set_t *set_h, uint32_t timeout_ms) {
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    atomic_store_explicit(&set->timeout_ms, timeout_ms, memory_order_relaxed);
    return CM_OK;
}

cm_status_t cm_device_set_collective_timeout(const cm_device_set_t *set_h, uint32_t *timeout_ms) {
    CM__REQUIRE(timeout_ms != NULL, "pass the address of a uint32_t", "timeout_ms is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    *timeout_ms = atomic_load_explicit(&set->timeout_ms, memory_order_relaxed);
    return CM_OK;
}

cm_status_t cm_device_set_usable(const cm_device_set_t *set_h, bool *usable) {
    CM__REQUIRE(usable != NULL, "pass the address of a bool", "usable is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    *usable = cm__set_broken(set) == CM_OK;
    return CM_OK;
}

/* ================================================================== peer access */

static cm_status_t cm__can_access(int from, int to, bool *can, const char *func) {
    if (from == to) {
        *can = true;
        return CM_OK;
    }
    /* CUDA routes by the ordinals: no context is made current, failures name device from */
    cm__scope_t sc;
    CM_TRY(cm__enter(from, 0, &sc));
    int c = 0;
    cudaError_t err = cm__cuda.device_can_access_peer(&c, from, to);
    cm_status_t s = CM_OK;
    if (err != cudaSuccess)
        s = cm__cuda_fail(err, __FILE__, __LINE__, "cudaDeviceCanAccessPeer(%d, %d) in %s", from,
                          to, func);
    cm__leave(&sc);
    if (s == CM_OK) *can = c != 0;
    return s;
}

cm_status_t cm_device_set_enable_peer_access(cm_device_set_t *set_h, int *pairs_enabled) {
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_usable_check(set, __func__));
    int pairs = 0;
    for (int i = 0; i < set->count; ++i) CM_TRY(cm__context_guard(set->ordinals[i]));
    for (int i = 0; i < set->count; ++i) {
        for (int j = i + 1; j < set->count; ++j) {
            struct cm__device *a = cm__device_obj(set->devs[i]);
            struct cm__device *b = cm__device_obj(set->devs[j]);
            CM__REQUIRE(a != NULL && b != NULL, "do not close the device objects of a set "
                        "(cm_device_set_device()): close the set", "a member's device object "
                        "was closed behind the set");
            CM_TRY(cm__peer_prepare(a, b));
            bool ij = false, ji = false;
            CM_TRY(cm__can_access(set->ordinals[i], set->ordinals[j], &ij, __func__));
            CM_TRY(cm__can_access(set->ordinals[j], set->ordinals[i], &ji, __func__));
            pairs += (int)ij + (int)ji;
        }
    }
    if (pairs_enabled != NULL) *pairs_enabled = pairs;
    return CM_OK;
}

/* One P2P attribute; -1 when CUDA cannot say (informational: the error is not kept). */
static int cm__p2p_attr(enum cudaDeviceP2PAttr attr, int from, int to) {
    cm__scope_t sc;
    if (cm__enter(from, 0, &sc) != CM_OK) return -1;
    int v = 0;
    cudaError_t err = cm__cuda.device_get_p2p_attribute(&v, attr, from, to);
    if (err != cudaSuccess) (void)cm__cuda.get_last_error();
    cm__leave(&sc);
    return err == cudaSuccess ? v : -1;
}

#define CM__PEER_MEASURE_BYTES ((size_t)64 << 20)
#define CM__PEER_MEASURE_REPS 5

static int cm__cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median bandwidth of copies src -> dst on stream (of src's device), GB/s. */
static cm_status_t cm__measure_copy(cm_device_t *dev, cm_stream_t *stream, cm_buffer_t *dst,
                                    cm_buffer_t *src, double *gbs) {
    cm_event_t *start = NULL, *stop = NULL;
    cm_status_t status = CM_OK;
    float ms[CM__PEER_MEASURE_REPS];
    CM_TRY_GOTO(cm_event_acquire(dev, CM_EVENT_TIMING, &start), status, out);
    CM_TRY_GOTO(cm_event_acquire(dev, CM_EVENT_TIMING, &stop), status, out);
    /* warm-up: the first copy of a pair sets up peer access and mappings */
    CM_TRY_GOTO(cm_buffer_copy(stream, dst, 0, src, 0, CM__PEER_MEASURE_BYTES), status,
                out);
    for (int r = 0; r < CM__PEER_MEASURE_REPS; ++r) {
        CM_TRY_GOTO(cm_event_record(start, stream), status, out);
        CM_TRY_GOTO(cm_buffer_copy(stream, dst, 0, src, 0, CM__PEER_MEASURE_BYTES),
                    status, out);
        CM_TRY_GOTO(cm_event_record(stop, stream), status, out);
        CM_TRY_GOTO(cm_event_synchronize(stop), status, out);
        CM_TRY_GOTO(cm_event_elapsed_ms(start, stop, &ms[r]), status, out);
    }
    qsort(ms, CM__PEER_MEASURE_REPS, sizeof ms[0], cm__cmp_float);
    {
        double t = (double)ms[CM__PEER_MEASURE_REPS / 2] * 1e-3;
        *gbs = t > 0.0 ? (double)CM__PEER_MEASURE_BYTES / t / 1e9 : 0.0;
    }
out:;
    cm_error_t detail = *cm_last_error();
    (void)cm_event_release(start);
    (void)cm_event_release(stop);
    if (status != CM_OK) *cm__detail() = detail;
    return status;
}

cm_status_t cm_device_set_peer_matrix(cm_device_set_t *set_h, unsigned flags,
                                      cm_peer_info_t *matrix, size_t entries) {
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_usable_check(set, __func__));
    CM__REQUIRE(matrix != NULL, "pass an array of count * count cm_peer_info_t",
                "matrix is NULL");
    CM__REQUIRE((flags & ~CM_PEER_MEASURE_BANDWIDTH) == 0u,
                "flags are 0 or CM_PEER_MEASURE_BANDWIDTH", "unknown flag bits 0x%x",
                flags & ~CM_PEER_MEASURE_BANDWIDTH);
    const int n = set->count;
    const size_t need = (size_t)n * (size_t)n;
    CM__REQUIRE(entries >= need, "pass an array of count * count entries",
                "matrix has %zu entries; a set of %d members needs %zu", entries, n, need);
    for (int i = 0; i < n; ++i) CM_TRY(cm__context_guard(set->ordinals[i]));
    cm_peer_info_t *m = calloc(need, sizeof *m);
    if (m == NULL) {
        return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, -1, "free host memory",
                        "cannot allocate %zu peer entries", need);
    }
    cm_status_t status = CM_OK;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            cm_peer_info_t *e = &m[(size_t)i * (size_t)n + (size_t)j];
            e->from_ordinal = set->ordinals[i];
            e->to_ordinal = set->ordinals[j];
            CM_TRY_GOTO(cm__can_access(e->from_ordinal, e->to_ordinal, &e->can_access, __func__),
                        status, out);
            if (i == j) {
                e->performance_rank = 0;
                e->native_atomics = true;
            } else if (e->can_access) {
                e->performance_rank = cm__p2p_attr(cudaDevP2PAttrPerformanceRank,
                                                   e->from_ordinal, e->to_ordinal);
                e->native_atomics = cm__p2p_attr(cudaDevP2PAttrNativeAtomicSupported,
                                                 e->from_ordinal, e->to_ordinal) == 1;
            } else {
                e->performance_rank = -1;
            }
        }
    }
    if (flags & CM_PEER_MEASURE_BANDWIDTH) {
        CM_TRY_GOTO(cm_device_set_enable_peer_access(set_h, NULL), status, out);
        cm_buffer_t *src[CM_DEVICE_SET_MAX], *dst[CM_DEVICE_SET_MAX];
        memset(src, 0, sizeof src);
        memset(dst, 0, sizeof dst);
        for (int k = 0; k < n && status == CM_OK; ++k) {
            status = cm_buffer_create_labeled(set->devs[k], CM__PEER_MEASURE_BYTES,
                                              "peer bandwidth source", &src[k]);
            if (status == CM_OK)
                status = cm_buffer_create_labeled(set->devs[k], CM__PEER_MEASURE_BYTES,
                                                  "peer bandwidth destination", &dst[k]);
            if (status == CM_OK) status = cm_buffer_set(NULL, src[k], 0, CM__PEER_MEASURE_BYTES, 0x5a);
        }
        for (int i = 0; i < n && status == CM_OK; ++i) {
            for (int j = 0; j < n && status == CM_OK; ++j) {
                cm_peer_info_t *e = &m[(size_t)i * (size_t)n + (size_t)j];
                status = cm__measure_copy(set->devs[i], set->streams[i], dst[j], src[i],
                                          &e->bandwidth_gbs);
            }
        }
        cm_error_t detail = *cm_last_error();
        for (int k = 0; k < n; ++k) {
            (void)cm__buffer_release(src[k], __func__);
            (void)cm__buffer_release(dst[k], __func__);
        }
        if (status != CM_OK) {
            *cm__detail() = detail;
            goto out;
        }
    }
    memcpy(matrix, m, need * sizeof *m);
out:
    free(m);
    return status;
}

cm_status_t cm_peer_matrix_format(const cm_peer_info_t *matrix, int count, char *buf,
                                  size_t size, size_t *length) {
    CM__REQUIRE(matrix != NULL, "pass the matrix of cm_device_set_peer_matrix()",
                "matrix is NULL");
    CM__REQUIRE(count >= 1 && count <= CM_DEVICE_SET_MAX, "count is the set's member count",
                "count is %d (1 .. %d)", count, CM_DEVICE_SET_MAX);
    CM__REQUIRE(buf != NULL || size == 0, "pass a buffer, or size 0 to measure the text",
                "buf is NULL but size is %zu", size);
    bool measured = false;
    for (size_t i = 0; i < (size_t)count * (size_t)count; ++i)
        measured = measured || matrix[i].bandwidth_gbs > 0.0;
    cm__text_t t = {buf, size, 0};
    if (buf != NULL && size > 0) buf[0] = '\0';
    cm__text_printf(&t, "peer access (row device reads and writes column device's memory%s):\n",
                    measured ? "; copy bandwidth GB/s, row memory to column memory" : "");
    const int w = measured ? 8 : 4;
    cm__text_printf(&t, "      ");
    for (int j = 0; j < count; ++j)
        cm__text_printf(&t, "%*d", w, matrix[j].to_ordinal);
    cm__text_printf(&t, "\n");
    for (int i = 0; i < count; ++i) {
        cm__text_printf(&t, "  %3d ", matrix[(size_t)i * (size_t)count].from_ordinal);
        for (int j = 0; j < count; ++j) {
            const cm_peer_info_t *e = &matrix[(size_t)i * (size_t)count + (size_t)j];
            if (measured) {
                cm__text_printf(&t, "  %c%5.0f", i == j ? '=' : e->can_access ? 'y' : '-',
                                e->bandwidth_gbs);
            } else {
                cm__text_printf(&t, "%*s", w, i == j ? "=" : e->can_access ? "y" : "-");
            }
        }
        cm__text_printf(&t, "\n");
    }
    cm__text_printf(&t, "  (= same device, y peer access, - staged through host memory)\n");
    if (length != NULL) *length = t.len;
    return CM_OK;
}

const char *cm_copy_path_name(cm_copy_path_t path) {
    switch (path) {
    case CM_COPY_SAME_DEVICE: return "same device";
    case CM_COPY_PEER: return "peer";
    case CM_COPY_STAGED_BY_HOST: return "staged through host";
    }
    return "unknown";
}

cm_status_t cm_buffer_copy_path(const cm_buffer_t *dst, const cm_buffer_t *src,
                                cm_copy_path_t *path) {
    CM__REQUIRE(path != NULL, "pass the address of a cm_copy_path_t", "path is NULL");
    CM_TRY(cm__buffer_live(dst, "dst", __func__));
    CM_TRY(cm__buffer_live(src, "src", __func__));
    cm_buffer_info_t di, si;
    CM_TRY(cm_buffer_info(dst, &di));
    CM_TRY(cm_buffer_info(src, &si));
    const int d = di.ordinal, s = si.ordinal;
    if (d == s) {
        *path = CM_COPY_SAME_DEVICE;
        return CM_OK;
    }
    bool a = false, b = false;
    CM_TRY(cm__can_access(d, s, &a, __func__));
    CM_TRY(cm__can_access(s, d, &b, __func__));
    *path = (a || b) ? CM_COPY_PEER : CM_COPY_STAGED_BY_HOST;
    return CM_OK;
}

/* ================================================================== split arithmetic */

cm_status_t cm_split_plan(size_t n, int parts, size_t granule, cm_split_part_t *out) {
    CM__REQUIRE(out != NULL, "pass an array of `parts` cm_split_part_t", "out is NULL");
    CM__REQUIRE(parts >= 1 && parts <= CM_DEVICE_SET_MAX, "split into 1 .. CM_DEVICE_SET_MAX parts",
                "parts is %d (1 .. %d)", parts, CM_DEVICE_SET_MAX);
    if (granule == 0) granule = 1;
    const size_t units = n / granule + (n % granule != 0);
    const size_t base = units / (size_t)parts, extra = units % (size_t)parts;
    size_t unit = 0; /* first unit of the part */
    for (int k = 0; k < parts; ++k) {
        const size_t u = base + ((size_t)k < extra ? 1u : 0u);
        /* unit * granule may pass n only at the last units: clamp (no overflow: unit <= units
         * and units * granule < n + granule) */
        size_t first = unit >= units ? n : unit * granule;
        size_t end = unit + u >= units ? n : (unit + u) * granule;
        if (first > n) first = n;
        if (end > n) end = n;
        out[k].first = first;
        out[k].count = end - first;
        unit += u;
    }
    return CM_OK;
}

/* ================================================================== split arrays */

static size_t cm__split_granule(size_t elem_bytes) {
    return (elem_bytes <= 256 && 256 % elem_bytes == 0) ? 256 / elem_bytes : 1;
}

cm_status_t cm_split_create_at(cm_device_set_t *set_h, size_t n, size_t elem_bytes,
                               cm_split_t **out, const char *file, int line) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_split_t * to receive the split",
                "out is NULL");
    struct cm__device_set *set;
    CM__GET(set, set_h, CM__KIND_DEVICE_SET, "set");
    CM_TRY(cm__set_usable_check(set, __func__));
    CM__REQUIRE(elem_bytes >= 1, "pass the size of one element (e.g. sizeof(float))",
                "elem_bytes is 0");
    CM__REQUIRE(n <= SIZE_MAX / elem_bytes, "split fewer elements",
                "%zu elements of %zu bytes overflow size_t", n, elem_bytes);
    struct cm__split *sp = calloc(1, sizeof *sp);
    if (sp == NULL) {
        return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, -1, "free host memory",
                        "cannot allocate the split handle (%zu bytes)", sizeof *sp);
    }
    sp->set_handle = set_h;
    sp->set = set;
    sp->n = n;
    sp->elem_bytes = elem_bytes;
    cm_status_t status = cm_split_plan(n, set->count, cm__split_granule(elem_bytes), sp->parts);
    for (int k = 0; k < set->count && status == CM_OK; ++k) {
        char label[48];
        snprintf(label, sizeof label, "split part %d/%d", k, set->count);
        status = cm_buffer_create_at(NULL, set->devs[k], sp->parts[k].count * elem_bytes,
                                     &sp->bufs[k], label, file, line);
    }
    if (status == CM_OK) {
        const cm__epitaph_t ep = {.file = file, .line = line, .device = set->ordinals[0],
                                  .bytes = (uint64_t)(n * elem_bytes)};
        sp->handle = cm__handle_new(CM__KIND_SPLIT, sp, &ep);
        if (sp->handle == NULL)
            status = CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, -1, "free host memory",
                              "cannot grow the handle table for the split");
    }
    if (status != CM_OK) {
        cm_error_t detail = *cm_last_error();
        for (int k = 0; k < set->count; ++k) (void)cm__buffer_release(sp->bufs[k], __func__);
        free(sp);
        *cm__detail() = detail;
        return status;
    }
    atomic_fetch_add_explicit(&set->n_splits, 1, memory_order_acq_rel);
    *out = (cm_split_t *)sp->handle;
    return CM_OK;
}

cm_status_t cm_split_destroy(cm_split_t *split_h) {
    if (split_h == NULL) return CM_OK;
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    /* cudaFree is refused while this thread captures a graph: refuse before anything is
     * released, as cm_buffer_destroy does, instead of losing the parts' memory */
    if (cm__thread_captures > 0) {
        return CM__FAIL(CM_ERROR_BUSY, split->set->ordinals[0],
                        "destroy the split once the capture has ended",
                        "a split's buffers cannot be freed while this thread captures a graph "
                        "(CUDA refuses cudaFree during a capture); the split is still alive");
    }
    (void)cm__handle_end(split_h, CM__KIND_SPLIT);
    struct cm__device_set *set = split->set;
    cm__first_t f;
    memset(&f, 0, sizeof f);
    /* released all the same after a fault (a lost member's buffers are freed host-side) */
    cm__first_note(&f, cm__set_sync_all(set));
    for (int k = 0; k < set->count; ++k)
        cm__first_note(&f, cm__buffer_release(split->bufs[k], __func__));
    atomic_fetch_sub_explicit(&set->n_splits, 1, memory_order_acq_rel);
    free(split);
    return cm__first_result(&f);
}

cm_status_t cm_split_info(const cm_split_t *split_h, size_t *n, size_t *elem_bytes,
                          cm_device_set_t **set) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    if (n != NULL) *n = split->n;
    if (elem_bytes != NULL) *elem_bytes = split->elem_bytes;
    if (set != NULL) *set = split->set_handle;
    return CM_OK;
}

cm_status_t cm_split_part(const cm_split_t *split_h, int index, cm_buffer_t **buf, size_t *first,
                          size_t *count) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__member_index(split->set, index, __func__));
    if (buf != NULL) *buf = split->bufs[index];
    if (first != NULL) *first = split->parts[index].first;
    if (count != NULL) *count = split->parts[index].count;
    return CM_OK;
}

/* n must be the split's length (a guard against a buffer of the wrong size). */
static cm_status_t cm__split_length(const struct cm__split *sp, size_t n, const char *func) {
    if (n == sp->n) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "pass the split's length, %zu elements (cm_split_info())", sp->n);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "n is %zu but the split holds %zu elements of %zu bytes; nothing was copied",
                    n, sp->n, sp->elem_bytes);
}

/* Queue fn's copy for every non-empty part, then wait for every member. */
typedef cm_status_t (*cm__part_copy_fn)(const struct cm__split *sp, int k, void *other, size_t extra);

static cm_status_t cm__split_copy_all(const struct cm__split *sp, cm__part_copy_fn fn, void *other,
                                      size_t extra) {
    cm__first_t f;
    memset(&f, 0, sizeof f);
    for (int k = 0; k < sp->set->count && f.status == CM_OK; ++k) {
        if (sp->parts[k].count == 0) continue;
        cm__first_note(&f, fn(sp, k, other, extra));
    }
    /* wait even after a failure: nothing may still read or write the caller's memory */
    cm__first_note(&f, cm__set_sync_all(sp->set));
    return cm__first_result(&f);
}

static cm_status_t cm__part_from_host(const struct cm__split *sp, int k, void *src, size_t extra) {
    (void)extra;
    const unsigned char *p = (const unsigned char *)src + sp->parts[k].first * sp->elem_bytes;
    return cm_buffer_copy_from_host(sp->set->streams[k], sp->bufs[k], 0, p,
                                    sp->parts[k].count * sp->elem_bytes);
}

static cm_status_t cm__part_to_host(const struct cm__split *sp, int k, void *dst, size_t extra) {
    (void)extra;
    unsigned char *p = (unsigned char *)dst + sp->parts[k].first * sp->elem_bytes;
    return cm_buffer_copy_to_host(sp->set->streams[k], sp->bufs[k], 0, p,
                                  sp->parts[k].count * sp->elem_bytes);
}

/* offset: the byte offset of the whole array in the other buffer */
static cm_status_t cm__part_from_buffer(const struct cm__split *sp, int k, void *src, size_t offset) {
    return cm_buffer_copy(sp->set->streams[k], sp->bufs[k], 0, (const cm_buffer_t *)src,
                          offset + sp->parts[k].first * sp->elem_bytes,
                          sp->parts[k].count * sp->elem_bytes);
}

static cm_status_t cm__part_to_buffer(const struct cm__split *sp, int k, void *dst, size_t offset) {
    return cm_buffer_copy(sp->set->streams[k], (cm_buffer_t *)dst,
                          offset + sp->parts[k].first * sp->elem_bytes, sp->bufs[k], 0,
                          sp->parts[k].count * sp->elem_bytes);
}

cm_status_t cm_split_scatter_from_host(cm_split_t *split_h, const void *src, size_t n) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__set_usable_check(split->set, __func__));
    CM__REQUIRE(src != NULL || n == 0, "pass host memory of n elements", "src is NULL but n is %zu",
                n);
    CM_TRY(cm__split_length(split, n, __func__));
    return cm__split_copy_all(split, cm__part_from_host, (void *)(uintptr_t)src, 0);
}

cm_status_t cm_split_gather_to_host(const cm_split_t *split_h, void *dst, size_t n) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__set_usable_check(split->set, __func__));
    CM__REQUIRE(dst != NULL || n == 0, "pass host memory of n elements", "dst is NULL but n is %zu",
                n);
    CM_TRY(cm__split_length(split, n, __func__));
    return cm__split_copy_all(split, cm__part_to_host, dst, 0);
}

/* A device buffer holding the split's sp->n elements from byte `offset` on (a multiple of the
 * element size), and not one of its parts. */
static cm_status_t cm__split_buffer_arg(const struct cm__split *sp, const cm_buffer_t *b,
                                        const char *arg, size_t offset, const char *func) {
    CM_TRY(cm__buffer_live(b, arg, func));
    for (int k = 0; k < sp->set->count; ++k) {
        if (sp->bufs[k] == b) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                            "copy through a buffer of your own", "%s is part %d of the split "
                            "itself; nothing was copied", arg, k);
        }
    }
    if (offset % sp->elem_bytes != 0) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "offsets count bytes: pass a multiple of the split's %zu-byte "
                 "element", sp->elem_bytes);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s offset %zu is not a multiple of the %zu-byte element; nothing was "
                        "copied", arg, offset, sp->elem_bytes);
    }
    cm_buffer_info_t info;
    CM_TRY(cm_buffer_info(b, &info));
    const size_t bytes = info.bytes, need = sp->n * sp->elem_bytes; /* sp->n * elem fits: allocated */
    if (offset <= bytes && need <= bytes - offset) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    if (offset > SIZE_MAX - need)
        snprintf(hint, sizeof hint, "%s must hold the split's %zu elements (%zu bytes) from byte "
                 "offset %zu: more than SIZE_MAX bytes; pass a smaller offset", arg, sp->n, need,
                 offset);
    else
        snprintf(hint, sizeof hint, "%s must hold the split's %zu elements (%zu bytes) from byte "
                 "offset %zu: at least %zu bytes", arg, sp->n, need, offset, offset + need);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "%s range out of bounds: offset %zu + %zu bytes (%zu elements of %zu bytes) "
                    "does not fit in its %zu bytes; nothing was copied", arg, offset, need, sp->n,
                    sp->elem_bytes, bytes);
}

cm_status_t cm_split_scatter(cm_split_t *split_h, const cm_buffer_t *src, size_t src_offset) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__set_usable_check(split->set, __func__));
    CM_TRY(cm__split_buffer_arg(split, src, "src", src_offset, __func__));
    return cm__split_copy_all(split, cm__part_from_buffer, (void *)(uintptr_t)src, src_offset);
}

cm_status_t cm_split_gather(const cm_split_t *split_h, cm_buffer_t *dst, size_t dst_offset) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__set_usable_check(split->set, __func__));
    CM_TRY(cm__split_buffer_arg(split, dst, "dst", dst_offset, __func__));
    return cm__split_copy_all(split, cm__part_to_buffer, dst, dst_offset);
}

/* ---------------------------------------------------------------- operands of split operations */

static cm_status_t cm__split_operand(const cm_split_t *h, const char *arg, size_t elem,
                                     const char *type, const char *func,
                                     const struct cm__split **out) {
    void *obj = NULL;
    CM_TRY(cm__handle_get(h, CM__KIND_SPLIT, arg, func, &obj));
    const struct cm__split *sp = obj;
    CM_TRY(cm__set_usable_check(sp->set, func));
    *out = sp;
    if (sp->elem_bytes == elem) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "%s works on %s elements (%zu bytes): create the split with "
             "elem_bytes %zu", func, type, elem, elem);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "%s has elements of %zu bytes, not %s (%zu bytes)", arg, sp->elem_bytes, type,
                    elem);
}

/* b has the layout of a (same set, length and element size: the same parts). */
static cm_status_t cm__split_same(const struct cm__split *a, const char *an, const struct cm__split *b,
                                  const char *bn, const char *func) {
    if (a->set == b->set && a->n == b->n && a->elem_bytes == b->elem_bytes) return CM_OK;
    if (a->set != b->set) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "operands of a split operation must live on one device set",
                        "%s and %s are splits of different device sets", an, bn);
    }
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "operands of a split operation need the same length and element size (so "
                    "the same parts)",
                    "%s has %zu elements of %zu bytes but %s has %zu elements of %zu bytes", an,
                    a->n, a->elem_bytes, bn, b->n, b->elem_bytes);
}

/* ---------------------------------------------------------------- vector operations */

/* CM__REQUIRE that records the failure under fn, the public name of the operation. */
#define CM__SPLIT_REQUIRE(fn, cond, hint, ...)                                                   \
    do {                                                                                         \
        if (!(cond))                                                                             \
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, (fn), (hint),     \
                            __VA_ARGS__);                                                        \
    } while (0)

enum { CM__SV_ADD, CM__SV_AXPY, CM__SV_SCALE, CM__SV_FILL, CM__SV_COPY };

static cm_status_t cm__split_vector(int op, bool f64, double alpha, float alpha32,
                                    cm_split_t *out_h, const cm_split_t *a_h,
                                    const cm_split_t *b_h, const char *func) {
    const size_t elem = f64 ? 8 : 4;
    const char *type = f64 ? "double" : "float";
    const char *out_name = op == CM__SV_AXPY ? "y" : "out";
    const char *a_name = op == CM__SV_ADD ? "a" : "x";
    const struct cm__split *out = NULL, *a = NULL, *b = NULL;
    CM_TRY(cm__split_operand(out_h, out_name, elem, type, func, &out));
    if (a_h != NULL || op != CM__SV_FILL) {
        CM_TRY(cm__split_operand(a_h, a_name, elem, type, func, &a));
        CM_TRY(cm__split_same(out, out_name, a, a_name, func));
    }
    if (op == CM__SV_ADD) {
        CM_TRY(cm__split_operand(b_h, "b", elem, type, func, &b));
        CM_TRY(cm__split_same(out, out_name, b, "b", func));
    }
    struct cm__device_set *set = out->set;
    for (int k = 0; k < set->count; ++k) {
        const size_t cnt = out->parts[k].count;
        if (cnt == 0) continue;
        cm_stream_t *s = set->streams[k];
        cm_buffer_t *o = out->bufs[k];
        const cm_buffer_t *pa = a != NULL ? a->bufs[k] : NULL;
        cm_status_t st = CM_OK;
        switch (op) {
        case CM__SV_ADD:
            st = f64 ? cm_vector_add_f64(s, o, 0, pa, 0, b->bufs[k], 0, cnt)
                     : cm_vector_add_f32(s, o, 0, pa, 0, b->bufs[k], 0, cnt);
            break;
        case CM__SV_AXPY:
            st = f64 ? cm_vector_axpy_f64(s, alpha, pa, 0, o, 0, cnt)
                     : cm_vector_axpy_f32(s, alpha32, pa, 0, o, 0, cnt);
            break;
        case CM__SV_SCALE:
            st = f64 ? cm_vector_scale_f64(s, alpha, o, 0, pa, 0, cnt)
                     : cm_vector_scale_f32(s, alpha32, o, 0, pa, 0, cnt);
            break;
        case CM__SV_COPY:
            st = f64 ? cm_vector_copy_f64(s, o, 0, pa, 0, cnt) : cm_vector_copy_f32(s, o, 0, pa, 0, cnt);
            break;
        default:
            st = f64 ? cm_vector_fill_f64(s, o, 0, alpha, cnt)
                     : cm_vector_fill_f32(s, o, 0, alpha32, cnt);
            break;
        }
        if (st != CM_OK) {
            cm_error_t *e = cm__detail();
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (part %d of %s, device %d)", k, func, set->ordinals[k]);
            return st;
        }
    }
    return CM_OK;
}

/* ---------------------------------------------------------------- reductions */

/*
 * Queue the partial reduction of every non-empty part, wait for every member, and copy each
 * part's raw partial into partial[k] (16 bytes); present[k] tells which parts had elements.
 */
static cm_status_t cm__split_partials(int op, int dtype, const cm_split_t *x_h,
                                      const cm_split_t *y_h, const char *func,
                                      unsigned char (*partial)[16], bool *present,
                                      const struct cm__split **x_out) {
    const size_t elem = dtype == CM__DT_F64 ? 8 : 4;
    const char *type = dtype == CM__DT_F64 ? "double" : dtype == CM__DT_F32 ? "float" : "int32_t";
    const struct cm__split *x = NULL, *y = NULL;
    CM_TRY(cm__split_operand(x_h, "x", elem, type, func, &x));
    if (op == CM__ROP_DOT) {
        CM_TRY(cm__split_operand(y_h, "y", elem, type, func, &y));
        CM_TRY(cm__split_same(x, "x", y, "y", func));
    }
    *x_out = x;
    struct cm__device_set *set = x->set;
    cm__first_t f;
    memset(&f, 0, sizeof f);
    for (int k = 0; k < set->count; ++k) {
        present[k] = x->parts[k].count > 0;
        if (!present[k] || f.status != CM_OK) continue;
        cm_status_t st = cm__reduce_partial(op, dtype, set->streams[k], x->bufs[k], 0,
                                            y != NULL ? y->bufs[k] : NULL, 0, x->parts[k].count,
                                            set->slots + (size_t)k * CM__SET_SLOT_BYTES, func);
        if (st != CM_OK) {
            cm_error_t *e = cm__detail();
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (part %d, device %d)", k, set->ordinals[k]);
        }
        cm__first_note(&f, st);
    }
    cm__first_note(&f, cm__set_sync_all(set));
    if (f.status != CM_OK) return cm__first_result(&f);
    for (int k = 0; k < set->count; ++k)
        if (present[k]) memcpy(partial[k], set->slots + (size_t)k * CM__SET_SLOT_BYTES, 16);
    return CM_OK;
}

#define CM__SPLIT_PARTIALS(op, dtype, x, y)                                                     \
    unsigned char partial[CM_DEVICE_SET_MAX][16];                                               \
    bool present[CM_DEVICE_SET_MAX];                                                             \
    const struct cm__split *xo = NULL;                                                          \
    CM_TRY(cm__split_partials((op), (dtype), (x), (y), cm__split_fn, partial, present, &xo));   \
    const int parts = xo->set->count

static cm_status_t cm__split_sum_double(int op, int dtype, const cm_split_t *x,
                                        const cm_split_t *y, double *out, const char *func) {
    unsigned char partial[CM_DEVICE_SET_MAX][16];
    bool present[CM_DEVICE_SET_MAX];
    const struct cm__split *xo = NULL;
    CM_TRY(cm__split_partials(op, dtype, x, y, func, partial, present, &xo));
    double acc = 0.0; /* member order: the same bits every run */
    for (int k = 0; k < xo->set->count; ++k) {
        if (!present[k]) continue;
        double p;
        memcpy(&p, partial[k], sizeof p);
        acc += p;
    }
    *out = acc;
    return CM_OK;
}

static cm_status_t cm__split_sum_f32(const cm_split_t *x, float *out) {
    CM__SPLIT_REQUIRE("cm_split_sum_f32", out != NULL, "pass the address of a float for the result",
                      "out is NULL");
    double acc = 0.0;
    CM_TRY(cm__split_sum_double(CM__ROP_SUM, CM__DT_F32, x, NULL, &acc, "cm_split_sum_f32"));
    *out = (float)acc;
    return CM_OK;
}

static cm_status_t cm__split_sum_f64(const cm_split_t *x, double *out) {
    CM__SPLIT_REQUIRE("cm_split_sum_f64", out != NULL, "pass the address of a double for the result",
                      "out is NULL");
    return cm__split_sum_double(CM__ROP_SUM, CM__DT_F64, x, NULL, out, "cm_split_sum_f64");
}

static cm_status_t cm__split_dot_f32(const cm_split_t *x, const cm_split_t *y, float *out) {
    CM__SPLIT_REQUIRE("cm_split_dot_f32", out != NULL, "pass the address of a float for the result",
                      "out is NULL");
    double acc = 0.0;
    CM_TRY(cm__split_sum_double(CM__ROP_DOT, CM__DT_F32, x, y, &acc, "cm_split_dot_f32"));
    *out = (float)acc;
    return CM_OK;
}

static cm_status_t cm__split_dot_f64(const cm_split_t *x, const cm_split_t *y, double *out) {
    CM__SPLIT_REQUIRE("cm_split_dot_f64", out != NULL, "pass the address of a double for the result",
                      "out is NULL");
    return cm__split_sum_double(CM__ROP_DOT, CM__DT_F64, x, y, out, "cm_split_dot_f64");
}

static cm_status_t cm__split_sum_i32(const cm_split_t *x, int64_t *out) {
    const char *cm__split_fn = "cm_split_sum_i32";
    CM__SPLIT_REQUIRE(cm__split_fn, out != NULL, "pass the address of an int64_t for the result",
                      "out is NULL");
    CM__SPLIT_PARTIALS(CM__ROP_SUM, CM__DT_I32, x, NULL);
    uint64_t acc = 0; /* wraps like the kernel's int64 */
    for (int k = 0; k < parts; ++k) {
        if (!present[k]) continue;
        int64_t p;
        memcpy(&p, partial[k], sizeof p);
        acc += (uint64_t)p;
    }
    memcpy(out, &acc, sizeof acc);
    return CM_OK;
}

/* min / max of the parts: NaN wins (the first one), else the extreme (the first on ties). */
#define CM__SPLIT_EXT(name, T, dtype, op, MAX, IDENT, NANCHECK)                                   \
    static cm_status_t cm__split_##name(const cm_split_t *x, T *out) {                            \
        const char *cm__split_fn = "cm_split_" #name;                                           \
        CM__SPLIT_REQUIRE(cm__split_fn, out != NULL,                                            \
                          "pass the address of a " #T " for the result", "out is NULL");        \
        CM__SPLIT_PARTIALS(op, dtype, x, NULL);                                                  \
        T acc = (IDENT);                                                                         \
        bool nan_seen = false;                                                                   \
        for (int k = 0; k < parts && !nan_seen; ++k) {                                           \
            if (!present[k]) continue;                                                           \
            T p;                                                                                 \
            memcpy(&p, partial[k], sizeof p);                                                    \
            if (NANCHECK(p)) {                                                                   \
                acc = p;                                                                         \
                nan_seen = true;                                                                 \
            } else if ((MAX) ? p > acc : p < acc) {                                              \
                acc = p;                                                                         \
            }                                                                                    \
        }                                                                                        \
        *out = acc;                                                                              \
        return CM_OK;                                                                            \
    }

#define CM__ISNAN(v) isnan(v)
#define CM__NEVER(v) ((void)(v), false)

CM__SPLIT_EXT(min_f32, float, CM__DT_F32, CM__ROP_MIN, false, (float)INFINITY, CM__ISNAN)
CM__SPLIT_EXT(max_f32, float, CM__DT_F32, CM__ROP_MAX, true, -(float)INFINITY, CM__ISNAN)
CM__SPLIT_EXT(min_f64, double, CM__DT_F64, CM__ROP_MIN, false, (double)INFINITY, CM__ISNAN)
CM__SPLIT_EXT(max_f64, double, CM__DT_F64, CM__ROP_MAX, true, -(double)INFINITY, CM__ISNAN)
CM__SPLIT_EXT(min_i32, int32_t, CM__DT_I32, CM__ROP_MIN, false, INT32_MAX, CM__NEVER)
CM__SPLIT_EXT(max_i32, int32_t, CM__DT_I32, CM__ROP_MAX, true, INT32_MIN, CM__NEVER)

/* argmin / argmax: each part's (index, value) with its offset added; the first NaN wins, else
 * the strict extreme (ties keep the earlier part, whose indices are smaller). */
#define CM__SPLIT_ARG(name, T, dtype, op, MAX, IDENT)                                            \
    static cm_status_t cm__split_##name(const cm_split_t *x, uint64_t *index, T *value) {       \
        const char *cm__split_fn = "cm_split_" #name;                                           \
        CM__SPLIT_REQUIRE(cm__split_fn, index != NULL,                                          \
                          "pass the address of a uint64_t for the index",                       \
                    "index is NULL");                                                           \
        CM__SPLIT_PARTIALS(op, dtype, x, NULL);                                                 \
        uint64_t best = CM_REDUCE_NO_INDEX;                                                     \
        T bv = (IDENT);                                                                         \
        for (int k = 0; k < parts; ++k) {                                                       \
            if (!present[k]) continue;                                                          \
            uint64_t i;                                                                         \
            T v;                                                                                \
            memcpy(&i, partial[k], sizeof i);                                                   \
            memcpy(&v, partial[k] + 8, sizeof v);                                               \
            if (i == CM_REDUCE_NO_INDEX) continue;                                              \
            i += (uint64_t)xo->parts[k].first;                                                 \
            if (best == CM_REDUCE_NO_INDEX) {                                                   \
                best = i;                                                                       \
                bv = v;                                                                         \
                if (isnan(v)) break;                                                            \
                continue;                                                                       \
            }                                                                                   \
            if (isnan(v)) {                                                                     \
                best = i;                                                                       \
                bv = v;                                                                         \
                break;                                                                          \
            }                                                                                   \
            if ((MAX) ? v > bv : v < bv) {                                                      \
                best = i;                                                                       \
                bv = v;                                                                         \
            }                                                                                   \
        }                                                                                       \
        *index = best;                                                                          \
        if (value != NULL) *value = bv;                                                         \
        return CM_OK;                                                                           \
    }

CM__SPLIT_ARG(argmin_f32, float, CM__DT_F32, CM__ROP_ARGMIN, false, (float)INFINITY)
CM__SPLIT_ARG(argmax_f32, float, CM__DT_F32, CM__ROP_ARGMAX, true, -(float)INFINITY)
CM__SPLIT_ARG(argmin_f64, double, CM__DT_F64, CM__ROP_ARGMIN, false, (double)INFINITY)
CM__SPLIT_ARG(argmax_f64, double, CM__DT_F64, CM__ROP_ARGMAX, true, -(double)INFINITY)

/* ---------------------------------------------------------------- the enum forms */

static cm_status_t cm__split_type_error(const char *opname, cm_dtype_t dtype, bool int_ok) {
    const char *types = int_ok ? "CM_DTYPE_F32, CM_DTYPE_F64 or CM_DTYPE_I32"
                               : "CM_DTYPE_F32 or CM_DTYPE_F64";
    return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, int_ok ? "pass CM_DTYPE_F32, CM_DTYPE_F64 or "
                    "CM_DTYPE_I32" : "pass CM_DTYPE_F32 or CM_DTYPE_F64",
                    "%s is not available for %s on splits: it takes %s", opname,
                    cm__dtype_text(dtype), types);
}

cm_status_t cm_split_vector(cm_vector_op_t op, cm_dtype_t dtype, const void *alpha,
                            cm_split_t *out, const cm_split_t *x, const cm_split_t *y) {
    /* the typed forms' names, so that a message names the call the user wrote */
    static const char *const funcs[5][2] = {
        {"cm_split_add_f32", "cm_split_add_f64"},     {"cm_split_axpy_f32", "cm_split_axpy_f64"},
        {"cm_split_scale_f32", "cm_split_scale_f64"}, {"cm_split_fill_f32", "cm_split_fill_f64"},
        {"cm_split_copy_f32", "cm_split_copy_f64"}};
    static const int svop[5] = {CM__SV_ADD, CM__SV_AXPY, CM__SV_SCALE, CM__SV_FILL, CM__SV_COPY};
    if ((unsigned)op > CM_VECTOR_COPY) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass CM_VECTOR_ADD, _AXPY, _SCALE, _FILL or _COPY",
                        "op %d is not a cm_vector_op_t", (int)op);
    }
    const char *opname = cm__vector_op_text(op);
    if (dtype != CM_DTYPE_F32 && dtype != CM_DTYPE_F64)
        return cm__split_type_error(opname, dtype, false);
    const bool f64 = dtype == CM_DTYPE_F64;
    const char *func = funcs[op][f64];
    const bool reads_alpha = op == CM_VECTOR_AXPY || op == CM_VECTOR_SCALE || op == CM_VECTOR_FILL;
    if (reads_alpha && alpha == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        f64 ? "pass the address of a double" : "pass the address of a float",
                        "%s reads *alpha, but alpha is NULL", opname);
    }
    if (!reads_alpha) CM_TRY(cm__unread_operand(alpha, "alpha", opname, func));
    if (op == CM_VECTOR_FILL) CM_TRY(cm__unread_operand(x, "x", opname, func));
    if (op != CM_VECTOR_ADD && op != CM_VECTOR_AXPY) CM_TRY(cm__unread_operand(y, "y", opname, func));
    /* the split form of axpy works in place: out is y */
    if (op == CM_VECTOR_AXPY && out != y) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the same split as out and y (y = alpha x + y, in place)",
                        "CM_VECTOR_AXPY on splits writes y: out must be y");
    }
    /* the scalar is read with its own type: a float (NaN payloads included) stays as it is */
    double a64 = 0.0;
    float a32 = 0.0f;
    if (reads_alpha) {
        if (f64) memcpy(&a64, alpha, sizeof a64);
        else memcpy(&a32, alpha, sizeof a32);
    }
    return cm__split_vector(svop[op], f64, a64, a32, out, x, op == CM_VECTOR_ADD ? y : NULL, func);
}

cm_status_t cm_split_reduce(cm_reduce_op_t op, cm_dtype_t dtype, const cm_split_t *x,
                            const cm_split_t *y, void *result, void *value) {
    if ((unsigned)op > CM_REDUCE_DOT) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass CM_REDUCE_SUM, _MIN, _MAX, _ARGMIN, _ARGMAX or _DOT",
                        "op %d is not a cm_reduce_op_t", (int)op);
    }
    const bool int_ok = op == CM_REDUCE_SUM || op == CM_REDUCE_MIN || op == CM_REDUCE_MAX;
    if (dtype != CM_DTYPE_F32 && dtype != CM_DTYPE_F64 && !(int_ok && dtype == CM_DTYPE_I32))
        return cm__split_type_error(cm__reduce_op_text(op), dtype, int_ok);
    if (op != CM_REDUCE_DOT) CM_TRY(cm__unread_operand(y, "y", cm__reduce_op_text(op), __func__));
    if (value != NULL && op != CM_REDUCE_ARGMIN && op != CM_REDUCE_ARGMAX) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass NULL for value: only argmin and argmax report an element there",
                        "value is not NULL");
    }
    const int t = dtype == CM_DTYPE_F32 ? 0 : dtype == CM_DTYPE_F64 ? 1 : 2;
    switch (op) {
    case CM_REDUCE_SUM:
        return t == 0 ? cm__split_sum_f32(x, result)
               : t == 1 ? cm__split_sum_f64(x, result) : cm__split_sum_i32(x, result);
    case CM_REDUCE_MIN:
        return t == 0 ? cm__split_min_f32(x, result)
               : t == 1 ? cm__split_min_f64(x, result) : cm__split_min_i32(x, result);
    case CM_REDUCE_MAX:
        return t == 0 ? cm__split_max_f32(x, result)
               : t == 1 ? cm__split_max_f64(x, result) : cm__split_max_i32(x, result);
    case CM_REDUCE_ARGMIN:
        return t == 0 ? cm__split_argmin_f32(x, result, value) : cm__split_argmin_f64(x, result, value);
    case CM_REDUCE_ARGMAX:
        return t == 0 ? cm__split_argmax_f32(x, result, value) : cm__split_argmax_f64(x, result, value);
    case CM_REDUCE_DOT:
        return t == 0 ? cm__split_dot_f32(x, y, result) : cm__split_dot_f64(x, y, result);
    }
    return CM_OK;
}

/* ---------------------------------------------------------------- your own work */

cm_status_t cm_split_for_each(cm_split_t *split_h, cm_split_part_fn_t fn, void *user) {
    struct cm__split *split;
    CM__GET(split, split_h, CM__KIND_SPLIT, "split");
    CM_TRY(cm__set_usable_check(split->set, __func__));
    CM__REQUIRE(fn != NULL, "pass the function to run on each part", "fn is NULL");
    struct cm__device_set *set = split->set;
    for (int k = 0; k < set->count; ++k) {
        CM_TRY(cm__context_guard(set->ordinals[k]));
        /* fn runs with the member's context current; the scope's end gives the caller back
         * exactly the context state it had */
        cm__scope_t sc;
        CM_TRY(cm__enter(set->ordinals[k], 1, &sc));
        cm_status_t st = fn(user, k, set->streams[k], split->bufs[k], split->parts[k].first,
                            split->parts[k].count);
        cm__leave(&sc);
        if (st != CM_OK) return st;
    }
    return CM_OK;
}
