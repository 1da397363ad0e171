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
