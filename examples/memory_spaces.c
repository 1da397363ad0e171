/*
 * memory_spaces: the memory table of the CUDA programming model, measured on this GPU.
 *
 * One kernel per space, each timed with a library timer (CUDA events) on a pooled stream,
 * the median of 7 runs after a warm-up, and each result checked on the host before its number
 * is printed:
 *
 *   registers       integer multiply-add chains held in registers (operations per second)
 *   local           a per-thread array indexed at run time: it lives in local memory, the
 *                   thread's slice of device memory cached in L1/L2 (bytes loaded + stored)
 *   shared          a block's tile in dynamic shared memory, read conflict-free (bytes read)
 *   global          a 128 MiB device-to-device copy by a kernel (bytes read + written)
 *   constant        a __constant__ table filled with cm_symbol_copy_from_host(), read as a
 *                   broadcast (every lane of a warp reads the same entry) and divergently
 *                   (each lane its own entry: served one address at a time)
 *   texture         bilinear samples of a 4096 x 4096 float image in a CUDA array, rotated
 *                   (samples per second; each blends 4 texels in the texture unit)
 *   managed         a kernel over 64 MiB of managed memory the host wrote last: pages migrate
 *                   on demand (page faults), then after cm_managed_prefetch() to the device
 *
 * Beside each number: what libcudamodel checked for that space (kernel attributes, launch
 * validation with dynamic shared memory, a symbol copy past the end refused, a texture
 * descriptor rule, the device's concurrent managed access).
 *
 * Usage: memory_spaces
 * Exit status: 0 when every kernel's result is right; 1 on a wrong result, an error or without
 * a usable GPU (the library's report is printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/cudamodel.h>

/* from kernels/memory_spaces_kernels.cu */
const void *memory_spaces_table_symbol(void);
const void *memory_spaces_registers_kernel(void);
const void *memory_spaces_local_kernel(void);
const void *memory_spaces_shared_kernel(void);
const void *memory_spaces_iota_kernel(void);
const void *memory_spaces_global_kernel(void);
const void *memory_spaces_constant_kernel(int divergent);
const void *memory_spaces_texture_kernel(void);
const void *memory_spaces_managed_kernel(void);

#define REPS 7
#define MiB ((size_t)1 << 20)
#define LOCAL_WORDS 64     /* MS_LOCAL_WORDS of the kernel */
#define SHARED_WORDS 4096  /* 16 KiB of dynamic shared memory per block */
#define SAMPLES 64         /* threads checked on the host per kernel */

typedef struct ctx {
    cm_device_t *dev;
    cm_stream_t *s;
    cm_timer_t *timer;
    cm_device_limits_t lim;
    unsigned blocks;  /* enough 256-thread blocks to fill every SM */
    unsigned threads; /* blocks x 256 */
    int bad;          /* wrong results so far */
} ctx_t;

static int report(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "memory_spaces: %s failed:\n%s\n", what, text);
    return 1;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void row(const char *space, const char *measured, const char *checked) {
    printf("%-18s %-40s %s\n", space, measured, checked);
}

static void note(const char *text) {
    printf("%-18s   %s\n", "", text);
}

/* The median time of REPS launches of kernel on c->s after one warm-up launch, in ms. */
static cm_status_t time_kernel(ctx_t *c, const void *kernel, const cm_launch_config_t *cfg,
                               void **args, double *ms) {
    double t[REPS];
    CM_TRY(cm_launch(c->s, kernel, cfg, args));
    CM_TRY(cm_stream_synchronize(c->s));
    for (int r = 0; r < REPS; ++r) {
        float v = 0.0f;
        CM_TRY(cm_timer_start(c->timer, c->s));
        CM_TRY(cm_launch(c->s, kernel, cfg, args));
        CM_TRY(cm_timer_stop(c->timer));
        CM_TRY(cm_timer_elapsed_ms(c->timer, &v));
        t[r] = (double)v;
    }
    qsort(t, REPS, sizeof t[0], cmp_double);
    *ms = t[REPS / 2];
    return CM_OK;
}

/* The thread checked as the k-th of SAMPLES: both ends and a spread in between. */
static unsigned sample_thread(const ctx_t *c, int k) {
    if (k == SAMPLES - 1) return c->threads - 1;
    return (unsigned)((unsigned long long)c->threads * (unsigned)k / SAMPLES) + (unsigned)k % 3u;
}

static cm_status_t download_u32(cm_buffer_t *b, unsigned i, unsigned *v) {
    return cm_buffer_copy_to_host(NULL, b, (size_t)i * 4, v, 4);
}

/* ------------------------------------------------------------------ registers */

static unsigned ref_registers(unsigned t, int iters) {
    unsigned a = t, b = t ^ 0x9E3779B9u, c = t * 7u + 1u, d = ~t;
    for (int i = 0; i < iters; ++i) {
        a = a * 1664525u + 1013904223u;
        b = b * 22695477u + 1u;
        c = c * 1103515245u + 12345u;
        d = d * 134775813u + 1u;
    }
    return a ^ b ^ c ^ d;
}

static int run_registers(ctx_t *c, cm_buffer_t *out, void *d_out) {
    int iters = 8192;
    void *args[] = {&d_out, &iters};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    double ms = 0;
    cm_kernel_attrs_t at;
    if (time_kernel(c, memory_spaces_registers_kernel(), &cfg, args, &ms) != CM_OK ||
        cm_kernel_attrs_get(memory_spaces_registers_kernel(), 0, &at) != CM_OK)
        return report("the registers kernel");
    for (int k = 0; k < SAMPLES; ++k) {
        unsigned t = sample_thread(c, k), got = 0;
        if (download_u32(out, t, &got) != CM_OK) return report("reading the registers result");
        if (got != ref_registers(t, iters)) {
            fprintf(stderr, "registers: thread %u computed %u, expected %u\n", t, got,
                    ref_registers(t, iters));
            ++c->bad;
            break;
        }
    }
    char m[96], k[160];
    snprintf(m, sizeof m, "%.2f T int multiply-adds/s",
             4.0 * iters * (double)c->threads / (ms * 1e-3) / 1e12);
    snprintf(k, sizeof k, "%d registers and %zu B of local memory per thread "
             "(cm_kernel_attrs_get); the launch validated by cm_launch", at.num_regs,
             at.local_bytes);
    row("registers", m, k);
    return 0;
}

/* ------------------------------------------------------------------ local memory */

static unsigned ref_local(unsigned t, int iters) {
    unsigned buf[LOCAL_WORDS];
    for (int j = 0; j < LOCAL_WORDS; ++j) buf[j] = t + (unsigned)j;
    unsigned x = t;
    for (int i = 0; i < iters; ++i) {
        x = x * 1664525u + 1013904223u;
        buf[x >> 26] += x;
    }
    unsigned s = x;
    for (int j = 0; j < LOCAL_WORDS; ++j) s = s * 31u + buf[j];
    return s;
}

static int run_local(ctx_t *c, cm_buffer_t *out, void *d_out) {
    int iters = 4096;
    void *args[] = {&d_out, &iters};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    double ms = 0;
    cm_kernel_attrs_t at;
    if (time_kernel(c, memory_spaces_local_kernel(), &cfg, args, &ms) != CM_OK ||
        cm_kernel_attrs_get(memory_spaces_local_kernel(), 0, &at) != CM_OK)
        return report("the local-memory kernel");
    for (int k = 0; k < SAMPLES; ++k) {
        unsigned t = sample_thread(c, k), got = 0;
        if (download_u32(out, t, &got) != CM_OK) return report("reading the local result");
        if (got != ref_local(t, iters)) {
            fprintf(stderr, "local: thread %u computed %u, expected %u\n", t, got,
                    ref_local(t, iters));
            ++c->bad;
            break;
        }
    }
    char m[96], k[200];
    snprintf(m, sizeof m, "%.0f GB/s loaded + stored",
             8.0 * iters * (double)c->threads / (ms * 1e-3) / 1e9);
    snprintf(k, sizeof k, "%zu B of local memory per thread (cm_kernel_attrs_get): the %d-word "
             "array indexed at run time %s", at.local_bytes, LOCAL_WORDS,
             at.local_bytes >= LOCAL_WORDS * 4 ? "went to local memory"
                                               : "was NOT placed in local memory by this compiler");
    row("local (spills)", m, k);
    return 0;
}

/* ------------------------------------------------------------------ shared memory */

static float ref_shared(unsigned tid, int iters) {
    const unsigned m = SHARED_WORDS - 1u;
    unsigned idx = tid & m;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int i = 0; i < iters; ++i) {
        a0 += (float)(idx & 255u);
        a1 += (float)(((idx + 64u) & m) & 255u);
        a2 += (float)(((idx + 128u) & m) & 255u);
        a3 += (float)(((idx + 192u) & m) & 255u);
        idx = (idx + 32u) & m;
    }
    return (a0 + a1) + (a2 + a3);
}

static int run_shared(ctx_t *c, cm_buffer_t *out, void *d_out) {
    int iters = 4096, words = SHARED_WORDS;
    void *args[] = {&d_out, &iters, &words};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    cfg.dynamic_shared_bytes = SHARED_WORDS * sizeof(float);
    cm_kernel_attrs_t at;
    if (cm_kernel_attrs_get(memory_spaces_shared_kernel(), 0, &at) != CM_OK)
        return report("cm_kernel_attrs_get (shared)");
    /* what cm_launch checks before every launch, asked here directly: this configuration,
     * then one that wants a byte more than a block can have */
    if (cm_launch_config_validate(&cfg, &c->lim, &at) != CM_OK)
        return report("validating the shared-memory launch");
    cm_launch_config_t too_big = cfg;
    too_big.dynamic_shared_bytes = c->lim.shared_mem_per_block_optin + 1;
    cm_status_t refused = cm_launch_config_validate(&too_big, &c->lim, &at);
    char why[CM_ERROR_MESSAGE_MAX + 64];
    snprintf(why, sizeof why, "%s: %s", cm_status_name(refused), cm_last_error()->message);
    double ms = 0;
    if (time_kernel(c, memory_spaces_shared_kernel(), &cfg, args, &ms) != CM_OK)
        return report("the shared-memory kernel");
    for (int k = 0; k < SAMPLES; ++k) {
        unsigned t = sample_thread(c, k), got_u = 0;
        if (download_u32(out, t, &got_u) != CM_OK) return report("reading the shared result");
        float got;
        memcpy(&got, &got_u, sizeof got);
        if (got != ref_shared(t % 256u, iters)) {
            fprintf(stderr, "shared: thread %u computed %g, expected %g\n", t, (double)got,
                    (double)ref_shared(t % 256u, iters));
            ++c->bad;
            break;
        }
    }
    if (refused != CM_ERROR_INVALID_LAUNCH) {
        fprintf(stderr, "shared: a launch with %zu bytes of shared memory per block was not "
                "refused (%s)\n", too_big.dynamic_shared_bytes, cm_status_name(refused));
        ++c->bad;
    }
    char m[96], k[160];
    snprintf(m, sizeof m, "%.0f GB/s read",
             16.0 * iters * (double)c->threads / (ms * 1e-3) / 1e9);
    snprintf(k, sizeof k, "%zu KiB dynamic shared memory per block validated "
             "(cm_launch_config_validate); %zu bytes refused:", cfg.dynamic_shared_bytes >> 10,
             too_big.dynamic_shared_bytes);
    row("shared", m, k);
    note(why);
    return 0;
}

/* ------------------------------------------------------------------ global memory */

static int run_global(ctx_t *c) {
    const size_t bytes = 128 * MiB;
    cm_buffer_t *x = NULL, *y = NULL;
    void *dx = NULL, *dy = NULL;
    int rc = 0;
    if (cm_buffer_create(c->dev, bytes, &x) != CM_OK || cm_buffer_create(c->dev, bytes, &y) != CM_OK ||
        cm_buffer_device_ptr(x, &dx) != CM_OK || cm_buffer_device_ptr(y, &dy) != CM_OK) {
        rc = report("allocating 2 x 128 MiB");
        goto done;
    }
    unsigned long long n = bytes / 4, n4 = bytes / 16;
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    void *iota_args[] = {&dx, &n};
    void *copy_args[] = {&dy, &dx, &n4};
    double ms = 0;
    cm_memory_report_t mr;
    if (cm_launch(c->s, memory_spaces_iota_kernel(), &cfg, iota_args) != CM_OK ||
        time_kernel(c, memory_spaces_global_kernel(), &cfg, copy_args, &ms) != CM_OK ||
        cm_device_memory_report(c->dev, &mr) != CM_OK) {
        rc = report("the global-memory copy");
        goto done;
    }
    for (int k = 0; k < SAMPLES; ++k) {
        unsigned i = (unsigned)(n * (unsigned long long)k / SAMPLES) + (unsigned)k, got = 0;
        if (k == SAMPLES - 1) i = (unsigned)(n - 1);
        if (download_u32(y, i, &got) != CM_OK) {
            rc = report("reading the copy");
            goto done;
        }
        if (got != 3u * i + 1u) {
            fprintf(stderr, "global: element %u is %u, expected %u\n", i, got, 3u * i + 1u);
            ++c->bad;
            break;
        }
    }
    char m[96], k[200];
    snprintf(m, sizeof m, "%.0f GB/s read + written", 2.0 * (double)bytes / (ms * 1e-3) / 1e9);
    snprintf(k, sizeof k, "2 x 128 MiB buffers counted in the device object (%zu live buffers, "
             "%zu MiB: cm_device_memory_report)", mr.live_buffers, mr.live_bytes >> 20);
    row("global", m, k);
done:
    if (cm_buffer_destroy(x) != CM_OK || cm_buffer_destroy(y) != CM_OK) rc = report("freeing");
    return rc;
}

/* ------------------------------------------------------------------ constant memory */

static unsigned ref_constant(const unsigned *tab, unsigned tid, int iters, int divergent) {
    const unsigned off = divergent ? (tid & 31u) * 7u : 0u;
    unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < iters; i += 4) {
        const unsigned k = (unsigned)i + off;
        a0 = a0 * 3u + tab[k & 255u];
        a1 = a1 * 5u + tab[(k + 1u) & 255u];
        a2 = a2 * 7u + tab[(k + 2u) & 255u];
        a3 = a3 * 9u + tab[(k + 3u) & 255u];
    }
    return a0 ^ a1 ^ a2 ^ a3;
}

static int run_constant(ctx_t *c, cm_buffer_t *out, void *d_out) {
    unsigned tab[256], big[257];
    for (unsigned i = 0; i < 256; ++i) tab[i] = i * 2654435761u ^ 0x5bd1e995u;
    memset(big, 0, sizeof big);
    const void *sym = memory_spaces_table_symbol();
    size_t sym_bytes = 0;
    if (cm_symbol_copy_from_host(NULL, c->dev, sym, 0, tab, sizeof tab) != CM_OK ||
        cm_symbol_address(c->dev, sym, NULL, &sym_bytes) != CM_OK)
        return report("filling the constant table");
    /* a copy one element past the table's end is refused before anything is written */
    cm_status_t refused = cm_symbol_copy_from_host(NULL, c->dev, sym, 0, big, sizeof big);
    char why[CM_ERROR_MESSAGE_MAX + 64];
    snprintf(why, sizeof why, "%s: %s", cm_status_name(refused), cm_last_error()->message);
    unsigned back[256];
    if (cm_symbol_copy_to_host(NULL, c->dev, sym, 0, back, sizeof back) != CM_OK)
        return report("reading the constant table back");
    if (refused != CM_ERROR_INVALID_ARGUMENT || memcmp(back, tab, sizeof tab) != 0) {
        fprintf(stderr, "constant: the oversized copy was %s and the table %s\n",
                cm_status_name(refused), memcmp(back, tab, sizeof tab) ? "changed" : "intact");
        ++c->bad;
    }
    int iters = 4096;
    void *args[] = {&d_out, &iters};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    double ms[2] = {0, 0};
    for (int dv = 0; dv < 2; ++dv) {
        if (time_kernel(c, memory_spaces_constant_kernel(dv), &cfg, args, &ms[dv]) != CM_OK)
            return report("the constant-memory kernel");
        for (int k = 0; k < SAMPLES; ++k) {
            unsigned t = sample_thread(c, k), got = 0;
            if (download_u32(out, t, &got) != CM_OK) return report("reading the constant result");
            if (got != ref_constant(tab, t, iters, dv)) {
                fprintf(stderr, "constant (%s): thread %u computed %u, expected %u\n",
                        dv ? "divergent" : "broadcast", t, got, ref_constant(tab, t, iters, dv));
                ++c->bad;
                break;
            }
        }
    }
    double reads = (double)iters * (double)c->threads * 4.0; /* bytes delivered to threads */
    char m[96], k[200];
    snprintf(m, sizeof m, "broadcast %.0f GB/s to threads", reads / (ms[0] * 1e-3) / 1e9);
    snprintf(k, sizeof k, "the %zu-byte __constant__ table filled by cm_symbol_copy_from_host; "
             "a %zu-byte copy refused, table intact:", sym_bytes, sizeof big);
    row("constant", m, k);
    snprintf(m, sizeof m, "divergent %.0f GB/s (%.1fx slower)", reads / (ms[1] * 1e-3) / 1e9,
             ms[1] / ms[0]);
    row("", m, why);
    return 0;
}

/* ------------------------------------------------------------------ texture */

static int ifloor_d(double v) {
    int i = (int)v;
    return v < (double)i ? i - 1 : i;
}

/* Bilinear sample of img (w x h) at unnormalised (u, v), border addressing (zero outside);
 * *range: the spread of the 4 x 4 texels around it, for the tolerance. */
static double ref_bilinear(const float *img, int w, int h, double u, double v, double *range) {
    double ub = u - 0.5, vb = v - 0.5;
    int i = ifloor_d(ub), j = ifloor_d(vb);
    double a = ub - i, b = vb - j, t[4][4];
    double lo = 1e300, hi = -1e300;
    for (int dj = -1; dj <= 2; ++dj)
        for (int di = -1; di <= 2; ++di) {
            int x = i + di, y = j + dj;
            double q = (x < 0 || y < 0 || x >= w || y >= h) ? 0.0 : (double)img[(size_t)y * w + x];
            t[dj + 1][di + 1] = q;
            lo = q < lo ? q : lo;
            hi = q > hi ? q : hi;
        }
    *range = hi - lo;
    return (1 - a) * (1 - b) * t[1][1] + a * (1 - b) * t[1][2] + (1 - a) * b * t[2][1] +
           a * b * t[2][2];
}

static int run_texture(ctx_t *c) {
    const int w = 4096, h = 4096;
    const size_t n = (size_t)w * h;
    float *img = malloc(n * sizeof(float));
    if (img == NULL) {
        fprintf(stderr, "memory_spaces: no host memory for the image\n");
        return 1;
    }
    unsigned long long r = 88172645463325252ull;
    for (size_t i = 0; i < n; ++i) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        img[i] = (float)(r >> 40) * 0x1.0p-24f;
    }
    int rc = 0;
    cm_array_t *arr = NULL;
    cm_texture_t *tex = NULL;
    cm_buffer_t *out = NULL;
    void *d_out = NULL;
    unsigned long long obj = 0;
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT;
    desc.filter_mode = CM_FILTER_LINEAR;
    desc.address_mode = CM_ADDRESS_BORDER;
    if (cm_array_create(c->dev, (size_t)w, (size_t)h, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &arr) != CM_OK ||
        cm_copy_2d(NULL, cm_place_array(arr, 0, 0), cm_place_host(img, 0), (size_t)w, (size_t)h) != CM_OK ||
        cm_texture_create_from_array(arr, &desc, &tex) != CM_OK ||
        cm_texture_object(tex, &obj) != CM_OK || cm_buffer_create(c->dev, n * sizeof(float), &out) != CM_OK ||
        cm_buffer_device_ptr(out, &d_out) != CM_OK) {
        rc = report("setting up the texture");
        goto done;
    }
    /* a rule the descriptor validation enforces: wrap needs normalised coordinates */
    cm_texture_desc_t wrap = desc;
    wrap.address_mode = CM_ADDRESS_WRAP;
    cm_texture_t *never = NULL;
    cm_status_t refused = cm_texture_create_from_array(arr, &wrap, &never);
    char why[CM_ERROR_MESSAGE_MAX + 64];
    snprintf(why, sizeof why, "%s: %s", cm_status_name(refused), cm_last_error()->message);
    if (refused != CM_ERROR_INVALID_ARGUMENT) ++c->bad;
    if (never != NULL) (void)cm_texture_destroy(never);

    const float cs = 0.8660254f, sn = 0.5f; /* 30 degrees */
    int wi = w, hi = h;
    float cc = cs, ss = sn;
    void *args[] = {&obj, &d_out, &wi, &hi, &cc, &ss};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    double ms = 0;
    if (cm_launch_config_2d((uint64_t)w, (uint64_t)h, 32, 8, &cfg) != CM_OK ||
        time_kernel(c, memory_spaces_texture_kernel(), &cfg, args, &ms) != CM_OK) {
        rc = report("the texture kernel");
        goto done;
    }
    /* 4096 pixels checked against the CPU's bilinear filter (the texture unit's weights have
     * 8 fractional bits: up to 2/256 of the neighbourhood's spread, plus the coordinate's
     * float rounding) */
    unsigned long long q = 12345;
    double worst = 0;
    for (int k = 0; k < 4096; ++k) {
        q = q * 6364136223846793005ull + 1442695040888963407ull;
        int x = (int)((q >> 33) % (unsigned long long)w), y = (int)((q >> 13) % (unsigned long long)h);
        float got = 0.0f;
        if (cm_buffer_copy_to_host(NULL, out, ((size_t)y * w + x) * sizeof(float), &got,
                                   sizeof got) != CM_OK) {
            rc = report("reading the texture result");
            goto done;
        }
        float cx = 0.5f * (float)w, cy = 0.5f * (float)h;
        float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
        double u = (double)cx + (double)cs * dx - (double)sn * dy;
        double v = (double)cy + (double)sn * dx + (double)cs * dy;
        double range = 0, want = ref_bilinear(img, w, h, u, v, &range);
        double err = (double)got - want;
        if (err < 0) err = -err;
        if (!(err <= range * (2.0 / 256.0) + 1e-3)) {
            fprintf(stderr, "texture: pixel (%d, %d) is %.7g, the CPU's bilinear sample %.7g\n",
                    x, y, (double)got, want);
            ++c->bad;
            break;
        }
        if (err > worst) worst = err;
    }
    char m[96], k[200];
    snprintf(m, sizeof m, "%.1f G bilinear samples/s", (double)n / (ms * 1e-3) / 1e9);
    snprintf(k, sizeof k, "descriptor validated (CM_FORMAT_F32, linear, border) and the array "
             "kept alive by its texture; largest error %.2g; refused:", worst);
    row("texture", m, k);
    note(why);
done:
    if (cm_texture_destroy(tex) != CM_OK || cm_array_destroy(arr) != CM_OK ||
        cm_buffer_destroy(out) != CM_OK)
        rc = report("releasing the texture");
    free(img);
    return rc;
}

/* ------------------------------------------------------------------ managed memory */

static int run_managed(ctx_t *c) {
    size_t free_b = 0, total_b = 0;
    if (cm_device_memory_info(0, &free_b, &total_b) != CM_OK) return report("cm_device_memory_info");
    size_t bytes = 64 * MiB;
    while (bytes > MiB && bytes > free_b / 8) bytes /= 2; /* never near the free memory */
    const unsigned long long n = bytes / sizeof(float);
    cm_managed_t *m = NULL;
    cm_timer_t *t2 = NULL;
    int rc = 0;
    void *data = NULL;
    cm_managed_info_t mi;
    if (cm_managed_create(c->dev, bytes, &m) != CM_OK || cm_managed_data(m, &data) != CM_OK ||
        cm_managed_info(m, &mi) != CM_OK || cm_timer_create(c->dev, &t2) != CM_OK) {
        rc = report("creating the managed buffer");
        goto done;
    }
    float *p = data;
    void *args[] = {&p, (void *)&n};
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = c->blocks;
    cfg.block.x = 256;
    double t_fault[REPS], t_kernel[REPS], t_pref[REPS];
    int prefetched_runs = 0;
    char why[CM_ERROR_MESSAGE_MAX + 64] = "";
    for (int pass = 0; pass < 2; ++pass) { /* 0: pages migrate on demand; 1: prefetched */
        for (int r = 0; r < REPS + 1; ++r) { /* run 0 is the warm-up */
            for (unsigned long long i = 0; i < n; ++i) p[i] = (float)(i & 1023u); /* host last */
            float kms = 0.0f, pms = 0.0f;
            if (pass == 1) {
                cm_status_t st;
                if (cm_timer_start(t2, c->s) != CM_OK) {
                    rc = report("timer");
                    goto done;
                }
                st = cm_managed_prefetch(c->s, m, 0, bytes, 0);
                if (st == CM_ERROR_NOT_SUPPORTED) {
                    snprintf(why, sizeof why, "%s: %s", cm_status_name(st), cm_last_error()->message);
                    (void)cm_timer_stop(t2);
                    (void)cm_timer_elapsed_ms(t2, &pms);
                    break;
                }
                if (st != CM_OK || cm_timer_stop(t2) != CM_OK || cm_timer_elapsed_ms(t2, &pms) != CM_OK) {
                    rc = report("cm_managed_prefetch");
                    goto done;
                }
            }
            if (cm_timer_start(c->timer, c->s) != CM_OK ||
                cm_launch(c->s, memory_spaces_managed_kernel(), &cfg, args) != CM_OK ||
                cm_timer_stop(c->timer) != CM_OK || cm_timer_elapsed_ms(c->timer, &kms) != CM_OK) {
                rc = report("the managed kernel");
                goto done;
            }
            /* the kernel has finished (the timer waited for it): the host reads the result */
            for (unsigned long long i = 0; i < n; i = (i + 997 < n || i == n - 1) ? i + 997 : n - 1) {
                if (p[i] != 0.5f * (float)(i & 1023u) + 1.0f) {
                    fprintf(stderr, "managed: element %llu is %g, expected %g\n", i, (double)p[i],
                            0.5 * (double)(i & 1023u) + 1.0);
                    ++c->bad;
                    break;
                }
            }
            if (r == 0) continue;
            if (pass == 0) t_fault[r - 1] = (double)kms;
            else {
                t_kernel[r - 1] = (double)kms;
                t_pref[r - 1] = (double)pms;
                ++prefetched_runs;
            }
        }
    }
    qsort(t_fault, REPS, sizeof t_fault[0], cmp_double);
    char mtxt[96], k[200];
    double gbs = 2.0 * (double)bytes / 1e9;
    snprintf(mtxt, sizeof mtxt, "no prefetch: %.1f GB/s (page faults)",
             gbs / (t_fault[REPS / 2] * 1e-3));
    snprintf(k, sizeof k, "%zu MiB managed (at most 1/8 of the %zu MiB free); concurrent managed "
             "access: %s (cm_managed_info)", bytes >> 20, free_b >> 20,
             mi.concurrent_access ? "yes" : "no");
    row("managed", mtxt, k);
    if (prefetched_runs == REPS) {
        qsort(t_kernel, REPS, sizeof t_kernel[0], cmp_double);
        qsort(t_pref, REPS, sizeof t_pref[0], cmp_double);
        snprintf(mtxt, sizeof mtxt, "prefetched: %.0f GB/s (%.1fx)", gbs / (t_kernel[REPS / 2] * 1e-3),
                 t_fault[REPS / 2] / t_kernel[REPS / 2]);
        snprintf(k, sizeof k, "cm_managed_prefetch to device 0 on the stream first: %.1f GB/s "
                 "host to device", (double)bytes / 1e9 / (t_pref[REPS / 2] * 1e-3));
        row("", mtxt, k);
    } else {
        row("", "prefetched: not possible here", "cm_managed_prefetch refused:");
        note(why);
    }
done:
    if (cm_timer_destroy(t2) != CM_OK || cm_managed_destroy(m) != CM_OK) rc = report("freeing");
    return rc;
}

int main(void) {
    ctx_t c;
    memset(&c, 0, sizeof c);
    if (cm_device_open(0, &c.dev) != CM_OK) return report("opening device 0");
    int rc = 1;
    cm_buffer_t *out = NULL;
    void *d_out = NULL;
    if (cm_device_get_limits(0, &c.lim) != CM_OK ||
        cm_stream_acquire(c.dev, CM_STREAM_PRIORITY_LOW, &c.s) != CM_OK ||
        cm_timer_create(c.dev, &c.timer) != CM_OK) {
        report("setting up");
        goto done;
    }
    c.blocks = (unsigned)c.lim.multiprocessor_count *
               (unsigned)(c.lim.max_threads_per_multiprocessor / 256);
    c.threads = c.blocks * 256u;
    if (cm_buffer_create(c.dev, (size_t)c.threads * 4, &out) != CM_OK ||
        cm_buffer_device_ptr(out, &d_out) != CM_OK) {
        report("allocating the results");
        goto done;
    }
    printf("The CUDA memory table on %s (sm_%d%d, %d SMs), %u threads per kernel, median of %d "
           "runs (CUDA events)\n\n", c.lim.name, c.lim.cc_major, c.lim.cc_minor,
           c.lim.multiprocessor_count, c.threads, REPS);
    row("space", "measured", "what libcudamodel checked");
    row("-----", "--------", "-------------------------");
    if (run_registers(&c, out, d_out) || run_local(&c, out, d_out) || run_shared(&c, out, d_out) ||
        run_global(&c) || run_constant(&c, out, d_out) || run_texture(&c) || run_managed(&c))
        goto done;
    if (c.bad) {
        printf("\n%d space(s) computed a wrong result\n", c.bad);
        goto done;
    }
    printf("\nevery kernel's result was checked on the host\n");
    rc = 0;
done:
    if (cm_buffer_destroy(out) != CM_OK || cm_timer_destroy(c.timer) != CM_OK ||
        cm_stream_release(c.s) != CM_OK || cm_device_close(c.dev) != CM_OK)
        rc = report("releasing");
    return rc;
}
