/*
 * What the compute module (src/compute/) offers the modules above it (multi/). Not installed.
 */
#ifndef CUDAMODEL_SRC_COMPUTE_INTERNAL_H
#define CUDAMODEL_SRC_COMPUTE_INTERNAL_H

#include <stddef.h>

#include <cudamodel/buffer.h>
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

#endif /* CUDAMODEL_SRC_COMPUTE_INTERNAL_H */
