/**
 * @file kernels.h
 * @brief Tuned device kernels on cm_buffer_t: element-wise vector operations and reductions,
 *        at the memory-bandwidth limit.
 *
 * ## Calling convention
 * Every operand is a device buffer (buffer.h) plus an offset counted in **elements** of the
 * operation's type (not bytes), and every call takes n, the number of elements. The stream is a
 * library stream (stream.h) or NULL for CUDA's legacy default stream of the buffers' device,
 * exactly as for cm_launch(). Vector operations and the reductions that write a device buffer are
 * stream-ordered: they return once the work is queued. The `_to_host` reductions are synchronous:
 * they return when the value is in host memory.
 *
 * Any n is valid, 0 included (a vector operation of 0 elements queues nothing; a reduction of 0
 * elements gives the identity, see below), and any element offset: offsets that break the
 * 16-byte alignment of the vector loads are served by a scalar head and tail around a
 * 16-byte-vector body.
 *
 * ## Checks (before anything is queued)
 * CM_ERROR_INVALID_ARGUMENT, with a message that gives the numbers, for: a NULL, destroyed or
 * foreign buffer handle; offset + n past the end of a buffer (counted in elements, without
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
 * - **min, max, argmin, argmax** are exact. argmin / argmax give the **first** index (relative to
 *   x_offset) of the extreme value; -0.0 and +0.0 compare equal (the first one wins).
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

#include <cudamodel/buffer.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>
#include <cudamodel/stream.h>

CM_EXTERN_C_BEGIN

/** @brief The index argmin / argmax report for an empty input. */
#define CM_REDUCE_NO_INDEX UINT64_MAX

/* ====================================================================== vector operations */

/** @brief out[i] = a[i] + b[i], i < n (float). out may be a or b exactly (in place). */
CM_API cm_status_t cm_vector_add_f32(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                     const cm_buffer_t *a, size_t a_offset, const cm_buffer_t *b,
                                     size_t b_offset, size_t n);
/** @brief out[i] = a[i] + b[i] (double). */
CM_API cm_status_t cm_vector_add_f64(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                     const cm_buffer_t *a, size_t a_offset, const cm_buffer_t *b,
                                     size_t b_offset, size_t n);

/** @brief y[i] = alpha * x[i] + y[i] (one fused multiply-add, float). x may be y exactly. */
CM_API cm_status_t cm_vector_axpy_f32(cm_stream_t *stream, float alpha, const cm_buffer_t *x,
                                      size_t x_offset, cm_buffer_t *y, size_t y_offset, size_t n);
/** @brief y[i] = alpha * x[i] + y[i] (double). */
CM_API cm_status_t cm_vector_axpy_f64(cm_stream_t *stream, double alpha, const cm_buffer_t *x,
                                      size_t x_offset, cm_buffer_t *y, size_t y_offset, size_t n);

/** @brief out[i] = alpha * x[i] (float). out may be x exactly (scale in place). */
CM_API cm_status_t cm_vector_scale_f32(cm_stream_t *stream, float alpha, cm_buffer_t *out,
                                       size_t out_offset, const cm_buffer_t *x, size_t x_offset,
                                       size_t n);
/** @brief out[i] = alpha * x[i] (double). */
CM_API cm_status_t cm_vector_scale_f64(cm_stream_t *stream, double alpha, cm_buffer_t *out,
                                       size_t out_offset, const cm_buffer_t *x, size_t x_offset,
                                       size_t n);

/** @brief out[i] = value (float; any bit pattern, NaN payloads included, is stored as is). */
CM_API cm_status_t cm_vector_fill_f32(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                      float value, size_t n);
/** @brief out[i] = value (double). */
CM_API cm_status_t cm_vector_fill_f64(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                      double value, size_t n);

/** @brief out[i] = x[i] (float; bit copy). Partial overlap is refused; the exact alias is a no-op. */
CM_API cm_status_t cm_vector_copy_f32(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                      const cm_buffer_t *x, size_t x_offset, size_t n);
/** @brief out[i] = x[i] (double). */
CM_API cm_status_t cm_vector_copy_f64(cm_stream_t *stream, cm_buffer_t *out, size_t out_offset,
                                      const cm_buffer_t *x, size_t x_offset, size_t n);

/* ====================================================================== reductions
 * Device-result forms write one element at result_offset (counted in elements of the result
 * type: float for f32 sum/min/max/dot, double for f64, int64_t for sum_i32, int32_t for
 * min_i32/max_i32, uint64_t for argmin/argmax) in stream order.
 * `_to_host` forms are synchronous and write *out (and *value for argmin/argmax when not NULL). */

#define CM__REDUCE_DECL(name, T, R)                                                             \
    CM_API cm_status_t cm_reduce_##name(cm_stream_t *stream, const cm_buffer_t *x,              \
                                        size_t x_offset, size_t n, cm_buffer_t *result,         \
                                        size_t result_offset);                                  \
    CM_API cm_status_t cm_reduce_##name##_to_host(cm_stream_t *stream, const cm_buffer_t *x,    \
                                                  size_t x_offset, size_t n, R *out);

/** @brief Sum: float result, float64 accumulation (see the bound above). */
CM__REDUCE_DECL(sum_f32, float, float)
/** @brief Sum: double. */
CM__REDUCE_DECL(sum_f64, double, double)
/** @brief Sum of int32 values, exact in int64. */
CM__REDUCE_DECL(sum_i32, int32_t, int64_t)
/** @brief Minimum (NaN if any element is NaN). */
CM__REDUCE_DECL(min_f32, float, float)
CM__REDUCE_DECL(min_f64, double, double)
CM__REDUCE_DECL(min_i32, int32_t, int32_t)
/** @brief Maximum (NaN if any element is NaN). */
CM__REDUCE_DECL(max_f32, float, float)
CM__REDUCE_DECL(max_f64, double, double)
CM__REDUCE_DECL(max_i32, int32_t, int32_t)

#undef CM__REDUCE_DECL

/** @brief Index of the first minimum (first NaN if any) into a uint64_t element of result. */
CM_API cm_status_t cm_reduce_argmin_f32(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                        size_t n, cm_buffer_t *result, size_t result_offset);
CM_API cm_status_t cm_reduce_argmin_f64(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                        size_t n, cm_buffer_t *result, size_t result_offset);
/** @brief Index of the first maximum (first NaN if any). */
CM_API cm_status_t cm_reduce_argmax_f32(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                        size_t n, cm_buffer_t *result, size_t result_offset);
CM_API cm_status_t cm_reduce_argmax_f64(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                        size_t n, cm_buffer_t *result, size_t result_offset);

/** @brief Synchronous argmin/argmax: *index (CM_REDUCE_NO_INDEX for n = 0) and, when value is
 *         not NULL, the element there (the identity of the extreme for n = 0). */
CM_API cm_status_t cm_reduce_argmin_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                size_t x_offset, size_t n, uint64_t *index,
                                                float *value);
CM_API cm_status_t cm_reduce_argmin_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                size_t x_offset, size_t n, uint64_t *index,
                                                double *value);
CM_API cm_status_t cm_reduce_argmax_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                size_t x_offset, size_t n, uint64_t *index,
                                                float *value);
CM_API cm_status_t cm_reduce_argmax_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                                size_t x_offset, size_t n, uint64_t *index,
                                                double *value);

/** @brief Dot product sum x[i] * y[i] (float64 accumulation for f32). x may be y (x . x). */
CM_API cm_status_t cm_reduce_dot_f32(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                     const cm_buffer_t *y, size_t y_offset, size_t n,
                                     cm_buffer_t *result, size_t result_offset);
CM_API cm_status_t cm_reduce_dot_f64(cm_stream_t *stream, const cm_buffer_t *x, size_t x_offset,
                                     const cm_buffer_t *y, size_t y_offset, size_t n,
                                     cm_buffer_t *result, size_t result_offset);
CM_API cm_status_t cm_reduce_dot_f32_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                             size_t x_offset, const cm_buffer_t *y,
                                             size_t y_offset, size_t n, float *out);
CM_API cm_status_t cm_reduce_dot_f64_to_host(cm_stream_t *stream, const cm_buffer_t *x,
                                             size_t x_offset, const cm_buffer_t *y,
                                             size_t y_offset, size_t n, double *out);

CM_EXTERN_C_END

#endif /* CUDAMODEL_KERNELS_H */
