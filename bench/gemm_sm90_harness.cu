// Standalone harness of the Hopper GEMM (kernels/gemm_sm90.cu): correctness of every tile
// configuration against a float64 CPU reference, then timing against cuBLAS in the same run.
// Not part of the CMake build (the bench glob takes bench_*.c / bench_*.cu only). Build on any
// machine with nvcc 13 (no GPU needed), run on an H200:
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -cudart static -Ikernels
//        bench/gemm_sm90_harness.cu -o gemm_sm90_harness -ldl       (one line)
//   ./gemm_sm90_harness check V   small shapes, full check, variant V (0..N-1; "list" names them)
//   ./gemm_sm90_harness big       4096^3 and 8192^3: 4096 sampled entries against float64, and
//                                 the whole C against cuBLAS's
//   ./gemm_sm90_harness perf [V..]  TFLOP/s at 4096^3 and 8192^3, median of 20 after warm-up,
//                                 each variant against cuBLAS (GemmEx) timed in the same run
// cuBLAS is loaded with dlopen (libcublas.so.13; $CUBLAS_LIB names another), so the harness
// runs without it, minus the comparison.
//
// Layout: ours is C (M x N, row-major) = A (M x K, row-major) * B^T with B stored N x K
// row-major. Read column-major, the same memory holds C^T (N x M, ld ldc), A^T (K x M, ld lda)
// and B^T (K x N, ld ldb); C^T = B * A^T = (B^T)^T * (A^T), so cuBLAS computes it as
// gemm(transa = T, transb = N, m = N, n = M, k = K, A := b (ld ldb), B := a (ld lda), C := c).
#include "../kernels/gemm_sm90.cu"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include <cublas_api.h>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            printf("CUDA error %s (%d) at %s:%d: %s\n", cudaGetErrorName(e_), (int)e_, __FILE__, \
                   __LINE__, #x);                                                               \
            fflush(stdout);                                                                     \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

using namespace cm__sm90;

// ------------------------------------------------------------------ variants
typedef cudaError_t (*launch_fn)(int, int, int, int, float, const void *, int64_t, const void *,
                                 int64_t, float, void *, int64_t, cudaStream_t);
struct Variant {
    const char *name;
    int it;        // CM__GEMM_SM90_BF16 / _TF32
    int tf32_map;  // tf32 only: 1 = tensor map type TFLOAT32 (rounds; the library's), 0 = FLOAT32
                   // (the tensor cores truncate: over the tf32 bound, timed for comparison only)
    launch_fn fn;
};
// Variant 0 and the first tf32 one are what cm__gemm_sm90 runs.
static const Variant kVariants[] = {
    {"bf16 128x256 s4", kBf16, 1, launch<256, 4, kBf16, 1>},
    {"bf16 128x256 s3", kBf16, 1, launch<256, 3, kBf16, 1>},
    {"bf16 128x128 s6", kBf16, 1, launch<128, 6, kBf16, 1>},
    {"bf16 128x128 s3 x2", kBf16, 1, launch<128, 3, kBf16, 2>},
    {"tf32 128x256 s4", kTf32, 1, launch<256, 4, kTf32, 1>},
    {"tf32 128x256 s3", kTf32, 1, launch<256, 3, kTf32, 1>},
    {"tf32 128x128 s6", kTf32, 1, launch<128, 6, kTf32, 1>},
    {"tf32 128x128 s3 x2", kTf32, 1, launch<128, 3, kTf32, 2>},
    {"tf32 128x256 s4 tmapF32", kTf32, 0, launch<256, 4, kTf32, 1>},
};
static const int kNumVariants = (int)(sizeof kVariants / sizeof kVariants[0]);

static cudaError_t run_variant(const Variant &v, int c_bf16, int m, int n, int k, float alpha,
                               const void *a, int64_t lda, const void *b, int64_t ldb, float beta,
                               void *c, int64_t ldc, cudaStream_t s) {
    if (!cm__gemm_sm90_supported(v.it, c_bf16, m, n, k, a, lda, b, ldb, c, ldc))
        return cudaErrorNotSupported;
    g_tf32_map_type = v.tf32_map ? CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    return v.fn(c_bf16, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, s);
}

// ------------------------------------------------------------------ data
static inline uint32_t hash32(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (uint32_t)x;
}
__host__ __device__ static inline float u01(uint64_t seed, uint64_t i) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + i * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 32;
    return (float)((uint32_t)x >> 8) * (1.0f / 16777216.0f);  // [0, 1)
}
// random values in [-1, 1) (bf16-rounded for bf16), every element of a rows x ld buffer
__global__ void fill_kernel(void *p, size_t count, int bf16, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = 2.0f * u01(seed, i) - 1.0f;
        if (bf16)
            static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
        else
            static_cast<float *>(p)[i] = v;
    }
}
static void fill_dev(void *p, size_t count, int bf16, uint64_t seed) {
    fill_kernel<<<1024, 256>>>(p, count, bf16, seed);
    CK(cudaGetLastError());
}
static double bf16_to_double(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return (double)f;
}
static uint16_t float_to_bf16_bits(float f) {  // round to nearest even (finite inputs)
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
// host copy of an operand as doubles
static std::vector<double> to_double(const void *dev, size_t count, int bf16) {
    std::vector<double> out(count);
    if (bf16) {
        std::vector<uint16_t> h(count);
        CK(cudaMemcpy(h.data(), dev, count * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count; ++i) out[i] = bf16_to_double(h[i]);
    } else {
        std::vector<float> h(count);
        CK(cudaMemcpy(h.data(), dev, count * 4, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < count; ++i) out[i] = (double)h[i];
    }
    return out;
}
static std::vector<double> c_to_double(const void *dev, size_t count, int c_bf16) {
    return to_double(dev, count, c_bf16);
}

// ------------------------------------------------------------------ cuBLAS (dlopen)
typedef cublasStatus_t (*pf_create)(cublasHandle_t *);
typedef cublasStatus_t (*pf_setstream)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*pf_gemmex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void *, const void *, cudaDataType, int, const void *,
                                    cudaDataType, int, const void *, void *, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
static pf_gemmex p_gemmex = nullptr;
static cublasHandle_t g_cublas = nullptr;
static bool cublas_load() {
    const char *names[] = {getenv("CUBLAS_LIB"), "libcublas.so.13", "libcublas.so",
                           "/usr/local/cuda/lib64/libcublas.so.13"};
    void *h = nullptr;
    for (const char *nm : names)
        if (nm && (h = dlopen(nm, RTLD_NOW | RTLD_GLOBAL)) != nullptr) break;
    if (!h) {
        printf("cuBLAS: not loaded (%s)\n", dlerror());
        return false;
    }
    pf_create cr = (pf_create)dlsym(h, "cublasCreate_v2");
    pf_setstream ss = (pf_setstream)dlsym(h, "cublasSetStream_v2");
    p_gemmex = (pf_gemmex)dlsym(h, "cublasGemmEx");
    if (!cr || !ss || !p_gemmex || cr(&g_cublas) != CUBLAS_STATUS_SUCCESS) {
        printf("cuBLAS: symbols or handle missing\n");
        p_gemmex = nullptr;
        return false;
    }
    return true;
}
// cuBLAS with our layout (see the top); C float
static bool cublas_gemm(int it, int m, int n, int k, float alpha, const void *a, int64_t lda,
                        const void *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    const cudaDataType ab = it == kBf16 ? CUDA_R_16BF : CUDA_R_32F;
    const cublasComputeType_t ct = it == kBf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
    cublasStatus_t st = p_gemmex(g_cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, b, ab, (int)ldb,
                                 a, ab, (int)lda, &beta, c, CUDA_R_32F, (int)ldc, ct,
                                 CUBLAS_GEMM_DEFAULT);
    return st == CUBLAS_STATUS_SUCCESS;
}

// ------------------------------------------------------------------ check (small shapes, full)
struct Shape {
    int m, n, k, lda_pad, ldc_pad;
};
static const Shape kShapes[] = {
    {128, 256, 64, 0, 0},  {200, 300, 100, 0, 0}, {1, 1, 16, 0, 0},     {257, 513, 200, 8, 3},
    {384, 512, 1024, 0, 0}, {64, 1000, 37, 0, 1},  {130, 260, 72, 16, 0}, {512, 768, 2048, 0, 0},
};

static int check_variant(int vi) {
    const Variant &v = kVariants[vi];
    const int el = v.it == kBf16 ? 2 : 4;
    const int align = 16 / el;
    // the truncating tf32 variant (tensor map FLOAT32) is held to 1e-3 only: it is not the
    // library's, and its 6.9e-4 is why the library rounds (TFLOAT32)
    const double tol_in = v.it == kBf16 ? 1e-2 : v.tf32_map ? 5e-4 : 1e-3;
    int fails = 0;
    printf("== check variant %d: %s\n", vi, v.name);
    for (const Shape &s : kShapes) {
        const int64_t lda = (s.k + align - 1) / align * align + s.lda_pad;
        const int64_t ldb = lda + (s.lda_pad ? align : 0);
        const int64_t ldc = s.n + s.ldc_pad;
        void *a = nullptr, *b = nullptr, *c = nullptr;
        CK(cudaMalloc(&a, (size_t)s.m * lda * el));
        CK(cudaMalloc(&b, (size_t)s.n * ldb * el));
        CK(cudaMalloc(&c, (size_t)s.m * ldc * 4));
        fill_dev(a, (size_t)s.m * lda, v.it == kBf16, 11 + vi * 100 + s.m);
        fill_dev(b, (size_t)s.n * ldb, v.it == kBf16, 23 + vi * 100 + s.n);
        std::vector<double> ha = to_double(a, (size_t)s.m * lda, v.it == kBf16);
        std::vector<double> hb = to_double(b, (size_t)s.n * ldb, v.it == kBf16);
        std::vector<double> dot((size_t)s.m * s.n);
        for (int i = 0; i < s.m; ++i)
            for (int j = 0; j < s.n; ++j) {
                double acc = 0;
                const double *pa = &ha[(size_t)i * lda], *pb = &hb[(size_t)j * ldb];
                for (int kk = 0; kk < s.k; ++kk) acc += pa[kk] * pb[kk];
                dot[(size_t)i * s.n + j] = acc;
            }
        for (int c_bf16 = 0; c_bf16 < 2; ++c_bf16)
            for (int bi = 0; bi < 2; ++bi) {
                const float alpha = 1.25f, beta = bi ? -0.75f : 0.0f;
                const size_t cn = (size_t)s.m * ldc;
                // C before: NaN when beta == 0 (must never be read), random otherwise; the
                // padding columns get a sentinel that must survive
                std::vector<double> c0(cn);
                if (c_bf16) {
                    std::vector<uint16_t> h(cn);
                    for (size_t i = 0; i < cn; ++i) {
                        const bool pad = (int)(i % ldc) >= s.n;
                        h[i] = pad ? 0x4321 : bi ? float_to_bf16_bits(2 * u01(99, i) - 1) : 0x7FC1;
                        c0[i] = bf16_to_double(h[i]);
                    }
                    CK(cudaMemcpy(c, h.data(), cn * 2, cudaMemcpyHostToDevice));
                } else {
                    std::vector<float> h(cn);
                    for (size_t i = 0; i < cn; ++i) {
                        const bool pad = (int)(i % ldc) >= s.n;
                        h[i] = pad ? 1234.5f : bi ? 2 * u01(99, i) - 1 : nanf("");
                        c0[i] = h[i];
                    }
                    CK(cudaMemcpy(c, h.data(), cn * 4, cudaMemcpyHostToDevice));
                }
                cudaError_t e = run_variant(v, c_bf16, s.m, s.n, s.k, alpha, a, lda, b, ldb, beta, c,
                                            ldc, 0);
                if (e == cudaSuccess) e = cudaDeviceSynchronize();
                if (e != cudaSuccess) {
                    printf("  %4dx%4dx%4d cbf16=%d beta=%g: launch error %s\n", s.m, s.n, s.k,
                           c_bf16, beta, cudaGetErrorName(e));
                    fails++;
                    if (e != cudaErrorNotSupported) {
                        fflush(stdout);
                        exit(3);
                    }
                    continue;
                }
                std::vector<double> out = c_to_double(c, cn, c_bf16);
                double num = 0, den = 0, maxrel = 0;
                long bad = 0, pad_bad = 0;
                for (int i = 0; i < s.m; ++i)
                    for (int j = 0; j < (int)ldc; ++j) {
                        const size_t id = (size_t)i * ldc + j;
                        if (j >= s.n) {
                            if (memcmp(&out[id], &c0[id], sizeof(double)) != 0) pad_bad++;
                            continue;
                        }
                        const double ref = alpha * dot[(size_t)i * s.n + j] + (bi ? beta * c0[id] : 0);
                        if (!isfinite(out[id])) {
                            bad++;
                            continue;
                        }
                        const double d = out[id] - ref;
                        num += d * d;
                        den += ref * ref;
                        maxrel = std::max(maxrel, fabs(d) / (fabs(ref) + 1e-3));
                    }
                const double rel = den > 0 ? sqrt(num / den) : sqrt(num);
                const double tol = c_bf16 ? 1e-2 : tol_in;
                const bool ok = bad == 0 && pad_bad == 0 && rel <= tol;
                if (!ok) fails++;
                printf("  %4dx%4dx%4d lda=%lld ldc=%lld cbf16=%d beta=%5.2f: rel %.3e (tol %.0e) "
                       "nonfinite %ld pad-touched %ld  %s\n",
                       s.m, s.n, s.k, (long long)lda, (long long)ldc, c_bf16, beta, rel, tol, bad,
                       pad_bad, ok ? "PASS" : "FAIL");
            }
        CK(cudaFree(a));
        CK(cudaFree(b));
        CK(cudaFree(c));
    }
    printf("== variant %d (%s): %s (%d failures)\n", vi, v.name, fails ? "FAIL" : "PASS", fails);
    fflush(stdout);
    return fails ? 1 : 0;
}

// ------------------------------------------------------------------ timing
static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
template <typename F>
static float time_ms(F &&f, int warm = 3, int reps = 20) {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < warm; ++i) f();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(e0));
        f();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return median(t);
}

// sampled check at a large size: 4096 random (m, n) against float64
static double sampled_rel(const std::vector<double> &ha, const std::vector<double> &hb,
                          const std::vector<float> &hc, int m, int n, int k, uint64_t seed,
                          long *nonfinite) {
    double num = 0, den = 0;
    *nonfinite = 0;
    for (int s = 0; s < 4096; ++s) {
        const int i = (int)(hash32(seed * 7919 + s * 2) % (uint32_t)m);
        const int j = (int)(hash32(seed * 7919 + s * 2 + 1) % (uint32_t)n);
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) acc += ha[(size_t)i * k + kk] * hb[(size_t)j * k + kk];
        const double o = hc[(size_t)i * n + j];
        if (!isfinite(o)) {
            (*nonfinite)++;
            continue;
        }
        num += (o - acc) * (o - acc);
        den += acc * acc;
    }
    return sqrt(num / den);
}

// Checks (when do_check) then timing: two passes over cuBLAS and the variants, one after the
// other, so that each figure is measured twice and drift shows; the ratio uses the means.
static void big_and_perf(bool do_check, const std::vector<int> &only) {
    const bool have_cublas = cublas_load();
    const int sizes[2] = {4096, 8192};
    for (int it = 0; it < 2; ++it)
        for (int sz : sizes) {
            const int m = sz, n = sz, k = sz;
            const int el = it == kBf16 ? 2 : 4;
            void *a, *b;
            float *c, *cref;
            CK(cudaMalloc(&a, (size_t)m * k * el));
            CK(cudaMalloc(&b, (size_t)n * k * el));
            CK(cudaMalloc(&c, (size_t)m * n * 4));
            CK(cudaMalloc(&cref, (size_t)m * n * 4));
            fill_dev(a, (size_t)m * k, it == kBf16, 1000 + sz + it);
            fill_dev(b, (size_t)n * k, it == kBf16, 2000 + sz + it);
            const double flop = 2.0 * m * n * k;
            std::vector<int> vs;
            for (int vi = 0; vi < kNumVariants; ++vi)
                if (kVariants[vi].it == it &&
                    (only.empty() || std::find(only.begin(), only.end(), vi) != only.end()))
                    vs.push_back(vi);
            if (do_check) {
                std::vector<double> ha = to_double(a, (size_t)m * k, it == kBf16);
                std::vector<double> hb = to_double(b, (size_t)n * k, it == kBf16);
                std::vector<float> hr((size_t)m * n), hc((size_t)m * n);
                if (have_cublas) {
                    CK(cudaMemset(cref, 0xFF, (size_t)m * n * 4));
                    if (!cublas_gemm(it, m, n, k, 1.0f, a, k, b, k, 0.0f, cref, n))
                        printf("cuBLAS failed\n");
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(hr.data(), cref, hr.size() * 4, cudaMemcpyDeviceToHost));
                    long nf = 0;
                    const double rel = sampled_rel(ha, hb, hr, m, n, k, 5, &nf);
                    printf("  check cuBLAS %s %d: sampled rel %.3e nonfinite %ld\n",
                           it == kBf16 ? "bf16" : "tf32", sz, rel, nf);
                }
                for (int vi : vs) {
                    const Variant &v = kVariants[vi];
                    CK(cudaMemset(c, 0xFF, (size_t)m * n * 4));  // NaN poison
                    CK(run_variant(v, 0, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n, 0));
                    CK(cudaDeviceSynchronize());
                    CK(cudaMemcpy(hc.data(), c, hc.size() * 4, cudaMemcpyDeviceToHost));
                    long nf = 0, nf_all = 0;
                    const double rel = sampled_rel(ha, hb, hc, m, n, k, 5, &nf);
                    for (float x : hc) nf_all += !isfinite(x);
                    double dn = 0, dd = 0;
                    if (have_cublas)
                        for (size_t i = 0; i < hr.size(); ++i) {
                            const double d = (double)hc[i] - hr[i];
                            dn += d * d;
                            dd += (double)hr[i] * hr[i];
                        }
                    const double tol = it == kBf16 ? 1e-2 : v.tf32_map ? 5e-4 : 1e-3;
                    printf("  check %-24s %d: sampled rel %.3e, nonfinite %ld, vs cuBLAS rel %.3e  %s\n",
                           v.name, sz, rel, nf_all, have_cublas ? sqrt(dn / dd) : -1.0,
                           (rel <= tol && nf_all == 0) ? "PASS" : "FAIL");
                }
            }
            std::vector<float> t_cb(2, 0.0f);
            std::vector<std::vector<float>> t_v(vs.size(), std::vector<float>(2, 0.0f));
            for (int pass = 0; pass < 2; ++pass) {
                if (have_cublas)
                    t_cb[pass] = time_ms([&] { cublas_gemm(it, m, n, k, 1.0f, a, k, b, k, 0.0f, cref, n); });
                for (size_t q = 0; q < vs.size(); ++q)
                    t_v[q][pass] = time_ms([&] {
                        run_variant(kVariants[vs[q]], 0, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n, 0);
                    });
            }
            printf("%-26s %5s %9s %9s %8s %7s\n", "variant", "size", "ms pass1", "ms pass2", "TFLOP/s",
                   "ratio");
            const float cb = 0.5f * (t_cb[0] + t_cb[1]);
            if (have_cublas)
                printf("%-26s %5d %9.4f %9.4f %8.1f %7.3f\n", it == kBf16 ? "cuBLAS bf16" : "cuBLAS tf32",
                       sz, t_cb[0], t_cb[1], flop / cb / 1e9, 1.0);
            for (size_t q = 0; q < vs.size(); ++q) {
                const float tv = 0.5f * (t_v[q][0] + t_v[q][1]);
                printf("%-26s %5d %9.4f %9.4f %8.1f %7.3f\n", kVariants[vs[q]].name, sz, t_v[q][0],
                       t_v[q][1], flop / tv / 1e9, have_cublas ? cb / tv : 0.0);
            }
            CK(cudaFree(a));
            CK(cudaFree(b));
            CK(cudaFree(c));
            CK(cudaFree(cref));
        }
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "list";
    if (!strcmp(mode, "list")) {
        for (int i = 0; i < kNumVariants; ++i) printf("%d %s\n", i, kVariants[i].name);
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s cc %d.%d, %d SMs\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount);
    if (!strcmp(mode, "check")) {
        if (argc > 2) return check_variant(atoi(argv[2]));
        int f = 0;
        for (int i = 0; i < kNumVariants; ++i) f |= check_variant(i);
        return f;
    }
    std::vector<int> only;
    for (int i = 2; i < argc; ++i) only.push_back(atoi(argv[i]));
    if (!strcmp(mode, "big")) big_and_perf(true, only);
    else if (!strcmp(mode, "perf")) big_and_perf(false, only);
    else {
        printf("unknown mode %s\n", mode);
        return 1;
    }
    return 0;
}
