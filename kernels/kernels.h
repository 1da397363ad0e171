/*
 * The host interface of the device code in kernels/: thin launchers with C linkage, called
 * from src/ only. They return the CUDA error of the launch and never record details
 * themselves; the public entry points in src/ validate arguments and report.
 */
#ifndef CUDAMODEL_KERNELS_KERNELS_H
#define CUDAMODEL_KERNELS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Attributes of the probe kernel (binaryVersion/ptxVersion tell which image the device runs). */
cudaError_t cm__kernel_probe_attributes(struct cudaFuncAttributes *attr);

/** Launch the probe kernel: one thread writes value + 1 into *d_out. */
cudaError_t cm__kernel_probe_launch(int *d_out, int value, cudaStream_t stream);

/**
 * Fill count bytes at dst with a repeated pattern of pattern_bytes (1, 2, 4 or 8) bytes, on
 * stream (kernels/fill.cu). dst must be aligned to pattern_bytes and count a multiple of it;
 * the caller (src/buffer.c) checks both. count = 0 launches nothing.
 */
cudaError_t cm__kernel_fill(void *dst, size_t count, const void *pattern, size_t pattern_bytes,
                            cudaStream_t stream);

/* ---------------------------------------------------------------- vector ops and reductions
 * (kernels/vector.cu, kernels/reduce.cu; called from src/kernels_api.c, which has checked every
 * argument: pointers are device addresses of the current device, aligned to the element size,
 * n elements fit behind each.) */

/** Element types. */
enum { CM__DT_F32 = 0, CM__DT_F64 = 1, CM__DT_I32 = 2 };
/** Element-wise operations: out = a + b; out(=b) = alpha * a + b; out = alpha * a; out = alpha. */
enum { CM__VOP_ADD = 0, CM__VOP_AXPY = 1, CM__VOP_SCALE = 2, CM__VOP_FILL = 3 };
/** Reductions. */
enum { CM__ROP_SUM = 0, CM__ROP_MIN = 1, CM__ROP_MAX = 2, CM__ROP_ARGMIN = 3, CM__ROP_ARGMAX = 4,
       CM__ROP_DOT = 5 };

/** Threads per block of the reduction kernel, and the most blocks it is launched with. */
#define CM__REDUCE_THREADS 256u
#define CM__REDUCE_MAX_BLOCKS 8192u
/** Scratch layout: a 4-byte counter (zero before a launch: the last block puts it back to zero),
 *  a 16-byte result slot at CM__REDUCE_RESULT_OFFSET, partials of 16 bytes per block from
 *  CM__REDUCE_PARTIALS_OFFSET. CM__REDUCE_SCRATCH_BYTES holds the largest grid's. */
#define CM__REDUCE_RESULT_OFFSET 16u
#define CM__REDUCE_PARTIALS_OFFSET 64u
#define CM__REDUCE_PARTIAL_BYTES 16u
#define CM__REDUCE_SCRATCH_BYTES \
    (CM__REDUCE_PARTIALS_OFFSET + CM__REDUCE_MAX_BLOCKS * CM__REDUCE_PARTIAL_BYTES)

/** Launch an element-wise operation over n elements (dtype F32 or F64; alpha points at one
 *  element of that type: the scalar of AXPY / SCALE, the value of FILL). n = 0 launches nothing.
 *  sm_count is unused (kept for a persistent-grid variant): the grid covers the work. */
cudaError_t cm__kernel_vector(int op, int dtype, void *out, const void *a, const void *b,
                              const void *alpha, size_t n, int sm_count, cudaStream_t stream);

/** Blocks of a reduction of n elements of elem_bytes each on a device of sm_count
 *  multiprocessors that each hold blocks_per_sm blocks of the kernel at once (0: unknown, taken
 *  as 4): about 16 KiB of input per block, at most one full wave (sm_count x blocks_per_sm, a
 *  persistent grid) and CM__REDUCE_MAX_BLOCKS, at least 1 (src/kernels_api.c; pure arithmetic). */
unsigned cm__reduce_grid(size_t n, size_t elem_bytes, int sm_count, int blocks_per_sm);

/** How a kernel of kernels/vector.cu or kernels/reduce.cu splits n elements: `head` scalar
 *  elements up to the first 16-byte boundary, `nvec` 16-byte vectors of 16 / elem_bytes
 *  elements, then `tail` scalar elements; or, when the operands' addresses differ modulo 16
 *  bytes (no common boundary), everything scalar (vectorized 0, head = nvec = 0, tail = n). */
typedef struct cm__vec_plan {
    int vectorized;
    size_t head, nvec, tail;
} cm__vec_plan_t;

/** The plan for `count` operand addresses (1..3; each aligned to elem_bytes, which is 4 or 8)
 *  and n elements (src/kernels_api.c; pure arithmetic). */
cm__vec_plan_t cm__vector_plan(const uintptr_t *addrs, int count, size_t elem_bytes, size_t n);

/** Blocks of the (op, dtype) reduction kernel one multiprocessor of the current device holds at
 *  once (cudaOccupancyMaxActiveBlocksPerMultiprocessor, cached per device); 0 when unknown. */
int cm__kernel_reduce_blocks_per_sm(int op, int dtype);

/** value_too of cm__kernel_reduce: store the raw partial (src/multi.c combines partials of the
 *  parts of a split array): SUM and DOT of float or double as their float64 accumulator, SUM of
 *  int32 as int64, MIN / MAX as the element, ARG* as the index followed by the value. */
#define CM__REDUCE_STORE_RAW 2

/**
 * Launch a reduction of n elements of x (and y for DOT) with `grid` blocks of
 * CM__REDUCE_THREADS, using scratch (CM__REDUCE_PARTIALS_OFFSET + grid * 16 bytes, 16-aligned;
 * its counter is zeroed here on stream first unless counter_zero says it already is: a scratch
 * that only one stream uses stays zero between launches, since the kernel's last block resets it)
 * and writing the result (the result type, or a uint64 index for ARG*, followed for ARG* at
 * result + 8 by the value when value_too) to result (value_too CM__REDUCE_STORE_RAW: the raw
 * partial, see above; result 8-byte aligned).
 */
cudaError_t cm__kernel_reduce(int op, int dtype, const void *x, const void *y, size_t n,
                              unsigned grid, void *scratch, int counter_zero, void *result,
                              int value_too, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CUDAMODEL_KERNELS_KERNELS_H */
