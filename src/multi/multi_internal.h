/*
 * Private parts of the multi-GPU module (multi.h): the device set and split array objects
 * shared by src/multi/multi.c and src/multi/collectives.c, and the partial reductions of
 * src/compute/kernels_api.c. Not installed.
 *
 * Sets (CM__KIND_DEVICE_SET), splits (CM__KIND_SPLIT) and communicators (CM__KIND_COMM) are
 * handle values of the one handle table (core/handle.h): every entry point looks its handles
 * up, and a destroyed one is reported as stale forever. The objects hold the handle VALUES of
 * their device objects, streams and buffers and use them through the public API.
 *
 * Layering inside the module: collectives.c uses this header and nothing defined in multi.c; a
 * set only counts its communicators (cm__set_comms_add) so that cm_device_set_close() can refuse
 * while one lives (multi.h), and never calls into collectives.c.
 */
#ifndef CUDAMODEL_SRC_MULTI_INTERNAL_H
#define CUDAMODEL_SRC_MULTI_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudamodel/multi.h>

#include "../core/handle.h"
#include "../compute/compute_internal.h"
#include "../core/internal.h"

/** Bytes of each member's pinned result slot (a partial reduction: at most 16 bytes). */
#define CM__SET_SLOT_BYTES 64u

/** The object of a cm_device_set_t handle. */
struct cm__device_set {
    void *handle;                             /* this object's handle value */
    int count;
    int ordinals[CM_DEVICE_SET_MAX];
    cm_device_t *devs[CM_DEVICE_SET_MAX];     /* handle values, owned by the set */
    cm_stream_t *streams[CM_DEVICE_SET_MAX];  /* handle values, owned by the set */
    cudaStream_t cuda_streams[CM_DEVICE_SET_MAX];
    unsigned char *slots;  /* pinned (portable, first member's context), count * SLOT_BYTES */
    /* live split arrays and communicators of the set: close refuses while either is > 0 */
    _Atomic int n_splits;
    _Atomic int n_comms;
    /* collective timeout in ms (0: none), read by the set's communicators at every wait */
    _Atomic uint32_t timeout_ms;
    /* 0 while usable; the status of the aborted collective that made the set unusable, stored
     * (release) after broken_detail was written once */
    _Atomic int broken;
    cm_error_t broken_detail;
};

/** The object of a cm_split_t handle. */
struct cm__split {
    void *handle;                             /* this object's handle value */
    cm_device_set_t *set_handle;              /* the set's handle value (cm_split_info) */
    struct cm__device_set *set;               /* lives while the split does (close refuses) */
    size_t n;
    size_t elem_bytes;
    cm_split_part_t parts[CM_DEVICE_SET_MAX];
    cm_buffer_t *bufs[CM_DEVICE_SET_MAX];     /* handle values, owned by the split */
};

/** The object of a live set handle, or NULL (nothing recorded). */
static inline struct cm__device_set *cm__set_obj(const cm_device_set_t *h) {
    return (struct cm__device_set *)cm__handle_obj(h, CM__KIND_DEVICE_SET);
}

/** Count a communicator of set alive (+1) or gone (-1). */
static inline void cm__set_comms_add(struct cm__device_set *set, int delta) {
    atomic_fetch_add_explicit(&set->n_comms, delta, memory_order_acq_rel);
}

/* ---------------------------------------------------------------- bounded waits (wait.c) */

/** The collective timeout a new set or rank communicator starts with: CUDAMODEL_COLLECTIVE_
 *  TIMEOUT_MS when it holds a decimal number of milliseconds, else the default of multi.h. */
uint32_t cm__collective_timeout_default(void);

/** Called once per polling round of cm__wait_streams(): CM_OK to go on, or a recorded failure
 *  that ends the wait with that status. */
typedef cm_status_t (*cm__wait_check_fn)(void *user);

/**
 * Wait until streams[0..n) (of devices ordinals[0..n)) are all idle, polling cudaStreamQuery
 * (cm_stream_query) with a backoff from 20 us to 1 ms, for at most timeout_ms (0: no limit).
 * check, when not NULL, runs every round (after the queries) and once more when all are idle.
 * Returns CM_OK; the recorded failure of a query (a fault, a lost context: *failed_index gets
 * the stream's index) or of check; CM_ERROR_BUSY recorded with a plain message when the time
 * ran out (*pending_index gets the first stream still busy; callers write the full message).
 * pending_index and failed_index may be NULL; they are -1 unless set as above.
 */
cm_status_t cm__wait_streams(cm_stream_t *const *streams, const int *ordinals, int n,
                             uint32_t timeout_ms, cm__wait_check_fn check, void *user,
                             int *pending_index, int *failed_index);

/* ---------------------------------------------------------------- unusable sets */

/** Text of the hint of every refusal by an unusable set or aborted communicator (the public
 *  names live here so that multi.c and collectives.c share them without naming each other). */
#define CM__HINT_UNUSABLE                                                                     \
    "an aborted collective made this set unusable (its communicators' ranks were aborted): "  \
    "destroy its communicators (cm_comm_destroy()) and splits (cm_split_destroy()), close it "\
    "(cm_device_set_close()), then open a new set and make new communicators on every rank"

/** Make set unusable with status and detail (the first cause is kept). */
static inline void cm__set_break(struct cm__device_set *set, cm_status_t status,
                                 const cm_error_t *detail) {
    if (atomic_load_explicit(&set->broken, memory_order_acquire) != 0) return;
    set->broken_detail = *detail;
    atomic_store_explicit(&set->broken, (int)status, memory_order_release);
}

/** CM_ERROR_... the set was made unusable with, or CM_OK. */
static inline cm_status_t cm__set_broken(const struct cm__device_set *set) {
    return (cm_status_t)atomic_load_explicit(&set->broken, memory_order_acquire);
}

/** CM_OK while set is usable; else records its cause again for func and returns its status. */
static inline cm_status_t cm__set_usable_check(const struct cm__device_set *set,
                                               const char *func) {
    cm_status_t s = cm__set_broken(set);
    if (s == CM_OK) return CM_OK;
    return cm__fail(s, set->broken_detail.device, __FILE__, __LINE__, func, CM__HINT_UNUSABLE,
                    "%s refused: the device set is unusable since an earlier collective was "
                    "aborted: %s", func, set->broken_detail.message);
}

/** Record CM_ERROR_NOT_SUPPORTED: "not built: <func> needs NCCL..." with how to build it with
 *  NCCL (collectives.c; defined in every build so that host tests can read the message). */
cm_status_t cm__nccl_not_built(const char *func);

/* NCCL versions (collectives.c), read by cm_version_info() (diag). None records a failure. */

/** Whether this libcudamodel was built with NCCL (the collectives work). */
bool cm__nccl_built(void);
/** NCCL_VERSION_CODE the library was built against (e.g. 22809 for 2.28.9), 0 without NCCL. */
int cm__nccl_version_built(void);
/** ncclGetVersion of the NCCL library loaded; 0 when built without NCCL or when it fails. */
int cm__nccl_version(void);


#endif /* CUDAMODEL_SRC_MULTI_INTERNAL_H */
