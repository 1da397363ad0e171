/**
 * @file kernels.h
 * @brief Tuned device kernels on cm_buffer_t: element-wise vector operations and reductions,
 *        at the memory-bandwidth limit.
 *
 * ## Calling convention
 * Every operand is a device buffer (buffer.h) plus an offset counted in **bytes**, as everywhere
 * in the library, which must be a multiple of the size of the operand's element type (4 for a
 * float operand); every call takes n, the number of elements. The stream comes first: a library
 * stream (stream.h), on which vector operations and the reductions that write a device buffer
 * are queued (the call returns once they are), or NULL, which means synchronous as everywhere in
 * the library: the work runs on the legacy default stream of the buffers' device and is complete
 * when the call returns (a fault is reported by the call). The `_to_host` reductions are
 * synchronous with either: they return when the value is in host memory.
 *
 * Any n is valid, 0 included (a vector operation of 0 elements queues nothing; a reduction of 0
 * elements gives the identity, see below), and any element-aligned offset: offsets that break
 * the 16-byte alignment of the vector loads are served by a scalar head and tail around a
 * 16-byte-vector body.
 *
 * ## Checks (before anything is queued)
 * CM_ERROR_INVALID_ARGUMENT, with a message that gives the numbers, for: a NULL, destroyed or
 * foreign buffer handle; an offset that is not a multiple of the element size; offset + n
 * elements past the end of a buffer (without
 * overflow); operands of different devices; a stream of another device than the buffers' (or a
 * released stream); a NULL host result pointer; and overlaps that are not allowed:
 * - element-wise operations allow an input to be the output exactly (same buffer, same offset:
 *   in place, e.g. y of axpy is both, cm_vector_add_f32(s, a, 0, a, 0, b, 0, n)), but refuse an
 *   input range that partly overlaps the output range;
 * - copy allows the exact alias (nothing to do) and refuses partial overlap;
 * - a reduction's device result may not lie inside its input ranges.
 * A device whose context was lost gives CM_ERROR_CONTEXT_LOST; CUDA failures are recorded as
 * for the rest of the library.
 *
 * ## Reductions: results, accuracy, NaN, reproducibility
 * - **sum, dot (f32)** accumulate in float64 (each product of two floats is exact in float64)
 *   and round once to float at the end: |result - exact| <= 2^-24 |exact| + (K + 1) * 2^-53 *
 *   sum|x_i| (dot: sum|x_i y_i|), K = ceil(n / T) + ceil(log2 T) with T = grid x 256 threads
 *   (T <= 2^21): in practice the correctly rounded sum or one unit in the last place off.
 * - **sum, dot (f64)** accumulate in float64: |result - exact| <= (K + 1) * 2^-53 * sum|x_i|
 *   (dot: sum|x_i y_i|; products rounded once, fused multiply-add), K as above.
 * - **sum (i32)** is exact in int64 (wraps modulo 2^64 only past 2^32 elements of extreme value).
 * - **min, max, argmin, argmax** are exact. argmin / argmax give the **first** index (counted in
 *   elements from the one at x_offset) of the extreme value; -0.0 and +0.0 compare equal (the
 *   first one wins).
 * - **NaN**: any NaN in the input makes sum, dot, min and max NaN; argmin and argmax give the index
 *   of the first NaN (NaN counts as the extreme, as numpy's argmax does). Infinities follow IEEE
 *   (+inf + -inf is NaN).
 * - **Empty input** (n = 0): sum and dot give 0; min gives +inf (INT32_MAX for i32), max -inf
 *   (INT32_MIN), argmin / argmax give the index CM_REDUCE_NO_INDEX.
 * - **Reproducible**: no floating-point atomics. Each call is one kernel launch of a fixed shape
 *   (grid chosen from n, the multiprocessor count and the kernel's occupancy: at most one wave
 *   of resident blocks); each thread reads a fixed set of elements in a fixed order and blocks
 *   combine in a fixed tree, the last block to finish reducing the per-block partials in index
 *   order. The result is bit-identical run to run on
 *   the same device (model) and the same n and offset alignment.
 * - Scratch: a reduction needs grid x 16 bytes + 64 (at most 128 KiB) of device memory for its
 *   block partials and a counter. It uses its stream's own scratch: every pooled stream, and the
 *   legacy default stream of each device, gets 128 KiB of device memory (cudaMalloc, then zeroed
 *   with cudaMemsetAsync on that stream) the first time a reduction runs on it, kept until the
 *   device object closes; the kernel leaves the counter at zero, so a call is one launch with no
 *   allocation and no memset. Exceptions take the scratch from the device's memory pool on the
 *   stream and give it back in stream order (a grid of more than one block then also queues a
 *   4-byte cudaMemsetAsync of the counter): a stream being captured into a graph (the graph gets
 *   a memory node of its own, since a graph may replay on another stream), and a host result on
 *   the legacy default stream (shared by every thread); on a device without memory pools those
 *   use cudaMalloc / cudaFree, which makes the call wait for the device.
 *
 * Threading: calls on distinct streams may run from several threads at once; a buffer is used by
 * one thread at a time (buffer.h). The library never prints.
 */
#ifndef CUDAMODEL_KERNELS_H
#define CUDAMODEL_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h> /* memcpy of the bf16 conversions */

#include <cudamodel/buffer.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

CM_EXTERN_C_BEGIN

/** @brief The index argmin / argmax report for an empty input. */
#define CM_REDUCE_NO_INDEX UINT64_MAX

/* ====================================================================== vector operations */

/** @brief The element-wise operation of cm_vector(). */
typedef enum cm_vector_op {
    CM_VECTOR_ADD = 0,   /**< out[i] = x[i] + y[i]; out may be x or y exactly (in place) */
    CM_VECTOR_AXPY = 1,  /**< out[i] = alpha * x[i] + y[i] (one fused multiply-add); out may be
                              x or y exactly (out = y: BLAS axpy in place), x may be y */
    CM_VECTOR_SCALE = 2, /**< out[i] = alpha * x[i]; out may be x exactly */
    CM_VECTOR_FILL = 3,  /**< out[i] = *alpha (its bits as they are, NaN payloads included) */
    CM_VECTOR_COPY = 4   /**< out[i] = x[i] (bit copy); the exact alias is a no-op */
} cm_vector_op_t;

/**
 * @brief One element-wise operation on n elements of type dtype, queued on stream.
 *
 * @param stream  library stream, or NULL: synchronous (see the calling convention)
 * @param op      the operation (cm_vector_op_t says which operands it reads)
 * @param dtype   CM_DTYPE_F32 or CM_DTYPE_F64 (other types: CM_ERROR_INVALID_ARGUMENT)
 * @param n       number of elements (0 queues nothing)
 * @param alpha   the address of a value of the element type (a float for CM_DTYPE_F32, a
 *                double for CM_DTYPE_F64, as cuBLAS takes its scalars): the scalar of AXPY and
 *                SCALE, the value of FILL; NULL for ADD and COPY, which read none
 * @param out, out_offset  the result buffer and the byte offset of its first element
 * @param x, x_offset      the first input (NULL for FILL) and its byte offset
 * @param y, y_offset      the second input of ADD and AXPY (NULL for the others)
 * @return CM_OK when queued (complete, for a NULL stream); CM_ERROR_INVALID_ARGUMENT for an operand the operation does not
 *         read that is not NULL, a missing one, or any check of the calling convention above.
 */
CM_API cm_status_t cm_vector(cm_stream_t *stream, cm_vector_op_t op, cm_dtype_t dtype, size_t n,
                             const void *alpha, cm_buffer_t *out, size_t out_offset,
                             const cm_buffer_t *x, size_t x_offset, const cm_buffer_t *y,
                             size_t y_offset);

/* Typed forms (inline: no exported symbols). */

/** @brief out[i] = x[i] + y[i], i < n (float). out may be x or y exactly (in place). */
static inline cm_status_t cm_vector_add_f32(cm_stream_t *stream, cm_buffer_t *out,
                                            size_t out_offset, const cm_buffer_t *x,
                                            size_t x_offset, const cm_buffer_t *y,
                                            size_t y_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_ADD, CM_DTYPE_F32, n, NULL, out, out_offset, x, x_offset, y,
                     y_offset);
}
/** @brief out[i] = x[i] + y[i] (double). */
static inline cm_status_t cm_vector_add_f64(cm_stream_t *stream, cm_buffer_t *out,
                                            size_t out_offset, const cm_buffer_t *x,
                                            size_t x_offset, const cm_buffer_t *y,
                                            size_t y_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_ADD, CM_DTYPE_F64, n, NULL, out, out_offset, x, x_offset, y,
                     y_offset);
}
/** @brief y[i] = alpha * x[i] + y[i] (one fused multiply-add, float). x may be y exactly. */
static inline cm_status_t cm_vector_axpy_f32(cm_stream_t *stream, float alpha,
                                             const cm_buffer_t *x, size_t x_offset, cm_buffer_t *y,
                                             size_t y_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_AXPY, CM_DTYPE_F32, n, &alpha, y, y_offset, x, x_offset, y,
                     y_offset);
}
/** @brief y[i] = alpha * x[i] + y[i] (double). */
static inline cm_status_t cm_vector_axpy_f64(cm_stream_t *stream, double alpha,
                                             const cm_buffer_t *x, size_t x_offset, cm_buffer_t *y,
                                             size_t y_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_AXPY, CM_DTYPE_F64, n, &alpha, y, y_offset, x, x_offset, y,
                     y_offset);
}
/** @brief out[i] = alpha * x[i] (float). out may be x exactly (scale in place). */
static inline cm_status_t cm_vector_scale_f32(cm_stream_t *stream, float alpha, cm_buffer_t *out,
                                              size_t out_offset, const cm_buffer_t *x,
                                              size_t x_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_SCALE, CM_DTYPE_F32, n, &alpha, out, out_offset, x, x_offset,
                     NULL, 0);
}
/** @brief out[i] = alpha * x[i] (double). */
static inline cm_status_t cm_vector_scale_f64(cm_stream_t *stream, double alpha, cm_buffer_t *out,
                                              size_t out_offset, const cm_buffer_t *x,
                                              size_t x_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_SCALE, CM_DTYPE_F64, n, &alpha, out, out_offset, x, x_offset,
                     NULL, 0);
}
/** @brief out[i] = value (float; any bit pattern, NaN payloads included, is stored as is). */
static inline cm_status_t cm_vector_fill_f32(cm_stream_t *stream, cm_buffer_t *out,
                                             size_t out_offset, float value, size_t n) {
    return cm_vector(stream, CM_VECTOR_FILL, CM_DTYPE_F32, n, &value, out, out_offset, NULL, 0,
                     NULL, 0);
}
/** @brief out[i] = value (double). */
static inline cm_status_t cm_vector_fill_f64(cm_stream_t *stream, cm_buffer_t *out,
                                             size_t out_offset, double value, size_t n) {
    return cm_vector(stream, CM_VECTOR_FILL, CM_DTYPE_F64, n, &value, out, out_offset, NULL, 0,
                     NULL, 0);
}
/** @brief out[i] = x[i] (float; bit copy). Partial overlap is refused; the exact alias is a no-op. */
static inline cm_status_t cm_vector_copy_f32(cm_stream_t *stream, cm_buffer_t *out,
                                             size_t out_offset, const cm_buffer_t *x,
                                             size_t x_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_COPY, CM_DTYPE_F32, n, NULL, out, out_offset, x, x_offset,
                     NULL, 0);
}
/** @brief out[i] = x[i] (double). */
static inline cm_status_t cm_vector_copy_f64(cm_stream_t *stream, cm_buffer_t *out,
                                             size_t out_offset, const cm_buffer_t *x,
                                             size_t x_offset, size_t n) {
    return cm_vector(stream, CM_VECTOR_COPY, CM_DTYPE_F64, n, NULL, out, out_offset, x, x_offset,
                     NULL, 0);
}

/* ====================================================================== reductions */

/** @brief The reduction of cm_reduce() / cm_reduce_to_host(). */
typedef enum cm_reduce_op {
    CM_REDUCE_SUM = 0,    /**< sum (F32, F64, I32: exact in int64) */
    CM_REDUCE_MIN = 1,    /**< minimum (F32, F64, I32; NaN if any element is NaN) */
    CM_REDUCE_MAX = 2,    /**< maximum (F32, F64, I32; NaN if any element is NaN) */
    CM_REDUCE_ARGMIN = 3, /**< index of the first minimum, first NaN if any (F32, F64) */
    CM_REDUCE_ARGMAX = 4, /**< index of the first maximum, first NaN if any (F32, F64) */
    CM_REDUCE_DOT = 5     /**< sum of x[i] * y[i] (F32 with float64 accumulation, F64); x may
                               be y */
} cm_reduce_op_t;

/**
 * @brief Reduce n elements of x (and y for CM_REDUCE_DOT) into one element of a device buffer,
 *        in stream order.
 *
 * The result element at result_offset (in bytes, a multiple of the result type's size) has the
 * type:
 * float for F32 sum/min/max/dot, double for F64, int64_t for I32 sum, int32_t for I32 min/max,
 * uint64_t for argmin/argmax.
 * @param stream  library stream, or NULL: synchronous (see the calling convention)
 * @param op      the reduction
 * @param dtype   element type of x (and y): CM_DTYPE_F32 or CM_DTYPE_F64, and CM_DTYPE_I32 for
 *                sum, min and max (cm_reduce_op_t says which operation takes which)
 * @param n       number of elements to reduce (0 gives the identity, see the section above)
 * @param x, x_offset  the input buffer and the byte offset of its first element
 * @param y, y_offset  the second input of CM_REDUCE_DOT; NULL for the others
 * @param result, result_offset  the device buffer that receives the result and the byte offset
 *                it is written to (a multiple of the result type's size); it may not lie
 *                inside the input ranges
 * @return CM_OK when queued (complete, for a NULL stream); CM_ERROR_INVALID_ARGUMENT for a type the operation does not take
 *         (see cm_reduce_op_t) or any check of the calling convention above.
 */
CM_API cm_status_t cm_reduce(cm_stream_t *stream, cm_reduce_op_t op, cm_dtype_t dtype, size_t n,
                             const cm_buffer_t *x, size_t x_offset, const cm_buffer_t *y,
                             size_t y_offset, cm_buffer_t *result, size_t result_offset);

/**
 * @brief cm_reduce() with the result in host memory: synchronous, returns when *result is
 *        written.
 *
 * @param stream  library stream, or NULL for the legacy default stream of the buffers' device;
 *                the reduction is queued on it and the call waits for its result either way
 * @param op      the reduction
 * @param dtype   element type of x (and y), as for cm_reduce()
 * @param n       number of elements to reduce (0 gives the identity, see the section above)
 * @param x, x_offset  the input buffer and the byte offset of its first element
 * @param y, y_offset  the second input of CM_REDUCE_DOT; NULL for the others
 * @param result  the reduction's value (type as for cm_reduce()), or for argmin / argmax the
 *                uint64_t index (CM_REDUCE_NO_INDEX for n = 0); not NULL
 * @param value   argmin / argmax only: where to store the element at the index (the identity of
 *                the extreme for n = 0), or NULL; must be NULL for the other operations
 * @return CM_OK once *result is written; CM_ERROR_INVALID_ARGUMENT for a NULL result, a value
 *         that is not NULL for an operation other than argmin / argmax, a type the operation
 *         does not take, or any check of the calling convention above; CM_ERROR_CONTEXT_LOST
 *         and the status of an asynchronous fault as recorded.
 */
CM_API cm_status_t cm_reduce_to_host(cm_stream_t *stream, cm_reduce_op_t op, cm_dtype_t dtype,
                                     size_t n, const cm_buffer_t *x, size_t x_offset,
                                     const cm_buffer_t *y, size_t y_offset, void *result,
                                     void *value);

/* Typed forms (inline: no exported symbols). Device-result forms write one element at
 * result_offset; `_to_host` forms are synchronous and write *out (and *value for argmin /
 * argmax when not NULL). */

#define CM__REDUCE_INLINE(name, OP, DT, R)                                                      \
    static inline cm_status_t cm_reduce_##name(cm_stream_t *stream, const cm_buffer_t *x,       \
                                               size_t x_offset, size_t n, cm_buffer_t *result,  \
                                               size_t result_offset) {                          \
        return cm_reduce(stream, OP, DT, n, x, x_offset, NULL, 0, result, result_offset);       \
    }                                                                                           \
    static inline cm_status_t cm_reduce_##name##_to_host(cm_stream_t *stream,                   \
                                                         const cm_buffer_t *x, size_t x_offset, \
                                                         size_t n, R *out) {                    \
        return cm_reduce_to_host(stream, OP, DT, n, x, x_offset, NULL, 0, out, NULL);           \
    }

/** @brief Sum of n floats of x (from byte x_offset) into the float at byte
 *         result_offset of result, in stream order: float64 accumulation, rounded once (see
 *         the bound above). */
CM__REDUCE_INLINE(sum_f32, CM_REDUCE_SUM, CM_DTYPE_F32, float)
/** @fn cm_status_t cm_reduce_sum_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, float *out)
 *  @brief Sum of n floats of x into *out; synchronous. Float64 accumulation, rounded once. */
/** @brief Sum of n doubles of x into the double at byte result_offset of result, in
 *         stream order. */
CM__REDUCE_INLINE(sum_f64, CM_REDUCE_SUM, CM_DTYPE_F64, double)
/** @fn cm_status_t cm_reduce_sum_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, double *out)
 *  @brief Sum of n doubles of x into *out; synchronous. */
/** @brief Sum of n int32 values of x, exact in int64, into the int64_t at byte
 *         result_offset of result, in stream order. */
CM__REDUCE_INLINE(sum_i32, CM_REDUCE_SUM, CM_DTYPE_I32, int64_t)
/** @fn cm_status_t cm_reduce_sum_i32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, int64_t *out)
 *  @brief Sum of n int32 values of x, exact in int64, into *out; synchronous. */
/** @brief Minimum of n floats of x (NaN if any element is NaN, +inf for n = 0) into the
 *         float at byte result_offset of result, in stream order. */
CM__REDUCE_INLINE(min_f32, CM_REDUCE_MIN, CM_DTYPE_F32, float)
/** @fn cm_status_t cm_reduce_min_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, float *out)
 *  @brief Minimum of n floats of x (NaN if any element is NaN, +inf for n = 0) into *out;
 *         synchronous. */
/** @brief Minimum of n doubles of x (NaN if any element is NaN, +inf for n = 0) into the
 *         double at byte result_offset of result, in stream order. */
CM__REDUCE_INLINE(min_f64, CM_REDUCE_MIN, CM_DTYPE_F64, double)
/** @fn cm_status_t cm_reduce_min_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, double *out)
 *  @brief Minimum of n doubles of x (NaN if any element is NaN, +inf for n = 0) into *out;
 *         synchronous. */
/** @brief Minimum of n int32 values of x (INT32_MAX for n = 0) into the int32_t at byte
 *         result_offset of result, in stream order. */
CM__REDUCE_INLINE(min_i32, CM_REDUCE_MIN, CM_DTYPE_I32, int32_t)
/** @fn cm_status_t cm_reduce_min_i32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, int32_t *out)
 *  @brief Minimum of n int32 values of x (INT32_MAX for n = 0) into *out; synchronous. */
/** @brief Maximum of n floats of x (NaN if any element is NaN, -inf for n = 0) into the
 *         float at byte result_offset of result, in stream order. */
CM__REDUCE_INLINE(max_f32, CM_REDUCE_MAX, CM_DTYPE_F32, float)
/** @fn cm_status_t cm_reduce_max_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, float *out)
 *  @brief Maximum of n floats of x (NaN if any element is NaN, -inf for n = 0) into *out;
 *         synchronous. */
/** @brief Maximum of n doubles of x (NaN if any element is NaN, -inf for n = 0) into the
 *         double at byte result_offset of result, in stream order. */
CM__REDUCE_INLINE(max_f64, CM_REDUCE_MAX, CM_DTYPE_F64, double)
/** @fn cm_status_t cm_reduce_max_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, double *out)
 *  @brief Maximum of n doubles of x (NaN if any element is NaN, -inf for n = 0) into *out;
 *         synchronous. */
/** @brief Maximum of n int32 values of x (INT32_MIN for n = 0) into the int32_t at byte
 *         result_offset of result, in stream order. */
CM__REDUCE_INLINE(max_i32, CM_REDUCE_MAX, CM_DTYPE_I32, int32_t)
/** @fn cm_status_t cm_reduce_max_i32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, int32_t *out)
 *  @brief Maximum of n int32 values of x (INT32_MIN for n = 0) into *out; synchronous. */

#undef CM__REDUCE_INLINE

#define CM__ARG_INLINE(name, OP, DT, T)                                                         \
    static inline cm_status_t cm_reduce_##name(cm_stream_t *stream, const cm_buffer_t *x,       \
                                               size_t x_offset, size_t n, cm_buffer_t *result,  \
                                               size_t result_offset) {                          \
        return cm_reduce(stream, OP, DT, n, x, x_offset, NULL, 0, result, result_offset);       \
    }                                                                                           \
    static inline cm_status_t cm_reduce_##name##_to_host(cm_stream_t *stream,                   \
                                                         const cm_buffer_t *x, size_t x_offset, \
                                                         size_t n, uint64_t *index, T *value) { \
        return cm_reduce_to_host(stream, OP, DT, n, x, x_offset, NULL, 0, index, value);        \
    }

/** @brief Index of the first minimum of n floats of x, counted from x_offset (the first NaN if
 *         any; CM_REDUCE_NO_INDEX for n = 0), into the uint64_t at byte result_offset of
 *         result, in stream order. */
CM__ARG_INLINE(argmin_f32, CM_REDUCE_ARGMIN, CM_DTYPE_F32, float)
/** @fn cm_status_t cm_reduce_argmin_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, uint64_t *index, float *value)
 *  @brief Index of the first minimum of n floats of x into *index (CM_REDUCE_NO_INDEX for
 *         n = 0) and, when value is not NULL, the element there into *value (+inf for
 *         n = 0); synchronous. */
/** @brief Index of the first minimum of n doubles of x, counted from x_offset (the first NaN if
 *         any; CM_REDUCE_NO_INDEX for n = 0), into the uint64_t at byte result_offset of
 *         result, in stream order. */
CM__ARG_INLINE(argmin_f64, CM_REDUCE_ARGMIN, CM_DTYPE_F64, double)
/** @fn cm_status_t cm_reduce_argmin_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, uint64_t *index, double *value)
 *  @brief Index of the first minimum of n doubles of x into *index (CM_REDUCE_NO_INDEX for
 *         n = 0) and, when value is not NULL, the element there into *value (+inf for
 *         n = 0); synchronous. */
/** @brief Index of the first maximum of n floats of x, counted from x_offset (the first NaN if
 *         any; CM_REDUCE_NO_INDEX for n = 0), into the uint64_t at byte result_offset of
 *         result, in stream order. */
CM__ARG_INLINE(argmax_f32, CM_REDUCE_ARGMAX, CM_DTYPE_F32, float)
/** @fn cm_status_t cm_reduce_argmax_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, uint64_t *index, float *value)
 *  @brief Index of the first maximum of n floats of x into *index (CM_REDUCE_NO_INDEX for
 *         n = 0) and, when value is not NULL, the element there into *value (-inf for
 *         n = 0); synchronous. */
/** @brief Index of the first maximum of n doubles of x, counted from x_offset (the first NaN if
 *         any; CM_REDUCE_NO_INDEX for n = 0), into the uint64_t at byte result_offset of
 *         result, in stream order. */
CM__ARG_INLINE(argmax_f64, CM_REDUCE_ARGMAX, CM_DTYPE_F64, double)
/** @fn cm_status_t cm_reduce_argmax_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
 *                                  size_t x_offset, size_t n, uint64_t *index, double *value)
 *  @brief Index of the first maximum of n doubles of x into *index (CM_REDUCE_NO_INDEX for
 *         n = 0) and, when value is not NULL, the element there into *value (-inf for
 *         n = 0); synchronous. */

#undef CM__ARG_INLINE

/** @brief Dot product sum x[i] * y[i] (float64 accumulation for f32). x may be y (x . x). */
static inline cm_status_t cm_reduce_dot_f32(cm_stream_t *stream, const cm_buffer_t *x,
                                            size_t x_offset, const cm_buffer_t *y,
                                            size_t y_offset, size_t n, cm_buffer_t *result,
                                            size_t result_offset) {
    return cm_reduce(stream, CM_REDUCE_DOT, CM_DTYPE_F32, n, x, x_offset, y, y_offset, result,
                     result_offset);
}
/** @brief Dot product (double). */
static inline cm_status_t cm_reduce_dot_f64(cm_stream_t *stream, const cm_buffer_t *x,
                                            size_t x_offset, const cm_buffer_t *y,
                                            size_t y_offset, size_t n, cm_buffer_t *result,
                                            size_t result_offset) {
    return cm_reduce(stream, CM_REDUCE_DOT, CM_DTYPE_F64, n, x, x_offset, y, y_offset, result,
                     result_offset);
}
/** @brief Synchronous dot product (float). */
static inline cm_status_t cm_reduce_dot_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                    size_t x_offset, const cm_buffer_t *y,
                                                    size_t y_offset, size_t n, float *out) {
    return cm_reduce_to_host(stream, CM_REDUCE_DOT, CM_DTYPE_F32, n, x, x_offset, y, y_offset, out,
                             NULL);
}
/** @brief Synchronous dot product (double). */
static inline cm_status_t cm_reduce_dot_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                    size_t x_offset, const cm_buffer_t *y,
                                                    size_t y_offset, size_t n, double *out) {
    return cm_reduce_to_host(stream, CM_REDUCE_DOT, CM_DTYPE_F64, n, x, x_offset, y, y_offset, out,
                             NULL);
}

/* ====================================================================== matrix multiply (GEMM)
 *
 * C = alpha * op(A) * op(B) + beta * C, op(A) M x K, op(B) K x N, C M x N, all three stored in
 * one layout (row-major or column-major, as BLAS's "order"), op = none or transpose.
 *
 * ## Operands
 * A, B and C are device buffers plus an offset counted in **bytes**, a multiple of the operand's
 * element size (float, or cm_bf16_t for the bf16 inputs / output), like every call of this
 * header, and a
 * leading dimension in elements: the distance between consecutive rows (row-major) or columns
 * (column-major) of the stored matrix. The stored A is M x K for op_a = CM_GEMM_OP_N and K x M
 * for CM_GEMM_OP_T (B: K x N or N x K). Leading dimensions must be at least max(1, the stored
 * matrix's columns) in row-major, max(1, its rows) in column-major, as in BLAS. The elements a
 * matrix spans, (outer - 1) * ld + inner from its offset, must lie inside its buffer.
 *
 * ## Sizes and special values
 * Any M, N, K >= 0 below 2^31 (not only multiples of a tile) and any leading dimension or
 * element-aligned offset (unaligned ones take scalar loads). M = 0 or N = 0 queues nothing.
 * K = 0 gives
 * C = beta * C. beta == 0 never reads C: C may hold NaN or garbage and is overwritten. NaN and
 * infinity in A or B propagate as IEEE arithmetic says.
 *
 * ## Precisions (cm_gemm_precision_t)
 * - CM_GEMM_FP32: float in, float out, every product and sum in FP32 on the CUDA cores (FFMA),
 *   never on tensor cores (the classic SGEMM contract). Error: |C - exact| per element within
 *   about K * 2^-24 * sum_k |A_mk B_kn| (ordinary floating-point summation; in practice
 *   sqrt(K) * 2^-24 relative, as cuBLAS).
 * - CM_GEMM_TF32: float in, float out, the inputs rounded to TF32 (10-bit mantissa) and
 *   multiplied on tensor cores with FP32 accumulation (sm_80 and later); relative Frobenius
 *   error about 1e-4 .. 5e-4. On devices without TF32 tensor cores (sm_75) and for operands the
 *   tensor-core path cannot load (base or leading dimension not a multiple of 16 bytes) it runs
 *   the FP32 kernel: the result is then at least as accurate as TF32.
 * - CM_GEMM_BF16: A and B cm_bf16_t, C float, FP32 accumulation (tensor cores on sm_80+; on
 *   sm_75 the FFMA kernel with the inputs widened to float, exact products, FP32 sums).
 * - CM_GEMM_BF16_OUT_BF16: as CM_GEMM_BF16 but C is cm_bf16_t (the FP32 result rounded to
 *   nearest even once; beta * C reads the bf16 C widened to float).
 * - CM_GEMM_FP32_3XTF32: float in, float out, FP32 accuracy from TF32 tensor cores ("3xTF32",
 *   the split-TF32 technique of CUTLASS's example 27): each input x is split into
 *   big = tf32(x) and small = tf32(x - big) (round to nearest), and the product is
 *   small_A big_B + big_A small_B + big_A big_B summed in FP32: three TF32 products carry the
 *   22 mantissa bits of the inputs, so the error against an exact product is that of FP32
 *   summation (the CM_GEMM_FP32 bound above; measured against cublasSgemm in bench_gemm), at
 *   tensor-core speed. On sm_90 where the library carries the Hopper kernel, a problem that
 *   fills the GPU (the large class, or a skinny one with at least one 128 x 256 tile of C per
 *   multiprocessor) with K >= 512 and more than 128 rows and columns of C (its tiles would
 *   stand one deep over a narrower C, partly idle; the FP32 kernels fit it) runs a split pre-pass
 *   (kernels/gemm_pack.cu: A and B become K-contiguous TF32 operands of 3 x K, K rounded up
 *   to 32; scratch of 12 (M + N) K bytes at most 1 GiB per pass from the device object's pool,
 *   longer K in several passes) and then a
 *   wgmma kernel of its own ("sm90+3xtf32": 128 x 192 tiles whose tensor-core accumulator is
 *   added into a second FP32 accumulator every 256 K elements of the cross terms and every 64
 *   of big_A big_B, because the tensor cores' accumulation alone loses low bits; what it still
 *   loses within those 64 is an error floor near 1.7e-7 relative that does not grow with K, so
 *   below K = 512, where FP32's own error is smaller, the FP32 kernels run).
 *   CUDAMODEL_GEMM_3X_PROMO=n (a power of two, 1 to 64) sets the 64 to 32 n elements, for
 *   measurements.
 *   Everywhere else (other architectures, small problems, K < 512, no memory for the scratch,
 *   matrix-vector shapes) it runs the FP32 kernels exactly as CM_GEMM_FP32 would (the same
 *   kernel, tiles and split of K below): the same accuracy, never an error of its own.
 *   Infinities and NaN in the inputs propagate as in FP32; the small parts of inputs below
 *   about 2^-114 (and tensor-core subnormals) are flushed, a relative effect under
 *   2^-21 of the smallest normal products.
 *
 * ## Checks (before anything is queued), CM_ERROR_INVALID_ARGUMENT with the numbers
 * An unknown precision, layout or op; M, N or K of 2^31 or more; a leading dimension below its
 * minimum; a NULL, destroyed or foreign buffer; a matrix that runs past the end of its buffer;
 * operands on two devices or a stream of another device; C overlapping A or B (the byte range
 * C spans intersects the range A or B spans in the same buffer: in-place products are refused,
 * even when the leading dimensions would interleave them without touching). A and B may
 * overlap each other (they are only read).
 *
 * ## Kernels (chosen per call, run time)
 * A matrix-vector product (M = 1 or N = 1, K >= 1) runs a bandwidth-bound kernel of its own
 * (kernels/gemv.cu, "gemv") in every precision: FP32 products and sums (TF32 problems get at
 * least TF32 accuracy, bf16 inputs are widened exactly, a bf16 C is rounded once), either
 * orientation of the matrix, any alignment; one product with K <= 128 over at least 16 rows
 * per multiprocessor read along K runs "skinny" below instead (a warp per row of gemv has too
 * few elements per lane there). A skinny product whose smaller side of C is 2 to
 * 16 with enough rows on the other side (counting a batch's matrices: at least 256, and 16 per
 * multiprocessor unless K <= 2048), K >= 256 (K >= 96 for one product with a smaller side of 2
 * to 8, or of 9 to 16 with at most 32 rows per multiprocessor on the other side where no
 * tensor-core tiles would read both operands as they are: FP32, or TF32 / bf16 with rows off
 * 16 bytes; 12 x 4096 x 255) and the large side's matrix contiguous along K runs another
 * (kernels/gemm_skinny.cu,
 * "skinny": one pass over the large operand keeping one sum per row and column of the small
 * side, with the same arithmetic as "gemv"), except bf16 with a smaller side of 5 to 16 on
 * sm_80+ with both
 * operands contiguous along K in 16-byte rows, and TF32 with one of 9 to 16 so from K = 1024
 * or, under it, where 64 x 64 tiles over C (times the batch) cover at least 3/4 of the
 * multiprocessors (7000 x 16 x 300 "TN"; 4096 x 16 x 512 keeps skinny), or of 16 with an
 * operand contiguous along M / N and either 16-byte rows or (one product with K >= 1024 over
 * at most 48 rows of its long side per multiprocessor) rows off 16 bytes, which the tiles'
 * align1 form reads as they are (16 x 3001 x 2001 column-major NN) (the tensor-core tiles are
 * faster there),
 * and bf16 with one of 5 to 16 on Hopper where the long side's operand is contiguous along K in
 * 16-byte rows and the short side's contiguous along M / N, K >= 1024 (the wgmma kernel, the
 * short side staged or read as it is, is faster there: column-major NN with M of 5 to 16), and
 * bf16 with one of 9 to 16 and K >= 768 on Hopper that the tiles do not take (rows off 16
 * bytes: an odd K), which the wgmma kernel runs after its pre-pass; the other skinny layouts
 * take the tiles below. Other shapes are chosen
 * by the device's compute capability and the shape class (small: fewer 128 x 128 tiles of C
 * than multiprocessors; skinny: min(M, N) <= 256 or K <= 256; large: the rest), from a table
 * in src/compute/gemm_api.c that `bench_gemm --tune` produced: FP32 runs the FFMA kernel
 * (kernels/gemm_ffma.cu) everywhere (on Hopper a tiny-class product with both sides of C at
 * least 64 whose split along K fills 3/4 of the 64 x 64 tiles' slots takes those instead of
 * 32 x 64, and a small-class product with K >= 512 whose 128 x 128 tiles, split along K into
 * parts of at least 256, give 3/4 of the multiprocessors a block takes those instead of 64 x
 * 64: 768 x 768 x 4096, 512 x 4096 x 512, 1024^3; a skinny-class product with 32 <= K <= 128
 * runs 64 x 64 tiles instead of 128 x 128 ones unless those fill whole waves of the GPU, at
 * least 7/8 of their slots: 3001 x 1000 x 64; a product with K >= 32 and C of at most 64
 * rows or columns beside many more runs the tiles that fit that side instead of larger ones:
 * 32 x 64 where C has at most 32 rows, else 64 x 64 (32 x 20000 x 900, 20000 x 64 x 600),
 * and with K under 32 (bound by writing C) the 32 x 64 tiles at such a side of up to 32 and
 * the 64 x 64 ones above it up to 64 (32 x 40000 x 16, 48 x 25000 x 20);
 * the 64 x 64 and 32 x 64 tiles run their 3-stage
 * cp.async forms, "ffma:64x64x16q3" / "ffma:32x64x16q3", where split-K cuts a K of at least
 * 2048 into parts: 64 x 64 x 4096, 1000 x 127 x 3001); TF32 and BF16 run an mma.sync tensor-core kernel
 * (kernels/gemm_mma.cu) on sm_80 and later, and the Hopper wgmma kernel on sm_90 where the
 * library carries it and the problem is "TN" (op(A) contiguous along K, op(B) contiguous
 * along K, 16-byte aligned rows). A TF32 / BF16 problem that is not (NN, NT, TT, or
 * misaligned operands) takes the Hopper kernel too, outside the tiny class, when its K is at
 * least 64 (always in the large class), after a transposing pre-pass ("sm90+pack"): each such
 * operand is transposed (or copied) into scratch memory taken from the device object's memory
 * pool on the call's stream and given back there after the product (M x K and N x K elements
 * at most, K rounded up to 16 bytes; kept by the pool, so repeated calls do not allocate anew).
 * A BF16 op(B) that is contiguous along N with 16-byte rows is read as it is by the kernel's
 * transposed-B form ("sm90+bt"; only A is packed if it needs to be); with K at least 256, a
 * TF32 operand that is contiguous along M or N with 16-byte rows is read as it is by its
 * register-A form ("sm90+at": the operand is staged as it is and loaded into registers for
 * the tensor cores, which read TF32 from shared memory only contiguous along K; the other
 * operand is packed if it needs to be). Without the memory (or a pool) the call runs the
 * mma.sync kernel instead: never an error of its own. A shorter K
 * (where the pre-pass would cost more than the product) and the tiny class run mma.sync; but a
 * tiny "TN" product (one, not a batch) with N at least 64 runs the Hopper kernel where that
 * kernel's split would cut K into at least 2 parts: TF32 from K = 512, any M, in those parts
 * from K = 1024 and with K whole below it (512^3: whole; 7 x 4096 x 4096: 4 parts); BF16, in
 * those parts, with M at least 64 too and a K long enough for the split to give at least 3/4
 * of the multiprocessors a part of at least 1024 of K (64 x 4096 x 4096: 4 parts). A long and
 * thin tiny one runs the Hopper kernel too: K at least 1024, op(A) contiguous along K, op(B)
 * along K or (through "sm90+bt" / "sm90+at") along N, 16-byte rows,
 * C (C^T for TF32 with op(B) along N) with at least 32 rows, 64 columns and a side of at
 * least 2048, where its split gives at least 2 parts or K is under 2048 (64 x 4096 x 2048
 * "NN" bf16: 4 parts; 4096 x 64 x 1024 "TN": whole). TF32 with a long and thin C (a side of
 * at least 2048, the other at most 128) and K from 512 to under 1024 runs the Hopper kernel
 * with K whole: "TN" with M the short side (row-major terms), and row-major op(B) contiguous
 * along N ("sm90+at") where N is at least 4096 and M at least 64 (column-major: op(A) along
 * M, M at least 4096 and N at least 64, as in 4096 x 64 x 1000 "NN", or N from 40 where M
 * has a 128-row tile for every 3 multiprocessors, as in 6000 x 48 x 800; under 40 columns
 * such a product runs mma.sync's 64 x 64 tiles at any M, as in 12000 x 32 x 900, and so does
 * one under 64 columns past the tiny class, as in 12000 x 48 x 900). A bf16 product over a
 * C of 32 to 64 by 5000 or more in the tiny class with K from 768 to under 1024 runs the
 * Hopper kernel with K whole rather than mma.sync's tiles split along K (8192 x 32 x 900,
 * 5000 x 32 x 896, 8192 x 64 x 896). A bf16 op(B)
 * contiguous along N whose rows are an odd number of 16 bytes (1000 elements) is transposed
 * rather than read as it is, and a "TN" operand with such rows copied into rows of whole
 * 128-byte lines, where K >= 256 and m n / (m + n) >= 768: the kernel's tensor copies read
 * such rows slowly. Any
 * other TF32 / BF16 product on sm_80+ whose operands lack 16-byte rows (an odd K or leading
 * dimension), with K >= 32 and at least 2^28 flops (BF16: 2^21) is realigned: the operands
 * without 16-byte rows are copied into aligned scratch from the pool first, and the product
 * runs on tensor cores; a smaller one, one with a shorter K (bound by writing C), or one the
 * scratch cannot be had for runs the FFMA kernel (TF32 on the FFMA kernel, whatever the reason,
 * runs the tiles and split FP32 would choose for the product: the same arithmetic). On Hopper a
 * TF32 one with A and B on whole
 * floats is not copied where the copy would lead to the 128 x 128 or 64 x 64 mma.sync tiles,
 * or to the Hopper kernel split over K (C too small for the GPU), or from K >= 1024 over a C
 * whose 128 x 256 tiles fill at most a quarter of the multiprocessors that its split leaves
 * whole (64 x 3001 x 2001 "TN"): the mma.sync tiles'
 * "align1" form reads its operands as they are, every element a 4-byte copy into shared
 * memory (the 128 x 128 tiles in place of the split Hopper kernel; split-K gives that form
 * parts of at least 128 of K), as cuBLAS does for such operands; it copies nothing, so a TF32
 * product under the 2^28 flops with K >= 1024 takes it too where the copy would lead to those
 * mma.sync tiles or to the Hopper kernel (then the 64 x 64 tiles: 127 x 127 x 3001 "TN"),
 * and one such single product with a side of C of 8 to 16 and K of 192 to 1023 takes the 64 x
 * 64 tiles' form (4096 x 12 x 255 "NN") (kernels/gemm.h's
 * CM__GEMM_MMA_ALIGN1: 0 at build time leaves them to the copy; the form is compiled for
 * sm_90 only, where it was measured, except in tuning builds). Likewise on Hopper an FP32
 * product of one
 * matrix whose op(A) / op(B) contiguous along M / N lack 16-byte rows, with K >= 256, at least
 * 2^30 flops and the other side of C at least 1024 long, has those operands copied as they are
 * (same orientation) into scratch rows of whole 16 bytes first, so that the pipelined FFMA tile
 * copies them 16 bytes at a time (cm_gemm_explain() says so). The FFMA kernels write C 16
 * bytes at a time where its rows allow (base and leading dimension on 16 bytes), otherwise
 * element by element; on Hopper the 64 x 64 / 32 x 64 tiles then stage C through shared
 * memory so that a warp writes consecutive elements of a row. Rows of C off 16 bytes still
 * cost an FP32 product with a short K about a tenth of its time (3001 x 1000 x 64 on an
 * H200): pad the leading dimension of C to a multiple of 16 bytes where the layout is yours
 * to choose. The environment variable CUDAMODEL_GEMM_CONFIG (read once per process, for
 * tuning and benchmarks only) forces one: "ffma:128x128x8", "mma:128x128", "sm90"
 * ... (see cm_gemm_config_name()); a name that cannot serve the call, or an FFMA or mma.sync
 * tile this build did not compile (only a -DCUDAMODEL_BUILD_TUNING=ON build carries every one,
 * "mma:128x64" included), is ignored.
 *
 * Split-K: a single product with a long K whose C cannot keep the GPU busy runs as a batch over K
 * ranges (at most 32 parts) into float scratch from the device object's pool, then an ordered
 * reduction applies alpha and beta (without the scratch memory it runs whole): the tiles when they
 * fill at most a quarter of the multiprocessors with K >= 512 (64 x 64 x 4096; parts enough for the
 * blocks the GPU holds at once, each at least 256 of K, 128 for TF32 on the mma.sync tiles (64 x 64
 * x 4096: 32 parts), 64 for FP32 / TF32 inputs on the smallest FFMA tiles, from K >= 256 there (64
 * x 64 x 300: 4 parts); on the Hopper kernel one wave of its 128 x 128 tiles, each part at least
 * 1024 of K where its tiles fill more than an eighth of the multiprocessors, and TF32 reading both
 * operands as they are only from K >= 1024), or, with K >= 1024, at most half the blocks the GPU
 * holds at once (64 x 4096 x 4096, 4096 x 7 x 4096; FP32 / TF32 inputs on the smallest FFMA tiles
 * from K >= 256, parts of at least 64 of K below 768 and 192 from there: 3001 x 12 x 500, 512^3,
 * 4096 x 64 x 1000; BF16 on the mma.sync tiles in parts of at least 192 from K >= 768: 4096 x
 * 64 x 1000; TF32 on them in parts of at least 128 from K >= 384, the align1
 * form only where a side of C is at most 16 below K 1024: 4096 x 12 x 767, 384 x 384 x 600;
 * TF32 on the 16-byte form of the 64 x 64 tiles over a C one tile deep whose tiles fill more
 * than half and at most two thirds of the resident slots in 3 parts: 40 x 8500 x 1000, and
 * where the Hopper kernel's register-A form would otherwise run such a product: 40 x 9000 x
 * 2048 "NN");
 * "skinny" with K >= 2048 over at most 64 rows per multiprocessor (7 x 4096 x 4096: 2 parts); a
 * matrix-vector product read across K over 512 to 2048 rows with K >= 2048 (1000 x 1 x 4096),
 * and over fewer rows (64 or more) from K >= 2000 into about one of its 1024-thread blocks (32
 * rows, 64 of bf16 read in pairs) a multiprocessor, parts of at least 128 of K, where that
 * makes 4 parts or more (127 x 1 x 3001: 23 parts asked, 19 after rounding each to 32 of K).
 * The last wave: a single CM_GEMM_FP32 product on the 128 x 128 FFMA tile with K >= 512 whose
 * tiles make 1 to 8 whole waves of the blocks the GPU holds at once and a last wave at most 0.3
 * full (3001^3 on an H200: 576 tiles, 2 waves of 264 and 48 left) runs its leading rows (or
 * columns) of whole waves first, then the rest split over K like split-K (its parts filling
 * about one wave), so that the last wave does not leave most multiprocessors idle.
 * Batches and CM_GEMM_FP32_3XTF32 on its Hopper kernel are never split (3xTF32 on the FP32
 * kernels splits as CM_GEMM_FP32 does). CUDAMODEL_GEMM_SPLITK (read once per process, for
 * tuning and benchmarks) forces the number of parts: 1 never splits (the last wave's split
 * included), 2 or more split the whole product.
 *
 * cm_gemm_explain() says in words which of these paths a given call takes and why, without
 * queuing anything.
 *
 * On a stream: returns once the work is queued (NULL stream: complete on return).
 * Deterministic: the same inputs, shapes and device give the same bits (no atomics; split-K
 * sums its parts in a fixed order).
 * Threading: as the rest of this header.
 */

/** @brief A bfloat16 value (1 sign, 8 exponent, 7 mantissa bits): the upper half of a float.
 *         A struct, so it cannot be mixed up with an integer; 2 bytes, no padding. */
typedef struct cm_bf16 {
    uint16_t bits; /**< the upper 16 bits of the IEEE float of the same value */
} cm_bf16_t;

/**
 * @brief float -> bf16, rounding to nearest, ties to even; +-inf stay infinite, NaN stays a
 *        (quiet) NaN with its sign, values past the largest bf16 round to infinity. Thread-safe.
 * @param x  any float.
 * @return the bf16 value.
 */
static inline cm_bf16_t cm_bf16_from_float(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    cm_bf16_t r;
    if ((u & 0x7fffffffu) > 0x7f800000u) { /* NaN: keep sign and top payload, force quiet */
        r.bits = (uint16_t)((u >> 16) | 0x40u);
        return r;
    }
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even (overflow -> inf) */
    r.bits = (uint16_t)(u >> 16);
    return r;
}
/**
 * @brief bf16 -> float (exact).
 * @param x  any bf16 value.
 * @return the float of the same value.
 */
static inline float cm_bf16_to_float(cm_bf16_t x) {
    const uint32_t u = (uint32_t)x.bits << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/**
 * @brief out[i] = cm_bf16_from_float(in[i]) for i < n (host arrays; NULL arrays: nothing).
 * @param[out] out  n bf16 values; NULL does nothing.
 * @param[in]  in   n floats; NULL does nothing.
 * @param[in]  n    number of elements.
 */
static inline void cm_bf16_from_float_array(cm_bf16_t *out, const float *in, size_t n) {
    if (out == NULL || in == NULL) return;
    for (size_t i = 0; i < n; ++i) out[i] = cm_bf16_from_float(in[i]);
}
/**
 * @brief out[i] = cm_bf16_to_float(in[i]) for i < n (host arrays; NULL arrays: nothing).
 * @param[out] out  n floats; NULL does nothing.
 * @param[in]  in   n bf16 values; NULL does nothing.
 * @param[in]  n    number of elements.
 */
static inline void cm_bf16_to_float_array(float *out, const cm_bf16_t *in, size_t n) {
    if (out == NULL || in == NULL) return;
    for (size_t i = 0; i < n; ++i) out[i] = cm_bf16_to_float(in[i]);
}

/** @brief Storage order of A, B and C. */
typedef enum cm_gemm_layout {
    CM_GEMM_ROW_MAJOR = 0, /**< element (i, j) at i * ld + j */
    CM_GEMM_COL_MAJOR = 1  /**< element (i, j) at j * ld + i (BLAS, cuBLAS) */
} cm_gemm_layout_t;

/** @brief op(X): X itself or its transpose. */
typedef enum cm_gemm_op {
    CM_GEMM_OP_N = 0, /**< op(X) = X */
    CM_GEMM_OP_T = 1  /**< op(X) = X^T */
} cm_gemm_op_t;

/** @brief Element types and arithmetic (see the section above). */
typedef enum cm_gemm_precision {
    CM_GEMM_FP32 = 0,         /**< float in/out, FFMA only */
    CM_GEMM_TF32 = 1,         /**< float in/out, TF32 tensor cores, FP32 accumulate */
    CM_GEMM_BF16 = 2,         /**< cm_bf16_t in, float out, FP32 accumulate */
    CM_GEMM_BF16_OUT_BF16 = 3, /**< cm_bf16_t in, cm_bf16_t out, FP32 accumulate */
    CM_GEMM_FP32_3XTF32 = 4    /**< float in/out, FP32 accuracy from 3 TF32 tensor-core products */
} cm_gemm_precision_t;

/**
 * @brief C = alpha * op(A) * op(B) + beta * C on a stream (see the section above).
 *
 * @param stream    library stream, or NULL: synchronous (the legacy default stream of the
 *                  buffers' device; complete on return).
 * @param precision element types and arithmetic.
 * @param layout    storage order of all three matrices.
 * @param op_a, op_b  transpose A / B or not.
 * @param m, n, k   op(A) is m x k, op(B) k x n, C m x n; each 0 .. 2^31 - 1.
 * @param alpha, beta  scalars (float for every precision); beta == 0 never reads C.
 * @param a, a_offset, lda  A: buffer, byte offset of its first element (a multiple of the size
 *                          of A's type), leading dimension (in elements).
 * @param b, b_offset, ldb  B, likewise.
 * @param c, c_offset, ldc  C, likewise (float or cm_bf16_t per precision).
 * @return CM_OK once queued (or nothing to do); CM_ERROR_INVALID_ARGUMENT for the checks above;
 *         CM_ERROR_CONTEXT_LOST; a CUDA failure of the launch as recorded everywhere.
 * Allocates nothing. Thread-safe as the rest of this header.
 */
CM_API cm_status_t cm_gemm(cm_stream_t *stream, cm_gemm_precision_t precision,
                           cm_gemm_layout_t layout, cm_gemm_op_t op_a, cm_gemm_op_t op_b,
                           size_t m, size_t n, size_t k, float alpha, const cm_buffer_t *a,
                           size_t a_offset, size_t lda, const cm_buffer_t *b, size_t b_offset,
                           size_t ldb, float beta, cm_buffer_t *c, size_t c_offset, size_t ldc);

/**
 * @brief A batch of GEMMs of one shape: for i in 0 .. batch - 1,
 *        C_i = alpha op(A_i) op(B_i) + beta C_i, with A_i starting stride_a elements after
 *        A_{i-1} (likewise B and C), as cublasGemmStridedBatchedEx.
 *
 * Every argument as for cm_gemm(); offsets in bytes locate the first matrix of each operand.
 * The strides count **elements** of the operand's type, like the leading dimensions; stride_a
 * or stride_b 0 uses one matrix for the whole batch. Every matrix of the batch is checked
 * before anything is queued: the last one must lie inside its buffer, C matrices may not
 * overlap each other (stride_c at least the elements one C spans, (outer - 1) * ldc + inner)
 * and the C range of the batch may not overlap the A or B range of the batch in the same buffer.
 * One kernel launch runs the whole batch (each kernel has a batch grid dimension; one launch
 * per 65535 matrices): the choice counts the batch's tiles together (a batch of matrices of
 * at most 128 x 128 takes small tiles), and the 16-byte tensor-core paths need every matrix
 * aligned (base and stride; otherwise a batch of TF32 / BF16 products is packed for the Hopper
 * kernel on the large class, or runs mma.sync or FFMA). CM_GEMM_FP32_3XTF32 batches run one
 * matrix after another on the stream.
 *
 * @param stream, precision, layout, op_a, op_b, m, n, k, alpha, beta  as for cm_gemm().
 * @param a, a_offset, lda, stride_a  A: buffer, byte offset of the first matrix, leading
 *                                    dimension and stride between matrices (elements).
 * @param b, b_offset, ldb, stride_b  B, likewise.
 * @param c, c_offset, ldc, stride_c  C, likewise.
 * @param batch   matrices; 0 queues nothing (after the checks of one matrix).
 * @return the statuses of cm_gemm(); CM_ERROR_INVALID_ARGUMENT also for overlapping C matrices
 *         (the message names stride_c and the span) and for a batch whose last matrix runs past
 *         its buffer (the message names the operand, the matrix and the numbers).
 */
CM_API cm_status_t cm_gemm_strided_batched(cm_stream_t *stream, cm_gemm_precision_t precision,
                                           cm_gemm_layout_t layout, cm_gemm_op_t op_a,
                                           cm_gemm_op_t op_b, size_t m, size_t n, size_t k,
                                           float alpha, const cm_buffer_t *a, size_t a_offset,
                                           size_t lda, size_t stride_a, const cm_buffer_t *b,
                                           size_t b_offset, size_t ldb, size_t stride_b,
                                           float beta, cm_buffer_t *c, size_t c_offset,
                                           size_t ldc, size_t stride_c, size_t batch);

/**
 * @brief The kernel configuration cm_gemm() would run for this problem on device `ordinal`
 *        (the dispatch table's choice, or CUDAMODEL_GEMM_CONFIG's), as a static name such as
 *        "ffma:128x128x8", "mma:128x128" or "sm90"; layout and ops as for cm_gemm, operands
 *        assumed packed (leading dimensions rounded up to 16 bytes) and 16-byte aligned. For
 *        benchmarks and reports.
 * @param ordinal    device ordinal whose compute capability and multiprocessor count decide.
 * @param precision  element types and arithmetic, as for cm_gemm().
 * @param layout     storage order of all three matrices.
 * @param op_a, op_b  transpose A / B or not.
 * @param m, n, k    op(A) is m x k, op(B) k x n, C m x n; each 0 .. 2^31 - 1.
 * @param name       receives the static name; "?" on a failure after this pointer was checked;
 *                   not NULL.
 * @return CM_OK and *name; CM_ERROR_INVALID_ARGUMENT for an unknown precision / layout / op, a
 *         NULL name, m, n or k of 2^31 or more, or an ordinal that does not exist; the failure
 *         of reading the device's compute capability.
 */
CM_API cm_status_t cm_gemm_config_name(int ordinal, cm_gemm_precision_t precision,
                                       cm_gemm_layout_t layout, cm_gemm_op_t op_a,
                                       cm_gemm_op_t op_b, size_t m, size_t n, size_t k,
                                       const char **name);

/**
 * @brief What cm_gemm_strided_batched() would run for exactly this call (cm_gemm(): stride_a,
 *        stride_b, stride_c 0 and batch 1), in words, without queuing anything: the kernel
 *        ("sm90+pack: Hopper's wgmma tiles..."), the copies it makes first and why (an
 *        operand without 16-byte rows: which of its offset, leading dimension or batch stride,
 *        and the leading dimension that would avoid the copy; an operand the Hopper kernel
 *        must transpose), the split of K into parts and their reduction, and where plain FP32
 *        could run as CM_GEMM_FP32_3XTF32 on tensor cores; then the device's compute
 *        capability and multiprocessor count. The real leading dimensions, offsets and
 *        buffers decide, unlike cm_gemm_config_name(), which assumes packed, aligned operands.
 *        The arguments are checked as cm_gemm_strided_batched() checks them: a call it would
 *        refuse fails here with the same status and message. The device is C's; a stream is
 *        not needed (none is checked).
 * @param precision, layout, op_a, op_b, m, n, k  as for cm_gemm() (alpha and beta do not change
 *                                    what runs, so they are not asked for).
 * @param a, a_offset, lda, stride_a  A, as for cm_gemm_strided_batched() (stride_a 0 and batch
 *                                    1 for a cm_gemm() call).
 * @param b, b_offset, ldb, stride_b  B, likewise.
 * @param c, c_offset, ldc, stride_c  C, likewise; not written.
 * @param batch   matrices, as for cm_gemm_strided_batched().
 * @param buf     destination (snprintf rules: truncated, still NUL-terminated, when short); may
 *                be NULL when size is 0.
 * @param size    capacity of buf.
 * @param length  optional: the length the full text needs, excluding the NUL (0 on a failure).
 * @return CM_OK and the text; CM_ERROR_INVALID_ARGUMENT for a NULL buf with a non-zero size and
 *         for everything cm_gemm_strided_batched() refuses; CM_ERROR_CONTEXT_LOST; the failure
 *         of reading the device's compute capability. On a failure buf holds "" (size > 0).
 * Thread-safe. Reads CUDAMODEL_GEMM_CONFIG and CUDAMODEL_GEMM_SPLITK like cm_gemm() (a forced
 * kernel is named as forced).
 */
CM_API cm_status_t cm_gemm_explain(cm_gemm_precision_t precision, cm_gemm_layout_t layout,
                                   cm_gemm_op_t op_a, cm_gemm_op_t op_b, size_t m, size_t n,
                                   size_t k, const cm_buffer_t *a, size_t a_offset, size_t lda,
                                   size_t stride_a, const cm_buffer_t *b, size_t b_offset,
                                   size_t ldb, size_t stride_b, const cm_buffer_t *c,
                                   size_t c_offset, size_t ldc, size_t stride_c, size_t batch,
                                   char *buf, size_t size, size_t *length);

CM_EXTERN_C_END

#endif /* CUDAMODEL_KERNELS_H */
