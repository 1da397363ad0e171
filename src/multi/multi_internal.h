/*
 * Private parts of the multi-GPU module (multi.h): the device set, split array and
 * communicator structs shared by src/multi.c and src/collectives.c, their handle registry, and
 * the partial reductions of src/kernels_api.c. Not installed.
 *
 * Locking: one process-wide mutex in multi.c guards the registry of set, split and communicator
 * handles (and each set's split and communicator counts). It is never held while calling into
 * another module.
 */
#ifndef CUDAMODEL_SRC_MULTI_INTERNAL_H
#define CUDAMODEL_SRC_MULTI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cudamodel/multi.h>

#include "../core/internal.h"

#define CM__MAGIC_SET 0x43534554u   /* "CSET" */
#define CM__MAGIC_SPLIT 0x43535054u /* "CSPT" */
#define CM__MAGIC_COMM 0x43434f4du  /* "CCOM" */

/** Bytes of each member's pinned result slot (a partial reduction: at most 16 bytes). */
#define CM__SET_SLOT_BYTES 64u

typedef enum cm__multi_kind {
    CM__MULTI_SET = 1,
    CM__MULTI_SPLIT = 2,
    CM__MULTI_COMM = 3
} cm__multi_kind_t;

struct cm_device_set {
    uint32_t magic;
    int count;
    int ordinals[CM_DEVICE_SET_MAX];
    cm_device_t *devs[CM_DEVICE_SET_MAX];
    cm_stream_t *streams[CM_DEVICE_SET_MAX];
    cudaStream_t cuda_streams[CM_DEVICE_SET_MAX];
    unsigned char *slots;  /* pinned (portable), count * CM__SET_SLOT_BYTES */
    /* under the registry lock */
    int n_splits;
    int n_comms;
};

struct cm_split {
    uint32_t magic;
    struct cm_device_set *set;
    size_t n;
    size_t elem_bytes;
    cm_split_part_t parts[CM_DEVICE_SET_MAX];
    cm_buffer_t *bufs[CM_DEVICE_SET_MAX];
};

/** Register a new handle (h starts with its magic); false when host memory runs out. */
bool cm__multi_register(void *h, cm__multi_kind_t kind);
/** Remove a handle from the registry (before it is freed). */
void cm__multi_unregister(void *h);
/**
 * Check that h is a live handle of kind; record CM_ERROR_INVALID_ARGUMENT naming arg and func
 * otherwise ("NULL", "closed or destroyed, or not a ... handle").
 */
cm_status_t cm__multi_check(const void *h, cm__multi_kind_t kind, const char *arg,
                            const char *func);

/** Count a communicator of set alive (+1) or gone (-1); under the registry lock. */
void cm__set_comm_count(struct cm_device_set *set, int delta);

/** The calling thread's current device (through the hooks), -1 when it cannot be read. */
int cm__current_device(void);
/** Make ordinal current if it is not (through the hooks); never fails silently. */
cm_status_t cm__make_current(int ordinal, const char *func);

/** Record CM_ERROR_NOT_SUPPORTED: "not built: <func> needs NCCL..." with how to build it with
 *  NCCL (collectives.c; defined in every build so that host tests can read the message). */
cm_status_t cm__nccl_not_built(const char *func);

/**
 * Queue reduction op (CM__ROP_*) on dtype (CM__DT_*) of n elements of x (and y for DOT) on
 * stream, and the copy of its raw partial (CM__REDUCE_STORE_RAW, kernels/kernels.h) into
 * pinned_slot (pinned host memory, 8-byte aligned, at least 16 bytes), readable once the stream
 * is synchronized. Checks every operand like the public reductions (src/kernels_api.c).
 */
cm_status_t cm__reduce_partial(int op, int dtype, cm_stream_t *stream, const cm_buffer_t *x,
                               size_t x_offset, const cm_buffer_t *y, size_t y_offset, size_t n,
                               void *pinned_slot, const char *func);

#endif /* CUDAMODEL_SRC_MULTI_INTERNAL_H */
