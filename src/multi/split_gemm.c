/*
 * cm_split_gemm (multi.h): a row-block GEMM over a device set. A and C are split arrays of rows
 * with the same parts; every member runs cm_gemm() on its rows against its own copy of B, on
 * the set's stream of that member. Every argument is checked before the first GEMM is queued,
 * so a wrong call queues nothing on any member.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/kernels.h>
#include <cudamodel/multi.h>

#include "../core/handle.h"
#include "../core/internal.h"
#include "multi_internal.h"

/* A split operand of cm_split_gemm whose element must be one row of `cols` elements of
 * `elem` bytes (`type` names them). */
static cm_status_t cm__sg_rows(const cm_split_t *h, const char *arg, size_t cols, size_t elem,
                               const char *type, const char *cols_name, const char *func,
                               const struct cm__split **out) {
    void *obj = NULL;
    CM_TRY(cm__handle_get(h, CM__KIND_SPLIT, arg, func, &obj));
    const struct cm__split *sp = obj;
    CM_TRY(cm__set_usable_check(sp->set, func));
    if (cols > SIZE_MAX / elem || sp->elem_bytes != cols * elem) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "create %s's split with one row per element: elem_bytes = %s x %zu (%s) = %zu",
                 arg, cols_name, elem, type, cols <= SIZE_MAX / elem ? cols * elem : 0);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "%s has elements of %zu bytes, but a row of %s = %zu %s elements is "
                        "%zu bytes; nothing was queued",
                        arg, sp->elem_bytes, cols_name, cols, type,
                        cols <= SIZE_MAX / elem ? cols * elem : 0);
    }
    *out = sp;
    return CM_OK;
}

cm_status_t cm_split_gemm(cm_gemm_precision_t precision, cm_gemm_op_t op_b, size_t n, size_t k,
                          float alpha, const cm_split_t *a_h, cm_buffer_t *const *b, size_t ldb,
                          float beta, cm_split_t *c_h) {
    static const char func[] = "cm_split_gemm";
    if ((unsigned)precision > CM_GEMM_FP32_3XTF32) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass CM_GEMM_FP32, _TF32, _BF16, _BF16_OUT_BF16 or _FP32_3XTF32",
                        "precision %d is not a cm_gemm_precision_t; nothing was queued",
                        (int)precision);
    }
    if (op_b != CM_GEMM_OP_N && op_b != CM_GEMM_OP_T) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "pass CM_GEMM_OP_N or CM_GEMM_OP_T",
                        "op_b %d is not a cm_gemm_op_t; nothing was queued", (int)op_b);
    }
    if (n == 0 || k == 0) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "a split GEMM needs rows of at least one element: pass n >= 1 and k >= 1 "
                        "(for C = beta C use cm_split_scale)",
                        "%s is 0; nothing was queued", n == 0 ? "n" : "k");
    }
    const bool bf16_in = precision == CM_GEMM_BF16 || precision == CM_GEMM_BF16_OUT_BF16;
    const size_t in_bytes = bf16_in ? sizeof(cm_bf16_t) : sizeof(float);
    const size_t out_bytes = precision == CM_GEMM_BF16_OUT_BF16 ? sizeof(cm_bf16_t) : sizeof(float);
    const char *in_type = bf16_in ? "cm_bf16_t" : "float";
    const char *out_type = out_bytes == sizeof(float) ? "float" : "cm_bf16_t";
    const struct cm__split *a = NULL, *c = NULL;
    CM_TRY(cm__sg_rows(a_h, "a", k, in_bytes, in_type, "k", func, &a));
    CM_TRY(cm__sg_rows(c_h, "c", n, out_bytes, out_type, "n", func, &c));
    if (a->set != c->set) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "create a and c on one device set: each member computes its own rows",
                        "a and c are splits of different device sets; nothing was queued");
    }
    if (a->n != c->n) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "a and c hold the m rows of A and of C: create both with length m",
                        "a has %zu rows but c has %zu; nothing was queued", a->n, c->n);
    }
    const struct cm__device_set *set = a->set;
    for (int i = 0; i < set->count; ++i) {
        if (a->parts[i].first == c->parts[i].first && a->parts[i].count == c->parts[i].count)
            continue;
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "the parts of two splits of m elements match when both elements are at least "
                 "256 bytes or of one size: pad the rows (k or n) or use cm_split_for_each with "
                 "rows of your own");
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__, func,
                        hint,
                        "member %d holds rows [%zu, %zu) of a but rows [%zu, %zu) of c (their "
                        "elements of %zu and %zu bytes cut at different rows); nothing was queued",
                        i, a->parts[i].first, a->parts[i].first + a->parts[i].count,
                        c->parts[i].first, c->parts[i].first + c->parts[i].count, a->elem_bytes,
                        c->elem_bytes);
    }
    /* B: stored k x n (N) or n x k (T), row-major */
    const size_t rows_b = op_b == CM_GEMM_OP_N ? k : n, cols_b = op_b == CM_GEMM_OP_N ? n : k;
    if (ldb < cols_b) {
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint, "ldb is the distance between rows of the stored B (%s: %zu x "
                 "%zu, row-major): pass at least %zu", op_b == CM_GEMM_OP_N ? "op N" : "op T",
                 rows_b, cols_b, cols_b);
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func, hint,
                        "ldb = %zu is less than %zu, the columns of the stored B; nothing was "
                        "queued", ldb, cols_b);
    }
    CM__REQUIRE(b != NULL, "pass an array of one B buffer per member of the set (b[i] on member "
                "i's device)", "b is NULL; nothing was queued");
    const size_t b_elems = (rows_b - 1) * ldb + cols_b; /* no overflow: checked below */
    const bool b_overflow = rows_b - 1 > (SIZE_MAX - cols_b) / ldb ||
                            (rows_b - 1) * ldb + cols_b > SIZE_MAX / in_bytes;
    for (int i = 0; i < set->count; ++i) {
        if (a->parts[i].count == 0) continue;
        if (b[i] == NULL) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__,
                            func, "pass a copy of B on every member that holds rows",
                            "b[%d] is NULL, but member %d (device %d) holds %zu rows; nothing "
                            "was queued", i, i, set->ordinals[i], a->parts[i].count);
        }
        if (b[i] == c->bufs[i]) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__,
                            func, "keep B in a buffer of its own: C's rows are written while B "
                            "is read",
                            "b[%d] is member %d's part of c; nothing was queued", i, i);
        }
        cm_buffer_info_t info;
        cm_status_t st = cm_buffer_info(b[i], &info);
        if (st != CM_OK) {
            cm_error_t *e = cm__detail();
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (b[%d] of %s; nothing was queued)", i, func);
            return st;
        }
        if (info.ordinal != set->ordinals[i]) {
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__,
                            func, "b[i] holds member i's copy of B: create it on that member's "
                            "device (cm_device_set_device(set, i, &dev))",
                            "b[%d] is a buffer of device %d, but member %d is device %d; "
                            "nothing was queued", i, info.ordinal, i, set->ordinals[i]);
        }
        if (b_overflow || b_elems * in_bytes > info.bytes) {
            char hint[CM_ERROR_HINT_MAX];
            snprintf(hint, sizeof hint, "B (%zu x %zu stored, ldb %zu) spans (%zu - 1) x %zu + "
                     "%zu %s elements from byte 0 of each b[i]: pass larger buffers or check "
                     "n, k and ldb", rows_b, cols_b, ldb, rows_b, ldb, cols_b, in_type);
            if (b_overflow)
                return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__,
                                func, hint, "B's extent overflows size_t; nothing was queued");
            return cm__fail(CM_ERROR_INVALID_ARGUMENT, set->ordinals[i], __FILE__, __LINE__,
                            func, hint,
                            "b[%d] holds %zu bytes, less than the %zu bytes B spans; nothing was "
                            "queued", i, info.bytes, b_elems * in_bytes);
        }
    }
    for (int i = 0; i < set->count; ++i) {
        const size_t rows = a->parts[i].count;
        if (rows == 0) continue;
        cm_status_t st = cm_gemm(set->streams[i], precision, CM_GEMM_ROW_MAJOR, CM_GEMM_OP_N, op_b,
                                 rows, n, k, alpha, a->bufs[i], 0, k, b[i], 0, ldb, beta,
                                 c->bufs[i], 0, n);
        if (st != CM_OK) {
            cm_error_t *e = cm__detail();
            cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
            cm__text_printf(&t, " (part %d of %s: rows [%zu, %zu), device %d)", i, func,
                            a->parts[i].first, a->parts[i].first + rows, set->ordinals[i]);
            return st;
        }
    }
    return CM_OK;
}
