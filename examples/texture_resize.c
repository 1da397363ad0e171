/*
 * texture_resize: bilinear image resize through a texture over a CUDA array, against a CPU
 * reference.
 *
 * 1. A 1000 x 700 float image goes into a CUDA array (cm_copy_2d from packed host rows); a
 *    texture reads it with linear filtering, clamp addressing and unnormalised coordinates.
 * 2. A kernel (one tex2D per output pixel) resizes it to 1543 x 1081 and to 517 x 353 into a
 *    pitched buffer (rows `pitch` bytes apart); cm_copy_2d brings the rows back packed; every
 *    pixel is compared with a float64 bilinear filter on the CPU (clamp to edge). The texture
 *    unit's weights are 9-bit fixed point (8 fractional bits), so a pixel may differ by up to
 *    2/256 of its neighbourhood's spread.
 * 3. While the texture exists the array cannot be destroyed: cm_array_destroy() says so
 *    (CM_ERROR_BUSY) and leaves it alive.
 * 4. The same for an 8-bit image: linear filtering of CM_FORMAT_U8 read as integers is refused
 *    (the rule is named); read as normalised floats (byte / 255) it filters.
 * The float upscale is also timed: median of 20 after 3 warm-ups (cm_time_callable).
 *
 * Usage: texture_resize
 * Exit status: 0 when every pixel matches the reference; 1 on a wrong result, an error or
 * without a usable GPU (the library's report is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

/* from kernels/texture_resize_kernels.cu */
const void *texture_resize_kernel_ptr(void);

#define W 1000
#define H 700

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "texture_resize: %s failed:\n%s\n", what, text);
    return 1;
}

static int ifloor_d(double v) {
    int i = (int)v;
    return v < (double)i ? i - 1 : i;
}

static double texel(const double *img, int x, int y) {
    x = x < 0 ? 0 : x >= W ? W - 1 : x;
    y = y < 0 ? 0 : y >= H ? H - 1 : y;
    return img[(size_t)y * W + (size_t)x];
}

/* Bilinear at unnormalised (u, v), clamp to edge; *tol from the 4 x 4 texels around it. */
static double bilinear(const double *img, double u, double v, double *tol) {
    double ub = u - 0.5, vb = v - 0.5;
    int i = ifloor_d(ub), j = ifloor_d(vb);
    double a = ub - i, b = vb - j;
    double lo = 1e300, hi = -1e300;
    for (int dj = -1; dj <= 2; ++dj)
        for (int di = -1; di <= 2; ++di) {
            double q = texel(img, i + di, j + dj);
            lo = q < lo ? q : lo;
            hi = q > hi ? q : hi;
        }
    *tol = (hi - lo) * (2.0 / 256.0) + 1e-5;
    return (1 - a) * (1 - b) * texel(img, i, j) + a * (1 - b) * texel(img, i + 1, j) +
           (1 - a) * b * texel(img, i, j + 1) + a * b * texel(img, i + 1, j + 1);
}

typedef struct resize {
    unsigned long long tex;
    void *out;
    size_t pitch;
    int w, h;
    float sx, sy;
} resize_t;

static cm_status_t launch_resize(void *user, cm_stream_t *s) {
    resize_t *r = user;
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    CM_TRY(cm_launch_config_2d((uint64_t)r->w, (uint64_t)r->h, 32, 8, &cfg));
    void *args[] = {&r->tex, &r->out, &r->pitch, &r->w, &r->h, &r->sx, &r->sy};
    return CM_LAUNCH(s, texture_resize_kernel_ptr(), &cfg, args);
}

/* Resize tex to w x h into a new pitched buffer, bring it back and compare every pixel with
 * the CPU's filter over img; returns the number of wrong pixels, or -1 on an error. */
static int resize_and_check(cm_device_t *dev, cm_stream_t *s, unsigned long long tex,
                            const double *img, int w, int h, const char *what, bool timed) {
    cm_pitched_t *out = NULL;
    cm_pitched_info_t pi;
    float *got = malloc((size_t)w * h * sizeof(float));
    int bad = -1;
    if (got == NULL) return -1;
    if (cm_pitched_create(dev, (size_t)w, (size_t)h, CM_FORMAT_F32, &out) != CM_OK ||
        cm_pitched_info(out, &pi) != CM_OK) {
        report("cm_pitched_create");
        goto done;
    }
    resize_t r = {tex, pi.device_ptr, pi.pitch, w, h, (float)W / (float)w, (float)H / (float)h};
    cm_timing_stats_t ts;
    memset(&ts, 0, sizeof ts);
    if ((timed ? cm_time_callable(s, launch_resize, &r, 3, 20, &ts) : launch_resize(&r, s)) != CM_OK ||
        cm_stream_synchronize(s) != CM_OK ||
        cm_copy_2d(NULL, cm_place_host(got, 0), cm_place_pitched(out, 0, 0), (size_t)w,
                   (size_t)h) != CM_OK) {
        report("the resize");
        goto done;
    }
    bad = 0;
    double worst = 0.0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float u = ((float)x + 0.5f) * r.sx, v = ((float)y + 0.5f) * r.sy;
            double tol, want = bilinear(img, (double)u, (double)v, &tol);
            double err = (double)got[(size_t)y * w + x] - want;
            if (err < 0) err = -err;
            if (!(err <= tol)) {
                if (bad < 5)
                    fprintf(stderr, "  %s: pixel (%d, %d) = %.7g, reference %.7g (tolerance %.2g)\n",
                            what, x, y, (double)got[(size_t)y * w + x], want, tol);
                ++bad;
            }
            if (err > worst) worst = err;
        }
    printf("   %-24s %4d x %-4d pitch %5zu B (rows of %5zu B): largest difference %.2g, %d wrong",
           what, w, h, pi.pitch, pi.row_bytes, worst, bad);
    if (timed)
        printf("; %.3f ms, %.1f Gpixel/s", ts.median_ms, (double)w * h / (ts.median_ms * 1e-3) / 1e9);
    printf("\n");
done:
    if (cm_pitched_destroy(out) != CM_OK) {
        report("cm_pitched_destroy");
        bad = -1;
    }
    free(got);
    return bad;
}

int main(void) {
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report("opening device 0");
    int rc = 1, bad = 0;
    float *img = malloc((size_t)W * H * sizeof(float));
    unsigned char *img8 = malloc((size_t)W * H);
    double *ref = malloc((size_t)W * H * sizeof(double));
    cm_array_t *arr = NULL, *arr8 = NULL;
    cm_texture_t *tex = NULL, *tex8 = NULL;
    cm_stream_t *s = NULL;
    if (img == NULL || img8 == NULL || ref == NULL) {
        fprintf(stderr, "texture_resize: no host memory\n");
        goto done;
    }
    /* a sawtooth ramp (edges for the filter to blend) plus noise, in [0, 1) */
    unsigned long long r = 0x9E3779B97F4A7C15ull;
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            float ramp = (float)((3 * x + 5 * y) % 200) / 200.0f;
            img[(size_t)y * W + x] = 0.8f * ramp + 0.2f * (float)(r >> 40) * 0x1.0p-24f;
            img8[(size_t)y * W + x] = (unsigned char)(255.0f * img[(size_t)y * W + x]);
        }
    if (cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s) != CM_OK) {
        report("cm_stream_acquire");
        goto done;
    }

    /* 1. the float image in an array, a bilinear texture over it */
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT; /* clamp, unnormalised coordinates */
    desc.filter_mode = CM_FILTER_LINEAR;
    unsigned long long obj = 0;
    if (cm_array_create(dev, W, H, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &arr) != CM_OK ||
        cm_copy_2d(NULL, cm_place_array(arr, 0, 0), cm_place_host(img, 0), W, H) != CM_OK ||
        cm_texture_create_from_array(arr, &desc, &tex) != CM_OK ||
        cm_texture_object(tex, &obj) != CM_OK) {
        report("the float texture");
        goto done;
    }
    printf("1. %d x %d float image in a CUDA array, texture: linear filtering, clamp\n", W, H);

    /* 2. resize up and down, every pixel checked */
    printf("2. resized into pitched buffers and compared with the CPU's bilinear filter:\n");
    for (size_t i = 0; i < (size_t)W * H; ++i) ref[i] = (double)img[i];
    int b1 = resize_and_check(dev, s, obj, ref, 1543, 1081, "float, up 1.54x", true);
    int b2 = resize_and_check(dev, s, obj, ref, 517, 353, "float, down 0.52x", false);
    if (b1 < 0 || b2 < 0) goto done;
    bad += b1 + b2;

    /* 3. the array outlives nothing: destroying it under the texture is refused */
    cm_status_t st = cm_array_destroy(arr);
    printf("3. cm_array_destroy while the texture reads it: %s\n   %s\n", cm_status_name(st),
           cm_last_error()->message);
    if (st != CM_ERROR_BUSY) {
        fprintf(stderr, "texture_resize: destroying the array under its texture was not refused\n");
        arr = NULL; /* it is gone */
        goto done;
    }

    /* 4. 8-bit pixels: linear filtering needs them read as normalised floats */
    cm_texture_desc_t d8 = CM_TEXTURE_DESC_INIT;
    d8.filter_mode = CM_FILTER_LINEAR;
    if (cm_array_create(dev, W, H, CM_FORMAT_U8, CM_ARRAY_DEFAULT, &arr8) != CM_OK ||
        cm_copy_2d(NULL, cm_place_array(arr8, 0, 0), cm_place_host(img8, 0), W, H) != CM_OK) {
        report("the 8-bit array");
        goto done;
    }
    st = cm_texture_create_from_array(arr8, &d8, &tex8);
    printf("4. linear filtering of CM_FORMAT_U8 read as integers: %s\n   %s\n", cm_status_name(st),
           cm_last_error()->message);
    if (st != CM_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "texture_resize: the integer-filtering descriptor was not refused\n");
        goto done;
    }
    d8.read_mode = CM_READ_NORMALIZED_FLOAT;
    if (cm_texture_create_from_array(arr8, &d8, &tex8) != CM_OK || cm_texture_object(tex8, &obj) != CM_OK) {
        report("the 8-bit texture");
        goto done;
    }
    for (size_t i = 0; i < (size_t)W * H; ++i) ref[i] = (double)img8[i] / 255.0;
    printf("   read as normalised floats (byte / 255):\n");
    b1 = resize_and_check(dev, s, obj, ref, 1543, 1081, "u8 as float, up 1.54x", false);
    if (b1 < 0) goto done;
    bad += b1;

    if (bad > 0) {
        fprintf(stderr, "texture_resize: %d pixel(s) differ from the reference\n", bad);
        goto done;
    }
    printf("5. every pixel matches the reference\n");
    rc = 0;
done:
    /* textures first, then their arrays */
    if (cm_texture_destroy(tex) != CM_OK || cm_texture_destroy(tex8) != CM_OK ||
        cm_array_destroy(arr) != CM_OK || cm_array_destroy(arr8) != CM_OK ||
        cm_stream_release(s) != CM_OK || cm_device_close(dev) != CM_OK)
        rc = report("releasing");
    free(img);
    free(img8);
    free(ref);
    return rc;
}
