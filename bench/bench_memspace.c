/*
 * bench_memspace: the memory spaces of memspace.h against their plain global-memory or
 * explicit-copy counterparts, measured in the same run.
 *
 *   constant_broadcast        a 1024-entry table filled with cm_symbol_copy_from_host() and
 *                             read from __constant__ memory as a broadcast (every lane of a warp
 *                             reads the same entry; 4 reads per step, integer multiply-add
 *                             chains), vs the same kernel reading the same table from global
 *                             memory (const __restrict__, through L1). GB/s delivered to
 *                             threads (4 bytes per read), CUDA events, median of 20.
 *                             info only: the issue sets no goal, and this file's old one
 *                             (>= 1.0x) was a guess that every H200 run missed (0.52x): from
 *                             Volta on, a warp-uniform global load is served by L1 at full
 *                             rate; constant memory's gains are a cache apart from L1 and
 *                             operands folded into instructions, which a table read cannot
 *                             show (bench/NOTES-memspace.md)
 *   constant_divergent        the same with each lane reading its own entry (constant memory
 *                             serialises a warp's distinct addresses). info only
 *   texture_bilinear_resize   a 4096 x 4096 float image in a CUDA array (cm_array_create,
 *                             cm_copy_2d) read through a bilinear texture
 *                             (cm_texture_create_from_array) and resized to 6144 x 6144, vs a
 *                             hand-written global-memory bilinear kernel over the same image
 *                             (4 loads, clamp to edge, float weights). Gpixel/s, median of 20.
 *                                                                     goal: >= 1.0x
 *   texture_pitched_resize    the same through a texture over a pitched buffer
 *                             (cm_texture_create_from_pitched). info only
 *   managed_prefetch_vs_*     end to end, host clock: the host wrote 64 MiB of floats last;
 *                             move them to the device, y = 2 y + 1, bring them back, the host
 *                             checks every element. Ours: managed memory (cm_managed_create)
 *                             prefetched to the device and back on one stream
 *                             (cm_managed_prefetch). Peers: cudaMemcpy from and to pageable
 *                             memory, and cudaMemcpyAsync from and to pinned memory. ms,
 *                             median of 21 after 2 warm-ups, the
 *                             ways interleaved round by round.      goal: >= 0.9x (peer / ours)
 *                             Each way's text line splits its time: until the data is back
 *                             (transfers and kernel) and the host's check of every element.
 *   managed_on_demand_vs_pageable_memcpy  the same managed round trip without prefetch (pages
 *                             fault to the device and back). info only
 *   managed_prefetch_vs_raw_prefetch  ours against the same round trip on a cudaMallocManaged
 *                             allocation with cudaMemPrefetchAsync called directly: what the
 *                             library's checks add.                goal: >= 0.95x
 *   managed_prefetch_vs_raw_calls_same_buffer  ours against cudaMemPrefetchAsync called
 *                             directly on the same managed buffer: the calls alone, without
 *                             the two buffers' placement. info
 *   managed_raw_chunked_prefetch_vs_raw_prefetch  the raw round trip with each prefetch cut
 *                             into 4 chunks on 4 streams (joined by events before the kernel
 *                             and before the host reads): whether the driver migrates chunks
 *                             in parallel, i.e. whether a chunked cm_managed_prefetch could
 *                             close the gap to pinned copies. info (and a _vs_pinned_memcpy row)
 *   managed_prefetch_accessed_by_host_vs_pinned_memcpy  ours on a buffer advised
 *                             CM_ADVISE_ACCESSED_BY the host (cm_managed_advise, set once before
 *                             timing), against pinned cudaMemcpyAsync: whether keeping the host's
 *                             mappings saves the host's page faults after the prefetch back. info
 *
 * Managed memory: at most 64 MiB and never more than 1/8 of the device's free memory.
 * Outputs are checked (the texture against the hand-written kernel and a float64 CPU sample,
 * the table reads against each other and the CPU, every element of the round trips); a wrong
 * result exits 1. Exits 0 whether or not the goals are met (the table says), 1 on errors or
 * without a GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/memspace.h>
#include <cudamodel/stream.h>

#include "bench_common.h"

/* from bench_memspace_kernels.cu */
const void *bm_const_table_symbol(void);
cudaError_t bm_table_read(const unsigned *table, int divergent, unsigned *out, int iters,
                          unsigned blocks, cudaStream_t s);
cudaError_t bm_resize_texture(unsigned long long tex, float *out, int w, int h, float sx,
                              float sy, cudaStream_t s);
cudaError_t bm_resize_global(const float *in, int in_w, int in_h, float *out, int w, int h,
                             float sx, float sy, cudaStream_t s);
cudaError_t bm_scale_add(float *p, unsigned long long n, unsigned blocks, cudaStream_t s);

#define TABLE 1024
#define TABLE_ITERS 8192
#define IN_W 4096
#define IN_H 4096
#define OUT_W 6144
#define OUT_H 6144
#define RT_REPS 21
#define RT_CHUNKS 4 /* RT_RAW_CHUNKED's pieces (and streams) per prefetch */
#define MiB ((size_t)1 << 20)

static int report_error(const char *what) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "bench_memspace: %s failed:\n%s\n", what, report);
    return 1;
}

static int cuda_error(const char *what, cudaError_t e) {
    fprintf(stderr, "bench_memspace: %s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return 1;
}

#define CUDA_TRY_RET(call)                                                                   \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) return cuda_error(#call, e_);                                 \
    } while (0)

/* ------------------------------------------------------------------ table reads */

typedef struct table_ctx {
    const unsigned *table; /* NULL: the __constant__ one */
    int divergent;
    unsigned *out;
    unsigned blocks;
    cudaStream_t s;
} table_ctx_t;

static int table_fn(void *p) {
    table_ctx_t *c = p;
    return bm_table_read(c->table, c->divergent, c->out, TABLE_ITERS, c->blocks, c->s) != cudaSuccess;
}

static unsigned ref_table(const unsigned *tab, unsigned tid, int divergent) {
    const unsigned off = divergent ? (tid & 31u) * 33u : 0u;
    unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < TABLE_ITERS; i += 4) {
        const unsigned k = (unsigned)i + off;
        a0 = a0 * 3u + tab[k & (TABLE - 1)];
        a1 = a1 * 5u + tab[(k + 1u) & (TABLE - 1)];
        a2 = a2 * 7u + tab[(k + 2u) & (TABLE - 1)];
        a3 = a3 * 9u + tab[(k + 3u) & (TABLE - 1)];
    }
    return a0 ^ a1 ^ a2 ^ a3;
}

/* Rows constant_broadcast and constant_divergent. Returns 0, 1 on an error or wrong result. */
static int bench_constant(cm_device_t *dev, const cm_device_limits_t *lim, cudaStream_t s,
                          cm_bench_row_t *rows) {
    unsigned tab[TABLE];
    for (unsigned i = 0; i < TABLE; ++i) tab[i] = (i * 2654435761u) ^ 0x5bd1e995u;
    if (cm_symbol_copy_from_host(NULL, dev, bm_const_table_symbol(), 0, tab, sizeof tab) != CM_OK)
        return report_error("cm_symbol_copy_from_host");
    const unsigned blocks = (unsigned)lim->multiprocessor_count *
                            (unsigned)(lim->max_threads_per_multiprocessor / 256);
    const size_t threads = (size_t)blocks * 256u;
    unsigned *g = NULL, *out_c = NULL, *out_g = NULL;
    CUDA_TRY_RET(cudaMalloc((void **)&g, sizeof tab));
    CUDA_TRY_RET(cudaMalloc((void **)&out_c, threads * sizeof(unsigned)));
    CUDA_TRY_RET(cudaMalloc((void **)&out_g, threads * sizeof(unsigned)));
    CUDA_TRY_RET(cudaMemcpy(g, tab, sizeof tab, cudaMemcpyHostToDevice));
    CUDA_TRY_RET(cudaDeviceSynchronize()); /* a pageable copy may return before its DMA ends */
    unsigned *hc = malloc(threads * sizeof(unsigned)), *hg = malloc(threads * sizeof(unsigned));
    if (hc == NULL || hg == NULL) {
        fprintf(stderr, "bench_memspace: no host memory\n");
        return 1;
    }
    const double bytes = 4.0 * TABLE_ITERS * (double)threads;
    int rc = 0;
    for (int dv = 0; dv < 2 && rc == 0; ++dv) {
        table_ctx_t cc = {NULL, dv, out_c, blocks, s}, cg = {g, dv, out_g, blocks, s};
        cm_bench_stats_t sc, sg;
        if (cm_bench_time(table_fn, &cc, s, 3, 20, &sc) != 0 ||
            cm_bench_time(table_fn, &cg, s, 3, 20, &sg) != 0) {
            rc = 1;
            break;
        }
        if (cudaMemcpy(hc, out_c, threads * sizeof(unsigned), cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(hg, out_g, threads * sizeof(unsigned), cudaMemcpyDeviceToHost) != cudaSuccess) {
            rc = cuda_error("cudaMemcpy (table results)", cudaGetLastError());
            break;
        }
        if (memcmp(hc, hg, threads * sizeof(unsigned)) != 0) {
            fprintf(stderr, "bench_memspace: constant and global table reads differ (%s)\n",
                    dv ? "divergent" : "broadcast");
            rc = 1;
            break;
        }
        for (size_t t = 0; t < threads; t += threads / 61 + 1) {
            if (hc[t] != ref_table(tab, (unsigned)t, dv)) {
                fprintf(stderr, "bench_memspace: table read of thread %zu: %u, expected %u\n", t,
                        hc[t], ref_table(tab, (unsigned)t, dv));
                rc = 1;
                break;
            }
        }
        double ours = bytes / (sc.median_ms * 1e-3) / 1e9, peer = bytes / (sg.median_ms * 1e-3) / 1e9;
        printf("  table reads (%s): __constant__ %.3f ms (%.0f GB/s), global %.3f ms (%.0f GB/s)\n",
               dv ? "divergent" : "broadcast", sc.median_ms, ours, sg.median_ms, peer);
        double ratio = cm_bench_ratio_rate(ours, peer);
        rows[dv] = (cm_bench_row_t){"memspace", dv ? "constant_divergent" : "constant_broadcast",
                                    "GB/s", ours, peer,
                                    dv ? "global memory, divergent reads" : "global memory, same reads",
                                    ratio, "info", true};
    }
    free(hc);
    free(hg);
    cudaFree(g);
    cudaFree(out_c);
    cudaFree(out_g);
    return rc;
}

/* ------------------------------------------------------------------ bilinear resize */

typedef struct resize_ctx {
    unsigned long long tex; /* 0: the hand-written kernel */
    const float *in;
    float *out;
    cudaStream_t s;
} resize_ctx_t;

static const float k_sx = (float)IN_W / (float)OUT_W, k_sy = (float)IN_H / (float)OUT_H;

static int resize_fn(void *p) {
    resize_ctx_t *c = p;
    cudaError_t e = c->tex != 0
                        ? bm_resize_texture(c->tex, c->out, OUT_W, OUT_H, k_sx, k_sy, c->s)
                        : bm_resize_global(c->in, IN_W, IN_H, c->out, OUT_W, OUT_H, k_sx, k_sy, c->s);
    return e != cudaSuccess;
}

static int ifloor_d(double v) {
    int i = (int)v;
    return v < (double)i ? i - 1 : i;
}

static double px(const float *img, int x, int y) {
    x = x < 0 ? 0 : x >= IN_W ? IN_W - 1 : x;
    y = y < 0 ? 0 : y >= IN_H ? IN_H - 1 : y;
    return (double)img[(size_t)y * IN_W + (size_t)x];
}

/* Float64 bilinear (clamp to edge) of output pixel (x, y). */
static double ref_resize(const float *img, int x, int y) {
    double u = (double)(((float)x + 0.5f) * k_sx) - 0.5, v = (double)(((float)y + 0.5f) * k_sy) - 0.5;
    int i = ifloor_d(u), j = ifloor_d(v);
    double a = u - i, b = v - j;
    return (1 - b) * ((1 - a) * px(img, i, j) + a * px(img, i + 1, j)) +
           b * ((1 - a) * px(img, i, j + 1) + a * px(img, i + 1, j + 1));
}

/* Rows texture_bilinear_resize and texture_pitched_resize. */
static int bench_texture(cm_device_t *dev, cudaStream_t s, cm_bench_row_t *rows) {
    const size_t in_n = (size_t)IN_W * IN_H, out_n = (size_t)OUT_W * OUT_H;
    float *img = malloc(in_n * sizeof(float)), *h_tex = malloc(out_n * sizeof(float));
    float *h_ref = malloc(out_n * sizeof(float));
    if (img == NULL || h_tex == NULL || h_ref == NULL) {
        fprintf(stderr, "bench_memspace: no host memory for the images\n");
        return 1;
    }
    unsigned long long r = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < in_n; ++i) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        img[i] = (float)(r >> 40) * 0x1.0p-24f;
    }
    int rc = 1;
    cm_array_t *arr = NULL;
    cm_pitched_t *pit = NULL;
    cm_texture_t *ta = NULL, *tp = NULL;
    float *d_in = NULL, *d_out = NULL;
    cm_texture_desc_t desc = CM_TEXTURE_DESC_INIT; /* clamp, unnormalised */
    desc.filter_mode = CM_FILTER_LINEAR;
    unsigned long long oa = 0, op = 0;
    if (cm_array_create(dev, IN_W, IN_H, CM_FORMAT_F32, CM_ARRAY_DEFAULT, &arr) != CM_OK ||
        cm_pitched_create(dev, IN_W, IN_H, CM_FORMAT_F32, &pit) != CM_OK ||
        cm_copy_2d(NULL, cm_place_array(arr, 0, 0), cm_place_host(img, 0), IN_W, IN_H) != CM_OK ||
        cm_copy_2d(NULL, cm_place_pitched(pit, 0, 0), cm_place_host(img, 0), IN_W, IN_H) != CM_OK ||
        cm_texture_create_from_array(arr, &desc, &ta) != CM_OK ||
        cm_texture_create_from_pitched(pit, &desc, &tp) != CM_OK ||
        cm_texture_object(ta, &oa) != CM_OK || cm_texture_object(tp, &op) != CM_OK) {
        report_error("setting up the textures");
        goto done;
    }
    cudaError_t ce;
    if ((ce = cudaMalloc((void **)&d_in, in_n * sizeof(float))) != cudaSuccess ||
        (ce = cudaMalloc((void **)&d_out, out_n * sizeof(float))) != cudaSuccess ||
        (ce = cudaMemcpy(d_in, img, in_n * sizeof(float), cudaMemcpyHostToDevice)) != cudaSuccess ||
        (ce = cudaDeviceSynchronize()) != cudaSuccess) { /* the timed kernels run on s */
        cuda_error("allocating the global-memory image", ce);
        goto done;
    }
    resize_ctx_t cg = {0, d_in, d_out, s}, ca = {oa, NULL, d_out, s}, cp = {op, NULL, d_out, s};
    cm_bench_stats_t sg, sa, sp;
    /* the hand-written kernel's output, checked against float64 on a sample */
    if (cm_bench_time(resize_fn, &cg, s, 3, 20, &sg) != 0) goto done;
    if ((ce = cudaMemcpy(h_ref, d_out, out_n * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
        cuda_error("cudaMemcpy (resize)", ce);
        goto done;
    }
    for (size_t k = 0; k < out_n; k += 9973) {
        int x = (int)(k % OUT_W), y = (int)(k / OUT_W);
        double want = ref_resize(img, x, y), err = (double)h_ref[k] - want;
        if (!(err <= 1e-5 && err >= -1e-5)) {
            fprintf(stderr, "bench_memspace: hand-written resize (%d, %d) = %.8g, float64 %.8g\n",
                    x, y, (double)h_ref[k], want);
            goto done;
        }
    }
    /* each texture's output against it: the texture's weights have 8 fractional bits, so up
     * to 2/256 of the values' range (1) apart, and far less on average */
    for (int t = 0; t < 2; ++t) {
        resize_ctx_t *c = t == 0 ? &ca : &cp;
        if (cudaMemsetAsync(d_out, 0xFF, out_n * sizeof(float), s) != cudaSuccess ||
            cm_bench_time(resize_fn, c, s, 3, 20, t == 0 ? &sa : &sp) != 0)
            goto done;
        if ((ce = cudaMemcpy(h_tex, d_out, out_n * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
            cuda_error("cudaMemcpy (texture resize)", ce);
            goto done;
        }
        double worst = 0, sum = 0;
        for (size_t k = 0; k < out_n; ++k) {
            double err = (double)h_tex[k] - (double)h_ref[k];
            if (err < 0) err = -err;
            if (!(err <= 2.0 / 256.0 + 1e-5)) {
                fprintf(stderr, "bench_memspace: texture resize (%s) pixel %zu = %.8g, the "
                        "hand-written kernel %.8g\n", t == 0 ? "array" : "pitched", k,
                        (double)h_tex[k], (double)h_ref[k]);
                goto done;
            }
            worst = err > worst ? err : worst;
            sum += err;
        }
        printf("  texture (%s) vs hand-written resize: largest difference %.3g, mean %.3g\n",
               t == 0 ? "array" : "pitched", worst, sum / (double)out_n);
    }
    double g = (double)out_n / (sg.median_ms * 1e-3) / 1e9;
    double a = (double)out_n / (sa.median_ms * 1e-3) / 1e9, p = (double)out_n / (sp.median_ms * 1e-3) / 1e9;
    printf("  resize %dx%d -> %dx%d: texture over array %.3f ms, over pitched %.3f ms, "
           "hand-written %.3f ms\n", IN_W, IN_H, OUT_W, OUT_H, sa.median_ms, sp.median_ms,
           sg.median_ms);
    rows[0] = (cm_bench_row_t){"memspace", "texture_bilinear_resize", "Gpix/s", a, g,
                               "hand-written global-memory bilinear", cm_bench_ratio_rate(a, g),
                               ">= 1.0x", cm_bench_ratio_rate(a, g) >= 1.0};
    rows[1] = (cm_bench_row_t){"memspace", "texture_pitched_resize", "Gpix/s", p, g,
                               "hand-written global-memory bilinear", cm_bench_ratio_rate(p, g),
                               "info", true};
    rc = 0;
done:
    if (cm_texture_destroy(ta) != CM_OK || cm_texture_destroy(tp) != CM_OK ||
        cm_array_destroy(arr) != CM_OK || cm_pitched_destroy(pit) != CM_OK)
        rc = report_error("releasing the textures");
    cudaFree(d_in);
    cudaFree(d_out);
    free(img);
    free(h_tex);
    free(h_ref);
    return rc;
}

/* ------------------------------------------------------------------ managed round trip */

enum rt_way {
    RT_MANAGED_PREFETCH,
    RT_MANAGED_ON_DEMAND,
    RT_PAGEABLE,
    RT_PINNED,
    RT_RAW_PREFETCH,     /* cudaMallocManaged + cudaMemPrefetchAsync, no library */
    RT_ADVISED_PREFETCH, /* ours on a second buffer advised ACCESSED_BY the host */
    RT_RAW_ON_OURS,      /* the raw calls on our buffer: the library's calls vs the buffer */
    RT_RAW_CHUNKED,      /* the raw calls on the raw buffer, each prefetch in RT_CHUNKS */
    RT_WAYS
};

typedef struct rt_ctx {
    cm_managed_t *m;
    float *managed;   /* its address */
    cm_managed_t *m2; /* the advised one */
    float *managed2;
    float *raw;       /* cudaMallocManaged */
    int ordinal;      /* the device's */
    float *pageable;  /* malloc */
    float *pinned;    /* cudaMallocHost */
    float *d;         /* cudaMalloc */
    size_t bytes;
    unsigned long long n;
    unsigned blocks;
    cm_stream_t *ls;  /* the library stream (ours) */
    cudaStream_t s;   /* its CUDA stream (the peers use it too) */
    cudaStream_t side[RT_CHUNKS]; /* RT_RAW_CHUNKED's streams, one per chunk */
    cudaEvent_t fork, join[RT_CHUNKS];
} rt_ctx_t;

/* h's c->bytes prefetched to loc in RT_CHUNKS pieces, one per side stream, after the work
 * already on c->s and before the work queued on it next */
static cudaError_t chunked_prefetch(rt_ctx_t *c, float *h, struct cudaMemLocation loc) {
    cudaError_t e = cudaEventRecord(c->fork, c->s);
    const size_t chunk = c->bytes / RT_CHUNKS;
    for (int i = 0; i < RT_CHUNKS && e == cudaSuccess; ++i) {
        const size_t off = (size_t)i * chunk, len = i == RT_CHUNKS - 1 ? c->bytes - off : chunk;
        if ((e = cudaStreamWaitEvent(c->side[i], c->fork, 0)) != cudaSuccess) break;
        if ((e = cudaMemPrefetchAsync((char *)h + off, len, loc, 0, c->side[i])) != cudaSuccess)
            break;
        if ((e = cudaEventRecord(c->join[i], c->side[i])) != cudaSuccess) break;
        e = cudaStreamWaitEvent(c->s, c->join[i], 0);
    }
    return e;
}

/* One round trip; *ms its host-clock time, *move_ms the part of it until the data is back
 * (transfers and kernel, before the host's check of every element), *wrong the elements the
 * host found wrong. */
static int round_trip(rt_ctx_t *c, enum rt_way way, double *ms, double *move_ms,
                      unsigned long long *wrong) {
    float *h = way == RT_PAGEABLE           ? c->pageable
               : way == RT_PINNED           ? c->pinned
               : way == RT_RAW_PREFETCH     ? c->raw
               : way == RT_RAW_CHUNKED      ? c->raw
               : way == RT_ADVISED_PREFETCH ? c->managed2
                                            : c->managed; /* ours, on demand, raw on ours */
    for (unsigned long long i = 0; i < c->n; ++i) h[i] = (float)(i & 4095u); /* the host last */
    double t0 = cm_bench_now_us();
    cudaError_t e = cudaSuccess;
    switch (way) {
    case RT_MANAGED_PREFETCH:
    case RT_ADVISED_PREFETCH: { /* ours, on the plain or the advised buffer (h) */
        cm_managed_t *m = way == RT_ADVISED_PREFETCH ? c->m2 : c->m;
        if (cm_managed_prefetch(c->ls, m, 0, c->bytes, 0) != CM_OK)
            return report_error("cm_managed_prefetch to the device");
        if ((e = bm_scale_add(h, c->n, c->blocks, c->s)) != cudaSuccess) break;
        if (cm_managed_prefetch(c->ls, m, 0, c->bytes, CM_LOCATION_HOST) != CM_OK)
            return report_error("cm_managed_prefetch to the host");
        if (cm_stream_synchronize(c->ls) != CM_OK) return report_error("cm_stream_synchronize");
        break;
    }
    case RT_RAW_PREFETCH:
    case RT_RAW_ON_OURS: {
        struct cudaMemLocation dev = {cudaMemLocationTypeDevice, c->ordinal};
        struct cudaMemLocation host = {cudaMemLocationTypeHost, 0};
        if ((e = cudaMemPrefetchAsync(h, c->bytes, dev, 0, c->s)) != cudaSuccess) break;
        if ((e = bm_scale_add(h, c->n, c->blocks, c->s)) != cudaSuccess) break;
        if ((e = cudaMemPrefetchAsync(h, c->bytes, host, 0, c->s)) != cudaSuccess) break;
        e = cudaStreamSynchronize(c->s);
        break;
    }
    case RT_RAW_CHUNKED: {
        struct cudaMemLocation dev = {cudaMemLocationTypeDevice, c->ordinal};
        struct cudaMemLocation host = {cudaMemLocationTypeHost, 0};
        if ((e = chunked_prefetch(c, h, dev)) != cudaSuccess) break;
        if ((e = bm_scale_add(h, c->n, c->blocks, c->s)) != cudaSuccess) break;
        if ((e = chunked_prefetch(c, h, host)) != cudaSuccess) break;
        e = cudaStreamSynchronize(c->s);
        break;
    }
    case RT_MANAGED_ON_DEMAND:
        if ((e = bm_scale_add(c->managed, c->n, c->blocks, c->s)) != cudaSuccess) break;
        e = cudaStreamSynchronize(c->s);
        break;
    case RT_PAGEABLE: /* the classic three calls, all on the legacy default stream */
        if ((e = cudaMemcpy(c->d, h, c->bytes, cudaMemcpyHostToDevice)) != cudaSuccess) break;
        if ((e = bm_scale_add(c->d, c->n, c->blocks, 0)) != cudaSuccess) break;
        e = cudaMemcpy(h, c->d, c->bytes, cudaMemcpyDeviceToHost);
        break;
    case RT_PINNED:
        if ((e = cudaMemcpyAsync(c->d, h, c->bytes, cudaMemcpyHostToDevice, c->s)) != cudaSuccess) break;
        if ((e = bm_scale_add(c->d, c->n, c->blocks, c->s)) != cudaSuccess) break;
        if ((e = cudaMemcpyAsync(h, c->d, c->bytes, cudaMemcpyDeviceToHost, c->s)) != cudaSuccess) break;
        e = cudaStreamSynchronize(c->s);
        break;
    case RT_WAYS: break;
    }
    if (e != cudaSuccess) return cuda_error("the round trip", e);
    *move_ms = (cm_bench_now_us() - t0) * 1e-3;
    unsigned long long bad = 0;
    for (unsigned long long i = 0; i < c->n; ++i)
        if (h[i] != 2.0f * (float)(i & 4095u) + 1.0f) ++bad;
    *ms = (cm_bench_now_us() - t0) * 1e-3;
    *wrong = bad;
    return 0;
}

static int bench_managed(cm_device_t *dev, const cm_device_limits_t *lim, cm_bench_row_t *rows,
                         int *n_rows) {
    *n_rows = 0;
    rt_ctx_t c;
    memset(&c, 0, sizeof c);
    size_t free_b = 0, total_b = 0;
    CUDA_TRY_RET(cudaMemGetInfo(&free_b, &total_b));
    c.bytes = 64 * MiB;
    while (c.bytes > MiB && c.bytes > free_b / 24) c.bytes /= 2; /* 3 managed buffers: 1/8 */
    c.n = c.bytes / sizeof(float);
    c.blocks = (unsigned)lim->multiprocessor_count * 8u;
    cm_managed_info_t mi;
    if (cm_managed_create(dev, c.bytes, &c.m) != CM_OK ||
        cm_managed_data(c.m, (void **)&c.managed) != CM_OK || cm_managed_info(c.m, &mi) != CM_OK ||
        cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &c.ls) != CM_OK ||
        cm_stream_cuda(c.ls, &c.s) != CM_OK)
        return report_error("creating the managed buffer");
    int rc = 1;
    cudaError_t ce;
    c.ordinal = mi.ordinal;
    if (cm_managed_create(dev, c.bytes, &c.m2) != CM_OK ||
        cm_managed_data(c.m2, (void **)&c.managed2) != CM_OK) {
        report_error("creating the second managed buffer");
        goto done;
    }
    if (mi.concurrent_access &&
        cm_managed_advise(c.m2, 0, c.bytes, CM_ADVISE_ACCESSED_BY, CM_LOCATION_HOST) != CM_OK) {
        report_error("cm_managed_advise(CM_ADVISE_ACCESSED_BY, host)");
        goto done;
    }
    if ((ce = cudaMallocManaged((void **)&c.raw, c.bytes, cudaMemAttachGlobal)) != cudaSuccess) {
        cuda_error("cudaMallocManaged", ce);
        goto done;
    }
    c.pageable = malloc(c.bytes);
    if (c.pageable == NULL) {
        fprintf(stderr, "bench_memspace: no host memory\n");
        goto done;
    }
    for (int i = 0; i < RT_CHUNKS; ++i)
        if ((ce = cudaStreamCreateWithFlags(&c.side[i], cudaStreamNonBlocking)) != cudaSuccess ||
            (ce = cudaEventCreateWithFlags(&c.join[i], cudaEventDisableTiming)) != cudaSuccess) {
            cuda_error("creating the chunked prefetch's streams", ce);
            goto done;
        }
    if ((ce = cudaEventCreateWithFlags(&c.fork, cudaEventDisableTiming)) != cudaSuccess) {
        cuda_error("creating the chunked prefetch's event", ce);
        goto done;
    }
    if ((ce = cudaMallocHost((void **)&c.pinned, c.bytes)) != cudaSuccess ||
        (ce = cudaMalloc((void **)&c.d, c.bytes)) != cudaSuccess) {
        cuda_error("allocating the peers' memory", ce);
        goto done;
    }
    const char *names[RT_WAYS] = {"managed + prefetch",    "managed, on demand",
                                  "pageable cudaMemcpy",   "pinned cudaMemcpyAsync",
                                  "raw managed prefetch",  "managed + prefetch, advised",
                                  "raw calls on our buffer", "raw prefetch, 4 chunks"};
    double med[RT_WAYS] = {0};
    bool ran[RT_WAYS] = {false};
    bool runs[RT_WAYS];
    for (int w = 0; w < RT_WAYS; ++w)
        runs[w] = mi.concurrent_access || !(w == RT_MANAGED_PREFETCH || w == RT_RAW_PREFETCH ||
                                            w == RT_ADVISED_PREFETCH || w == RT_RAW_ON_OURS ||
                                            w == RT_RAW_CHUNKED);
    if (!mi.concurrent_access)
        printf("  device 0 has no concurrent managed access: no prefetch, no managed_prefetch rows\n");
    /* the ways interleaved, repetition by repetition, so that a drift of the host (clocks, page
     * cache, other tenants) over the minute of the run reaches every way alike */
    double t[RT_WAYS][RT_REPS], tm[RT_WAYS][RT_REPS], warm = 0, warm_move = 0;
    unsigned long long bad[RT_WAYS] = {0};
    for (int r = -2; r < RT_REPS; ++r)
        for (int w = 0; w < RT_WAYS; ++w) {
            if (!runs[w]) continue;
            unsigned long long wrong = 0;
            if (round_trip(&c, (enum rt_way)w, r < 0 ? &warm : &t[w][r],
                           r < 0 ? &warm_move : &tm[w][r], &wrong) != 0)
                goto done;
            bad[w] += wrong;
        }
    for (int w = 0; w < RT_WAYS; ++w) {
        if (!runs[w]) continue;
        if (bad[w] > 0) {
            fprintf(stderr, "bench_memspace: %s: %llu wrong element(s)\n", names[w], bad[w]);
            goto done;
        }
        /* where the time goes: until the data is back, and the host's check after it (per
         * repetition, before the sort below reorders t) */
        double check[RT_REPS];
        for (int r = 0; r < RT_REPS; ++r) check[r] = t[w][r] - tm[w][r];
        qsort(tm[w], RT_REPS, sizeof tm[w][0], cm_bench_cmp_double);
        qsort(check, RT_REPS, sizeof check[0], cm_bench_cmp_double);
        qsort(t[w], RT_REPS, sizeof t[w][0], cm_bench_cmp_double);
        med[w] = t[w][RT_REPS / 2];
        ran[w] = true;
        printf("  round trip of %zu MiB, %-27s %8.3f ms (min %.3f, max %.3f), every element "
               "checked\n    of which until the data is back %.3f ms, the host's check %.3f ms (medians)\n",
               c.bytes >> 20, names[w], med[w], t[w][0], t[w][RT_REPS - 1], tm[w][RT_REPS / 2],
               check[RT_REPS / 2]);
    }
    if (ran[RT_MANAGED_PREFETCH]) {
        double o = med[RT_MANAGED_PREFETCH];
        rows[(*n_rows)++] = (cm_bench_row_t){"memspace", "managed_prefetch_vs_pageable_memcpy", "ms", o,
                                             med[RT_PAGEABLE], "cudaMemcpy, pageable host memory",
                                             cm_bench_ratio_time(o, med[RT_PAGEABLE]), ">= 0.9x",
                                             cm_bench_ratio_time(o, med[RT_PAGEABLE]) >= 0.9};
        rows[(*n_rows)++] = (cm_bench_row_t){"memspace", "managed_prefetch_vs_pinned_memcpy", "ms", o,
                                             med[RT_PINNED], "cudaMemcpyAsync, pinned host memory",
                                             cm_bench_ratio_time(o, med[RT_PINNED]), ">= 0.9x",
                                             cm_bench_ratio_time(o, med[RT_PINNED]) >= 0.9};
    }
    if (ran[RT_MANAGED_PREFETCH] && ran[RT_RAW_PREFETCH]) {
        const double o = med[RT_MANAGED_PREFETCH], r = cm_bench_ratio_time(o, med[RT_RAW_PREFETCH]);
        rows[(*n_rows)++] = (cm_bench_row_t){"memspace", "managed_prefetch_vs_raw_prefetch", "ms",
                                             o, med[RT_RAW_PREFETCH],
                                             "cudaMallocManaged + cudaMemPrefetchAsync", r,
                                             ">= 0.95x", r >= 0.95};
    }
    if (ran[RT_MANAGED_PREFETCH] && ran[RT_RAW_ON_OURS])
        rows[(*n_rows)++] = (cm_bench_row_t){
            "memspace", "managed_prefetch_vs_raw_calls_same_buffer", "ms",
            med[RT_MANAGED_PREFETCH], med[RT_RAW_ON_OURS],
            "cudaMemPrefetchAsync on the same buffer",
            cm_bench_ratio_time(med[RT_MANAGED_PREFETCH], med[RT_RAW_ON_OURS]), "info", true};
    if (ran[RT_RAW_CHUNKED] && ran[RT_RAW_PREFETCH]) {
        const double o = med[RT_RAW_CHUNKED];
        rows[(*n_rows)++] = (cm_bench_row_t){
            "memspace", "managed_raw_chunked_prefetch_vs_raw_prefetch", "ms", o,
            med[RT_RAW_PREFETCH], "one cudaMemPrefetchAsync per direction",
            cm_bench_ratio_time(o, med[RT_RAW_PREFETCH]), "info", true};
        rows[(*n_rows)++] = (cm_bench_row_t){
            "memspace", "managed_raw_chunked_prefetch_vs_pinned_memcpy", "ms", o, med[RT_PINNED],
            "cudaMemcpyAsync, pinned host memory", cm_bench_ratio_time(o, med[RT_PINNED]), "info",
            true};
    }
    if (ran[RT_ADVISED_PREFETCH])
        rows[(*n_rows)++] = (cm_bench_row_t){
            "memspace", "managed_prefetch_accessed_by_host_vs_pinned_memcpy", "ms",
            med[RT_ADVISED_PREFETCH], med[RT_PINNED], "cudaMemcpyAsync, pinned host memory",
            cm_bench_ratio_time(med[RT_ADVISED_PREFETCH], med[RT_PINNED]), "info", true};
    rows[(*n_rows)++] = (cm_bench_row_t){"memspace", "managed_on_demand_vs_pageable_memcpy", "ms",
                                         med[RT_MANAGED_ON_DEMAND], med[RT_PAGEABLE],
                                         "cudaMemcpy, pageable host memory",
                                         cm_bench_ratio_time(med[RT_MANAGED_ON_DEMAND], med[RT_PAGEABLE]),
                                         "info", true};
    rc = 0;
done:
    if (cm_stream_release(c.ls) != CM_OK || cm_managed_destroy(c.m) != CM_OK ||
        cm_managed_destroy(c.m2) != CM_OK)
        rc = report_error("releasing the managed buffers");
    if (c.raw != NULL) cudaFree(c.raw);
    for (int i = 0; i < RT_CHUNKS; ++i) {
        if (c.side[i] != NULL) cudaStreamDestroy(c.side[i]);
        if (c.join[i] != NULL) cudaEventDestroy(c.join[i]);
    }
    if (c.fork != NULL) cudaEventDestroy(c.fork);
    if (c.pinned != NULL) cudaFreeHost(c.pinned);
    cudaFree(c.d);
    free(c.pageable);
    return rc;
}

int main(void) {
    if (!cm_bench_have_gpu("bench_memspace")) return 1;
    CUDA_TRY_RET(cudaSetDevice(0));
    cm_device_limits_t lim;
    if (cm_device_get_limits(0, &lim) != CM_OK) return report_error("cm_device_get_limits");
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report_error("cm_device_open");
    cudaStream_t s = NULL;
    CUDA_TRY_RET(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("bench_memspace on %s (sm_%d%d, %d SMs): CUDA events (median of 20 after 3 warm-ups) "
           "for the kernels, host clock (median of %d after 2 warm-ups) for the round trips\n",
           lim.name, lim.cc_major, lim.cc_minor, lim.multiprocessor_count, RT_REPS);
    cm_bench_row_t rows[12]; /* constant 2, texture 2, managed up to 8 */
    memset(rows, 0, sizeof rows);
    int n_rows = 0, n_managed = 0;
    int rc = bench_constant(dev, &lim, s, rows);
    if (rc == 0) {
        n_rows = 2;
        rc = bench_texture(dev, s, rows + n_rows);
    }
    if (rc == 0) {
        n_rows += 2;
        rc = bench_managed(dev, &lim, rows + n_rows, &n_managed);
        n_rows += n_managed;
    }
    if (rc == 0) {
        printf("\n");
        cm_bench_print_header();
        for (int i = 0; i < n_rows; ++i)
            if (cm_bench_report(&rows[i]) != 0) rc = 1;
    }
    cudaStreamDestroy(s);
    if (cm_device_close(dev) != CM_OK) rc = report_error("cm_device_close");
    return rc;
}
