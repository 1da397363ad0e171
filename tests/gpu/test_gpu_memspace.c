/*
 * The memory spaces of memspace.h on a real GPU:
 *
 * - symbols: copies to and from a __constant__ and a __device__ array (whole, at offsets, on a
 *   stream, from device memory), read back by a kernel and by cm_symbol_copy_to_host(); refused
 *   copies past the end (and an offset + length that overflows) leave the symbol unchanged; an
 *   address that is no symbol is named; cm_symbol_address() gives the sizes (256 and 400
 *   bytes) and addresses: a kernel writes the __device__ array through its pointer, the host
 *   copies the __constant__ one from its address;
 * - pitched buffers and arrays of several formats and odd widths: the pitch a kernel indexes
 *   by, and 2-D round trips host -> pitched -> array -> pitched -> host (whole images,
 *   rectangles at a corner, host pitches wider than a row, pinned host memory on a stream),
 *   every byte compared and the bytes around a rectangle unchanged; a rectangle out of bounds,
 *   a host pitch below a row and array-to-array refused, nothing written; 2-D copies with
 *   pageable host memory captured into a graph, each launch reading and writing it anew;
 * - textures: over a buffer (tex1Dfetch of float, int and 8-bit read as normalised float; the
 *   rules CUDA would silently ignore refused), over a pitched buffer and over an array with
 *   each filter mode (point, linear) and address mode (clamp, border, and wrap and mirror,
 *   which need normalised coordinates), unnormalised and normalised coordinates, F32 and U8
 *   read as normalised float, each read compared with a CPU model of CUDA's sampling rules
 *   (linear filtering uses 9-bit fixed-point weights: 2/256 of the neighbourhood's range);
 * - surfaces: kernel writes, read-modify-writes and reads of an array, checked through a 2-D
 *   copy and a texture over the same array;
 * - memory under a live texture or surface: destroying it is refused with CM_ERROR_BUSY, the
 *   texture still reads the right values, the leak report names it and the device close is
 *   refused until it is gone;
 * - managed memory (16 MiB at most, never more than an eighth of the free memory): info,
 *   host access, each advice checked with cudaMemRangeGetAttribute, prefetch to the device and
 *   to the host (cudaMemRangeAttributeLastPrefetchLocation), a kernel between them, checked
 *   copies, refused ranges and locations; without concurrent managed access, the refusals.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/memspace.h>
#include <cudamodel/stream.h>

#define MiB ((size_t)1 << 20)

/* test_gpu_memspace_kernels.cu */
const void *tms_const_symbol(void);
const void *tms_device_symbol(void);
cudaError_t tms_read_symbols(float *c_out, int *d_out, cudaStream_t s);
cudaError_t tms_constant_sum_and_bump(float *sum_out, int add, cudaStream_t s);
cudaError_t tms_via_pointer(int *d_ptr, int base, cudaStream_t s);
cudaError_t tms_tex1d_fetch_f32(unsigned long long t, float *out, int n, cudaStream_t s);
cudaError_t tms_tex1d_fetch_i32(unsigned long long t, int *out, int n, cudaStream_t s);
cudaError_t tms_tex2d_sample_f32(unsigned long long t, const float *xs, const float *ys,
                                 float *out, int n, cudaStream_t s);
cudaError_t tms_surf_write_f32(unsigned long long surf, int w, int h, float base, cudaStream_t s);
cudaError_t tms_surf_scale_f32(unsigned long long surf, int w, int h, float k, cudaStream_t s);
cudaError_t tms_surf_read_f32(unsigned long long surf, int w, int h, float *out, cudaStream_t s);
cudaError_t tms_pitched_fill_f32(void *base, size_t pitch, int w, int h, cudaStream_t s);
cudaError_t tms_managed_update_f32(float *p, size_t n, cudaStream_t s);

/* ------------------------------------------------------------------ helpers */

#define CUDA_OK(expr) cuda_ok((expr), #expr, __FILE__, __LINE__)
static void cuda_ok(cudaError_t err, const char *expr, const char *file, int line) {
    if (err != cudaSuccess) {
        print_error("%s: %s (%s)\n", expr, cudaGetErrorName(err), cudaGetErrorString(err));
        _fail(file, line);
    }
}

/* Assert a status and that the detail's message holds a piece of text. */
#define EXPECT_FAIL(expr, status, text)                                                      \
    do {                                                                                     \
        CM_ASSERT_STATUS((expr), (status));                                                  \
        if (strstr(cm_last_error()->message, (text)) == NULL)                                \
            fail_msg("%s: message \"%s\" lacks \"%s\"", #expr, cm_last_error()->message,     \
                     (text));                                                                \
    } while (0)

static cm_device_t *open_device(void) {
    CUDA_OK(cudaSetDevice(0));
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    return dev;
}

static void fill_bytes(unsigned char *p, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(cm_test_rand(&s) >> 29);
}

/* Uniform in [0, 1). */
static float rand01(uint64_t *s) {
    return (float)((double)(cm_test_rand(s) >> 40) * 0x1.0p-24);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    assert_non_null(p);
    return p;
}

/* A device buffer and its address. */
static cm_buffer_t *dbuf(cm_device_t *dev, size_t bytes, void **ptr) {
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, bytes, &b));
    CM_ASSERT_OK(cm_buffer_device_ptr(b, ptr));
    return b;
}

static int ifloor(double v) {
    int i = (int)v;
    return v < (double)i ? i - 1 : i;
}

/* ------------------------------------------------------------------ symbols */

static void read_both(cm_device_t *dev, float *c, int *d) {
    CM_ASSERT_OK(cm_symbol_copy_to_host(NULL, dev, tms_const_symbol(), 0, c, 64 * sizeof(float)));
    CM_ASSERT_OK(cm_symbol_copy_to_host(NULL, dev, tms_device_symbol(), 0, d, 100 * sizeof(int)));
}

static void test_symbols(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    const void *cs = tms_const_symbol(), *ds = tms_device_symbol();

    /* sizes and addresses */
    void *c_addr = NULL, *d_addr = NULL;
    size_t c_size = 0, d_size = 0;
    CM_ASSERT_OK(cm_symbol_address(dev, cs, &c_addr, &c_size));
    CM_ASSERT_OK(cm_symbol_address(dev, ds, &d_addr, &d_size));
    assert_int_equal(c_size, 64 * sizeof(float));
    assert_int_equal(d_size, 100 * sizeof(int));
    assert_non_null(c_addr);
    assert_non_null(d_addr);
    size_t only = 0;
    CM_ASSERT_OK(cm_symbol_address(dev, cs, NULL, &only)); /* each output optional */
    assert_int_equal(only, c_size);

    /* whole copies, then partial ones at offsets; the model follows every write */
    uint64_t rs = 7;
    float mc[64], gc[64];
    int md[100], gd[100];
    for (int i = 0; i < 64; ++i) mc[i] = (float)(cm_test_rand_unit(&rs) * 100.0);
    for (int i = 0; i < 100; ++i) md[i] = (int)(cm_test_rand(&rs) % 100000u) - 50000;
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, cs, 0, mc, sizeof mc));
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, ds, 0, md, sizeof md));
    float part[13];
    for (int i = 0; i < 13; ++i) part[i] = -1.5f * (float)i;
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, cs, 10 * sizeof(float), part, sizeof part));
    memcpy(mc + 10, part, sizeof part);
    int tail[3] = {11, 22, 33};
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, ds, 97 * sizeof(int), tail, sizeof tail));
    memcpy(md + 97, tail, sizeof tail);
    /* an odd byte offset and length inside one element */
    unsigned char three[3] = {0x12, 0x34, 0x56};
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, ds, 41, three, 3));
    memcpy((unsigned char *)md + 41, three, 3);
    read_both(dev, gc, gd);
    assert_memory_equal(gc, mc, sizeof mc);
    assert_memory_equal(gd, md, sizeof md);
    /* a slice read from an offset */
    int slice[5] = {0};
    CM_ASSERT_OK(cm_symbol_copy_to_host(NULL, dev, ds, 50 * sizeof(int), slice, sizeof slice));
    assert_memory_equal(slice, md + 50, sizeof slice);

    /* what kernels see: the symbols read directly, a broadcast sum, an in-place update */
    void *dc = NULL, *dd = NULL, *dsum = NULL;
    cm_buffer_t *bc = dbuf(dev, sizeof mc, &dc), *bd = dbuf(dev, sizeof md, &dd);
    cm_buffer_t *bsum = dbuf(dev, sizeof(float), &dsum);
    CUDA_OK(tms_read_symbols(dc, dd, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bc, 0, gc, sizeof gc));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bd, 0, gd, sizeof gd));
    assert_memory_equal(gc, mc, sizeof mc);
    assert_memory_equal(gd, md, sizeof md);
    CUDA_OK(tms_constant_sum_and_bump(dsum, 3, 0));
    CUDA_OK(cudaDeviceSynchronize());
    float sum = 0.0f, want = 0.0f;
    for (int k = 0; k < 64; ++k) want += mc[k];
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bsum, 0, &sum, sizeof sum));
    assert_true(sum == want);
    for (int i = 0; i < 100; ++i) md[i] += 3 * i;
    read_both(dev, gc, gd);
    assert_memory_equal(gd, md, sizeof md);

    /* through the addresses of cm_symbol_address(): a kernel writes the __device__ table by
     * pointer; the host copies the __constant__ table from its address (cudaMemcpy) */
    CUDA_OK(tms_via_pointer((int *)d_addr, 5000, 0));
    CUDA_OK(cudaDeviceSynchronize());
    memset(gc, 0, sizeof gc);
    CUDA_OK(cudaMemcpy(gc, c_addr, sizeof gc, cudaMemcpyDeviceToHost));
    assert_memory_equal(gc, mc, sizeof mc);
    for (int i = 0; i < 100; ++i) md[i] = 5000 + i;
    read_both(dev, gc, gd);
    assert_memory_equal(gd, md, sizeof md);
    assert_memory_equal(gc, mc, sizeof mc);

    /* from device memory into the symbol (cudaMemcpyDefault) */
    float from_dev[64];
    for (int i = 0; i < 64; ++i) from_dev[i] = 0.5f * (float)i - 7.0f;
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, bc, 0, from_dev, sizeof from_dev));
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, cs, 0, dc, sizeof from_dev));
    memcpy(mc, from_dev, sizeof mc);
    read_both(dev, gc, gd);
    assert_memory_equal(gc, mc, sizeof mc);

    /* refused: past the end, an offset past the size, an overflowing range; nothing written */
    float big[65];
    for (int i = 0; i < 65; ++i) big[i] = 99.0f;
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, cs, 0, big, sizeof big),
                CM_ERROR_INVALID_ARGUMENT, "does not fit the 256-byte symbol");
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, cs, 252, big, 8), CM_ERROR_INVALID_ARGUMENT,
                "a copy of 8 bytes at offset 252");
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, ds, 401, big, 1), CM_ERROR_INVALID_ARGUMENT,
                "400-byte symbol");
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, ds, SIZE_MAX - 2, big, 8),
                CM_ERROR_INVALID_ARGUMENT, "overflows");
    int big_d[101];
    for (int i = 0; i < 101; ++i) big_d[i] = -99;
    EXPECT_FAIL(cm_symbol_copy_to_host(NULL, dev, ds, 0, big_d, sizeof big_d),
                CM_ERROR_INVALID_ARGUMENT, "does not fit the 400-byte symbol");
    for (int i = 0; i < 101; ++i) assert_int_equal(big_d[i], -99); /* dst untouched */
    read_both(dev, gc, gd);
    assert_memory_equal(gc, mc, sizeof mc);
    assert_memory_equal(gd, md, sizeof md);
    /* the edges that are allowed: nothing at the end, nothing from NULL */
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, cs, 256, NULL, 0));
    CM_ASSERT_OK(cm_symbol_copy_to_host(NULL, dev, ds, 400, NULL, 0));
    CM_ASSERT_OK(cm_symbol_copy_from_host(NULL, dev, cs, 252, big, 4));
    mc[63] = 99.0f;

    /* not a symbol: a host variable, NULL */
    static int not_a_symbol[16];
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, not_a_symbol, 0, md, 4),
                CM_ERROR_INVALID_ARGUMENT, "is not a __constant__ or __device__ variable");
    assert_int_equal(cm_last_error()->cuda_error, cudaErrorInvalidSymbol);
    EXPECT_FAIL(cm_symbol_address(dev, not_a_symbol, &c_addr, &c_size), CM_ERROR_INVALID_ARGUMENT,
                "is not a __constant__");
    assert_int_equal(c_size, 64 * sizeof(float)); /* outputs unchanged on failure */
    EXPECT_FAIL(cm_symbol_copy_to_host(NULL, dev, NULL, 0, gd, 4), CM_ERROR_INVALID_ARGUMENT,
                "symbol is NULL");
    EXPECT_FAIL(cm_symbol_copy_from_host(NULL, dev, cs, 0, NULL, 4), CM_ERROR_INVALID_ARGUMENT,
                "src is NULL");
    assert_int_equal(cudaGetLastError(), cudaSuccess); /* nothing left for the next call */

    /* on a stream: queued, complete after a synchronisation */
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    float sc[64], back[64];
    for (int i = 0; i < 64; ++i) sc[i] = 3.0f * (float)i + 0.125f;
    CM_ASSERT_OK(cm_symbol_copy_from_host(s, dev, cs, 0, sc, sizeof sc));
    CM_ASSERT_OK(cm_symbol_copy_to_host(s, dev, cs, 16, back, 48 * sizeof(float)));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    assert_memory_equal(back, sc + 4, 48 * sizeof(float));
    CM_ASSERT_OK(cm_stream_release(s));

    CM_ASSERT_OK(cm_buffer_destroy(bc));
    CM_ASSERT_OK(cm_buffer_destroy(bd));
    CM_ASSERT_OK(cm_buffer_destroy(bsum));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ------------------------------------------------------------------ pitched buffers, arrays */

typedef struct img_size {
    size_t w, h;
} img_size_t;

/* Rectangle rw x rh at (x0, y0) of an image w bytes-per-element e wide: compare got (packed
 * rows of w elements) with outside (the image before) and inside (the rectangle's source,
 * rows src_pitch bytes apart). */
static void check_rect(const unsigned char *got, const unsigned char *outside,
                       const unsigned char *inside, size_t src_pitch, size_t w, size_t h,
                       size_t e, size_t x0, size_t y0, size_t rw, size_t rh, const char *what) {
    for (size_t y = 0; y < h; ++y) {
        for (size_t x = 0; x < w; ++x) {
            bool in = x >= x0 && x < x0 + rw && y >= y0 && y < y0 + rh;
            const unsigned char *want = in ? inside + (y - y0) * src_pitch + (x - x0) * e
                                           : outside + (y * w + x) * e;
            if (memcmp(got + (y * w + x) * e, want, e) != 0)
                fail_msg("%s: element (%zu, %zu) of %zu x %zu (rectangle %zu x %zu at %zu, %zu) "
                         "differs", what, x, y, w, h, rw, rh, x0, y0);
        }
    }
}

static void round_trip_2d(cm_device_t *dev, cm_format_t f, img_size_t sz, int tex_pitch_align,
                          uint64_t seed) {
    const size_t w = sz.w, h = sz.h, e = cm_format_bytes(f), row = w * e, n = row * h;
    cm_pitched_t *p = NULL, *p2 = NULL;
    cm_array_t *a = NULL;
    CM_ASSERT_OK(cm_pitched_create(dev, w, h, f, &p));
    CM_ASSERT_OK(cm_pitched_create(dev, w, h, f, &p2));
    CM_ASSERT_OK(cm_array_create(dev, w, h, f, CM_ARRAY_DEFAULT, &a));
    cm_pitched_info_t pi;
    CM_ASSERT_OK(cm_pitched_info(p, &pi));
    assert_int_equal(pi.width, w);
    assert_int_equal(pi.height, h);
    assert_int_equal(pi.format, f);
    assert_int_equal(pi.element_bytes, e);
    assert_int_equal(pi.row_bytes, row);
    assert_true(pi.pitch >= row);
    assert_int_equal(pi.pitch % (size_t)tex_pitch_align, 0);
    assert_int_equal(pi.bytes, pi.pitch * h);
    assert_non_null(pi.device_ptr);
    assert_int_equal(pi.ordinal, 0);
    cm_array_info_t ai;
    CM_ASSERT_OK(cm_array_info(a, &ai));
    assert_int_equal(ai.width, w);
    assert_int_equal(ai.height, h);
    assert_int_equal(ai.format, f);
    assert_int_equal(ai.element_bytes, e);
    assert_non_null(ai.cuda_array);

    unsigned char *src = xmalloc(n), *got = xmalloc(n), *img = xmalloc(n);
    fill_bytes(src, n, seed);
    /* host -> pitched -> array -> pitched2 -> host (packed), and array -> host */
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(src, 0), w, h));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_pitched(p, 0, 0), w, h));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p2, 0, 0), cm_place_array(a, 0, 0), w, h));
    memset(got, 0xCD, n);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_pitched(p2, 0, 0), w, h));
    assert_memory_equal(got, src, n);
    memset(got, 0xCD, n);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, row), cm_place_array(a, 0, 0), w, h));
    assert_memory_equal(got, src, n);

    /* a host image wider than a row (host pitch row + 13): host -> array -> host */
    const size_t wide = row + 13;
    unsigned char *hw = xmalloc(wide * h), *hb = xmalloc(wide * h);
    fill_bytes(hw, wide * h, seed + 1);
    memset(hb, 0x5A, wide * h);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(hw, wide), w, h));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(hb, wide), cm_place_array(a, 0, 0), w, h));
    for (size_t y = 0; y < h; ++y) {
        assert_memory_equal(hb + y * wide, hw + y * wide, row);
        for (size_t k = row; k < wide; ++k) assert_int_equal(hb[y * wide + k], 0x5A); /* gaps */
    }
    memcpy(img, src, n); /* the array now holds hw's rows; reset it to src */
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(src, 0), w, h));

    /* rectangles at a corner: into the pitched buffer from a wider host image, and from the
     * pitched buffer into the array at another corner */
    const size_t rw = w > 2 ? w / 2 + 1 : w, rh = h > 2 ? h / 2 + 1 : h;
    const size_t x0 = w - rw, y0 = h - rh;
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, x0, y0), cm_place_host(hw, wide), rw, rh));
    memset(got, 0xCD, n);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_pitched(p, 0, 0), w, h));
    check_rect(got, src, hw, wide, w, h, e, x0, y0, rw, rh, "host -> pitched rectangle");
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_pitched(p, x0, y0), rw, rh));
    memset(got, 0xCD, n);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_array(a, 0, 0), w, h));
    check_rect(got, src, hw, wide, w, h, e, 0, 0, rw, rh, "pitched rectangle -> array corner");
    memcpy(img, got, n); /* what the array holds now */

    /* refused, nothing written: a rectangle past the width or height, a host pitch below a
     * row, array to array */
    unsigned char *junk = xmalloc(2 * row + 2 * e);
    memset(junk, 0xEE, 2 * row + 2 * e);
    EXPECT_FAIL(cm_copy_2d(NULL, cm_place_array(a, w - 1, 0), cm_place_host(junk, 0), 2, 1),
                CM_ERROR_INVALID_ARGUMENT, "run past the width");
    EXPECT_FAIL(cm_copy_2d(NULL, cm_place_array(a, 0, h), cm_place_host(junk, 0), 1, 1),
                CM_ERROR_INVALID_ARGUMENT, "run past the height");
    if (w > 1)
        EXPECT_FAIL(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(junk, row - 1), w, 2 > h ? h : 2),
                    CM_ERROR_INVALID_ARGUMENT, "is smaller than a row");
    cm_array_t *a2 = NULL;
    CM_ASSERT_OK(cm_array_create(dev, w, h, f, CM_ARRAY_DEFAULT, &a2));
    CM_ASSERT_STATUS(cm_copy_2d(NULL, cm_place_array(a2, 0, 0), cm_place_array(a, 0, 0), w, h),
                     CM_ERROR_NOT_SUPPORTED);
    CM_ASSERT_OK(cm_array_destroy(a2));
    memset(got, 0xCD, n);
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_array(a, 0, 0), w, h));
    assert_memory_equal(got, img, n);
    free(junk);

    /* pinned host memory on a stream: host -> array -> pitched2 -> host, queued */
    cm_host_buffer_t *hin = NULL, *hout = NULL;
    void *pin = NULL, *pout = NULL;
    CM_ASSERT_OK(cm_host_buffer_create(dev, n, CM_HOST_BUFFER_DEFAULT, &hin));
    CM_ASSERT_OK(cm_host_buffer_create(dev, n, CM_HOST_BUFFER_DEFAULT, &hout));
    CM_ASSERT_OK(cm_host_buffer_data(hin, &pin));
    CM_ASSERT_OK(cm_host_buffer_data(hout, &pout));
    fill_bytes(pin, n, seed + 2);
    memset(pout, 0xCD, n);
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_copy_2d(s, cm_place_array(a, 0, 0), cm_place_host(pin, 0), w, h));
    CM_ASSERT_OK(cm_copy_2d(s, cm_place_pitched(p2, 0, 0), cm_place_array(a, 0, 0), w, h));
    CM_ASSERT_OK(cm_copy_2d(s, cm_place_host(pout, 0), cm_place_pitched(p2, 0, 0), w, h));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    assert_memory_equal(pout, pin, n);
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_host_buffer_destroy(hin));
    CM_ASSERT_OK(cm_host_buffer_destroy(hout));

    free(src);
    free(got);
    free(img);
    free(hw);
    free(hb);
    CM_ASSERT_OK(cm_pitched_destroy(p));
    CM_ASSERT_OK(cm_pitched_destroy(p2));
    CM_ASSERT_OK(cm_array_destroy(a));
}

static void test_pitched_arrays_and_2d_copies(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    int align = 0;
    CUDA_OK(cudaDeviceGetAttribute(&align, cudaDevAttrTexturePitchAlignment, 0));
    assert_true(align > 0);
    const cm_format_t formats[] = {CM_FORMAT_F32, CM_FORMAT_U8, CM_FORMAT_U8X2, CM_FORMAT_U16X2,
                                   CM_FORMAT_F32X4, CM_FORMAT_I16};
    const img_size_t sizes[] = {{37, 19}, {1, 1}, {130, 3}, {333, 7}, {1, 65}, {1021, 2}};
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; ++fi)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
            round_trip_2d(dev, formats[fi], sizes[si], align, 100 * fi + si + 1);

    /* a kernel that indexes rows by the pitch (not the width) writes every element once */
    const int w = 77, h = 29;
    cm_pitched_t *p = NULL;
    CM_ASSERT_OK(cm_pitched_create(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, &p));
    cm_pitched_info_t pi;
    CM_ASSERT_OK(cm_pitched_info(p, &pi));
    assert_true(pi.pitch > pi.row_bytes); /* 308-byte rows: the driver pads them */
    float *img = xmalloc((size_t)w * h * sizeof(float));
    for (int i = 0; i < w * h; ++i) img[i] = -1.0f;
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    CUDA_OK(tms_pitched_fill_f32(pi.device_ptr, pi.pitch, w, h, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(img, 0), cm_place_pitched(p, 0, 0), (size_t)w,
                            (size_t)h));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            if (img[y * w + x] != 1000.0f * (float)y + (float)x)
                fail_msg("pitched element (%d, %d) = %g", x, y, (double)img[y * w + x]);

    /* captured into a graph: pageable host -> pitched -> pageable host; each launch reads the
     * source and writes the destination as they are then (not waited for in the capture) */
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    float *back = xmalloc((size_t)w * h * sizeof(float));
    for (int i = 0; i < w * h; ++i) back[i] = -7.0f;
    cm_graph_t *g = NULL;
    CM_ASSERT_OK(cm_graph_capture_begin(s));
    CM_ASSERT_OK(cm_copy_2d(s, cm_place_pitched(p, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    CM_ASSERT_OK(cm_copy_2d(s, cm_place_host(back, 0), cm_place_pitched(p, 0, 0), (size_t)w,
                            (size_t)h));
    CM_ASSERT_OK(cm_graph_capture_end(s, &g));
    assert_true(back[0] == -7.0f); /* nothing ran yet */
    for (int rep = 0; rep < 2; ++rep) {
        for (int i = 0; i < w * h; ++i) img[i] = (float)(i * (rep + 2));
        CM_ASSERT_OK(cm_graph_launch(g, s));
        CM_ASSERT_OK(cm_stream_synchronize(s));
        for (int i = 0; i < w * h; ++i)
            if (back[i] != img[i])
                fail_msg("launch %d: element %d = %g, the source %g", rep, i, (double)back[i],
                         (double)img[i]);
    }
    CM_ASSERT_OK(cm_graph_destroy(g));
    CM_ASSERT_OK(cm_stream_release(s));
    free(back);
    free(img);
    CM_ASSERT_OK(cm_pitched_destroy(p));
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ------------------------------------------------------------------ textures: the CPU model */

typedef struct tex_case {
    const char *name;
    cm_filter_mode_t filter;
    cm_address_mode_t address;
    bool normalized;
} tex_case_t;

static const tex_case_t k_tex_cases[] = {
    {"point, clamp, unnormalised", CM_FILTER_POINT, CM_ADDRESS_CLAMP, false},
    {"point, clamp, normalised", CM_FILTER_POINT, CM_ADDRESS_CLAMP, true},
    {"point, border, unnormalised", CM_FILTER_POINT, CM_ADDRESS_BORDER, false},
    {"point, border, normalised", CM_FILTER_POINT, CM_ADDRESS_BORDER, true},
    {"point, wrap, normalised", CM_FILTER_POINT, CM_ADDRESS_WRAP, true},
    {"point, mirror, normalised", CM_FILTER_POINT, CM_ADDRESS_MIRROR, true},
    {"linear, clamp, unnormalised", CM_FILTER_LINEAR, CM_ADDRESS_CLAMP, false},
    {"linear, clamp, normalised", CM_FILTER_LINEAR, CM_ADDRESS_CLAMP, true},
    {"linear, border, unnormalised", CM_FILTER_LINEAR, CM_ADDRESS_BORDER, false},
    {"linear, border, normalised", CM_FILTER_LINEAR, CM_ADDRESS_BORDER, true},
    {"linear, wrap, normalised", CM_FILTER_LINEAR, CM_ADDRESS_WRAP, true},
    {"linear, mirror, normalised", CM_FILTER_LINEAR, CM_ADDRESS_MIRROR, true},
};
#define N_TEX_CASES (sizeof k_tex_cases / sizeof k_tex_cases[0])

/* Texel index i of a dimension of n texels under an address mode; *outside for border. */
static int address_index(cm_address_mode_t m, int i, int n, bool *outside) {
    *outside = false;
    switch (m) {
    case CM_ADDRESS_CLAMP: return i < 0 ? 0 : i >= n ? n - 1 : i;
    case CM_ADDRESS_BORDER:
        if (i >= 0 && i < n) return i;
        *outside = true;
        return 0;
    case CM_ADDRESS_WRAP: {
        int r = i % n;
        return r < 0 ? r + n : r;
    }
    case CM_ADDRESS_MIRROR: { /* period 2n: 0 1 .. n-1 n-1 .. 1 0 */
        int r = i % (2 * n);
        if (r < 0) r += 2 * n;
        return r < n ? r : 2 * n - 1 - r;
    }
    }
    return 0;
}

/* The value a texture returns for texel (i, j): border reads 0. */
static double texel(const double *v, int w, int h, cm_address_mode_t m, int i, int j) {
    bool oi, oj;
    int ii = address_index(m, i, w, &oi), jj = address_index(m, j, h, &oj);
    return oi || oj ? 0.0 : v[(size_t)jj * (size_t)w + (size_t)ii];
}

/* CUDA's texture sampling (programming guide, "Texture Fetching"): u = x (unnormalised) or
 * x * width (normalised); point: texel floor(u); linear: u - 0.5 = i + a, blending i and i + 1
 * with weights 1 - a and a (per dimension), the address mode applied to each texel index.
 * The hardware keeps a in 9-bit fixed point (8 fractional bits), so a result may be off by
 * 1/256 of the neighbours' difference per dimension: tol is 2/256 of the range of the 4 x 4
 * texels around the sample. */
static void ref_sample(const double *v, int w, int h, const tex_case_t *c, float x, float y,
                       double *val, double *tol) {
    double u = c->normalized ? (double)x * (double)w : (double)x;
    double t = c->normalized ? (double)y * (double)h : (double)y;
    if (c->filter == CM_FILTER_POINT) {
        *val = texel(v, w, h, c->address, ifloor(u), ifloor(t));
        *tol = 1e-6;
        return;
    }
    double ub = u - 0.5, tb = t - 0.5;
    int i = ifloor(ub), j = ifloor(tb);
    double a = ub - (double)i, b = tb - (double)j;
    *val = (1 - a) * (1 - b) * texel(v, w, h, c->address, i, j) +
           a * (1 - b) * texel(v, w, h, c->address, i + 1, j) +
           (1 - a) * b * texel(v, w, h, c->address, i, j + 1) +
           a * b * texel(v, w, h, c->address, i + 1, j + 1);
    double lo = 1e300, hi = -1e300;
    for (int dj = -1; dj <= 2; ++dj)
        for (int di = -1; di <= 2; ++di) {
            double q = texel(v, w, h, c->address, i + di, j + dj);
            lo = q < lo ? q : lo;
            hi = q > hi ? q : hi;
        }
    *tol = (hi - lo) * (2.0 / 256.0) + 1e-5;
}

/* Sample coordinates for a case: point samples sit at least 0.05 texel from a texel edge (the
 * result jumps there); both reach beyond the texture (two widths for wrap and mirror, three
 * texels for clamp and border) to exercise the address mode. */
static void make_coords(const tex_case_t *c, int w, int h, int n, uint64_t *rs, float *xs,
                        float *ys) {
    const bool periodic = c->address == CM_ADDRESS_WRAP || c->address == CM_ADDRESS_MIRROR;
    for (int k = 0; k < n; ++k) {
        for (int d = 0; d < 2; ++d) {
            const int size = d == 0 ? w : h;
            const double lo = periodic ? -2.0 * size : -3.0, hi = periodic ? 3.0 * size : size + 3.0;
            double u;
            if (c->filter == CM_FILTER_POINT) {
                int cells = (int)(hi - lo);
                int cell = (int)lo + (int)(cm_test_rand(rs) % (uint64_t)cells);
                u = (double)cell + 0.5 + 0.45 * cm_test_rand_unit(rs);
            } else {
                u = lo + (hi - lo) * (double)rand01(rs);
            }
            float coord = (float)(c->normalized ? u / (double)size : u);
            if (d == 0) xs[k] = coord;
            else ys[k] = coord;
        }
    }
}

/* Sample a texture at n coordinates per case and compare with the model; returns nothing,
 * fails the test on the first miss. */
typedef struct sampler {
    cm_device_t *dev;
    int n;
    float *hx, *hy, *hout;
    void *dx, *dy, *dout;
    cm_buffer_t *bx, *by, *bout;
} sampler_t;

static void sampler_init(sampler_t *s, cm_device_t *dev, int n) {
    memset(s, 0, sizeof *s);
    s->dev = dev;
    s->n = n;
    s->hx = xmalloc((size_t)n * sizeof(float));
    s->hy = xmalloc((size_t)n * sizeof(float));
    s->hout = xmalloc((size_t)n * sizeof(float));
    s->bx = dbuf(dev, (size_t)n * sizeof(float), &s->dx);
    s->by = dbuf(dev, (size_t)n * sizeof(float), &s->dy);
    s->bout = dbuf(dev, (size_t)n * sizeof(float), &s->dout);
}

static void sampler_free(sampler_t *s) {
    free(s->hx);
    free(s->hy);
    free(s->hout);
    CM_ASSERT_OK(cm_buffer_destroy(s->bx));
    CM_ASSERT_OK(cm_buffer_destroy(s->by));
    CM_ASSERT_OK(cm_buffer_destroy(s->bout));
}

/* Read tex at the coordinates of case c and compare with the model over values v (w x h). */
static void sample_and_check(sampler_t *s, const cm_texture_t *tex, const tex_case_t *c,
                             const double *v, int w, int h, uint64_t seed, const char *memory) {
    uint64_t rs = seed;
    make_coords(c, w, h, s->n, &rs, s->hx, s->hy);
    const size_t bytes = (size_t)s->n * sizeof(float);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, s->bx, 0, s->hx, bytes));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, s->by, 0, s->hy, bytes));
    CM_ASSERT_OK(cm_buffer_set(NULL, s->bout, 0, bytes, 0xFF)); /* NaN: every read must land */
    unsigned long long obj = 0;
    CM_ASSERT_OK(cm_texture_object(tex, &obj));
    CUDA_OK(tms_tex2d_sample_f32(obj, s->dx, s->dy, s->dout, s->n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, s->bout, 0, s->hout, bytes));
    double worst = 0.0;
    for (int k = 0; k < s->n; ++k) {
        double want, tol;
        ref_sample(v, w, h, c, s->hx[k], s->hy[k], &want, &tol);
        double err = (double)s->hout[k] - want;
        if (err < 0) err = -err;
        if (!(err <= tol)) /* NaN fails */
            fail_msg("texture over %s (%d x %d), %s: sample %d at (%.7g, %.7g) read %.9g, the "
                     "model says %.9g (tolerance %.3g)", memory, w, h, c->name, k,
                     (double)s->hx[k], (double)s->hy[k], (double)s->hout[k], want, tol);
        if (err > worst) worst = err;
    }
    print_message("  %-10s %-30s %d samples, largest difference %.3g\n", memory, c->name, s->n,
                  worst);
}

/* ------------------------------------------------------------------ textures over buffers */

static void test_texture_over_buffer(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    int align = 0;
    CUDA_OK(cudaDeviceGetAttribute(&align, cudaDevAttrTextureAlignment, 0));
    assert_true(align > 0 && align % 4 == 0);
    const int n = 1001;
    const size_t off = (size_t)align, bytes = 2 * off + (size_t)n * 4 + 64;
    void *d = NULL, *dout = NULL;
    cm_buffer_t *b = dbuf(dev, bytes, &d), *out = dbuf(dev, (size_t)n * 4, &dout);
    unsigned char *h = xmalloc(bytes);
    fill_bytes(h, bytes, 42);
    float *hf = (float *)(void *)h;
    for (size_t i = 0; i < bytes / 4; ++i) hf[i] = (float)i * 0.5f - 100.0f;
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, h, bytes));

    /* float elements from a texture-aligned offset */
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.format = CM_FORMAT_F32;
    cm_texture_t *t = NULL;
    CM_ASSERT_OK(cm_texture_create_from_buffer(b, off, (size_t)n * 4, &desc, &t));
    unsigned long long obj = 0;
    CM_ASSERT_OK(cm_texture_object(t, &obj));
    float *got = xmalloc((size_t)n * 4);
    CUDA_OK(tms_tex1d_fetch_f32(obj, dout, n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, got, (size_t)n * 4));
    assert_memory_equal(got, h + off, (size_t)n * 4);

    /* the buffer cannot go while the texture reads it; the texture still reads it after */
    EXPECT_FAIL(cm_buffer_destroy(b), CM_ERROR_BUSY, "is read by texture");
    assert_non_null(strstr(cm_last_error()->message, "test_gpu_memspace.c"));
    CM_ASSERT_OK(cm_buffer_set(NULL, out, 0, (size_t)n * 4, 0));
    CUDA_OK(tms_tex1d_fetch_f32(obj, dout, n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, got, (size_t)n * 4));
    assert_memory_equal(got, h + off, (size_t)n * 4);
    CM_ASSERT_OK(cm_texture_destroy(t));

    /* int elements at offset 0 */
    desc.format = CM_FORMAT_I32;
    for (size_t i = 0; i < bytes / 4; ++i) ((int32_t *)(void *)h)[i] = (int32_t)(i * 2654435761u);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, h, bytes));
    CM_ASSERT_OK(cm_texture_create_from_buffer(b, 0, (size_t)n * 4, &desc, &t));
    CM_ASSERT_OK(cm_texture_object(t, &obj));
    CUDA_OK(tms_tex1d_fetch_i32(obj, dout, n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, got, (size_t)n * 4));
    assert_memory_equal(got, h, (size_t)n * 4);
    CM_ASSERT_OK(cm_texture_destroy(t));

    /* bytes read as normalised floats: b / 255 */
    fill_bytes(h, bytes, 43);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, b, 0, h, bytes));
    desc.format = CM_FORMAT_U8;
    desc.read_mode = CM_READ_NORMALIZED_FLOAT;
    CM_ASSERT_OK(cm_texture_create_from_buffer(b, 2 * off, (size_t)n, &desc, &t));
    CM_ASSERT_OK(cm_texture_object(t, &obj));
    CUDA_OK(tms_tex1d_fetch_f32(obj, dout, n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, got, (size_t)n * 4));
    for (int i = 0; i < n; ++i) {
        double want = (double)h[2 * off + (size_t)i] / 255.0, err = (double)got[i] - want;
        if (!(err <= 1e-6 && err >= -1e-6))
            fail_msg("byte %d: read %.9g, want %.9g", i, (double)got[i], want);
    }
    CM_ASSERT_OK(cm_texture_destroy(t));

    /* refused: what CUDA would ignore or cannot do for a buffer texture */
    cm_texture_desc_t bad = CM_TEXTURE_DESC_INIT;
    bad.format = CM_FORMAT_F32;
    EXPECT_FAIL(cm_texture_create_from_buffer(b, 4, 64, &bad, &t), CM_ERROR_INVALID_ARGUMENT,
                "textureAlignment");
    EXPECT_FAIL(cm_texture_create_from_buffer(b, 0, 6, &bad, &t), CM_ERROR_INVALID_ARGUMENT,
                "not a whole");
    bad.filter_mode = CM_FILTER_LINEAR;
    EXPECT_FAIL(cm_texture_create_from_buffer(b, 0, 64, &bad, &t), CM_ERROR_INVALID_ARGUMENT,
                "CM_FILTER_LINEAR would silently point-sample");
    bad.filter_mode = CM_FILTER_POINT;
    bad.address_mode = CM_ADDRESS_WRAP;
    bad.normalized_coords = true;
    EXPECT_FAIL(cm_texture_create_from_buffer(b, 0, 64, &bad, &t), CM_ERROR_INVALID_ARGUMENT,
                "breaks 2 rules");
    bad = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    EXPECT_FAIL(cm_texture_create_from_buffer(b, 0, 64, &bad, &t), CM_ERROR_INVALID_ARGUMENT,
                "needs desc.format");
    CM_ASSERT_OK(cm_buffer_destroy(b)); /* no texture left: allowed */
    CM_ASSERT_OK(cm_buffer_destroy(out));
    free(h);
    free(got);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ------------------------------------------------------------------ 2-D textures */

/* An F32 image of random values in [0, 1) over a pitched buffer and over an array, read with
 * every case; then a U8 image read as normalised floats (point and linear). */
static void test_texture_2d_modes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    const int w = 37, h = 23, n = cm_test_under_sanitizer() ? 256 : 2048;
    uint64_t rs = 2024;
    float *img = xmalloc((size_t)w * h * sizeof(float));
    double *v = xmalloc((size_t)w * h * sizeof(double));
    for (int i = 0; i < w * h; ++i) {
        img[i] = rand01(&rs);
        v[i] = (double)img[i];
    }
    cm_pitched_t *p = NULL;
    cm_array_t *a = NULL;
    CM_ASSERT_OK(cm_pitched_create(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, &p));
    CM_ASSERT_OK(cm_array_create(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &a));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    sampler_t s;
    sampler_init(&s, dev, n);
    for (size_t c = 0; c < N_TEX_CASES; ++c) {
        cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
        desc.filter_mode = k_tex_cases[c].filter;
        desc.address_mode = k_tex_cases[c].address;
        desc.normalized_coords = k_tex_cases[c].normalized;
        cm_texture_t *tp = NULL, *ta = NULL;
        CM_ASSERT_OK(cm_texture_create_from_pitched(p, &desc, &tp));
        CM_ASSERT_OK(cm_texture_create_from_array(a, &desc, &ta));
        sample_and_check(&s, tp, &k_tex_cases[c], v, w, h, 11 + c, "pitched");
        sample_and_check(&s, ta, &k_tex_cases[c], v, w, h, 11 + c, "array");
        CM_ASSERT_OK(cm_texture_destroy(tp));
        CM_ASSERT_OK(cm_texture_destroy(ta));
    }
    /* the defaults (NULL descriptor): point, clamp, unnormalised */
    cm_texture_t *td = NULL;
    CM_ASSERT_OK(cm_texture_create_from_array(a, NULL, &td));
    sample_and_check(&s, td, &k_tex_cases[0], v, w, h, 99, "array");
    CM_ASSERT_OK(cm_texture_destroy(td));

    /* refused: wrap and mirror without normalised coordinates (CUDA would clamp) */
    cm_texture_desc_t bad = CM_TEXTURE_DESC_INIT;
    bad.address_mode = CM_ADDRESS_WRAP;
    EXPECT_FAIL(cm_texture_create_from_array(a, &bad, &td), CM_ERROR_INVALID_ARGUMENT,
                "needs normalized_coords");
    bad.address_mode = CM_ADDRESS_MIRROR;
    EXPECT_FAIL(cm_texture_create_from_pitched(p, &bad, &td), CM_ERROR_INVALID_ARGUMENT,
                "needs normalized_coords");
    bad = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    bad.format = CM_FORMAT_U8;
    EXPECT_FAIL(cm_texture_create_from_array(a, &bad, &td), CM_ERROR_INVALID_ARGUMENT,
                "differs from the CUDA array's CM_FORMAT_F32");
    CM_ASSERT_OK(cm_pitched_destroy(p));
    CM_ASSERT_OK(cm_array_destroy(a));

    /* 8-bit texels read as normalised floats, point and linear, over both memories */
    const int w8 = 29, h8 = 17;
    unsigned char *b8 = xmalloc((size_t)w8 * h8);
    fill_bytes(b8, (size_t)w8 * h8, 77);
    double *v8 = xmalloc((size_t)w8 * h8 * sizeof(double));
    for (int i = 0; i < w8 * h8; ++i) v8[i] = (double)b8[i] / 255.0;
    CM_ASSERT_OK(cm_pitched_create(dev, (size_t)w8, (size_t)h8, CM_FORMAT_U8, &p));
    CM_ASSERT_OK(cm_array_create(dev, (size_t)w8, (size_t)h8, CM_FORMAT_U8, CM_ARRAY_DEFAULT, &a));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(b8, 0), (size_t)w8,
                            (size_t)h8));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(b8, 0), (size_t)w8,
                            (size_t)h8));
    const size_t u8_cases[] = {1, 7, 10, 11}; /* point clamp, linear clamp, wrap, mirror */
    for (size_t k = 0; k < sizeof u8_cases / sizeof u8_cases[0]; ++k) {
        const tex_case_t *c = &k_tex_cases[u8_cases[k]];
        cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
        desc.filter_mode = c->filter;
        desc.address_mode = c->address;
        desc.normalized_coords = c->normalized;
        desc.read_mode = CM_READ_NORMALIZED_FLOAT;
        cm_texture_t *tp = NULL, *ta = NULL;
        CM_ASSERT_OK(cm_texture_create_from_pitched(p, &desc, &tp));
        CM_ASSERT_OK(cm_texture_create_from_array(a, &desc, &ta));
        sample_and_check(&s, tp, c, v8, w8, h8, 500 + k, "pitched u8");
        sample_and_check(&s, ta, c, v8, w8, h8, 500 + k, "array u8");
        CM_ASSERT_OK(cm_texture_destroy(tp));
        CM_ASSERT_OK(cm_texture_destroy(ta));
    }
    /* refused: linear filtering of 8-bit integers read as integers */
    bad = (cm_texture_desc_t)CM_TEXTURE_DESC_INIT;
    bad.filter_mode = CM_FILTER_LINEAR;
    EXPECT_FAIL(cm_texture_create_from_array(a, &bad, &td), CM_ERROR_INVALID_ARGUMENT,
                "needs read_mode CM_READ_NORMALIZED_FLOAT");
    sampler_free(&s);
    CM_ASSERT_OK(cm_pitched_destroy(p));
    CM_ASSERT_OK(cm_array_destroy(a));
    free(img);
    free(v);
    free(b8);
    free(v8);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ------------------------------------------------------------------ surfaces, busy memory */

static void test_surfaces(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    const int w = 45, h = 17;
    const size_t n = (size_t)w * h;
    cm_array_t *a = NULL;
    CM_ASSERT_OK(cm_array_create(dev, (size_t)w, (size_t)h, CM_FORMAT_F32,
                                 CM_ARRAY_SURFACE_LOAD_STORE, &a));
    cm_array_info_t ai;
    CM_ASSERT_OK(cm_array_info(a, &ai));
    assert_int_equal(ai.flags, CM_ARRAY_SURFACE_LOAD_STORE);
    float *img = xmalloc(n * sizeof(float)), *got = xmalloc(n * sizeof(float));
    for (size_t i = 0; i < n; ++i) img[i] = -7.0f;
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    cm_surface_t *surf = NULL;
    CM_ASSERT_OK(cm_surface_create(a, &surf));
    unsigned long long so = 0;
    CM_ASSERT_OK(cm_surface_object(surf, &so));

    /* kernel writes, read back by a 2-D copy */
    CUDA_OK(tms_surf_write_f32(so, w, h, 3.0f, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_array(a, 0, 0), (size_t)w,
                            (size_t)h));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float want = 3.0f + 0.25f * (float)x + 1000.0f * (float)y;
            if (got[y * w + x] != want)
                fail_msg("surface write (%d, %d): %g, want %g", x, y, (double)got[y * w + x],
                         (double)want);
        }
    /* read-modify-write in place, read back through the surface */
    void *dout = NULL;
    cm_buffer_t *out = dbuf(dev, n * sizeof(float), &dout);
    CUDA_OK(tms_surf_scale_f32(so, w, h, 2.0f, 0));
    CUDA_OK(tms_surf_read_f32(so, w, h, dout, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, got, n * sizeof(float)));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float want = 2.0f * (3.0f + 0.25f * (float)x + 1000.0f * (float)y);
            if (got[y * w + x] != want)
                fail_msg("surface read (%d, %d): %g, want %g", x, y, (double)got[y * w + x],
                         (double)want);
        }
    /* a texture over the same array sees what the surface wrote (point samples at centres) */
    cm_texture_t *tex = NULL;
    CM_ASSERT_OK(cm_texture_create_from_array(a, NULL, &tex));
    unsigned long long to = 0;
    CM_ASSERT_OK(cm_texture_object(tex, &to));
    float *hx = xmalloc(n * sizeof(float)), *hy = xmalloc(n * sizeof(float));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            hx[y * w + x] = (float)x + 0.5f;
            hy[y * w + x] = (float)y + 0.5f;
        }
    void *dx = NULL, *dy = NULL;
    cm_buffer_t *bx = dbuf(dev, n * sizeof(float), &dx), *by = dbuf(dev, n * sizeof(float), &dy);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, bx, 0, hx, n * sizeof(float)));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, by, 0, hy, n * sizeof(float)));
    CM_ASSERT_OK(cm_buffer_set(NULL, out, 0, n * sizeof(float), 0));
    CUDA_OK(tms_tex2d_sample_f32(to, dx, dy, dout, (int)n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    float *tgot = xmalloc(n * sizeof(float));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, out, 0, tgot, n * sizeof(float)));
    assert_memory_equal(tgot, got, n * sizeof(float));

    /* the array cannot go while the texture or the surface uses it (the message names
     * whichever the library finds first) */
    EXPECT_FAIL(cm_array_destroy(a), CM_ERROR_BUSY, "is read by");
    CM_ASSERT_OK(cm_texture_destroy(tex));
    EXPECT_FAIL(cm_array_destroy(a), CM_ERROR_BUSY, "surface");
    /* and still holds the data */
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_host(img, 0), cm_place_array(a, 0, 0), (size_t)w,
                            (size_t)h));
    assert_memory_equal(img, got, n * sizeof(float));
    CM_ASSERT_OK(cm_surface_destroy(surf));
    CM_ASSERT_OK(cm_array_destroy(a));

    /* a surface needs an array made for it */
    cm_array_t *plain = NULL;
    CM_ASSERT_OK(cm_array_create(dev, 8, 8, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &plain));
    EXPECT_FAIL(cm_surface_create(plain, &surf), CM_ERROR_INVALID_ARGUMENT,
                "without CM_ARRAY_SURFACE_LOAD_STORE");
    CM_ASSERT_OK(cm_array_destroy(plain));
    CM_ASSERT_OK(cm_buffer_destroy(out));
    CM_ASSERT_OK(cm_buffer_destroy(bx));
    CM_ASSERT_OK(cm_buffer_destroy(by));
    free(img);
    free(got);
    free(tgot);
    free(hx);
    free(hy);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* Memory under a live texture: every kind refuses to go (CM_ERROR_BUSY), the texture keeps
 * reading the right values, the leak report lists the textures, the device close waits. */
static void test_busy_under_texture(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    const int w = 19, h = 11;
    float *img = xmalloc((size_t)w * h * sizeof(float));
    double *v = xmalloc((size_t)w * h * sizeof(double));
    uint64_t rs = 5;
    for (int i = 0; i < w * h; ++i) v[i] = (double)(img[i] = rand01(&rs));
    cm_pitched_t *p = NULL;
    cm_array_t *a = NULL;
    CM_ASSERT_OK(cm_pitched_create_at(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, &p,
                                      "busy pitched", __FILE__, __LINE__));
    CM_ASSERT_OK(cm_array_create_at(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &a,
                                    "busy array", __FILE__, __LINE__));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_pitched(p, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    CM_ASSERT_OK(cm_copy_2d(NULL, cm_place_array(a, 0, 0), cm_place_host(img, 0), (size_t)w,
                            (size_t)h));
    const tex_case_t *c = &k_tex_cases[7]; /* linear, clamp, normalised */
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.filter_mode = c->filter;
    desc.address_mode = c->address;
    desc.normalized_coords = c->normalized;
    cm_texture_t *tp = NULL, *ta = NULL;
    CM_ASSERT_OK(cm_texture_create_from_pitched(p, &desc, &tp));
    CM_ASSERT_OK(cm_texture_create_from_array(a, &desc, &ta));
    EXPECT_FAIL(cm_pitched_destroy(p), CM_ERROR_BUSY, "is read by texture");
    assert_non_null(strstr(cm_last_error()->message, "pitched buffer"));
    EXPECT_FAIL(cm_array_destroy(a), CM_ERROR_BUSY, "is read by texture");
    assert_non_null(strstr(cm_last_error()->hint, "cm_texture_destroy()"));
    sampler_t s;
    sampler_init(&s, dev, 256);
    sample_and_check(&s, tp, c, v, w, h, 3, "pitched (after a refused destroy)");
    sample_and_check(&s, ta, c, v, w, h, 4, "array (after a refused destroy)");
    sampler_free(&s);
    char report[4096];
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, NULL));
    assert_non_null(strstr(report, "texture over pitched buffer"));
    assert_non_null(strstr(report, "texture over CUDA array"));
    assert_non_null(strstr(report, "busy array"));
    CM_ASSERT_STATUS(cm_device_close(dev), CM_ERROR_BUSY);
    /* the scope helpers keep memory a texture reads */
    cm_pitched_t *keep = p;
    cm_pitched_scope_exit(&keep);
    assert_ptr_equal(keep, p);
    CM_ASSERT_OK(cm_texture_destroy(tp));
    CM_ASSERT_OK(cm_texture_destroy(ta));
    CM_ASSERT_OK(cm_pitched_destroy(p));
    CM_ASSERT_OK(cm_array_destroy(a));
    EXPECT_FAIL(cm_texture_destroy(tp), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    free(img);
    free(v);
    CM_ASSERT_OK(cm_device_close(dev));
}

/* ------------------------------------------------------------------ managed memory */

static int range_attr(enum cudaMemRangeAttribute attr, const void *p, size_t bytes) {
    int v = -99;
    CUDA_OK(cudaMemRangeGetAttribute(&v, sizeof v, attr, p, bytes));
    return v;
}

static bool accessed_by(const void *p, size_t bytes, int device) {
    int ids[8];
    CUDA_OK(cudaMemRangeGetAttribute(ids, sizeof ids, cudaMemRangeAttributeAccessedBy, p, bytes));
    for (int i = 0; i < 8; ++i)
        if (ids[i] == device) return true;
    return false;
}

static void test_managed(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_device_t *dev = open_device();
    int managed = 0, concurrent = 0, count = 0;
    CUDA_OK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
    CUDA_OK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    CUDA_OK(cudaGetDeviceCount(&count));
    cm_managed_t *m = NULL;
    if (!managed) {
        CM_ASSERT_STATUS(cm_managed_create(dev, MiB, &m), CM_ERROR_NOT_SUPPORTED);
        print_message("device 0 has no managed memory: the refusal was checked\n");
        CM_ASSERT_OK(cm_device_close(dev));
        return;
    }
    /* never more than an eighth of what is free (managed memory past it can hang the GPU) */
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    size_t bytes = 16 * MiB;
    while (bytes > MiB && bytes > free_b / 8) bytes /= 2;
    assert_true(bytes <= free_b / 8);
    const size_t n = bytes / sizeof(float);

    CM_ASSERT_OK(cm_managed_create_at(dev, bytes, &m, "test managed", __FILE__, __LINE__));
    cm_managed_info_t mi;
    CM_ASSERT_OK(cm_managed_info(m, &mi));
    assert_int_equal(mi.bytes, bytes);
    assert_non_null(mi.data);
    assert_ptr_equal(mi.device, dev);
    assert_int_equal(mi.ordinal, 0);
    assert_int_equal(mi.concurrent_access ? 1 : 0, concurrent ? 1 : 0);
    assert_string_equal(mi.label, "test managed");
    void *data = NULL;
    CM_ASSERT_OK(cm_managed_data(m, &data));
    assert_ptr_equal(data, mi.data);
    struct cudaPointerAttributes pa;
    memset(&pa, 0, sizeof pa);
    CUDA_OK(cudaPointerGetAttributes(&pa, data));
    assert_int_equal(pa.type, cudaMemoryTypeManaged);
    float *f = data;
    for (size_t i = 0; i < n; ++i) f[i] = (float)(i % 4096u); /* the host writes it directly */

    if (concurrent) {
        /* each advice, as the driver records it */
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_READ_MOSTLY, CM_LOCATION_HOST));
        assert_int_equal(range_attr(cudaMemRangeAttributeReadMostly, data, bytes), 1);
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_UNSET_READ_MOSTLY, 0));
        assert_int_equal(range_attr(cudaMemRangeAttributeReadMostly, data, bytes), 0);
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_PREFERRED_LOCATION, 0));
        assert_int_equal(range_attr(cudaMemRangeAttributePreferredLocation, data, bytes), 0);
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_PREFERRED_LOCATION,
                                       CM_LOCATION_HOST));
        assert_int_equal(range_attr(cudaMemRangeAttributePreferredLocation, data, bytes),
                         cudaCpuDeviceId);
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_UNSET_PREFERRED_LOCATION, 0));
        assert_int_equal(range_attr(cudaMemRangeAttributePreferredLocation, data, bytes),
                         cudaInvalidDeviceId);
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_ACCESSED_BY, 0));
        assert_true(accessed_by(data, bytes, 0));
        CM_ASSERT_OK(cm_managed_advise(m, 0, bytes, CM_ADVISE_UNSET_ACCESSED_BY, 0));
        assert_false(accessed_by(data, bytes, 0));
        CM_ASSERT_OK(cm_managed_advise(m, 4096, 0, CM_ADVISE_READ_MOSTLY, 0)); /* empty range */

        /* prefetch to the device (synchronous), a kernel, prefetch to the host on a stream */
        CM_ASSERT_OK(cm_managed_prefetch(NULL, m, 0, bytes, 0));
        assert_int_equal(range_attr(cudaMemRangeAttributeLastPrefetchLocation, data, bytes), 0);
        CUDA_OK(tms_managed_update_f32(f, n, 0));
        CUDA_OK(cudaDeviceSynchronize());
        cm_stream_t *s = NULL;
        CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
        CM_ASSERT_OK(cm_managed_prefetch(s, m, 0, bytes, CM_LOCATION_HOST));
        CM_ASSERT_OK(cm_stream_synchronize(s));
        assert_int_equal(range_attr(cudaMemRangeAttributeLastPrefetchLocation, data, bytes),
                         cudaCpuDeviceId);
        for (size_t i = 0; i < n; ++i)
            if (f[i] != 2.0f * (float)(i % 4096u) + 1.0f)
                fail_msg("managed element %zu: %g after prefetch, kernel, prefetch", i,
                         (double)f[i]);
        /* a part of it, at an offset that is not a page boundary */
        CM_ASSERT_OK(cm_managed_prefetch(s, m, 4100, bytes / 2, 0));
        CM_ASSERT_OK(cm_managed_prefetch(s, m, bytes, 0, 0));
        CM_ASSERT_OK(cm_stream_synchronize(s));
        CM_ASSERT_OK(cm_stream_release(s));
        /* refused: a range past the end, a location that is no device, advice outside the enum */
        EXPECT_FAIL(cm_managed_prefetch(NULL, m, 8, bytes, 0), CM_ERROR_INVALID_ARGUMENT,
                    "range out of bounds");
        EXPECT_FAIL(cm_managed_prefetch(NULL, m, 0, bytes, count), CM_ERROR_INVALID_ARGUMENT,
                    "is neither CM_LOCATION_HOST");
        EXPECT_FAIL(cm_managed_advise(m, 0, bytes, (cm_advice_t)99, 0), CM_ERROR_INVALID_ARGUMENT,
                    "is not a cm_advice_t");
        EXPECT_FAIL(cm_managed_advise(m, bytes, 1, CM_ADVISE_READ_MOSTLY, 0),
                    CM_ERROR_INVALID_ARGUMENT, "range out of bounds");
        for (size_t i = 0; i < n; ++i) f[i] = (float)(i % 4096u);
    } else {
        /* without concurrent access prefetch and device advice are refused, saying why */
        EXPECT_FAIL(cm_managed_prefetch(NULL, m, 0, bytes, 0), CM_ERROR_NOT_SUPPORTED,
                    "concurrent managed access");
        EXPECT_FAIL(cm_managed_advise(m, 0, bytes, CM_ADVISE_PREFERRED_LOCATION, 0),
                    CM_ERROR_NOT_SUPPORTED, "concurrent managed access");
        print_message("device 0 has no concurrent managed access: prefetch and device advice "
                      "refused as expected\n");
    }
    /* a kernel on pages the host wrote last (they migrate on demand) */
    CUDA_OK(tms_managed_update_f32(f, n, 0));
    CUDA_OK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i += 997)
        assert_true(f[i] == 2.0f * (float)(i % 4096u) + 1.0f);

    /* checked copies, synchronous (at an odd byte offset, then at element 100) and on a stream */
    float in[1000], back[1002];
    for (int i = 0; i < 1000; ++i) in[i] = 0.75f * (float)i;
    CM_ASSERT_OK(cm_managed_copy_from_host(NULL, m, 101, in, sizeof in));
    memset(back, 0, sizeof back);
    CM_ASSERT_OK(cm_managed_copy_to_host(NULL, m, 101, back, sizeof in));
    assert_memory_equal(back, in, sizeof in);
    CM_ASSERT_OK(cm_managed_copy_from_host(NULL, m, 100 * sizeof(float), in, sizeof in));
    cm_stream_t *s = NULL;
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    CM_ASSERT_OK(cm_managed_copy_from_host(s, m, bytes - sizeof in, in, sizeof in));
    CM_ASSERT_OK(cm_managed_copy_to_host(s, m, bytes - sizeof in - 8, back, sizeof in + 8));
    CM_ASSERT_OK(cm_stream_synchronize(s));
    CM_ASSERT_OK(cm_stream_release(s));
    assert_memory_equal(back + 2, in, sizeof in);
    assert_true(back[0] == 2.0f * (float)((n - 1002) % 4096u) + 1.0f);
    EXPECT_FAIL(cm_managed_copy_from_host(NULL, m, bytes - 4, in, 8), CM_ERROR_INVALID_ARGUMENT,
                "range out of bounds");
    EXPECT_FAIL(cm_managed_copy_to_host(NULL, m, 0, NULL, 8), CM_ERROR_INVALID_ARGUMENT,
                "dst is NULL");
    /* what the copies wrote, a kernel sees */
    CUDA_OK(tms_managed_update_f32(f + 100, 1000, 0));
    CUDA_OK(cudaDeviceSynchronize());
    CM_ASSERT_OK(cm_managed_copy_to_host(NULL, m, 100 * sizeof(float), back, sizeof in));
    for (int i = 0; i < 1000; ++i) assert_true(back[i] == 2.0f * in[i] + 1.0f);
    for (int i = 0; i < 1000; ++i) assert_true(f[100 + i] == 2.0f * in[i] + 1.0f); /* host view */

    /* an empty managed buffer holds no memory */
    cm_managed_t *empty = NULL;
    CM_ASSERT_OK(cm_managed_create(dev, 0, &empty));
    CM_ASSERT_OK(cm_managed_data(empty, &data));
    assert_null(data);
    CM_ASSERT_OK(cm_managed_destroy(empty));

    /* the device object counts it: a close waits for it */
    char report[2048];
    CM_ASSERT_OK(cm_device_leak_report(dev, report, sizeof report, NULL));
    assert_non_null(strstr(report, "test managed"));
    CM_ASSERT_STATUS(cm_device_close(dev), CM_ERROR_BUSY);
    CM_ASSERT_OK(cm_managed_destroy(m));
    EXPECT_FAIL(cm_managed_destroy(m), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    CM_ASSERT_OK(cm_device_close(dev));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symbols),
        cmocka_unit_test(test_pitched_arrays_and_2d_copies),
        cmocka_unit_test(test_texture_over_buffer),
        cmocka_unit_test(test_texture_2d_modes),
        cmocka_unit_test(test_surfaces),
        cmocka_unit_test(test_busy_under_texture),
        cmocka_unit_test(test_managed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
