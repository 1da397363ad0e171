/*
 * kernels.h on a real GPU: every vector operation and reduction x type x sizes {0, 1, 31, 32,
 * 33, 1023, 2^20 + 7} x element offsets {0, 1, 3} (offsets that break the 16-byte alignment;
 * passed in bytes, as kernels.h counts them), alternating NULL (synchronous, on the legacy
 * default stream) and a pooled stream. Random inputs drawn fresh for each
 * case; outputs poisoned (all bytes 0xFF: NaN) first and every element checked, including the
 * poison left around the range; references in float64 on the CPU; sums and dots within the bound
 * kernels.h states; argmin / argmax first index with ties; NaN rules; empty inputs; the same
 * bits on repeated calls; operands misaligned differently (the scalar path); byte offsets that
 * are not a multiple of the element refused; a NULL-stream result complete on return without
 * any fence. Large cases at
 * 2^28 - 3 elements with every operand at element offset 1: every vector operation on float and
 * every reduction on float, double and int32 (sum/min/max), each skipped when the device has
 * less free memory than it needs (at most 4 GiB + 256 MiB).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/kernels.h>
#include <cudamodel/stream.h>

static const size_t sizes[] = {0, 1, 31, 32, 33, 1023, ((size_t)1 << 20) + 7};
static const size_t offsets[] = {0, 1, 3};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define NOFFS (sizeof offsets / sizeof offsets[0])
#define PAD 5 /* poisoned elements after each range */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void) { return cm_test_rand(&rng_state); }
/* uniform in [-1, 1) with the full mantissa */
static double rnd_unit(void) { return cm_test_rand_unit(&rng_state); }

typedef struct ctx {
    cm_device_t *dev;
    cm_stream_t *stream;
} ctx_t;

static ctx_t c;

static int setup(void **state) {
    (void)state;
    return cm_test_gpu_setup(&c.dev, &c.stream);
}

static int teardown(void **state) {
    (void)state;
    return cm_test_gpu_teardown(&c.dev, &c.stream);
}

/* the stream for case k: NULL (synchronous, the legacy default stream) or the pooled stream */
static cm_stream_t *stream_for(size_t k) { return (k & 1) ? c.stream : NULL; }

static void sync_all(void) {
    CM_ASSERT_OK(cm_stream_synchronize(c.stream));
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
}

static cm_buffer_t *upload(const void *h, size_t bytes) {
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &b));
    if (bytes > 0) CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, h, bytes));
    return b;
}

static void download(const cm_buffer_t *b, void *h, size_t bytes) {
    sync_all();
    if (bytes > 0) CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, h, bytes));
}

/* host array of total elements of elem bytes: random values (floats in [-1, 1), ints in
 * [-2^20, 2^20)) */
static void *random_array(size_t total, size_t elem, int is_int) {
    void *p = malloc(total * elem + 1);
    assert_non_null(p);
    for (size_t i = 0; i < total; ++i) {
        if (is_int) {
            int32_t v = (int32_t)(rnd() % (1u << 21)) - (1 << 20);
            memcpy((char *)p + i * 4, &v, 4);
        } else if (elem == 4) {
            float v = (float)rnd_unit();
            memcpy((char *)p + i * 4, &v, 4);
        } else {
            double v = rnd_unit();
            memcpy((char *)p + i * 8, &v, 8);
        }
    }
    return p;
}

static double get(const void *p, size_t i, size_t elem) {
    if (elem == 4) {
        float f;
        memcpy(&f, (const char *)p + i * 4, 4);
        return f;
    }
    double d;
    memcpy(&d, (const char *)p + i * 8, 8);
    return d;
}

/* ---------------------------------------------------------------- vector operations */

enum { OP_ADD, OP_AXPY, OP_SCALE, OP_FILL, OP_COPY, OP_COUNT };
static const char *op_names[] = {"add", "axpy", "scale", "fill", "copy"};

static cm_status_t run_vector(int op, size_t elem, cm_stream_t *s, cm_buffer_t *out, size_t off,
                              cm_buffer_t *a, cm_buffer_t *b, size_t n, double alpha) {
    const size_t ob = off * elem; /* the element offset, in bytes as kernels.h counts */
    if (elem == 4) {
        switch (op) {
        case OP_ADD: return cm_vector_add_f32(s, out, ob, a, ob, b, ob, n);
        case OP_AXPY: return cm_vector_axpy_f32(s, (float)alpha, a, ob, out, ob, n);
        case OP_SCALE: return cm_vector_scale_f32(s, (float)alpha, out, ob, a, ob, n);
        case OP_FILL: return cm_vector_fill_f32(s, out, ob, (float)alpha, n);
        default: return cm_vector_copy_f32(s, out, ob, a, ob, n);
        }
    }
    switch (op) {
    case OP_ADD: return cm_vector_add_f64(s, out, ob, a, ob, b, ob, n);
    case OP_AXPY: return cm_vector_axpy_f64(s, alpha, a, ob, out, ob, n);
    case OP_SCALE: return cm_vector_scale_f64(s, alpha, out, ob, a, ob, n);
    case OP_FILL: return cm_vector_fill_f64(s, out, ob, alpha, n);
    default: return cm_vector_copy_f64(s, out, ob, a, ob, n);
    }
}

static void check_vector_case(int op, size_t elem, size_t n, size_t off, size_t k) {
    const size_t total = off + n + PAD;
    const size_t bytes = total * elem;
    void *ha = random_array(total, elem, 0);
    void *hb = random_array(total, elem, 0);
    unsigned char *ho = malloc(bytes + 1);
    assert_non_null(ho);
    /* representable in the element type, so the float64 reference uses the same scalar */
    const double alpha = elem == 4 ? (double)(float)(rnd_unit() * 3.0) : rnd_unit() * 3.0;
    cm_buffer_t *a = upload(ha, bytes), *b = upload(hb, bytes), *out = NULL;
    if (op == OP_AXPY) {
        out = b; /* y is both input and output */
    } else {
        CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &out));
        if (bytes > 0) CM_ASSERT_OK(cm_buffer_set(NULL, out, 0, bytes, 0xFF));
    }
    CM_ASSERT_OK(run_vector(op, elem, stream_for(k), out, off, a, b, n, alpha));
    download(out, ho, bytes);
    size_t bad = 0;
    bool printed = false;
    for (size_t i = 0; i < total; ++i) {
        const bool inside = i >= off && i < off + n;
        if (!inside) { /* poison (or y's old values for axpy) untouched */
            const unsigned char *want = op == OP_AXPY ? (const unsigned char *)hb + i * elem : NULL;
            for (size_t q = 0; q < elem; ++q)
                if (ho[i * elem + q] != (want ? want[q] : 0xFF)) { ++bad; break; }
            continue;
        }
        const double x = get(ha, i, elem), y = get(hb, i, elem), got = get(ho, i, elem);
        double ref = 0, tol = 0;
        switch (op) {
        case OP_ADD: ref = x + y; break;
        case OP_AXPY: ref = alpha * x + y; tol = (fabs(alpha * x) + fabs(y)) * (elem == 4 ? 0x1p-23 : 0x1p-51); break;
        case OP_SCALE: ref = alpha * x; break;
        case OP_FILL: ref = alpha; break;
        default: ref = x; break;
        }
        bool ok;
        if (tol == 0) { /* correctly rounded: the float64 reference rounded to the type */
            const double r = elem == 4 ? (double)(float)ref : ref;
            ok = got == r;
        } else {
            ok = fabs(got - ref) <= tol;
        }
        if (!ok) {
            ++bad;
            if (!printed)
                print_error("%s f%zu n=%zu off=%zu: element %zu got %.17g want %.17g\n",
                            op_names[op], elem * 8, n, off, i, got, ref);
            printed = true;
        }
    }
    if (bad) fail_msg("%s f%zu n=%zu off=%zu: %zu bad elements", op_names[op], elem * 8, n, off, bad);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    if (out != b) CM_ASSERT_OK(cm_buffer_destroy(out));
    free(ha);
    free(hb);
    free(ho);
}

static void test_vector_ops(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t k = 0;
    for (int op = 0; op < OP_COUNT; ++op)
        for (size_t e = 4; e <= 8; e += 4)
            for (size_t si = 0; si < NSIZES; ++si)
                for (size_t oi = 0; oi < NOFFS; ++oi) check_vector_case(op, e, sizes[si], offsets[oi], k++);
}

/* in place: out = a exactly for add and scale, x = y for axpy */
static void test_vector_in_place(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = 1003, off = 1, ob = off * sizeof(float); /* ob: the offset in bytes */
    float *h = random_array(off + n, 4, 0), *g = malloc((off + n) * 4);
    assert_non_null(g);
    cm_buffer_t *b = upload(h, (off + n) * 4);
    CM_ASSERT_OK(cm_vector_add_f32(NULL, b, ob, b, ob, b, ob, n));         /* 2x */
    /* no fence: the NULL-stream call is complete on return, so the pooled stream (which does
     * not wait for the legacy one) reads its result */
    CM_ASSERT_OK(cm_vector_scale_f32(c.stream, 0.5f, b, ob, b, ob, n));    /* x */
    sync_all(); /* the legacy stream does not wait for the pooled (non-blocking) one */
    CM_ASSERT_OK(cm_vector_axpy_f32(NULL, 1.0f, b, ob, b, ob, n));          /* 2x */
    download(b, g, (off + n) * 4);
    for (size_t i = off; i < off + n; ++i) assert_true(g[i] == 2.0f * h[i]);
    assert_true(memcmp(g, h, off * 4) == 0);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    free(h);
    free(g);
}

/* The enum forms beyond what the typed forms reach: axpy into an output apart from y and into x
 * itself, a double fill, and reductions through cm_reduce / cm_reduce_to_host. */
static void test_enum_forms(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = 4099;
    float *x = random_array(n, 4, 0), *y = random_array(n, 4, 0), *g = malloc(n * 4);
    assert_non_null(g);
    cm_buffer_t *bx = upload(x, n * 4), *by = upload(y, n * 4), *bo = upload(x, n * 4);
    const float three = 3.0f, minus_two = -2.0f;
    const double quarter = 0.25;
    CM_ASSERT_OK(cm_vector(c.stream, CM_VECTOR_AXPY, CM_DTYPE_F32, n, &three, bo, 0, bx, 0, by, 0));
    sync_all();
    download(bo, g, n * 4);
    for (size_t i = 0; i < n; ++i) assert_true(g[i] == fmaf(3.0f, x[i], y[i]));
    download(by, g, n * 4); /* y is read, not written */
    assert_true(memcmp(g, y, n * 4) == 0);
    /* out = x exactly: x <- -2 x + y */
    CM_ASSERT_OK(cm_vector(NULL, CM_VECTOR_AXPY, CM_DTYPE_F32, n, &minus_two, bx, 0, bx, 0, by, 0));
    download(bx, g, n * 4);
    for (size_t i = 0; i < n; ++i) assert_true(g[i] == fmaf(-2.0f, x[i], y[i]));
    /* a double fill over the first n / 2 doubles of bo, then their sum on the host */
    CM_ASSERT_OK(cm_vector(NULL, CM_VECTOR_FILL, CM_DTYPE_F64, n / 2, &quarter, bo, 0, NULL, 0, NULL,
                           0));
    double sum = 0.0;
    CM_ASSERT_OK(cm_reduce_to_host(NULL, CM_REDUCE_SUM, CM_DTYPE_F64, n / 2, bo, 0, NULL, 0, &sum,
                                   NULL));
    assert_true(sum == 0.25 * (double)(n / 2));
    /* the dot of x with itself into a device element, against a float64 reference */
    CM_ASSERT_OK(cm_reduce(NULL, CM_REDUCE_DOT, CM_DTYPE_F32, n, by, 0, by, 0, bo, 0));
    float dot = 0.0f;
    /* complete on return: read on the pooled stream with no fence first */
    CM_ASSERT_OK(cm_buffer_copy_to_host(c.stream, bo, 0, &dot, 4));
    double ref = 0.0;
    for (size_t i = 0; i < n; ++i) ref += (double)y[i] * (double)y[i];
    assert_true(fabs((double)dot - ref) <= 1e-6 * fabs(ref) + 1e-30);
    uint64_t at = 0;
    float v = 0.0f;
    CM_ASSERT_OK(cm_reduce_to_host(c.stream, CM_REDUCE_ARGMAX, CM_DTYPE_F32, n, by, 0, NULL, 0, &at,
                                   &v));
    size_t best = 0;
    for (size_t i = 1; i < n; ++i)
        if (y[i] > y[best]) best = i;
    assert_int_equal(at, best);
    assert_true(v == y[best]);
    /* a float fill stores the value's bits as they are: a signalling NaN keeps its payload */
    const uint32_t snan_bits = 0x7f800001u;
    float snan;
    memcpy(&snan, &snan_bits, 4);
    CM_ASSERT_OK(cm_vector_fill_f32(NULL, bo, 0, snan, 16));
    uint32_t got[16];
    download(bo, got, sizeof got);
    for (int i = 0; i < 16; ++i) assert_int_equal(got[i], snan_bits);
    CM_ASSERT_OK(cm_buffer_destroy(bo));
    CM_ASSERT_OK(cm_buffer_destroy(by));
    CM_ASSERT_OK(cm_buffer_destroy(bx));
    free(x);
    free(y);
    free(g);
}

/* operands at offsets that differ modulo 16 bytes (the scalar path): out at 1, a at 2, b at 0 */
static void test_vector_mixed_alignment(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t ns[] = {0, 1, 33, 1023, ((size_t)1 << 20) + 7};
    for (size_t si = 0; si < 5; ++si) {
        const size_t n = ns[si], total = n + 8;
        float *ha = random_array(total, 4, 0), *hb = random_array(total, 4, 0);
        double *hx = random_array(total, 8, 0), *hy = random_array(total, 8, 0);
        float *ho = malloc(total * 4);
        double *hyo = malloc(total * 8);
        assert_non_null(ho);
        assert_non_null(hyo);
        cm_buffer_t *a = upload(ha, total * 4), *b = upload(hb, total * 4), *o = NULL;
        cm_buffer_t *x = upload(hx, total * 8), *y = upload(hy, total * 8);
        CM_ASSERT_OK(cm_buffer_create(c.dev, total * 4, &o));
        CM_ASSERT_OK(cm_buffer_set(NULL, o, 0, total * 4, 0xFF));
        /* element offsets: o at 1, a at 2, b at 0 floats; x at 1, y at 0 doubles (in bytes) */
        CM_ASSERT_OK(cm_vector_add_f32(stream_for(si), o, 1 * 4, a, 2 * 4, b, 0, n));
        CM_ASSERT_OK(cm_vector_axpy_f64(stream_for(si + 1), -1.5, x, 1 * 8, y, 0, n));
        download(o, ho, total * 4);
        download(y, hyo, total * 8);
        for (size_t i = 0; i < total; ++i) {
            uint32_t bits;
            memcpy(&bits, &ho[i], 4);
            if (i >= 1 && i < 1 + n) {
                assert_true(ho[i] == ha[i + 1] + hb[i - 1]);
            } else {
                assert_true(bits == 0xFFFFFFFFu);
            }
            if (i < n) {
                const double ref = -1.5 * hx[i + 1] + hy[i];
                assert_true(fabs(hyo[i] - ref) <= 0x1p-51 * (fabs(1.5 * hx[i + 1]) + fabs(hy[i])));
            } else {
                assert_true(hyo[i] == hy[i]);
            }
        }
        /* scale with out at 0 and x at 3 floats */
        CM_ASSERT_OK(cm_buffer_set(NULL, o, 0, total * 4, 0xFF));
        CM_ASSERT_OK(cm_vector_scale_f32(NULL, 0.75f, o, 0, a, 3 * 4, n > 5 ? n - 5 : 0));
        download(o, ho, total * 4);
        for (size_t i = 0; i + 5 < n; ++i) assert_true(ho[i] == 0.75f * ha[i + 3]);
        CM_ASSERT_OK(cm_buffer_destroy(a));
        CM_ASSERT_OK(cm_buffer_destroy(b));
        CM_ASSERT_OK(cm_buffer_destroy(o));
        CM_ASSERT_OK(cm_buffer_destroy(x));
        CM_ASSERT_OK(cm_buffer_destroy(y));
        free(ha);
        free(hb);
        free(hx);
        free(hy);
        free(ho);
        free(hyo);
    }
}

/* ---------------------------------------------------------------- reductions */

enum { R_SUM, R_MIN, R_MAX, R_ARGMIN, R_ARGMAX, R_DOT, R_COUNT };
static const char *r_names[] = {"sum", "min", "max", "argmin", "argmax", "dot"};
enum { T_F32, T_F64, T_I32 };

typedef struct rresult {
    double value;     /* sum/min/max/dot, or the value at the index for arg */
    uint64_t index;
    uint64_t bits;    /* raw bits of the value as returned (reproducibility) */
} rresult_t;

/* Run one reduction through the device-result form (into a poisoned buffer) and the host form;
 * both must agree bit for bit. */
static rresult_t run_reduce(int op, int t, cm_stream_t *s, cm_buffer_t *x, size_t xoff,
                            cm_buffer_t *y, size_t yoff, size_t n) {
    rresult_t r = {0, 0, 0};
    cm_buffer_t *res = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, 64, &res));
    CM_ASSERT_OK(cm_buffer_set(NULL, res, 0, 64, 0xFF));
    unsigned char dev_bytes[64];
    const size_t roff = 1; /* element 1 of the result buffer (byte roff * rb) */
    size_t rb = 0;         /* bytes of the result's type */
    /* the operands' element offsets, in bytes as kernels.h counts */
    const size_t esz = t == T_F64 ? 8 : 4, xb = xoff * esz, yb = yoff * esz;
    uint64_t hidx = 0;
    float hf = 0;
    double hd = 0;
    int32_t hi = 0;
    int64_t hl = 0;
    cm_status_t st = CM_OK;
#define BOTH(dev_call, host_call, size)                                                        \
    do {                                                                                       \
        rb = size; /* before the calls: the device result's offset is roff * rb */             \
        CM_ASSERT_OK(dev_call);                                                                \
        CM_ASSERT_OK(host_call);                                                               \
    } while (0)
    if (t == T_F32) {
        switch (op) {
        case R_SUM: BOTH(cm_reduce_sum_f32(s, x, xb, n, res, roff * rb), cm_reduce_sum_f32_to_host(s, x, xb, n, &hf), 4); break;
        case R_MIN: BOTH(cm_reduce_min_f32(s, x, xb, n, res, roff * rb), cm_reduce_min_f32_to_host(s, x, xb, n, &hf), 4); break;
        case R_MAX: BOTH(cm_reduce_max_f32(s, x, xb, n, res, roff * rb), cm_reduce_max_f32_to_host(s, x, xb, n, &hf), 4); break;
        case R_ARGMIN: BOTH(cm_reduce_argmin_f32(s, x, xb, n, res, roff * rb), cm_reduce_argmin_f32_to_host(s, x, xb, n, &hidx, &hf), 8); break;
        case R_ARGMAX: BOTH(cm_reduce_argmax_f32(s, x, xb, n, res, roff * rb), cm_reduce_argmax_f32_to_host(s, x, xb, n, &hidx, &hf), 8); break;
        default: BOTH(cm_reduce_dot_f32(s, x, xb, y, yb, n, res, roff * rb), cm_reduce_dot_f32_to_host(s, x, xb, y, yb, n, &hf), 4); break;
        }
    } else if (t == T_F64) {
        switch (op) {
        case R_SUM: BOTH(cm_reduce_sum_f64(s, x, xb, n, res, roff * rb), cm_reduce_sum_f64_to_host(s, x, xb, n, &hd), 8); break;
        case R_MIN: BOTH(cm_reduce_min_f64(s, x, xb, n, res, roff * rb), cm_reduce_min_f64_to_host(s, x, xb, n, &hd), 8); break;
        case R_MAX: BOTH(cm_reduce_max_f64(s, x, xb, n, res, roff * rb), cm_reduce_max_f64_to_host(s, x, xb, n, &hd), 8); break;
        case R_ARGMIN: BOTH(cm_reduce_argmin_f64(s, x, xb, n, res, roff * rb), cm_reduce_argmin_f64_to_host(s, x, xb, n, &hidx, &hd), 8); break;
        case R_ARGMAX: BOTH(cm_reduce_argmax_f64(s, x, xb, n, res, roff * rb), cm_reduce_argmax_f64_to_host(s, x, xb, n, &hidx, &hd), 8); break;
        default: BOTH(cm_reduce_dot_f64(s, x, xb, y, yb, n, res, roff * rb), cm_reduce_dot_f64_to_host(s, x, xb, y, yb, n, &hd), 8); break;
        }
    } else {
        switch (op) {
        case R_SUM: BOTH(cm_reduce_sum_i32(s, x, xb, n, res, roff * rb), cm_reduce_sum_i32_to_host(s, x, xb, n, &hl), 8); break;
        case R_MIN: BOTH(cm_reduce_min_i32(s, x, xb, n, res, roff * rb), cm_reduce_min_i32_to_host(s, x, xb, n, &hi), 4); break;
        default: BOTH(cm_reduce_max_i32(s, x, xb, n, res, roff * rb), cm_reduce_max_i32_to_host(s, x, xb, n, &hi), 4); break;
        }
    }
#undef BOTH
    (void)st;
    download(res, dev_bytes, 64);
    /* element roff written, everything else still poison */
    for (size_t q = 0; q < 64; ++q) {
        if (q >= roff * rb && q < (roff + 1) * rb) continue;
        assert_int_equal(dev_bytes[q], 0xFF);
    }
    const unsigned char *dv = dev_bytes + roff * rb;
    if (op == R_ARGMIN || op == R_ARGMAX) {
        memcpy(&r.index, dv, 8);
        assert_true(r.index == hidx);
        r.value = t == T_F32 ? (double)hf : hd;
        r.bits = r.index;
    } else if (t == T_F32) {
        assert_memory_equal(dv, &hf, 4);
        uint32_t u;
        memcpy(&u, &hf, 4);
        r.bits = u;
        r.value = hf;
    } else if (t == T_F64) {
        assert_memory_equal(dv, &hd, 8);
        memcpy(&r.bits, &hd, 8);
        r.value = hd;
    } else if (op == R_SUM) {
        assert_memory_equal(dv, &hl, 8);
        r.value = (double)hl;
        r.bits = (uint64_t)hl;
    } else {
        assert_memory_equal(dv, &hi, 4);
        r.value = hi;
        r.bits = (uint32_t)hi;
    }
    CM_ASSERT_OK(cm_buffer_destroy(res));
    return r;
}

static void check_reduce_case(int op, int t, size_t n, size_t off, size_t k, int ties) {
    const size_t elem = t == T_F64 ? 8 : 4;
    const size_t total = off + n + PAD;
    unsigned char *hx = random_array(total, elem, t == T_I32);
    unsigned char *hy = random_array(total, elem, 0);
    if (ties && n > 2) { /* the extreme at several places: the first must win */
        for (size_t rep = 0; rep < 3; ++rep) {
            size_t i = off + (size_t)(rnd() % n);
            size_t j = off + (size_t)(rnd() % n);
            memcpy(hx + j * elem, hx + i * elem, elem);
        }
        /* make an explicit tied extreme */
        size_t i1 = off + n / 3, i2 = off + n / 2, i3 = off + n - 1;
        double ext = (op == R_ARGMIN || op == R_MIN) ? -2.0 : 2.0;
        for (size_t q = 0; q < 3; ++q) {
            size_t i = q == 0 ? i2 : q == 1 ? i1 : i3;
            if (elem == 4) { float f = (float)ext; memcpy(hx + i * elem, &f, 4); }
            else memcpy(hx + i * elem, &ext, 8);
        }
    }
    cm_buffer_t *x = upload(hx, total * elem), *y = upload(hy, total * elem);
    /* float64 reference */
    double sum = 0, sumabs = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t imin = CM_REDUCE_NO_INDEX, imax = CM_REDUCE_NO_INDEX;
    long long isum = 0;
    int32_t imn = INT32_MAX, imx = INT32_MIN;
    for (size_t i = 0; i < n; ++i) {
        double v;
        if (t == T_I32) {
            int32_t q;
            memcpy(&q, hx + (off + i) * 4, 4);
            isum += q;
            if (q < imn) imn = q;
            if (q > imx) imx = q;
            continue;
        }
        v = get(hx, off + i, elem);
        double term = op == R_DOT ? v * get(hy, off + i, elem) : v;
        sum += term; /* float64; the float32 terms and products are exact */
        sumabs += fabs(term);
        if (v < mn) { mn = v; imin = i; }
        if (v > mx) { mx = v; imax = i; }
    }
    rresult_t r = run_reduce(op, t, stream_for(k), x, off, y, off, n);
    const char *tn = t == T_F32 ? "f32" : t == T_F64 ? "f64" : "i32";
    if (t == T_I32) {
        if (op == R_SUM) assert_true((long long)r.value == isum);
        else if (op == R_MIN) assert_true(r.value == (n ? imn : INT32_MAX));
        else assert_true(r.value == (n ? imx : INT32_MIN));
    } else if (op == R_SUM || op == R_DOT) {
        /* kernels.h's bound, with K <= n / 256 + 21 + 1 */
        const double eps = t == T_F32 ? 0x1p-24 : 0x1p-53;
        const double k_ = (double)(n / 256 + 23);
        const double bound = (t == T_F32 ? eps * fabs(sum) : 0) + (k_ + 1) * 0x1p-53 * sumabs +
                             (t == T_F64 ? k_ * eps * sumabs : 0) + 1e-300;
        if (!(fabs(r.value - sum) <= bound))
            fail_msg("%s %s n=%zu off=%zu: got %.17g want %.17g (bound %.3g)", r_names[op], tn, n,
                     off, r.value, sum, bound);
    } else if (op == R_MIN) {
        assert_true(r.value == (t == T_F32 ? (double)(float)mn : mn));
    } else if (op == R_MAX) {
        assert_true(r.value == mx);
    } else {
        uint64_t want = op == R_ARGMIN ? imin : imax;
        if (r.index != want)
            fail_msg("%s %s n=%zu off=%zu: index %llu want %llu", r_names[op], tn, n, off,
                     (unsigned long long)r.index, (unsigned long long)want);
        if (n > 0) assert_true(r.value == get(hx, off + want, elem));
        else assert_true(isinf(r.value));
    }
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(y));
    free(hx);
    free(hy);
}

static void test_reductions(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    size_t k = 0;
    for (int t = T_F32; t <= T_I32; ++t)
        for (int op = 0; op < R_COUNT; ++op) {
            if (t == T_I32 && op > R_MAX) continue;
            for (size_t si = 0; si < NSIZES; ++si)
                for (size_t oi = 0; oi < NOFFS; ++oi) {
                    check_reduce_case(op, t, sizes[si], offsets[oi], k++, 0);
                    if (op == R_ARGMIN || op == R_ARGMAX || op == R_MIN || op == R_MAX)
                        check_reduce_case(op, t, sizes[si], offsets[oi], k++, 1);
                }
        }
}

/* dot with x and y misaligned differently (the scalar path), and x . x */
static void test_dot_mixed_alignment(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = ((size_t)1 << 16) + 3;
    float *h = random_array(n + 8, 4, 0);
    cm_buffer_t *b = upload(h, (n + 8) * 4);
    double ref = 0, refxx = 0, sa = 0, sxx = 0;
    for (size_t i = 0; i < n; ++i) {
        ref += (double)h[1 + i] * h[2 + i];
        sa += fabs((double)h[1 + i] * h[2 + i]);
        refxx += (double)h[1 + i] * h[1 + i];
        sxx += (double)h[1 + i] * h[1 + i];
    }
    float got = 0, gxx = 0;
    /* x at float 1, y at float 2 (offsets in bytes) */
    CM_ASSERT_OK(cm_reduce_dot_f32_to_host(NULL, b, 1 * 4, b, 2 * 4, n, &got));
    CM_ASSERT_OK(cm_reduce_dot_f32_to_host(c.stream, b, 1 * 4, b, 1 * 4, n, &gxx));
    assert_true(fabs(got - ref) <= 0x1p-24 * fabs(ref) + 300 * 0x1p-53 * sa);
    assert_true(fabs(gxx - refxx) <= 0x1p-24 * fabs(refxx) + 300 * 0x1p-53 * sxx);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    free(h);
}

/* NaN rules: NaN propagates through sum/min/max/dot; argmin/argmax give the first NaN. Infinities. */
static void test_nan_rules(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = ((size_t)1 << 20) + 7;
    for (size_t e = 4; e <= 8; e += 4) {
        unsigned char *h = random_array(n, e, 0);
        const size_t first = 777777, second = 5;
        (void)second;
        for (size_t q = 0; q < 2; ++q) {
            size_t i = q == 0 ? first : n - 1;
            if (e == 4) { float f = NAN; memcpy(h + i * 4, &f, 4); }
            else { double d = NAN; memcpy(h + i * 8, &d, 8); }
        }
        cm_buffer_t *b = upload(h, n * e);
        uint64_t idx = 0;
        if (e == 4) {
            float v = 0;
            CM_ASSERT_OK(cm_reduce_sum_f32_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_min_f32_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_max_f32_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_dot_f32_to_host(NULL, b, 0, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_argmax_f32_to_host(NULL, b, 0, n, &idx, &v));
            assert_int_equal(idx, first); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_argmin_f32_to_host(NULL, b, 0, n, &idx, NULL));
            assert_int_equal(idx, first);
            /* from element first + 1 (its byte offset) the first NaN is the last element; the
             * index counts elements from there */
            CM_ASSERT_OK(cm_reduce_argmin_f32_to_host(NULL, b, (first + 1) * 4, n - first - 1, &idx,
                                                      NULL));
            assert_int_equal(idx, n - first - 2);
        } else {
            double v = 0;
            CM_ASSERT_OK(cm_reduce_sum_f64_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_min_f64_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_max_f64_to_host(NULL, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_dot_f64_to_host(NULL, b, 0, b, 0, n, &v)); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_argmax_f64_to_host(NULL, b, 0, n, &idx, &v));
            assert_int_equal(idx, first); assert_true(isnan(v));
            CM_ASSERT_OK(cm_reduce_argmin_f64_to_host(c.stream, b, 0, n, &idx, NULL));
            assert_int_equal(idx, first);
        }
        CM_ASSERT_OK(cm_buffer_destroy(b));
        free(h);
    }
    /* +inf and -inf: max is +inf, min -inf, sum NaN */
    float h[5] = {1.0f, INFINITY, -2.0f, -INFINITY, 3.0f};
    cm_buffer_t *b = upload(h, sizeof h);
    float v = 0;
    uint64_t idx = 0;
    CM_ASSERT_OK(cm_reduce_max_f32_to_host(NULL, b, 0, 5, &v)); assert_true(isinf(v) && v > 0);
    CM_ASSERT_OK(cm_reduce_argmin_f32_to_host(NULL, b, 0, 5, &idx, &v));
    assert_int_equal(idx, 3); assert_true(isinf(v) && v < 0);
    CM_ASSERT_OK(cm_reduce_sum_f32_to_host(NULL, b, 0, 5, &v)); assert_true(isnan(v));
    CM_ASSERT_OK(cm_buffer_destroy(b));
}

/* n = 0: identities (documented in kernels.h) */
static void test_empty(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, 0, &b));
    float f = 1;
    double d = 1;
    int32_t i = 0;
    int64_t l = 1;
    uint64_t idx = 0;
    CM_ASSERT_OK(cm_reduce_sum_f32_to_host(NULL, b, 0, 0, &f)); assert_true(f == 0.0f && !signbit(f));
    CM_ASSERT_OK(cm_reduce_dot_f64_to_host(NULL, b, 0, b, 0, 0, &d)); assert_true(d == 0.0);
    CM_ASSERT_OK(cm_reduce_sum_i32_to_host(NULL, b, 0, 0, &l)); assert_true(l == 0);
    CM_ASSERT_OK(cm_reduce_min_f32_to_host(NULL, b, 0, 0, &f)); assert_true(isinf(f) && f > 0);
    CM_ASSERT_OK(cm_reduce_max_f64_to_host(NULL, b, 0, 0, &d)); assert_true(isinf(d) && d < 0);
    CM_ASSERT_OK(cm_reduce_min_i32_to_host(NULL, b, 0, 0, &i)); assert_true(i == INT32_MAX);
    CM_ASSERT_OK(cm_reduce_max_i32_to_host(NULL, b, 0, 0, &i)); assert_true(i == INT32_MIN);
    CM_ASSERT_OK(cm_reduce_argmax_f32_to_host(NULL, b, 0, 0, &idx, &f));
    assert_true(idx == CM_REDUCE_NO_INDEX && isinf(f) && f < 0);
    CM_ASSERT_OK(cm_reduce_argmin_f64_to_host(c.stream, b, 0, 0, &idx, &d));
    assert_true(idx == CM_REDUCE_NO_INDEX && isinf(d) && d > 0);
    CM_ASSERT_OK(cm_buffer_destroy(b));
}

/* the same bits on repeated calls, on both streams, at several sizes */
static void test_reproducible(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t ns[] = {1023, ((size_t)1 << 20) + 7, ((size_t)1 << 24) + 1};
    for (size_t si = 0; si < 3; ++si) {
        const size_t n = ns[si];
        float *h = random_array(n + 1, 4, 0);
        double *hd = random_array(n + 1, 8, 0);
        cm_buffer_t *b = upload(h, (n + 1) * 4), *bd = upload(hd, (n + 1) * 8);
        float s0 = 0, dt0 = 0;
        double sd0 = 0;
        uint64_t a0 = 0;
        /* every operand at element 1: 4 bytes in b, 8 in bd */
        CM_ASSERT_OK(cm_reduce_sum_f32_to_host(NULL, b, 4, n, &s0));
        CM_ASSERT_OK(cm_reduce_dot_f32_to_host(NULL, b, 4, b, 4, n, &dt0));
        CM_ASSERT_OK(cm_reduce_sum_f64_to_host(NULL, bd, 8, n, &sd0));
        CM_ASSERT_OK(cm_reduce_argmax_f32_to_host(NULL, b, 4, n, &a0, NULL));
        for (int rep = 0; rep < 20; ++rep) {
            cm_stream_t *s = stream_for((size_t)rep);
            float s1 = 0, dt1 = 0;
            double sd1 = 0;
            uint64_t a1 = 0;
            CM_ASSERT_OK(cm_reduce_sum_f32_to_host(s, b, 4, n, &s1));
            CM_ASSERT_OK(cm_reduce_dot_f32_to_host(s, b, 4, b, 4, n, &dt1));
            CM_ASSERT_OK(cm_reduce_sum_f64_to_host(s, bd, 8, n, &sd1));
            CM_ASSERT_OK(cm_reduce_argmax_f32_to_host(s, b, 4, n, &a1, NULL));
            assert_memory_equal(&s0, &s1, 4);
            assert_memory_equal(&dt0, &dt1, 4);
            assert_memory_equal(&sd0, &sd1, 8);
            assert_true(a0 == a1);
        }
        CM_ASSERT_OK(cm_buffer_destroy(b));
        CM_ASSERT_OK(cm_buffer_destroy(bd));
        free(h);
        free(hd);
    }
}

/* a device-result reduction and a vector operation captured into a graph and replayed: the
 * same bits as the direct call, every replay */
static void test_graph_capture(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = ((size_t)1 << 20) + 7;
    float *h = random_array(n + 1, 4, 0);
    cm_buffer_t *x = upload(h, (n + 1) * 4), *res = NULL, *y = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, 16, &res));
    CM_ASSERT_OK(cm_buffer_create(c.dev, (n + 1) * 4, &y));
    float direct = 0;
    /* x and y at float 1, the result at float 1 of res (offsets in bytes) */
    CM_ASSERT_OK(cm_reduce_sum_f32_to_host(c.stream, x, 4, n, &direct));
    cm_graph_t *graph = NULL;
    CM_ASSERT_OK(cm_graph_capture_begin(c.stream));
    cm_status_t s1 = cm_vector_scale_f32(c.stream, 2.0f, y, 4, x, 4, n);
    cm_status_t s2 = cm_reduce_sum_f32(c.stream, y, 4, n, res, 4);
    CM_ASSERT_OK(cm_graph_capture_end(c.stream, &graph));
    CM_ASSERT_OK(s1);
    CM_ASSERT_OK(s2);
    for (int rep = 0; rep < 3; ++rep) {
        CM_ASSERT_OK(cm_buffer_set(NULL, res, 0, 16, 0xFF));
        CM_ASSERT_OK(cm_graph_launch(graph, c.stream));
        float got[4];
        download(res, got, 16);
        assert_true(got[1] == 2.0f * direct); /* scaling by 2 is exact, and so is the sum's */
    }
    CM_ASSERT_OK(cm_graph_destroy(graph));
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(y));
    CM_ASSERT_OK(cm_buffer_destroy(res));
    free(h);
}

/* ---------------------------------------------------------------- misaligned byte offsets */

/* The last error is the refusal of a misaligned offset by the call named `call`. */
static void expect_misaligned(const char *call, const char *arg, size_t value, size_t elem) {
    const cm_error_t *e = cm_last_error();
    char want[160];
    snprintf(want, sizeof want,
             "%s %zu is not a multiple of the %zu-byte element; nothing was queued", arg, value,
             elem);
    if (strstr(e->message, want) == NULL)
        fail_msg("%s: the message does not say \"%s\": %s", call, want, e->message);
    if (strcmp(e->call, call) != 0) fail_msg("the detail names %s, not %s", e->call, call);
}

/* Offsets count bytes and must be a multiple of the operand's element size (a reduction's
 * result offset: of the result's type): a misaligned one is refused before anything is queued,
 * on either stream, and the output keeps its poison. */
static void test_misaligned_offsets_refused(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t n = 64, bytes = (n + 8) * 8;
    cm_buffer_t *x = NULL, *o = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &x));
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &o));
    CM_ASSERT_OK(cm_buffer_set(NULL, x, 0, bytes, 0));
    CM_ASSERT_OK(cm_buffer_set(NULL, o, 0, bytes, 0xFF));
    for (size_t k = 0; k < 2; ++k) {
        cm_stream_t *s = stream_for(k);
        /* vector operations: each operand against its type */
        CM_ASSERT_STATUS(cm_vector_copy_f32(s, o, 0, x, 6, n), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_vector_copy_f32", "x_offset", 6, 4);
        CM_ASSERT_STATUS(cm_vector_fill_f64(s, o, 4, 1.0, n), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_vector_fill_f64", "out_offset", 4, 8);
        CM_ASSERT_STATUS(cm_vector_add_f32(s, o, 0, x, 0, x, 2, n), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_vector_add_f32", "y_offset", 2, 4);
        /* reductions: the inputs, and the result against the result's own type */
        CM_ASSERT_STATUS(cm_reduce_sum_f64(s, x, 12, n, o, 0), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_sum_f64", "x_offset", 12, 8);
        CM_ASSERT_STATUS(cm_reduce_dot_f32(s, x, 0, x, 10, n, o, 0), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_dot_f32", "y_offset", 10, 4);
        CM_ASSERT_STATUS(cm_reduce_sum_f32(s, x, 0, n, o, 6), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_sum_f32", "result_offset", 6, 4);
        CM_ASSERT_STATUS(cm_reduce_sum_i32(s, x, 0, n, o, 4), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_sum_i32", "result_offset", 4, 8); /* an int64_t result */
        CM_ASSERT_STATUS(cm_reduce_argmax_f32(s, x, 0, n, o, 12), CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_argmax_f32", "result_offset", 12, 8); /* a uint64_t index */
        uint64_t idx = 7;
        float v = 0;
        CM_ASSERT_STATUS(cm_reduce_argmin_f32_to_host(s, x, 2, n, &idx, &v),
                         CM_ERROR_INVALID_ARGUMENT);
        expect_misaligned("cm_reduce_argmin_f32_to_host", "x_offset", 2, 4);
        assert_int_equal(idx, 7); /* nothing written */
    }
    unsigned char *h = malloc(bytes);
    assert_non_null(h);
    download(o, h, bytes);
    for (size_t i = 0; i < bytes; ++i) assert_int_equal(h[i], 0xFF);
    free(h);
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(o));
}

/* ---------------------------------------------------------------- 2^28 - 3 elements at offset 1
 * Every vector operation (float) and every reduction (float, double, int32 where kernels.h has
 * it) on 2^28 - 3 elements at element offset 1 of every operand: the vector body, the scalar head
 * (3 floats, 1 double) and tail, and an index past 2^27. One float64 reference pass per input.
 * Device memory: at most 3 GiB (float: a, b, out) or 4 GiB (double: x, y) at a time; each test
 * skips when the device has less free than that plus 256 MiB. */

#define LARGE_N (((size_t)1 << 28) - 3)
#define LARGE_OFF ((size_t)1)
#define LARGE_TOTAL (LARGE_OFF + LARGE_N + PAD) /* elements of each buffer */

/* skip() unless bytes (plus 256 MiB) are free on device 0 */
static bool large_guard(size_t bytes) {
    size_t free_b = 0, total_b = 0;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_int_equal(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    if (free_b < bytes + ((size_t)256 << 20)) {
        print_message("skipping the 2^28 - 3 case: %zu bytes free, %zu needed\n", free_b,
                      bytes + ((size_t)256 << 20));
        return false;
    }
    return true;
}

static uint32_t bits32(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* every vector operation on float a, b (host copies ha, hb) into a poisoned output; axpy works
 * in place on a device copy of b, so b stays as uploaded */
static void large_vector_f32(cm_buffer_t *a, cm_buffer_t *b, const float *ha, const float *hb) {
    const size_t n = LARGE_N, off = LARGE_OFF, total = LARGE_TOTAL, bytes = total * 4;
    float *ho = malloc(bytes);
    assert_non_null(ho);
    cm_buffer_t *o = NULL;
    CM_ASSERT_OK(cm_buffer_create(c.dev, bytes, &o));
    for (int op = 0; op < OP_COUNT; ++op) {
        const float alpha = (float)(rnd_unit() * 3.0);
        if (op == OP_AXPY) CM_ASSERT_OK(cm_buffer_copy(NULL, o, 0, b, 0, bytes)); /* y = b */
        else CM_ASSERT_OK(cm_buffer_set(NULL, o, 0, bytes, 0xFF));
        CM_ASSERT_OK(run_vector(op, 4, stream_for((size_t)op), o, off, a, b, n, alpha));
        download(o, ho, bytes);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < total; ++i) {
            bool ok;
            if (i < off || i >= off + n) { /* poison, or y's old value for axpy */
                ok = bits32(ho[i]) == (op == OP_AXPY ? bits32(hb[i]) : 0xFFFFFFFFu);
            } else {
                switch (op) {
                case OP_ADD: ok = ho[i] == ha[i] + hb[i]; break;
                case OP_AXPY: {
                    const double ref = (double)alpha * ha[i] + hb[i];
                    ok = fabs(ho[i] - ref) <= (fabs((double)alpha * ha[i]) + fabs(hb[i])) * 0x1p-23;
                    break;
                }
                case OP_SCALE: ok = ho[i] == alpha * ha[i]; break;
                case OP_FILL: ok = bits32(ho[i]) == bits32(alpha); break;
                default: ok = bits32(ho[i]) == bits32(ha[i]); break;
                }
            }
            if (!ok && bad++ == 0) first = i;
        }
        if (bad)
            fail_msg("%s f32 n=2^28-3 off=1: %zu bad elements (of %zu with the poison around); "
                     "the first at %zu: got %.9g, a %.9g, b %.9g, alpha %.9g", op_names[op], bad,
                     total, first, (double)ho[first], (double)ha[first], (double)hb[first],
                     (double)alpha);
    }
    CM_ASSERT_OK(cm_buffer_destroy(o));
    free(ho);
}

/* float64 reference of every reduction of x (and x . y) over [off, off + n), in one pass */
typedef struct large_ref {
    double sum, sumabs, dot, dotabs, mn, mx;
    uint64_t imin, imax; /* relative to off */
} large_ref_t;

static large_ref_t large_ref_f32(const float *x, const float *y, size_t off, size_t n) {
    large_ref_t r = {0, 0, 0, 0, INFINITY, -INFINITY, CM_REDUCE_NO_INDEX, CM_REDUCE_NO_INDEX};
    for (size_t i = 0; i < n; ++i) {
        const double v = x[off + i], p = v * (double)y[off + i]; /* both exact */
        r.sum += v;
        r.sumabs += fabs(v);
        r.dot += p;
        r.dotabs += fabs(p);
        if (v < r.mn) { r.mn = v; r.imin = i; }
        if (v > r.mx) { r.mx = v; r.imax = i; }
    }
    return r;
}

static large_ref_t large_ref_f64(const double *x, const double *y, size_t off, size_t n) {
    large_ref_t r = {0, 0, 0, 0, INFINITY, -INFINITY, CM_REDUCE_NO_INDEX, CM_REDUCE_NO_INDEX};
    for (size_t i = 0; i < n; ++i) {
        const double v = x[off + i], p = v * y[off + i];
        r.sum += v;
        r.sumabs += fabs(v);
        r.dot += p;
        r.dotabs += fabs(p);
        if (v < r.mn) { r.mn = v; r.imin = i; }
        if (v > r.mx) { r.mx = v; r.imax = i; }
    }
    return r;
}

/* every float or double reduction of x (dot with y) against the reference; device-result and
 * host forms through run_reduce (poisoned result buffer, both forms the same bits) */
static void large_reductions_fp(int t, cm_buffer_t *x, cm_buffer_t *y, const void *hx,
                                const large_ref_t *ref) {
    const size_t n = LARGE_N, off = LARGE_OFF, elem = t == T_F64 ? 8 : 4;
    const char *tn = t == T_F64 ? "f64" : "f32";
    const double eps = t == T_F32 ? 0x1p-24 : 0x1p-53;
    const double k_ = (double)(n / 256 + 23); /* kernels.h's K, with room */
    for (int op = 0; op < R_COUNT; ++op) {
        rresult_t r = run_reduce(op, t, stream_for((size_t)op), x, off, y, off, n);
        if (op == R_SUM || op == R_DOT) {
            const double want = op == R_SUM ? ref->sum : ref->dot;
            const double sa = op == R_SUM ? ref->sumabs : ref->dotabs;
            const double bound = (t == T_F32 ? eps * fabs(want) : 0) + (k_ + 1) * 0x1p-53 * sa +
                                 (t == T_F64 ? k_ * eps * sa : 0);
            if (!(fabs(r.value - want) <= bound))
                fail_msg("%s %s n=2^28-3 off=1: got %.17g want %.17g (bound %.3g)", r_names[op],
                         tn, r.value, want, bound);
        } else if (op == R_MIN || op == R_MAX) {
            const double want = op == R_MIN ? ref->mn : ref->mx;
            if (r.value != want)
                fail_msg("%s %s n=2^28-3 off=1: got %.17g want %.17g", r_names[op], tn, r.value,
                         want);
        } else {
            const uint64_t want = op == R_ARGMIN ? ref->imin : ref->imax;
            if (r.index != want || r.value != get(hx, off + want, elem))
                fail_msg("%s %s n=2^28-3 off=1: index %llu (value %.17g) want %llu (%.17g)",
                         r_names[op], tn, (unsigned long long)r.index, r.value,
                         (unsigned long long)want, get(hx, off + want, elem));
        }
    }
}

/* float: every vector operation, then every reduction, on the same inputs */
static void test_large(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t bytes = LARGE_TOTAL * 4;
    if (!large_guard(3 * bytes)) skip();
    float *ha = random_array(LARGE_TOTAL, 4, 0), *hb = random_array(LARGE_TOTAL, 4, 0);
    cm_buffer_t *a = upload(ha, bytes), *b = upload(hb, bytes);
    large_vector_f32(a, b, ha, hb);
    const large_ref_t ref = large_ref_f32(ha, hb, LARGE_OFF, LARGE_N);
    large_reductions_fp(T_F32, a, b, ha, &ref);
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    free(ha);
    free(hb);
}

/* double: every reduction */
static void test_large_f64(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t bytes = LARGE_TOTAL * 8;
    if (!large_guard(2 * bytes)) skip();
    double *hx = random_array(LARGE_TOTAL, 8, 0), *hy = random_array(LARGE_TOTAL, 8, 0);
    cm_buffer_t *x = upload(hx, bytes), *y = upload(hy, bytes);
    const large_ref_t ref = large_ref_f64(hx, hy, LARGE_OFF, LARGE_N);
    large_reductions_fp(T_F64, x, y, hx, &ref);
    CM_ASSERT_OK(cm_buffer_destroy(x));
    CM_ASSERT_OK(cm_buffer_destroy(y));
    free(hx);
    free(hy);
}

/* int32: sum (exact in int64), min, max */
static void test_large_i32(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    const size_t bytes = LARGE_TOTAL * 4, n = LARGE_N, off = LARGE_OFF;
    if (!large_guard(bytes)) skip();
    int32_t *hx = random_array(LARGE_TOTAL, 4, 1);
    cm_buffer_t *x = upload(hx, bytes);
    long long isum = 0;
    int32_t mn = INT32_MAX, mx = INT32_MIN;
    for (size_t i = off; i < off + n; ++i) {
        isum += hx[i];
        if (hx[i] < mn) mn = hx[i];
        if (hx[i] > mx) mx = hx[i];
    }
    const long long want[3] = {isum, mn, mx};
    for (int op = R_SUM; op <= R_MAX; ++op) {
        rresult_t r = run_reduce(op, T_I32, stream_for((size_t)op), x, off, NULL, 0, n);
        const long long got = op == R_SUM ? (long long)(int64_t)r.bits : (long long)r.value;
        if (got != want[op])
            fail_msg("%s i32 n=2^28-3 off=1: got %lld want %lld", r_names[op], got, want[op]);
    }
    CM_ASSERT_OK(cm_buffer_destroy(x));
    free(hx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_ops),
        cmocka_unit_test(test_vector_in_place),
        cmocka_unit_test(test_enum_forms),
        cmocka_unit_test(test_vector_mixed_alignment),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_dot_mixed_alignment),
        cmocka_unit_test(test_nan_rules),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_reproducible),
        cmocka_unit_test(test_graph_capture),
        cmocka_unit_test(test_misaligned_offsets_refused),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_large_f64),
        cmocka_unit_test(test_large_i32),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
