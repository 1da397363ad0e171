/*
 * The public entry points of kernels.h: argument checks (handles, element ranges without
 * overflow, one device for every operand and the stream, overlap rules), then the launchers of
 * kernels/vector.cu and kernels/reduce.cu on the right device and stream.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/kernels.h>

#include "../core/internal.h"
#include "kernels.h"
#include "../memory/memory_internal.h"
#include "compute_internal.h"
#include "../exec/stream_internal.h"

/* ------------------------------------------------------------------ pure arithmetic */

unsigned cm__reduce_grid(size_t n, size_t elem_bytes, int sm_count, int blocks_per_sm) {
    const size_t per_block = (size_t)CM__REDUCE_THREADS * 64u; /* 64 bytes per thread at least */
    if (elem_bytes == 0) elem_bytes = 1;
    size_t cap = (size_t)(sm_count > 0 ? sm_count : 1) * (size_t)(blocks_per_sm > 0 ? blocks_per_sm : 4);
    if (cap > CM__REDUCE_MAX_BLOCKS) cap = CM__REDUCE_MAX_BLOCKS;
    /* blocks = ceil(n * elem_bytes / per_block) without overflowing n * elem_bytes */
    size_t per_block_elems = per_block / elem_bytes;
    if (per_block_elems == 0) per_block_elems = 1;
    size_t blocks = n / per_block_elems + (n % per_block_elems != 0);
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    return (unsigned)blocks;
}

cm__vec_plan_t cm__vector_plan(const uintptr_t *addrs, int count, size_t elem_bytes, size_t n) {
    cm__vec_plan_t p = {0, 0, 0, n};
    if (addrs == NULL || count < 1 || elem_bytes == 0 || elem_bytes > 16 || 16 % elem_bytes != 0)
        return p;
    const uintptr_t mis = addrs[0] % 16u;
    for (int i = 1; i < count; ++i)
        if (addrs[i] % 16u != mis) return p; /* no common 16-byte boundary: all scalar */
    size_t head = mis == 0 ? 0 : (16u - (size_t)mis) / elem_bytes;
    if (head > n) head = n;
    const size_t width = 16u / elem_bytes;
    p.vectorized = 1;
    p.head = head;
    p.nvec = (n - head) / width;
    p.tail = n - head - p.nvec * width;
    return p;
}

/* ------------------------------------------------------------------ operands */

typedef struct cm__operand {
    const char *arg;       /* "x", "out", ... */
    const cm_buffer_t *buf; /* the handle value */
    struct cm__buffer *obj; /* its object (after the checks) */
    size_t offset;         /* elements */
    size_t count;          /* elements used */
    size_t elem;           /* element bytes */
    unsigned char *ptr;    /* device address of element offset (after the checks) */
    int ordinal;
} cm__operand_t;

static const char *cm__type_name(size_t elem, int dtype) {
    if (dtype == CM__DT_I32) return elem == 8 ? "int64_t" : "int32_t";
    if (dtype < 0) return "uint64_t";
    return elem == 4 ? "float" : "double";
}

static cm_status_t cm__operand_check(cm__operand_t *o, int dtype, const char *func) {
    CM_TRY(cm__buffer_get(o->buf, o->arg, func, &o->obj));
    const size_t bytes = o->obj->a.bytes;
    const size_t cap = bytes / o->elem;
    o->ordinal = o->obj->a.dev->ordinal;
    if (o->offset <= cap && o->count <= cap - o->offset) {
        /* an empty buffer has no memory (NULL): no arithmetic on it */
        o->ptr = o->obj->ptr != NULL ? (unsigned char *)o->obj->ptr + o->offset * o->elem : NULL;
        return CM_OK;
    }
    const char *tn = cm__type_name(o->elem, dtype);
    char hint[CM_ERROR_HINT_MAX];
    if (o->offset > cap) {
        snprintf(hint, sizeof hint, "byte offsets into %s run from 0 to %zu (%zu bytes hold %zu "
                 "%s elements)", o->arg, cap * o->elem, bytes, cap, tn);
    } else {
        snprintf(hint, sizeof hint, "from byte offset %zu (element %zu) at most %zu %s elements fit "
                 "in %s; pass a smaller n or a larger buffer", o->offset * o->elem, o->offset,
                 cap - o->offset, tn, o->arg);
    }
    if (o->count > SIZE_MAX - o->offset) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, o->ordinal, __FILE__, __LINE__, func, hint,
                        "%s range out of bounds: element offset %zu + %zu elements overflows "
                        "size_t (%s holds %zu %s elements); nothing was queued",
                        o->arg, o->offset, o->count, o->arg, cap, tn);
    }
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, o->ordinal, __FILE__, __LINE__, func, hint,
                    "%s range out of bounds: element offset %zu + %zu elements = %zu is past the "
                    "end of %s (%zu bytes: %zu %s elements); nothing was queued",
                    o->arg, o->offset, o->count, o->offset + o->count, o->arg, bytes, cap, tn);
}

/* Every operand checked, all on one device (returned in *ordinal). */
static cm_status_t cm__operands_check(cm__operand_t *ops, int count, int dtype, const char *func,
                                      int *ordinal) {
    for (int i = 0; i < count; ++i) CM_TRY(cm__operand_check(&ops[i], dtype, func));
    for (int i = 1; i < count; ++i) {
        if (ops[i].ordinal != ops[0].ordinal) {
            char hint[CM_ERROR_HINT_MAX];
            snprintf(hint, sizeof hint, "every operand must be memory of one GPU; copy %s to "
                     "device %d first (cm_buffer_copy())", ops[i].arg, ops[0].ordinal);
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, ops[0].ordinal, __FILE__, __LINE__, func,
                            hint, "%s is on device %d but %s is on device %d", ops[i].arg,
                            ops[i].ordinal, ops[0].arg, ops[0].ordinal);
        }
    }
    *ordinal = ops[0].ordinal;
    return CM_OK;
}

/* Byte ranges of two operands intersect (empty ranges never do). */
static bool cm__overlap(const cm__operand_t *a, const cm__operand_t *b) {
    if (a->obj != b->obj || a->count == 0 || b->count == 0) return false;
    size_t a0 = a->offset * a->elem, a1 = a0 + a->count * a->elem;
    size_t b0 = b->offset * b->elem, b1 = b0 + b->count * b->elem;
    return a0 < b1 && b0 < a1;
}

/* Inputs may be the output exactly (same buffer, same offset) but not overlap it otherwise. */
static cm_status_t cm__check_alias(const cm__operand_t *out, const cm__operand_t *in,
                                   bool exact_ok, const char *func) {
    if (!cm__overlap(out, in)) return CM_OK;
    if (exact_ok && out->offset == in->offset && out->elem == in->elem) return CM_OK;
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "%s", exact_ok
             ? "pass the same offset to work in place, or use ranges that do not overlap"
             : "write the result outside the input range");
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, out->ordinal, __FILE__, __LINE__, func, hint,
                    "%s (elements %zu .. %zu) overlaps %s (elements %zu .. %zu) of the same buffer "
                    "without being the same range",
                    out->arg, out->offset, out->offset + out->count, in->arg, in->offset,
                    in->offset + in->count);
}

/* Multiprocessors of a device, read once per ordinal (a fact of the ordinal for the life of the
 * process) and cached without a lock: every thread that races to fill a slot stores the same
 * value. It sizes the grids, so it must not change between calls (the reductions' bits depend on
 * the grid): a failed query is reported, never replaced by a guess. */
static _Atomic int cm__sm_counts[CM__MAX_DEVICES];

static cm_status_t cm__sm_count(int ordinal, const char *func, int *out) {
    const bool cached = ordinal >= 0 && ordinal < CM__MAX_DEVICES;
    if (cached) {
        int known = atomic_load_explicit(&cm__sm_counts[ordinal], memory_order_relaxed);
        if (known > 0) {
            *out = known;
            return CM_OK;
        }
    }
    int sms = 0;
    cudaError_t err = cm__cuda.device_get_attribute(&sms, cudaDevAttrMultiProcessorCount, ordinal);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaDeviceGetAttribute(multiprocessor count, device %d) in %s",
                             ordinal, func);
    if (sms <= 0) { /* no answer worth keeping: one multiprocessor, asked again next time */
        *out = 1;
        return CM_OK;
    }
    if (cached) atomic_store_explicit(&cm__sm_counts[ordinal], sms, memory_order_relaxed);
    *out = sms;
    return CM_OK;
}

/* ------------------------------------------------------------------ vector operations */

static cm_status_t cm__vector(int op, int dtype, cm_stream_t *stream, cm_buffer_t *out,
                              size_t out_off, const cm_buffer_t *a, size_t a_off,
                              const cm_buffer_t *b, size_t b_off, const void *alpha, size_t n,
                              const char *func, const char *a_name, const char *b_name,
                              const char *out_name) {
    const size_t elem = dtype == CM__DT_F32 ? 4u : 8u;
    cm__operand_t ops[3];
    int count = 1;
    memset(ops, 0, sizeof ops);
    ops[0] = (cm__operand_t){out_name, out, NULL, out_off, n, elem, NULL, -1};
    if (a != NULL || op != CM__VOP_FILL)
        ops[count++] = (cm__operand_t){a_name, a, NULL, a_off, n, elem, NULL, -1};
    if (op == CM__VOP_ADD || (op == CM__VOP_AXPY && b != NULL))
        ops[count++] = (cm__operand_t){b_name, b, NULL, b_off, n, elem, NULL, -1};
    int ordinal = -1;
    CM_TRY(cm__operands_check(ops, count, dtype, func, &ordinal));
    for (int i = 1; i < count; ++i) CM_TRY(cm__check_alias(&ops[0], &ops[i], true, func));
    cudaStream_t cs = 0;
    CM_TRY(cm__stream_for_device(stream, ordinal, "buffers", func, &cs));
    if (n == 0) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    int sms = 1;
    if (alpha != NULL) {
        cm_status_t st = cm__sm_count(ordinal, func, &sms);
        if (st != CM_OK) {
            cm__leave(&sc);
            return st;
        }
    }
    CM__NVTX_PUSH(func);
    const void *pa = count > 1 ? (const void *)ops[1].ptr : NULL;
    const void *pb = count > 2 ? (const void *)ops[2].ptr : NULL;
    void *pout = ops[0].ptr;
    cudaError_t err;
    const char *call;
    if (op == CM__VOP_AXPY && pb == NULL) { /* y = alpha x + y: out is y, the second input */
        pb = pout;
    }
    if (alpha == NULL) { /* copy */
        call = "cudaMemcpyAsync";
        err = pout == pa ? cudaSuccess
                         : cm__cuda.memcpy_async(pout, pa, n * elem, cudaMemcpyDeviceToDevice,
                                                 cs);
    } else {
        call = "vector kernel";
        err = cm__kernel_vector(op, dtype, pout, pa, pb, alpha, n, sms, cs);
    }
    cm_status_t status = CM_OK;
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu elements) in %s", call, n, func);
    else if (stream == NULL)
        status = cm__finish_sync(func);
    CM__NVTX_POP();
    cm__leave(&sc);
    return status;
}

/* The internal type of a public one this module takes (-1: none). */
static int cm__dt_of(cm_dtype_t dtype) {
    switch (dtype) {
    case CM_DTYPE_F32: return CM__DT_F32;
    case CM_DTYPE_F64: return CM__DT_F64;
    case CM_DTYPE_I32: return CM__DT_I32;
    default: return -1;
    }
}

const char *cm__dtype_text(cm_dtype_t dtype) {
    static const char *const names[] = {"CM_DTYPE_I8",  "CM_DTYPE_U8",  "CM_DTYPE_I32",
                                        "CM_DTYPE_U32", "CM_DTYPE_I64", "CM_DTYPE_U64",
                                        "CM_DTYPE_F16", "CM_DTYPE_F32", "CM_DTYPE_F64",
                                        "CM_DTYPE_BF16"};
    return (unsigned)dtype < sizeof names / sizeof names[0] ? names[dtype] : "an unknown type";
}

const char *cm__vector_op_text(cm_vector_op_t op) {
    static const char *const names[] = {"CM_VECTOR_ADD", "CM_VECTOR_AXPY", "CM_VECTOR_SCALE",
                                        "CM_VECTOR_FILL", "CM_VECTOR_COPY"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "an unknown operation";
}

const char *cm__reduce_op_text(cm_reduce_op_t op) {
    static const char *const names[] = {"CM_REDUCE_SUM",    "CM_REDUCE_MIN",    "CM_REDUCE_MAX",
                                        "CM_REDUCE_ARGMIN", "CM_REDUCE_ARGMAX", "CM_REDUCE_DOT"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "an unknown operation";
}

cm_status_t cm__elem_offset(size_t offset, size_t elem, const char *arg, const char *func,
                            size_t *elems) {
    if (offset % elem == 0) {
        *elems = offset / elem;
        return CM_OK;
    }
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint, "offsets count bytes: pass a multiple of %zu (element i is at "
             "offset i * %zu)", elem, elem);
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                    "%s %zu is not a multiple of the %zu-byte element; nothing was queued", arg,
                    offset, elem);
}

cm_status_t cm__finish_sync(const char *func) {
    cudaError_t err = cm__cuda.stream_synchronize(0);
    if (err == cudaSuccess) return CM_OK;
    return cm__cuda_fail(err, __FILE__, __LINE__,
                         "cudaStreamSynchronize(0) after %s (synchronous: NULL stream)", func);
}

cm_status_t cm__unread_operand(const void *p, const char *arg, const char *opname,
                               const char *func) {
    if (p == NULL) return CM_OK;
    return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                    "pass NULL (and offset 0) for an operand the operation does not read",
                    "%s does not read %s, but %s is not NULL", opname, arg, arg);
}

cm_status_t cm_vector(cm_stream_t *stream, cm_vector_op_t op, cm_dtype_t dtype, size_t n,
                      const void *alpha, cm_buffer_t *out, size_t out_offset, const cm_buffer_t *x,
                      size_t x_offset, const cm_buffer_t *y, size_t y_offset) {
    /* the typed forms' names, so that a message names the call the user wrote */
    static const char *const funcs[5][2] = {
        {"cm_vector_add_f32", "cm_vector_add_f64"},     {"cm_vector_axpy_f32", "cm_vector_axpy_f64"},
        {"cm_vector_scale_f32", "cm_vector_scale_f64"}, {"cm_vector_fill_f32", "cm_vector_fill_f64"},
        {"cm_vector_copy_f32", "cm_vector_copy_f64"}};
    if ((unsigned)op > CM_VECTOR_COPY) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass CM_VECTOR_ADD, _AXPY, _SCALE, _FILL or _COPY",
                        "op %d is not a cm_vector_op_t", (int)op);
    }
    const char *opname = cm__vector_op_text(op);
    const int dt = cm__dt_of(dtype);
    if (dt != CM__DT_F32 && dt != CM__DT_F64) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "pass CM_DTYPE_F32 or CM_DTYPE_F64",
                        "%s is not available for %s: vector operations take float and double",
                        opname, cm__dtype_text(dtype));
    }
    const char *func = funcs[op][dt == CM__DT_F64];
    const bool reads_alpha = op == CM_VECTOR_AXPY || op == CM_VECTOR_SCALE || op == CM_VECTOR_FILL;
    if (reads_alpha && alpha == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        dt == CM__DT_F32 ? "pass the address of a float" : "pass the address of a double",
                        "%s reads *alpha, but alpha is NULL", opname);
    }
    if (!reads_alpha) CM_TRY(cm__unread_operand(alpha, "alpha", opname, func));
    if (op == CM_VECTOR_FILL) CM_TRY(cm__unread_operand(x, "x", opname, func));
    if (op != CM_VECTOR_ADD && op != CM_VECTOR_AXPY) CM_TRY(cm__unread_operand(y, "y", opname, func));
    const size_t esz = dt == CM__DT_F32 ? 4u : 8u;
    /* only the operands the operation reads (an unread one is NULL, its offset ignored) */
    CM_TRY(cm__elem_offset(out_offset, esz, "out_offset", func, &out_offset));
    if (x != NULL) CM_TRY(cm__elem_offset(x_offset, esz, "x_offset", func, &x_offset));
    if (y != NULL) CM_TRY(cm__elem_offset(y_offset, esz, "y_offset", func, &y_offset));
    const double one64 = 1.0;
    const float one32 = 1.0f;
    const void *one = dt == CM__DT_F32 ? (const void *)&one32 : (const void *)&one64;
    switch (op) {
    case CM_VECTOR_ADD:
        return cm__vector(CM__VOP_ADD, dt, stream, out, out_offset, x, x_offset, y, y_offset, one,
                          n, func, "x", "y", "out");
    case CM_VECTOR_AXPY:
        if (y == NULL) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                            "pass the buffer to add (out itself, with out's offset, for y = alpha "
                            "x + y in place)", "y is NULL");
        }
        return cm__vector(CM__VOP_AXPY, dt, stream, out, out_offset, x, x_offset, y, y_offset,
                          alpha, n, func, "x", "y", out == y && out_offset == y_offset ? "y" : "out");
    case CM_VECTOR_SCALE:
        return cm__vector(CM__VOP_SCALE, dt, stream, out, out_offset, x, x_offset, NULL, 0, alpha,
                          n, func, "x", "", "out");
    case CM_VECTOR_FILL:
        return cm__vector(CM__VOP_FILL, dt, stream, out, out_offset, NULL, 0, NULL, 0, alpha, n,
                          func, "", "", "out");
    case CM_VECTOR_COPY:
        return cm__vector(CM__VOP_SCALE, dt, stream, out, out_offset, x, x_offset, NULL, 0, NULL, n,
                          func, "x", "", "out");
    }
    return CM_OK;
}

/* ------------------------------------------------------------------ reductions */

/* Bytes of the device result of op on dtype (argmin/argmax: a uint64_t index). */
static size_t cm__result_bytes(int op, int dtype) {
    if (op == CM__ROP_ARGMIN || op == CM__ROP_ARGMAX) return 8;
    if (dtype == CM__DT_I32) return op == CM__ROP_SUM ? 8 : 4;
    return dtype == CM__DT_F32 ? 4 : 8;
}

/* Bytes of the raw partial of op on dtype (CM__REDUCE_STORE_RAW, cm__reduce_partial). */
static size_t cm__partial_bytes(int op, int dtype) {
    const size_t elem = dtype == CM__DT_F64 ? 8u : 4u;
    if (op == CM__ROP_ARGMIN || op == CM__ROP_ARGMAX) return 8 + elem;
    if (op == CM__ROP_SUM || op == CM__ROP_DOT) return 8;
    return elem;
}

/*
 * One reduction. Device result: result/result_off (host_out NULL). Host result: host_out gets
 * the result bytes (argmin/argmax: the index), host_value (may be NULL) the extreme's value.
 * Partial (partial_slot not NULL, to_host true): the raw partial is queued for copying into the
 * pinned partial_slot and the call returns without waiting.
 */
static cm_status_t cm__reduce_impl(int op, int dtype, cm_stream_t *stream, const cm_buffer_t *x,
                                   size_t x_off, const cm_buffer_t *y, size_t y_off, size_t n,
                                   cm_buffer_t *result, size_t result_off, void *host_out,
                                   void *host_value, bool to_host, void *partial_slot,
                                   const char *func) {
    const size_t elem = dtype == CM__DT_F64 ? 8u : 4u;
    const size_t rbytes = cm__result_bytes(op, dtype);
    /* result_off comes in bytes (the public convention) */
    CM_TRY(cm__elem_offset(result_off, rbytes, "result_offset", func, &result_off));
    if (to_host && partial_slot == NULL) {
        CM__REQUIRE(host_out != NULL, "pass the address of a host variable for the result",
                    "%s: the result pointer is NULL", func);
    }
    cm__operand_t ops[3];
    memset(ops, 0, sizeof ops);
    int count = 0;
    ops[count++] = (cm__operand_t){"x", x, NULL, x_off, n, elem, NULL, -1};
    if (op == CM__ROP_DOT) ops[count++] = (cm__operand_t){"y", y, NULL, y_off, n, elem, NULL, -1};
    if (!to_host) {
        int rtype = (op == CM__ROP_ARGMIN || op == CM__ROP_ARGMAX) ? -1 : dtype;
        ops[count] = (cm__operand_t){"result", result, NULL, result_off, 1, rbytes, NULL, -1};
        /* checked alone first: its message names the result's own element type */
        CM_TRY(cm__operand_check(&ops[0], dtype, func));
        if (count > 1) CM_TRY(cm__operand_check(&ops[1], dtype, func));
        CM_TRY(cm__operand_check(&ops[count], rtype, func));
        ++count;
    }
    int ordinal = -1;
    CM_TRY(cm__operands_check(ops, count, dtype, func, &ordinal));
    if (!to_host) {
        for (int i = 0; i < count - 1; ++i)
            CM_TRY(cm__check_alias(&ops[count - 1], &ops[i], false, func));
    }
    cudaStream_t cs = 0;
    CM_TRY(cm__stream_for_device(stream, ordinal, "buffers", func, &cs));
    CM_TRY(cm__context_guard(ordinal));
    /* the operands' device object: its pool and the legacy stream's scratch */
    struct cm__device *const dev = ops[0].obj->a.dev;
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    int sms = 1;
    cm_status_t status = cm__sm_count(ordinal, func, &sms);
    if (status != CM_OK) {
        cm__leave(&sc);
        return status;
    }
    CM__NVTX_PUSH(func);
    const unsigned grid = cm__reduce_grid(n, op == CM__ROP_DOT ? 2 * elem : elem, sms,
                                          cm__kernel_reduce_blocks_per_sm(op, dtype));
    const size_t scratch_bytes = CM__REDUCE_PARTIALS_OFFSET + (size_t)grid * CM__REDUCE_PARTIAL_BYTES;
    void *scratch = NULL;
    cudaError_t err = cudaSuccess;
    /* The stream's own zeroed scratch (one launch, no memset, no allocation per call), except:
     * under capture (a graph may replay on another stream: the graph owns a scratch of its own),
     * and for a host result on the legacy stream, which every thread shares (the result slot
     * must stay put from the kernel to the copy). */
    const bool capturing = cm__stream_capturing(cs);
    if (!capturing && !(to_host && stream == NULL)) {
        status = cm__stream_scratch(dev, stream, cs, CM__REDUCE_SCRATCH_BYTES, &scratch);
        if (status != CM_OK) goto out;
    }
    const bool owned = scratch == NULL;
    /* otherwise stream-ordered scratch from the device's pool; a device without memory pools
     * gets cudaMalloc, and cudaFree (which waits for the device) makes the call synchronous */
    const cudaMemPool_t pool = dev->pool; /* set when the device was opened, never changed */
    const bool pooled = owned && (capturing || pool != NULL);
    const char *alloc_call = capturing ? "cudaMallocAsync"
                             : pooled  ? "cudaMallocFromPoolAsync"
                                       : "cudaMalloc";
    if (!owned)
        err = cudaSuccess;
    else if (capturing) /* a graph memory node: the graph owns the scratch of each replay */
        err = cm__cuda.malloc_async(&scratch, scratch_bytes, cs);
    else if (pooled)
        err = cm__cuda.malloc_from_pool_async(&scratch, scratch_bytes, pool, cs);
    else
        err = cm__cuda.device_malloc(&scratch, scratch_bytes);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__,
                               "%s(%zu bytes of reduction scratch) in %s", alloc_call,
                               scratch_bytes, func);
        goto out;
    }
    {
        unsigned char *slot = (unsigned char *)scratch + CM__REDUCE_RESULT_OFFSET;
        void *dst = to_host ? (void *)slot : (void *)ops[count - 1].ptr;
        const void *py = op == CM__ROP_DOT ? (const void *)ops[1].ptr : NULL;
        err = cm__kernel_reduce(op, dtype, ops[0].ptr, py, n, grid, scratch, owned ? 0 : 1, dst,
                                partial_slot != NULL ? CM__REDUCE_STORE_RAW : to_host ? 1 : 0, cs);
        if (err != cudaSuccess) {
            status = cm__cuda_fail(err, __FILE__, __LINE__, "reduction kernel (%zu elements, %u "
                                   "blocks) in %s", n, grid, func);
        }
        unsigned char host_slot[16];
        memset(host_slot, 0, sizeof host_slot);
        /* only the bytes the kernel wrote (compute-sanitizer's initcheck tracks the rest) */
        const bool arg = op == CM__ROP_ARGMIN || op == CM__ROP_ARGMAX;
        const size_t copy_bytes = partial_slot != NULL ? cm__partial_bytes(op, dtype)
                                  : arg                  ? 8 + elem
                                                         : rbytes;
        if (status == CM_OK && to_host) {
            err = cm__cuda.memcpy_async(partial_slot != NULL ? partial_slot : (void *)host_slot,
                                        slot, copy_bytes, cudaMemcpyDeviceToHost, cs);
            if (err != cudaSuccess)
                status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemcpyAsync(result to host) "
                                       "in %s", func);
        }
        err = !owned  ? cudaSuccess
              : pooled ? cm__cuda.free_async(scratch, cs)
                       : cm__cuda.device_free(scratch);
        if (err != cudaSuccess && status == CM_OK)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "freeing the reduction scratch in %s",
                                   func);
        if (status == CM_OK && to_host && partial_slot == NULL) {
            err = cm__cuda.stream_synchronize(cs);
            if (err != cudaSuccess) {
                status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaStreamSynchronize after %s",
                                       func);
            } else {
                memcpy(host_out, host_slot, rbytes);
                if (host_value != NULL) memcpy(host_value, host_slot + 8, elem);
            }
        }
        if (status == CM_OK && !to_host && stream == NULL) status = cm__finish_sync(func);
    }
out:
    CM__NVTX_POP();
    cm__leave(&sc);
    return status;
}

static cm_status_t cm__reduce(int op, int dtype, cm_stream_t *stream, const cm_buffer_t *x,
                              size_t x_off, const cm_buffer_t *y, size_t y_off, size_t n,
                              cm_buffer_t *result, size_t result_off, void *host_out,
                              void *host_value, bool to_host, const char *func) {
    return cm__reduce_impl(op, dtype, stream, x, x_off, y, y_off, n, result, result_off, host_out,
                           host_value, to_host, NULL, func);
}

cm_status_t cm__reduce_partial(int op, int dtype, cm_stream_t *stream, const cm_buffer_t *x,
                               size_t x_offset, const cm_buffer_t *y, size_t y_offset, size_t n,
                               void *pinned_slot, const char *func) {
    CM__REQUIRE(pinned_slot != NULL, "internal: pass a pinned result slot", "%s: slot is NULL",
                func);
    return cm__reduce_impl(op, dtype, stream, x, x_offset, y, y_offset, n, NULL, 0, pinned_slot,
                           NULL, true, pinned_slot, func);
}

_Static_assert((int)CM_REDUCE_SUM == CM__ROP_SUM && (int)CM_REDUCE_MIN == CM__ROP_MIN &&
                   (int)CM_REDUCE_MAX == CM__ROP_MAX && (int)CM_REDUCE_ARGMIN == CM__ROP_ARGMIN &&
                   (int)CM_REDUCE_ARGMAX == CM__ROP_ARGMAX && (int)CM_REDUCE_DOT == CM__ROP_DOT,
               "the public reduction operations are the kernels' numbers");

/* Checks of the public reduction calls shared by the device and host forms; on CM_OK *dt is
 * the internal type and *func the typed form's name. */
static cm_status_t cm__reduce_args(cm_reduce_op_t op, cm_dtype_t dtype, const cm_buffer_t *y,
                                   bool to_host, int *dt, const char **func) {
    /* the typed forms' names (static storage: a stream keeps the name of its last operation) */
    static const char *const names[6][3][2] = {
        {{"cm_reduce_sum_f32", "cm_reduce_sum_f32_to_host"},
         {"cm_reduce_sum_f64", "cm_reduce_sum_f64_to_host"},
         {"cm_reduce_sum_i32", "cm_reduce_sum_i32_to_host"}},
        {{"cm_reduce_min_f32", "cm_reduce_min_f32_to_host"},
         {"cm_reduce_min_f64", "cm_reduce_min_f64_to_host"},
         {"cm_reduce_min_i32", "cm_reduce_min_i32_to_host"}},
        {{"cm_reduce_max_f32", "cm_reduce_max_f32_to_host"},
         {"cm_reduce_max_f64", "cm_reduce_max_f64_to_host"},
         {"cm_reduce_max_i32", "cm_reduce_max_i32_to_host"}},
        {{"cm_reduce_argmin_f32", "cm_reduce_argmin_f32_to_host"},
         {"cm_reduce_argmin_f64", "cm_reduce_argmin_f64_to_host"},
         {"cm_reduce", "cm_reduce_to_host"}},
        {{"cm_reduce_argmax_f32", "cm_reduce_argmax_f32_to_host"},
         {"cm_reduce_argmax_f64", "cm_reduce_argmax_f64_to_host"},
         {"cm_reduce", "cm_reduce_to_host"}},
        {{"cm_reduce_dot_f32", "cm_reduce_dot_f32_to_host"},
         {"cm_reduce_dot_f64", "cm_reduce_dot_f64_to_host"},
         {"cm_reduce", "cm_reduce_to_host"}}};
    if ((unsigned)op > CM_REDUCE_DOT) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass CM_REDUCE_SUM, _MIN, _MAX, _ARGMIN, _ARGMAX or _DOT",
                        "op %d is not a cm_reduce_op_t", (int)op);
    }
    *dt = cm__dt_of(dtype);
    const bool int_ok = op == CM_REDUCE_SUM || op == CM_REDUCE_MIN || op == CM_REDUCE_MAX;
    if (*dt < 0 || (*dt == CM__DT_I32 && !int_ok)) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        int_ok ? "pass CM_DTYPE_F32, CM_DTYPE_F64 or CM_DTYPE_I32"
                               : "pass CM_DTYPE_F32 or CM_DTYPE_F64",
                        "%s is not available for %s", cm__reduce_op_text(op),
                        cm__dtype_text(dtype));
    }
    *func = names[op][*dt][to_host];
    if (op == CM_REDUCE_DOT) return CM_OK;
    return cm__unread_operand(y, "y", cm__reduce_op_text(op), *func);
}

cm_status_t cm_reduce(cm_stream_t *stream, cm_reduce_op_t op, cm_dtype_t dtype, size_t n,
                      const cm_buffer_t *x, size_t x_offset, const cm_buffer_t *y, size_t y_offset,
                      cm_buffer_t *result, size_t result_offset) {
    int dt = -1;
    const char *func = __func__;
    CM_TRY(cm__reduce_args(op, dtype, y, false, &dt, &func));
    const size_t esz = dt == CM__DT_F64 ? 8u : 4u;
    CM_TRY(cm__elem_offset(x_offset, esz, "x_offset", func, &x_offset));
    if (y != NULL) CM_TRY(cm__elem_offset(y_offset, esz, "y_offset", func, &y_offset));
    return cm__reduce((int)op, dt, stream, x, x_offset, y, y_offset, n, result, result_offset, NULL,
                      NULL, false, func);
}

cm_status_t cm_reduce_to_host(cm_stream_t *stream, cm_reduce_op_t op, cm_dtype_t dtype, size_t n,
                              const cm_buffer_t *x, size_t x_offset, const cm_buffer_t *y,
                              size_t y_offset, void *result, void *value) {
    int dt = -1;
    const char *func = __func__;
    CM_TRY(cm__reduce_args(op, dtype, y, true, &dt, &func));
    if (value != NULL && op != CM_REDUCE_ARGMIN && op != CM_REDUCE_ARGMAX) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass NULL for value: only argmin and argmax report an element there",
                        "value is not NULL");
    }
    const size_t esz = dt == CM__DT_F64 ? 8u : 4u;
    CM_TRY(cm__elem_offset(x_offset, esz, "x_offset", func, &x_offset));
    if (y != NULL) CM_TRY(cm__elem_offset(y_offset, esz, "y_offset", func, &y_offset));
    return cm__reduce((int)op, dt, stream, x, x_offset, y, y_offset, n, NULL, 0, result, value, true,
                      func);
}
