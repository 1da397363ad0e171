/*
 * What the compute module (src/compute/) offers the modules above it (multi/). Not installed.
 */
#ifndef CUDAMODEL_SRC_COMPUTE_INTERNAL_H
#define CUDAMODEL_SRC_COMPUTE_INTERNAL_H

#include <stddef.h>

#include <cudamodel/buffer.h>
#include <cudamodel/kernels.h>
#include <cudamodel/stream.h>

/**
 * Queue reduction op (CM__ROP_*) on dtype (CM__DT_*) of n elements of x (and y for DOT) on
 * stream, and the copy of its raw partial (CM__REDUCE_STORE_RAW, kernels/kernels.h) into
 * pinned_slot (pinned host memory, 8-byte aligned, at least 16 bytes), readable once the stream
 * is synchronized. Checks every operand like the public reductions (src/compute/kernels_api.c).
 */
cm_status_t cm__reduce_partial(int op, int dtype, cm_stream_t *stream, const cm_buffer_t *x,
                               size_t x_offset, const cm_buffer_t *y, size_t y_offset, size_t n,
                               void *pinned_slot, const char *func);

/* Names for messages, shared with the split forms (multi/): "CM_DTYPE_F32", "CM_VECTOR_AXPY",
 * "CM_REDUCE_DOT" (a fixed text for a value outside the enum). */
const char *cm__dtype_text(cm_dtype_t dtype);
const char *cm__vector_op_text(cm_vector_op_t op);
const char *cm__reduce_op_text(cm_reduce_op_t op);

/** An operand an operation does not read must be NULL: CM_OK for NULL, else the failure (recorded
 *  under func) that names the operation and the operand. */
cm_status_t cm__unread_operand(const void *p, const char *arg, const char *opname,
                               const char *func);

/** A byte offset of the public API (every header counts offsets in bytes) as an element index:
 *  CM_OK with *elems = offset / elem, or CM_ERROR_INVALID_ARGUMENT naming arg when offset is
 *  not a multiple of elem (recorded under func). */
cm_status_t cm__elem_offset(size_t offset, size_t elem, const char *arg, const char *func,
                            size_t *elems);

/** The end of a synchronous operation (NULL stream): wait for the legacy default stream of the
 *  device whose scope is entered; a fault is recorded as func's. */
cm_status_t cm__finish_sync(const char *func);

#endif /* CUDAMODEL_SRC_COMPUTE_INTERNAL_H */
