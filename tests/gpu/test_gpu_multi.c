/*
 * multi.h on real GPUs, with every visible device in the set (one GPU is a set of one; on the
 * H200 pair the parts really live on two devices; tests that need two devices are in
 * test_gpu_multi_peer.c and test_gpu_multi_ranks.c, labelled multi-gpu).
 *
 * - the set: members, streams, the peer matrix (with measured bandwidths) and its text, peer
 *   access enabled for every pair that supports it;
 * - split arrays: scatter / gather round trips from pageable and pinned host memory and from /
 *   to device buffers at element offsets (passed in bytes), for element sizes 4, 8 and 12 and
 *   lengths 0, 1, 3, 63,
 *   64, 65, fewer than the members' units, 2^20 + 3; outputs poisoned first and every byte
 *   checked, the poison around a destination range too;
 * - vector operations on every part against a CPU reference computed the same way (IEEE single
 *   rounding, fused multiply-add for axpy): every element bit-exact, in place too;
 * - reductions against float64 CPU references (sums and dots within the bound multi.h states;
 *   min / max / argmin / argmax / int sums exact), first index on ties across parts, NaN rules,
 *   empty input, the same bits on repeated calls, and the single-device kernels.h result on the
 *   whole array as a second witness;
 * - cm_split_for_each() with the member's device current inside, work of the callback checked;
 * - cm_split_gemm(): row blocks of A and C over the set, B copied to every member, FP32 / BF16 /
 *   BF16 out, op N and T, beta 0 over NaN, every element against a float64 reference;
 * - the caller's current device is unchanged after every call (the last device is made current
 *   first, so a library that switched to member 0 and stayed there is caught on two GPUs);
 * - NCCL through a set communicator: all-reduce (sum, max in place, avg, int32 sum), broadcast
 *   (root = last member, other send entries NULL), all-gather (out of place and in place), the
 *   argument checks on a live communicator; "not built" when the library has no NCCL.
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
#include <cudamodel/interop.h>
#include <cudamodel/kernels.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>
#include <cudamodel/version.h>

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return cm_test_rand(&rng_state); }
/* uniform in [-1, 1) with the full mantissa, never 0 exactly in practice */
static double rnd_unit(void) { return cm_test_rand_unit(&rng_state); }

typedef struct ctx {
    cm_device_set_t *set;
    int count;
    int ordinals[CM_DEVICE_SET_MAX];
    int home; /* the device made current before each call: the last ordinal */
} ctx_t;

static ctx_t c;

static int setup(void **state) {
    (void)state;
    char reason[256];
    if (!cm_test_have_gpu(reason, sizeof reason)) return 0;
    if (cm_device_set_open_all(&c.set) != CM_OK) return -1;
    if (cm_device_set_count(c.set, &c.count) != CM_OK) return -1;
    for (int k = 0; k < c.count; ++k)
        if (cm_device_set_ordinal(c.set, k, &c.ordinals[k]) != CM_OK) return -1;
    c.home = c.ordinals[c.count - 1];
    return 0;
}

static int teardown(void **state) {
    (void)state;
    if (c.set == NULL) return 0;
    int bad = cm_device_set_close(c.set);
    c.set = NULL;
    return bad ? -1 : 0;
}

/* Make the home device current; check_home() checks the library left it so. */
static void go_home(void) { assert_int_equal(cudaSetDevice(c.home), cudaSuccess); }
#define check_home() check_home_at(__LINE__)
static void check_home_at(int line) {
    int d = -1;
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    if (d != c.home) fail_msg("line %d: the current device is %d, the caller's was %d", line, d, c.home);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

static void random_bytes(void *p, size_t n) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; ++i) b[i] = (unsigned char)(rnd() >> 33);
}

/* ---------------------------------------------------------------- the set and peer access */

static void test_set_and_peers(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    int n = 0;
    assert_int_equal(cudaGetDeviceCount(&n), cudaSuccess);
    assert_int_equal(c.count, n > CM_DEVICE_SET_MAX ? CM_DEVICE_SET_MAX : n);
    for (int k = 0; k < c.count; ++k) {
        assert_int_equal(c.ordinals[k], k);
        cm_stream_t *s = NULL;
        cm_device_t *dev = NULL, *sd = NULL;
        CM_ASSERT_OK(cm_device_set_stream(c.set, k, &s));
        CM_ASSERT_OK(cm_device_set_device(c.set, k, &dev));
        CM_ASSERT_OK(cm_stream_device(s, &sd));
        assert_ptr_equal(dev, sd);
    }
    check_home();
    size_t entries = (size_t)c.count * (size_t)c.count;
    cm_peer_info_t *m = calloc(entries, sizeof *m);
    assert_non_null(m);
    CM_ASSERT_OK(cm_device_set_peer_matrix(c.set, CM_PEER_MEASURE_BANDWIDTH, m, entries));
    check_home();
    int can_pairs = 0;
    for (int i = 0; i < c.count; ++i) {
        for (int j = 0; j < c.count; ++j) {
            const cm_peer_info_t *e = &m[(size_t)i * (size_t)c.count + (size_t)j];
            assert_int_equal(e->from_ordinal, i);
            assert_int_equal(e->to_ordinal, j);
            if (i == j) {
                assert_true(e->can_access);
            } else {
                int can = 0;
                assert_int_equal(cudaDeviceCanAccessPeer(&can, i, j), cudaSuccess);
                assert_int_equal(e->can_access, can != 0);
                can_pairs += can != 0;
            }
            /* every pair copies: peer or staged, the diagonal within the device */
            if (!(e->bandwidth_gbs > 1.0 && e->bandwidth_gbs < 100000.0))
                fail_msg("bandwidth %d -> %d is %g GB/s", i, j, e->bandwidth_gbs);
        }
    }
    char text[8192];
    size_t len = 0;
    CM_ASSERT_OK(cm_peer_matrix_format(m, c.count, text, sizeof text, &len));
    assert_int_equal(len, strlen(text));
    print_message("%s", text);
    assert_non_null(strstr(text, "GB/s"));
    /* without measuring: the same access answers, no bandwidth */
    CM_ASSERT_OK(cm_device_set_peer_matrix(c.set, 0, m, entries));
    for (size_t i = 0; i < entries; ++i) assert_true(m[i].bandwidth_gbs == 0.0);
    int pairs = -1;
    CM_ASSERT_OK(cm_device_set_enable_peer_access(c.set, &pairs));
    assert_int_equal(pairs, can_pairs);
    check_home();
    free(m);
}

/* ---------------------------------------------------------------- scatter and gather */

static void round_trip(size_t n, size_t elem, bool pinned) {
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(c.set, n, elem, &sp));
    check_home();
    const size_t bytes = n * elem;
    cm_device_t *d0 = NULL;
    CM_ASSERT_OK(cm_device_set_device(c.set, 0, &d0));
    cm_host_buffer_t *hsrc = NULL, *hdst = NULL;
    unsigned char *src, *dst;
    if (pinned) {
        CM_ASSERT_OK(cm_host_buffer_create(d0, bytes, CM_HOST_BUFFER_PORTABLE, &hsrc));
        CM_ASSERT_OK(cm_host_buffer_create(d0, bytes, CM_HOST_BUFFER_PORTABLE, &hdst));
        void *p = NULL;
        CM_ASSERT_OK(cm_host_buffer_data(hsrc, &p));
        src = p;
        CM_ASSERT_OK(cm_host_buffer_data(hdst, &p));
        dst = p;
    } else {
        src = xmalloc(bytes);
        dst = xmalloc(bytes);
    }
    if (bytes > 0) {
        random_bytes(src, bytes);
        memset(dst, 0xee, bytes);
    }
    CM_ASSERT_OK(cm_split_scatter_from_host(sp, src, n));
    CM_ASSERT_OK(cm_split_gather_to_host(sp, dst, n));
    check_home();
    if (bytes > 0 && memcmp(src, dst, bytes) != 0)
        fail_msg("host round trip of %zu elements of %zu bytes (%s) lost data", n, elem,
                 pinned ? "pinned" : "pageable");
    /* each part holds its range */
    for (int k = 0; k < c.count; ++k) {
        cm_buffer_t *b = NULL;
        size_t first = 0, cnt = 0; /* first: the part's first element index */
        CM_ASSERT_OK(cm_split_part(sp, k, &b, &first, &cnt));
        if (cnt == 0) continue;
        unsigned char *part = xmalloc(cnt * elem);
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, part, cnt * elem));
        if (memcmp(part, src + first * elem, cnt * elem) != 0)
            fail_msg("part %d (elements %zu + %zu) holds the wrong range", k, first, cnt);
        free(part);
    }

    /* device to device: from the last member's buffer at element 5, to member 0's at 7 */
    const size_t pad = 9;
    cm_device_t *dl = NULL;
    CM_ASSERT_OK(cm_device_set_device(c.set, c.count - 1, &dl));
    cm_buffer_t *bsrc = NULL, *bdst = NULL;
    CM_ASSERT_OK(cm_buffer_create(dl, (n + pad) * elem, &bsrc));
    CM_ASSERT_OK(cm_buffer_create(d0, (n + pad) * elem, &bdst));
    unsigned char *shifted = xmalloc((n + pad) * elem);
    random_bytes(shifted, (n + pad) * elem);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, bsrc, 0, shifted, (n + pad) * elem));
    CM_ASSERT_OK(cm_buffer_set(NULL, bdst, 0, (n + pad) * elem, 0xcd));
    go_home();
    /* element 5 of bsrc and element 7 of bdst: byte offsets, multiples of elem */
    CM_ASSERT_OK(cm_split_scatter(sp, bsrc, 5 * elem));
    CM_ASSERT_OK(cm_split_gather(sp, bdst, 7 * elem));
    check_home();
    unsigned char *back = xmalloc((n + pad) * elem);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bdst, 0, back, (n + pad) * elem));
    for (size_t i = 0; i < (n + pad) * elem; ++i) {
        bool inside = i >= 7 * elem && i < (7 + n) * elem;
        unsigned char want = inside ? shifted[i - 7 * elem + 5 * elem] : 0xcd;
        if (back[i] != want)
            fail_msg("device round trip of %zu elements of %zu bytes: byte %zu is 0x%02x, want "
                     "0x%02x (%s)", n, elem, i, back[i], want, inside ? "data" : "poison");
    }
    free(back);
    free(shifted);
    CM_ASSERT_OK(cm_buffer_destroy(bsrc));
    CM_ASSERT_OK(cm_buffer_destroy(bdst));
    if (pinned) {
        CM_ASSERT_OK(cm_host_buffer_destroy(hsrc));
        CM_ASSERT_OK(cm_host_buffer_destroy(hdst));
    } else {
        free(src);
        free(dst);
    }
    CM_ASSERT_OK(cm_split_destroy(sp));
    check_home();
}

static void test_scatter_gather(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    const size_t elems[] = {4, 8, 12};
    const size_t sizes[] = {0, 1, 3, 63, 64, 65, 1000, ((size_t)1 << 20) + 3};
    for (size_t e = 0; e < sizeof elems / sizeof elems[0]; ++e)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            round_trip(sizes[s], elems[e], (s & 1) != 0);
    /* fewer elements than the members' units: the later parts are empty */
    round_trip((size_t)c.count * 64 - 1, 4, false);
    round_trip(2, 4, true);

    /* offsets count bytes: one that is not a multiple of the element is refused, nothing is
     * copied either way */
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(c.set, 10, 8, &sp));
    cm_device_t *d0 = NULL;
    CM_ASSERT_OK(cm_device_set_device(c.set, 0, &d0));
    cm_buffer_t *b = NULL;
    unsigned char back[32 * 8];
    CM_ASSERT_OK(cm_buffer_create(d0, sizeof back, &b));
    CM_ASSERT_OK(cm_buffer_set(NULL, b, 0, sizeof back, 0x5a));
    CM_ASSERT_OK(cm_split_fill_f64(sp, 1.5));
    CM_ASSERT_STATUS(cm_split_scatter(sp, b, 6), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message,
                           "src offset 6 is not a multiple of the 8-byte element"));
    CM_ASSERT_STATUS(cm_split_gather(sp, b, 12), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message,
                           "dst offset 12 is not a multiple of the 8-byte element"));
    check_home();
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b, 0, back, sizeof back));
    for (size_t i = 0; i < sizeof back; ++i) assert_int_equal(back[i], 0x5a);
    double parts[10];
    CM_ASSERT_OK(cm_device_set_synchronize(c.set));
    CM_ASSERT_OK(cm_split_gather_to_host(sp, parts, 10));
    for (int i = 0; i < 10; ++i) assert_true(parts[i] == 1.5);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_split_destroy(sp));
}

/* ---------------------------------------------------------------- vector operations */

static cm_split_t *split_from(const void *host, size_t n, size_t elem) {
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(c.set, n, elem, &sp));
    CM_ASSERT_OK(cm_split_scatter_from_host(sp, host, n));
    return sp;
}

static void gather(const cm_split_t *sp, void *host, size_t n) {
    CM_ASSERT_OK(cm_device_set_synchronize(c.set));
    CM_ASSERT_OK(cm_split_gather_to_host(sp, host, n));
}

static void test_vector_ops(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    const size_t n = ((size_t)1 << 20) + 37;
    float *a = xmalloc(n * 4), *b = xmalloc(n * 4), *out = xmalloc(n * 4);
    double *ad = xmalloc(n * 8), *bd = xmalloc(n * 8), *outd = xmalloc(n * 8);
    for (size_t i = 0; i < n; ++i) {
        a[i] = (float)rnd_unit();
        b[i] = (float)rnd_unit();
        ad[i] = rnd_unit();
        bd[i] = rnd_unit();
    }
    cm_split_t *sa = split_from(a, n, 4), *sb = split_from(b, n, 4), *so = NULL;
    cm_split_t *sad = split_from(ad, n, 8), *sbd = split_from(bd, n, 8), *sod = NULL;
    CM_ASSERT_OK(cm_split_create(c.set, n, 4, &so));
    CM_ASSERT_OK(cm_split_create(c.set, n, 8, &sod));
    const float alpha = (float)rnd_unit() * 3.0f;
    const double alphad = rnd_unit() * 3.0;

    /* add */
    go_home();
    CM_ASSERT_OK(cm_split_add_f32(so, sa, sb));
    check_home();
    gather(so, out, n);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != a[i] + b[i]) fail_msg("add f32 element %zu: %a, want %a", i, out[i], a[i] + b[i]);
    CM_ASSERT_OK(cm_split_add_f64(sod, sad, sbd));
    gather(sod, outd, n);
    for (size_t i = 0; i < n; ++i)
        if (outd[i] != ad[i] + bd[i]) fail_msg("add f64 element %zu", i);
    /* scale */
    CM_ASSERT_OK(cm_split_scale_f32(alpha, so, sa));
    gather(so, out, n);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != alpha * a[i]) fail_msg("scale f32 element %zu", i);
    CM_ASSERT_OK(cm_split_scale_f64(alphad, sod, sad));
    gather(sod, outd, n);
    for (size_t i = 0; i < n; ++i)
        if (outd[i] != alphad * ad[i]) fail_msg("scale f64 element %zu", i);
    /* axpy: y = alpha x + y, one fused multiply-add, y = a copy of b */
    CM_ASSERT_OK(cm_split_scatter_from_host(so, b, n));
    CM_ASSERT_OK(cm_split_axpy_f32(alpha, sa, so));
    check_home();
    gather(so, out, n);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != fmaf(alpha, a[i], b[i])) fail_msg("axpy f32 element %zu", i);
    CM_ASSERT_OK(cm_split_scatter_from_host(sod, bd, n));
    CM_ASSERT_OK(cm_split_axpy_f64(alphad, sad, sod));
    gather(sod, outd, n);
    for (size_t i = 0; i < n; ++i)
        if (outd[i] != fma(alphad, ad[i], bd[i])) fail_msg("axpy f64 element %zu", i);
    /* fill */
    CM_ASSERT_OK(cm_split_fill_f32(so, -3.25f));
    gather(so, out, n);
    for (size_t i = 0; i < n; ++i) if (out[i] != -3.25f) fail_msg("fill f32 element %zu", i);
    CM_ASSERT_OK(cm_split_fill_f64(sod, 1e300));
    gather(sod, outd, n);
    for (size_t i = 0; i < n; ++i) if (outd[i] != 1e300) fail_msg("fill f64 element %zu", i);
    /* in place: a = a + b, then a = alpha a */
    CM_ASSERT_OK(cm_split_add_f32(sa, sa, sb));
    CM_ASSERT_OK(cm_split_scale_f32(alpha, sa, sa));
    gather(sa, out, n);
    for (size_t i = 0; i < n; ++i)
        if (out[i] != alpha * (a[i] + b[i])) fail_msg("in place f32 element %zu", i);
    check_home();

    cm_split_t *all[] = {sa, sb, so, sad, sbd, sod};
    for (size_t i = 0; i < 6; ++i) CM_ASSERT_OK(cm_split_destroy(all[i]));
    free(a); free(b); free(out); free(ad); free(bd); free(outd);
}

/* ---------------------------------------------------------------- reductions */

/* The bound multi.h states, with the coarsest K of kernels.h (T = 256 threads). */
static double sum_bound(double exact, double abs_sum, size_t n, bool f32) {
    double k = ceil((double)n / 256.0) + 8.0 + (double)c.count;
    return (f32 ? ldexp(fabs(exact), -24) : 0.0) + (k + 1.0) * ldexp(abs_sum, -53);
}

/* The same reduction by kernels.h on the whole array on one device (a second witness). */
static cm_buffer_t *whole_on_member0(const void *host, size_t bytes) {
    cm_device_t *d0 = NULL;
    CM_ASSERT_OK(cm_device_set_device(c.set, 0, &d0));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, bytes, &b));
    if (bytes) CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, host, bytes));
    return b;
}

static void reductions_of(size_t n) {
    float *x = xmalloc(n * 4), *y = xmalloc(n * 4);
    double *xd = xmalloc(n * 8), *yd = xmalloc(n * 8);
    int32_t *xi = xmalloc(n * 4);
    for (size_t i = 0; i < n; ++i) {
        x[i] = (float)rnd_unit();
        y[i] = (float)rnd_unit();
        xd[i] = rnd_unit();
        yd[i] = rnd_unit();
        xi[i] = (int32_t)(rnd() % 2000000001u) - 1000000000;
    }
    /* ties across parts: the minimum and the maximum twice, the first copy wins */
    if (n >= 8) {
        size_t i1 = n / 3, i2 = n - 2;
        x[i1] = x[i2] = -5.0f;
        xd[i1] = xd[i2] = -5.0;
        x[i1 + 1] = x[i2 + 1] = 7.0f;
        xd[i1 + 1] = xd[i2 + 1] = 7.0;
    }
    double s = 0, sa = 0, sd = 0, sda = 0, dot = 0, dota = 0, dotd = 0, dotda = 0;
    int64_t si = 0;
    float mn = INFINITY, mx = -INFINITY;
    double mnd = INFINITY, mxd = -INFINITY;
    int32_t mni = INT32_MAX, mxi = INT32_MIN;
    uint64_t amin = CM_REDUCE_NO_INDEX, amax = CM_REDUCE_NO_INDEX, amind = CM_REDUCE_NO_INDEX,
             amaxd = CM_REDUCE_NO_INDEX;
    for (size_t i = 0; i < n; ++i) {
        s += x[i]; sa += fabs(x[i]);
        sd += xd[i]; sda += fabs(xd[i]);
        dot += (double)x[i] * y[i]; dota += fabs((double)x[i] * y[i]);
        dotd += xd[i] * yd[i]; dotda += fabs(xd[i] * yd[i]);
        si += xi[i];
        if (x[i] < mn) { mn = x[i]; amin = i; }
        if (x[i] > mx) { mx = x[i]; amax = i; }
        if (xd[i] < mnd) { mnd = xd[i]; amind = i; }
        if (xd[i] > mxd) { mxd = xd[i]; amaxd = i; }
        if (xi[i] < mni) mni = xi[i];
        if (xi[i] > mxi) mxi = xi[i];
    }
    cm_split_t *sx = split_from(x, n, 4), *sy = split_from(y, n, 4);
    cm_split_t *sxd = split_from(xd, n, 8), *syd = split_from(yd, n, 8);
    cm_split_t *sxi = split_from(xi, n, 4);
    go_home();
    float rf = NAN, rf2 = NAN, vf = NAN;
    double rd = NAN, rd2 = NAN, vd = NAN;
    int64_t ri = -1;
    int32_t r32 = -1;
    uint64_t idx = 0;

    CM_ASSERT_OK(cm_split_sum_f32(sx, &rf));
    check_home();
    if (fabs((double)rf - s) > sum_bound(s, sa, n, true))
        fail_msg("sum f32 of %zu: %.9g, exact %.17g", n, rf, s);
    CM_ASSERT_OK(cm_split_sum_f32(sx, &rf2));
    if (memcmp(&rf, &rf2, sizeof rf) != 0) fail_msg("sum f32 of %zu: not the same bits twice", n);
    CM_ASSERT_OK(cm_split_sum_f64(sxd, &rd));
    if (fabs(rd - sd) > sum_bound(sd, sda, n, false)) fail_msg("sum f64 of %zu: %.17g vs %.17g", n, rd, sd);
    CM_ASSERT_OK(cm_split_sum_f64(sxd, &rd2));
    if (memcmp(&rd, &rd2, sizeof rd) != 0) fail_msg("sum f64 of %zu: not the same bits twice", n);
    CM_ASSERT_OK(cm_split_dot_f32(sx, sy, &rf));
    if (fabs((double)rf - dot) > sum_bound(dot, dota, n, true)) fail_msg("dot f32 of %zu", n);
    CM_ASSERT_OK(cm_split_dot_f64(sxd, syd, &rd));
    if (fabs(rd - dotd) > sum_bound(dotd, dotda, n, false)) fail_msg("dot f64 of %zu", n);
    CM_ASSERT_OK(cm_split_sum_i32(sxi, &ri));
    assert_true(ri == si);
    CM_ASSERT_OK(cm_split_min_f32(sx, &rf));
    assert_true(n == 0 ? rf == INFINITY : rf == mn);
    CM_ASSERT_OK(cm_split_max_f32(sx, &rf));
    assert_true(n == 0 ? rf == -INFINITY : rf == mx);
    CM_ASSERT_OK(cm_split_min_f64(sxd, &rd));
    assert_true(rd == mnd);
    CM_ASSERT_OK(cm_split_max_f64(sxd, &rd));
    assert_true(rd == mxd);
    CM_ASSERT_OK(cm_split_min_i32(sxi, &r32));
    assert_int_equal(r32, mni);
    CM_ASSERT_OK(cm_split_max_i32(sxi, &r32));
    assert_int_equal(r32, mxi);
    CM_ASSERT_OK(cm_split_argmin_f32(sx, &idx, &vf));
    if (idx != amin) fail_msg("argmin f32 of %zu: %llu, want %llu", n, (unsigned long long)idx,
                              (unsigned long long)amin);
    assert_true(n == 0 ? vf == INFINITY : vf == mn);
    CM_ASSERT_OK(cm_split_argmax_f32(sx, &idx, NULL));
    if (idx != amax) fail_msg("argmax f32 of %zu: %llu, want %llu", n, (unsigned long long)idx,
                              (unsigned long long)amax);
    CM_ASSERT_OK(cm_split_argmin_f64(sxd, &idx, &vd));
    assert_true(idx == amind && vd == mnd);
    CM_ASSERT_OK(cm_split_argmax_f64(sxd, &idx, &vd));
    assert_true(idx == amaxd && vd == mxd);
    check_home();

    /* the second witness: kernels.h on the whole array of member 0 agrees (exactly for the
     * order statistics, within the bound for the sums) */
    if (n > 0) {
        cm_buffer_t *wx = whole_on_member0(x, n * 4);
        float wf = 0;
        uint64_t widx = 0;
        CM_ASSERT_OK(cm_reduce_sum_f32_to_host(NULL, wx, 0, n, &wf));
        CM_ASSERT_OK(cm_split_sum_f32(sx, &rf));
        if (fabs((double)rf - (double)wf) > 2.0 * sum_bound(s, sa, n, true))
            fail_msg("sum f32 of %zu: split %.9g, one device %.9g", n, rf, wf);
        CM_ASSERT_OK(cm_reduce_argmin_f32_to_host(NULL, wx, 0, n, &widx, &wf));
        CM_ASSERT_OK(cm_split_argmin_f32(sx, &idx, &vf));
        assert_true(idx == widx && vf == wf);
        CM_ASSERT_OK(cm_buffer_destroy(wx));
    }

    /* NaN: the first NaN's index (planted in the last part and before it) */
    if (n >= 16) {
        size_t nan1 = n - 5, nan2 = n - 2;
        x[nan1] = NAN;
        x[nan2] = NAN;
        xd[nan2] = NAN;
        CM_ASSERT_OK(cm_split_scatter_from_host(sx, x, n));
        CM_ASSERT_OK(cm_split_scatter_from_host(sxd, xd, n));
        CM_ASSERT_OK(cm_split_argmax_f32(sx, &idx, &vf));
        assert_true(idx == nan1 && isnan(vf));
        CM_ASSERT_OK(cm_split_argmin_f32(sx, &idx, NULL));
        assert_true(idx == nan1);
        CM_ASSERT_OK(cm_split_argmin_f64(sxd, &idx, &vd));
        assert_true(idx == nan2 && isnan(vd));
        CM_ASSERT_OK(cm_split_max_f32(sx, &rf));
        assert_true(isnan(rf));
        CM_ASSERT_OK(cm_split_min_f64(sxd, &rd));
        assert_true(isnan(rd));
        CM_ASSERT_OK(cm_split_sum_f32(sx, &rf));
        assert_true(isnan(rf));
    }
    cm_split_t *all[] = {sx, sy, sxd, syd, sxi};
    for (size_t i = 0; i < 5; ++i) CM_ASSERT_OK(cm_split_destroy(all[i]));
    free(x); free(y); free(xd); free(yd); free(xi);
}

static void test_reductions(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    const size_t sizes[] = {0, 1, 3, 17, 1000, (size_t)c.count * 64 + 1, ((size_t)1 << 22) + 5};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) reductions_of(sizes[i]);
    check_home();
}

/* ---------------------------------------------------------------- your own work, closing */

typedef struct visit {
    int calls;
    float alpha;
    bool wrong_device;
} visit_t;

static cm_status_t scale_part(void *user, int index, cm_stream_t *stream, cm_buffer_t *part,
                              size_t first, size_t count) {
    visit_t *v = user;
    (void)first;
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess || d != c.ordinals[index]) v->wrong_device = true;
    ++v->calls;
    if (count == 0) return CM_OK;
    return cm_vector_scale_f32(stream, v->alpha, part, 0, part, 0, count);
}

static void test_for_each_and_close(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    const size_t n = 100003;
    float *x = xmalloc(n * 4), *out = xmalloc(n * 4);
    for (size_t i = 0; i < n; ++i) x[i] = (float)rnd_unit();
    cm_split_t *sp = split_from(x, n, 4);
    visit_t v = {0, 0.5f, false};
    CM_ASSERT_OK(cm_split_for_each(sp, scale_part, &v));
    check_home();
    assert_int_equal(v.calls, c.count);
    assert_false(v.wrong_device);
    gather(sp, out, n);
    for (size_t i = 0; i < n; ++i) if (out[i] != 0.5f * x[i]) fail_msg("element %zu", i);

    /* a second set over the same devices: closing it is refused while its split lives */
    cm_device_set_t *other = NULL;
    CM_ASSERT_OK(cm_device_set_open(c.ordinals, c.count, &other));
    cm_split_t *osp = NULL;
    CM_ASSERT_OK(cm_split_create(other, 10, 4, &osp));
    assert_int_equal(cm_device_set_close(other), CM_ERROR_BUSY);
    CM_ASSERT_OK(cm_split_destroy(osp));
    CM_ASSERT_OK(cm_device_set_close(other));
    check_home();
    CM_ASSERT_OK(cm_split_destroy(sp));
    free(x);
    free(out);
}

/* ---------------------------------------------------------------- NCCL over the set */

static cm_buffer_t *member_buffer(int k, size_t bytes) {
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_set_device(c.set, k, &dev));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, bytes, &b));
    return b;
}

/* bf16 bits of x, round to nearest even (finite inputs) */
static uint16_t to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* cm_split_gemm over the set: C = alpha A op(B) + beta C by row blocks, A and C split by rows,
 * B copied to every member; FP32 and BF16 (float and bf16 out), op N and T, m not a multiple of
 * anything, C poisoned where beta = 0; every element against a float64 reference within
 * K * 2^-22 * sum |a b| (FP32) or 2^-7 relative to sum |a b| (bf16 out; inputs rounded first) */
static void test_split_gemm(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    const size_t m = 1031, n = 200, k = 300;
    const int precs[3] = {CM_GEMM_FP32, CM_GEMM_BF16, CM_GEMM_BF16_OUT_BF16};
    for (int pi = 0; pi < 3; ++pi)
        for (int opb = 0; opb < 2; ++opb) {
            const cm_gemm_precision_t prec = (cm_gemm_precision_t)precs[pi];
            const bool bf_in = prec != CM_GEMM_FP32, bf_out = prec == CM_GEMM_BF16_OUT_BF16;
            const size_t ib = bf_in ? 2 : 4, ob = bf_out ? 2 : 4;
            const cm_gemm_op_t op_b = opb ? CM_GEMM_OP_T : CM_GEMM_OP_N;
            const size_t ldb = op_b == CM_GEMM_OP_N ? n + 3 : k + 5;
            const size_t b_rows = op_b == CM_GEMM_OP_N ? k : n;
            const float alpha = 0.75f, beta = opb ? 0.5f : 0.0f;
            /* operands as the device sees them (bf16-rounded when bf16) */
            double *A = xmalloc(m * k * 8), *B = xmalloc(k * n * 8), *C0 = xmalloc(m * n * 8);
            unsigned char *ha = xmalloc(m * k * ib), *hb = xmalloc(b_rows * ldb * ib),
                          *hc = xmalloc(m * n * ob), *out = xmalloc(m * n * ob);
            for (size_t i = 0; i < m * k; ++i) {
                float v = (float)rnd_unit();
                if (bf_in) {
                    uint16_t h = to_bf16(v);
                    memcpy(ha + i * 2, &h, 2);
                    A[i] = from_bf16(h);
                } else {
                    memcpy(ha + i * 4, &v, 4);
                    A[i] = v;
                }
            }
            memset(hb, 0, b_rows * ldb * ib);
            for (size_t r = 0; r < k; ++r)
                for (size_t j = 0; j < n; ++j) { /* B(r, j) */
                    float v = (float)rnd_unit();
                    const size_t at = op_b == CM_GEMM_OP_N ? r * ldb + j : j * ldb + r;
                    if (bf_in) {
                        uint16_t h = to_bf16(v);
                        memcpy(hb + at * 2, &h, 2);
                        B[r * n + j] = from_bf16(h);
                    } else {
                        memcpy(hb + at * 4, &v, 4);
                        B[r * n + j] = v;
                    }
                }
            for (size_t i = 0; i < m * n; ++i) {
                float v = beta != 0.0f ? (float)rnd_unit() : NAN;
                if (bf_out) {
                    uint16_t h = beta != 0.0f ? to_bf16(v) : 0x7fc0u;
                    memcpy(hc + i * 2, &h, 2);
                    C0[i] = from_bf16(h);
                } else {
                    memcpy(hc + i * 4, &v, 4);
                    C0[i] = v;
                }
            }
            cm_split_t *sa = NULL, *sc = NULL;
            CM_ASSERT_OK(cm_split_create(c.set, m, k * ib, &sa));
            CM_ASSERT_OK(cm_split_create(c.set, m, n * ob, &sc));
            CM_ASSERT_OK(cm_split_scatter_from_host(sa, ha, m));
            CM_ASSERT_OK(cm_split_scatter_from_host(sc, hc, m));
            cm_buffer_t *bs[CM_DEVICE_SET_MAX];
            for (int d = 0; d < c.count; ++d) {
                bs[d] = member_buffer(d, b_rows * ldb * ib);
                CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, bs[d], 0, hb, b_rows * ldb * ib));
            }
            go_home();
            CM_ASSERT_OK(cm_split_gemm(prec, op_b, n, k, alpha, sa, bs, ldb, beta, sc));
            check_home();
            CM_ASSERT_OK(cm_device_set_synchronize(c.set));
            CM_ASSERT_OK(cm_split_gather_to_host(sc, out, m));
            size_t bad = 0;
            for (size_t i = 0; i < m && bad < 5; ++i)
                for (size_t j = 0; j < n && bad < 5; ++j) {
                    double ref = 0.0, mag = 0.0;
                    for (size_t r = 0; r < k; ++r) {
                        ref += A[i * k + r] * B[r * n + j];
                        mag += fabs(A[i * k + r] * B[r * n + j]);
                    }
                    ref = alpha * ref + (beta != 0.0f ? beta * C0[i * n + j] : 0.0);
                    mag = fabs(alpha) * mag + (beta != 0.0f ? fabs(beta * C0[i * n + j]) : 0.0);
                    double got;
                    if (bf_out) {
                        uint16_t h;
                        memcpy(&h, out + (i * n + j) * 2, 2);
                        got = from_bf16(h);
                    } else {
                        float f;
                        memcpy(&f, out + (i * n + j) * 4, 4);
                        got = f;
                    }
                    const double tol = bf_out ? ldexp(mag, -7) : (double)k * ldexp(mag, -22);
                    if (!(fabs(got - ref) <= tol)) {
                        print_message("%s op_b %s: C(%zu, %zu) = %.9g, want %.9g (tolerance "
                                      "%.3g)\n", bf_in ? (bf_out ? "BF16->BF16" : "BF16") : "FP32",
                                      opb ? "T" : "N", i, j, got, ref, tol);
                        ++bad;
                    }
                }
            assert_int_equal(bad, 0);
            for (int d = 0; d < c.count; ++d) CM_ASSERT_OK(cm_buffer_destroy(bs[d]));
            CM_ASSERT_OK(cm_split_destroy(sa));
            CM_ASSERT_OK(cm_split_destroy(sc));
            free(A); free(B); free(C0); free(ha); free(hb); free(hc); free(out);
        }
}

static void test_nccl_collectives(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    go_home();
    cm_comm_t *comm = NULL;
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    if (!vi.nccl_built) {
        assert_int_equal(cm_comm_create(c.set, &comm), CM_ERROR_NOT_SUPPORTED);
        assert_non_null(strstr(cm_last_error()->message, "not built"));
        print_message("libcudamodel was built without NCCL: collectives report \"not built\"\n");
        return;
    }
    assert_true(vi.nccl > 0); /* the loaded NCCL answers ncclGetVersion */
    print_message("NCCL %d (built against %d), %d rank(s)\n", vi.nccl, vi.nccl_built_version,
                  c.count);
    CM_ASSERT_OK(cm_comm_create(c.set, &comm));
    check_home();
    int nranks = 0, local = 0, first = -1;
    CM_ASSERT_OK(cm_comm_size(comm, &nranks, &local, &first));
    assert_int_equal(nranks, c.count);
    assert_int_equal(local, c.count);
    assert_int_equal(first, 0);
    for (int k = 0; k < c.count; ++k) {
        cm_stream_t *cs = NULL, *ss = NULL;
        CM_ASSERT_OK(cm_comm_stream(comm, k, &cs));
        CM_ASSERT_OK(cm_device_set_stream(c.set, k, &ss));
        assert_ptr_equal(cs, ss);
    }
    const int R = c.count;
    const size_t n = ((size_t)1 << 18) + 3;
    float *h = xmalloc((size_t)R * n * 4), *out = xmalloc((size_t)R * n * 4);
    int32_t *hi = xmalloc((size_t)R * n * 4);
    for (size_t i = 0; i < (size_t)R * n; ++i) {
        h[i] = (float)rnd_unit();
        hi[i] = (int32_t)(rnd() % 2000001u) - 1000000;
    }
    cm_buffer_t *send[CM_DEVICE_SET_MAX], *recv[CM_DEVICE_SET_MAX], *gath[CM_DEVICE_SET_MAX];
    for (int k = 0; k < R; ++k) {
        send[k] = member_buffer(k, n * 4);
        recv[k] = member_buffer(k, n * 4);
        gath[k] = member_buffer(k, (size_t)R * n * 4);
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, send[k], 0, h + (size_t)k * n, n * 4));
        CM_ASSERT_OK(cm_buffer_set(NULL, recv[k], 0, n * 4, 0xff));
    }
    /* all-reduce sum, out of place */
    go_home();
    CM_ASSERT_OK(cm_comm_all_reduce(comm, send, recv, n, CM_DTYPE_F32, CM_COMM_SUM));
    check_home();
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, recv[k], 0, out, n * 4));
        for (size_t i = 0; i < n; ++i) {
            double e = 0, a = 0;
            for (int r = 0; r < R; ++r) {
                e += h[(size_t)r * n + i];
                a += fabs(h[(size_t)r * n + i]);
            }
            if (fabs((double)out[i] - e) > (double)R * ldexp(a, -24))
                fail_msg("all-reduce sum: rank %d element %zu is %g, want %g", k, i, out[i], e);
        }
    }
    /* all-reduce max, in place (send == recv) */
    for (int k = 0; k < R; ++k)
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, recv[k], 0, h + (size_t)k * n, n * 4));
    CM_ASSERT_OK(cm_comm_all_reduce(comm, recv, recv, n, CM_DTYPE_F32, CM_COMM_MAX));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, recv[k], 0, out, n * 4));
        for (size_t i = 0; i < n; ++i) {
            float m = -INFINITY;
            for (int r = 0; r < R; ++r) m = fmaxf(m, h[(size_t)r * n + i]);
            if (out[i] != m) fail_msg("all-reduce max: rank %d element %zu", k, i);
        }
    }
    /* int32 sum: exact */
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, send[k], 0, hi + (size_t)k * n, n * 4));
        CM_ASSERT_OK(cm_buffer_set(NULL, recv[k], 0, n * 4, 0xff));
    }
    CM_ASSERT_OK(cm_comm_all_reduce(comm, send, recv, n, CM_DTYPE_I32, CM_COMM_SUM));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        int32_t *oi = (int32_t *)(void *)out;
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, recv[k], 0, oi, n * 4));
        for (size_t i = 0; i < n; ++i) {
            int32_t e = 0;
            for (int r = 0; r < R; ++r) e += hi[(size_t)r * n + i];
            if (oi[i] != e) fail_msg("all-reduce i32 sum: rank %d element %zu", k, i);
        }
    }
    /* broadcast from the last member; the other send entries are NULL */
    const int root = R - 1;
    cm_buffer_t *bsend[CM_DEVICE_SET_MAX];
    for (int k = 0; k < R; ++k) {
        bsend[k] = k == root ? send[k] : NULL;
        CM_ASSERT_OK(cm_buffer_set(NULL, recv[k], 0, n * 4, 0xff));
    }
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, send[root], 0, h, n * 4));
    CM_ASSERT_OK(cm_comm_broadcast(comm, bsend, recv, n, CM_DTYPE_F32, root));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, recv[k], 0, out, n * 4));
        if (memcmp(out, h, n * 4) != 0) fail_msg("broadcast: rank %d differs from the root", k);
    }
    /* all-gather out of place, then in place */
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, send[k], 0, h + (size_t)k * n, n * 4));
        CM_ASSERT_OK(cm_buffer_set(NULL, gath[k], 0, (size_t)R * n * 4, 0xff));
    }
    CM_ASSERT_OK(cm_comm_all_gather(comm, send, gath, n, CM_DTYPE_F32));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, gath[k], 0, out, (size_t)R * n * 4));
        if (memcmp(out, h, (size_t)R * n * 4) != 0) fail_msg("all-gather: rank %d", k);
    }
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_set(NULL, gath[k], 0, (size_t)R * n * 4, 0xff));
        CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, gath[k], (size_t)k * n * 4, h + (size_t)k * n,
                                              n * 4));
    }
    CM_ASSERT_OK(cm_comm_all_gather(comm, gath, gath, n, CM_DTYPE_F32));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, gath[k], 0, out, (size_t)R * n * 4));
        if (memcmp(out, h, (size_t)R * n * 4) != 0) fail_msg("all-gather in place: rank %d", k);
    }
    /* avg of equal inputs is the input */
    for (int k = 0; k < R; ++k) CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, send[k], 0, h, n * 4));
    CM_ASSERT_OK(cm_comm_all_reduce(comm, send, recv, n, CM_DTYPE_F32, CM_COMM_AVG));
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, recv[0], 0, out, n * 4));
    for (size_t i = 0; i < n; ++i)
        if (fabs((double)out[i] - h[i]) > ldexp(fabs(h[i]), -21)) fail_msg("avg element %zu", i);
    check_home();

    /* checks on a live communicator: nothing is queued */
    cm_buffer_t *small[CM_DEVICE_SET_MAX], *nul[CM_DEVICE_SET_MAX];
    for (int k = 0; k < R; ++k) {
        small[k] = member_buffer(k, n * 4 - 4);
        nul[k] = NULL;
    }
    assert_int_equal(cm_comm_all_reduce(comm, send, small, n, CM_DTYPE_F32, CM_COMM_SUM),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "recv[0] has"));
    assert_int_equal(cm_comm_all_reduce(comm, send, nul, n, CM_DTYPE_F32, CM_COMM_SUM),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_comm_all_reduce(comm, send, recv, n, (cm_dtype_t)42, CM_COMM_SUM),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "unknown dtype 42"));
    assert_int_equal(cm_comm_all_reduce(comm, send, recv, n, CM_DTYPE_F32, (cm_comm_op_t)9),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_comm_broadcast(comm, send, recv, n, CM_DTYPE_F32, R),
                     CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_comm_all_gather(comm, send, recv, n, CM_DTYPE_F32),
                     R > 1 ? CM_ERROR_INVALID_ARGUMENT : CM_OK);
    if (R > 1) {
        cm_buffer_t *swapped[CM_DEVICE_SET_MAX];
        for (int k = 0; k < R; ++k) swapped[k] = recv[(k + 1) % R];
        assert_int_equal(cm_comm_all_reduce(comm, send, swapped, n, CM_DTYPE_F32, CM_COMM_SUM),
                         CM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(cm_last_error()->message, "but local rank 0 is device 0"));
    }
    CM_ASSERT_OK(cm_comm_all_reduce(comm, send, recv, 0, CM_DTYPE_F32, CM_COMM_SUM)); /* nothing */
    assert_int_equal(cm_device_set_close(c.set), CM_ERROR_BUSY); /* the communicator lives */
    CM_ASSERT_OK(cm_comm_synchronize(comm));
    check_home();
    CM_ASSERT_OK(cm_comm_destroy(comm));
    check_home();
    assert_int_equal(cm_comm_destroy(comm), CM_ERROR_INVALID_ARGUMENT);
    for (int k = 0; k < R; ++k) {
        CM_ASSERT_OK(cm_buffer_destroy(send[k]));
        CM_ASSERT_OK(cm_buffer_destroy(recv[k]));
        CM_ASSERT_OK(cm_buffer_destroy(gath[k]));
        CM_ASSERT_OK(cm_buffer_destroy(small[k]));
    }
    free(h);
    free(out);
    free(hi);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_and_peers),
        cmocka_unit_test(test_scatter_gather),
        cmocka_unit_test(test_vector_ops),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_for_each_and_close),
        cmocka_unit_test(test_split_gemm),
        cmocka_unit_test(test_nccl_collectives),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
