// Tensor-core GEMM with mma.sync (sm_80 and later): TF32 m16n8k8 and BF16 m16n8k16, FP32
// accumulation, behind cm_gemm() for CM_GEMM_TF32 / CM_GEMM_BF16 / CM_GEMM_BF16_OUT_BF16 where
// the Hopper wgmma kernel does not serve (kernels/gemm.h: internal form).
//
// Block tile BM x BN, K step BK = 64 bytes of each row (16 floats or 32 bf16), STAGES-deep
// cp.async pipeline (16-byte copies straight from global to shared memory, zero-filled past
// the matrix edges by the src-size operand, so any M, N, K works), warps of WM x WN each owning
// a (BM/WM) x (BN/WN) tile of mma fragments. Shared memory keeps each operand in its global
// orientation (K-contiguous or M/N-contiguous rows, padded by 16 bytes so fragment reads do not
// conflict); BF16 fragments come through ldmatrix (.trans for M/N-contiguous tiles), TF32
// fragments through 32-bit shared loads (ldmatrix moves 16-bit elements only) rounded with
// cvt.rna.tf32.f32. Needs A and B 16-byte aligned with leading dimensions (and, for a batch,
// strides) a multiple of 16 bytes (cm__gemm_mma_aligned); C any. A strided batch runs as
// gridDim.z, matrix blockIdx.z.
//
// The TF32 "align1" form (A1, built with CM__GEMM_MMA_ALIGN1: kernels/gemm.h) takes operands
// of any base and leading dimension: every element is its own 4-byte cp.async (zero-filled past
// the edges), the block's consecutive threads on consecutive elements of a row's contiguous
// dimension (a warp covers 128 bytes of two K-contiguous rows of BK, or of one M/N-contiguous
// row of 64 / 128), into the same shared layout; the rest of the kernel is the same. cuBLAS
// runs such operands likewise ("align1" kernels); without the form, the library copies them to
// 16-byte rows first (src/compute/gemm_api.c, the realignment).
#include <stdint.h>

#include <atomic>
#include <type_traits>

#include "func_attr.cuh"
#include "gemm.h"
#include "pdl.cuh"
#include "gemm_batch.cuh"
#include "gemm_elem.cuh"

namespace cm_gemm_mma_detail {

constexpr int kStages = 4;

template <int BM_, int BN_, int WM_, int WN_, bool BF16_>
struct MCfg {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_;
    static constexpr bool BF16 = BF16_;
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int E = BF16 ? 8 : 4;        // elements per 16-byte chunk
    static constexpr int ES = BF16 ? 2 : 4;       // element bytes
    static constexpr int BK = BF16 ? 32 : 16;     // 64 bytes of K per stage
    static constexpr int KSTEP = BF16 ? 16 : 8;   // K of one mma
    static constexpr int WTM = BM / WM, WTN = BN / WN;
    static constexpr int MT = WTM / 16, NT = WTN / 8;
    // shared strides (elements): K-contiguous rows of BK + E, M/N-contiguous rows of B? + 8
    static constexpr int SK = BK + E;
    static constexpr int SAM = BM + 8, SBN = BN + 8;
    static constexpr int A_ELEMS = (BM * SK > BK * SAM) ? BM * SK : BK * SAM;
    static constexpr int B_ELEMS = (BN * SK > BK * SBN) ? BN * SK : BK * SBN;
    static constexpr int STAGE_BYTES = (A_ELEMS + B_ELEMS) * ES;
    static constexpr int SMEM = STAGE_BYTES * kStages;
    static constexpr int CA = BM * BK / E / THREADS;  // 16-byte chunks per thread per stage
    static constexpr int CB = BN * BK / E / THREADS;
    static_assert(CA * THREADS * E == BM * BK && CB * THREADS * E == BN * BK, "whole chunks");
    static_assert(NT % 2 == 0, "B fragments in pairs of n-tiles");
};

struct MParams {
    int m, n, k;
    float alpha, beta;
    const void *a;
    long long lda;
    const void *b;
    long long ldb;
    void *c;
    long long ldc;
    long long sa, sb, sc;  // elements between the batch's matrices (matrix blockIdx.z)
    int c_bf16;
    int tiles_m, tiles_n;
    int klast; // > 0: K of the launch's last matrix (split-K's shorter last part, gemm.h)
};

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
#else
    (void)dst; (void)src; (void)src_bytes;
#endif
}
// 4 bytes, src_bytes 4 or 0 (0: zero-fill, nothing read); .ca: the 4-byte form has no .cg
__device__ __forceinline__ void cp_async4(uint32_t dst, const void *src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
#else
    (void)dst; (void)src; (void)src_bytes;
#endif
}
__device__ __forceinline__ void cp_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N> __device__ __forceinline__ void cp_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

__device__ __forceinline__ uint32_t to_tf32(float f) {
    uint32_t r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(f));
#else
    r = __float_as_uint(f);
#endif
    return r;
}

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t r[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
#else
    (void)addr; r[0] = r[1] = r[2] = r[3] = 0;
#endif
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t addr, uint32_t r[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
#else
    (void)addr; r[0] = r[1] = r[2] = r[3] = 0;
#endif
}

__device__ __forceinline__ void mma_tf32(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b;
#endif
}
__device__ __forceinline__ void mma_bf16(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d; (void)a; (void)b;
#endif
}

using cm_gemm_elem::f2bf;

// BATCHED: matrix blockIdx.z of a strided batch (pointers moved once, at the start and in the
// epilogue). The single-matrix instantiation has no batch offsets at all, so that its code is
// what it was before batches existed (with them ptxas allocates up to 34 more registers here).
// A1: the align1 form (TF32 only; see the top of the file). It carries code only for the
// architectures whose dispatch selects it (CM__GEMM_SM90_ONLY_BODY: sm_90, where it was
// measured; in a tuning build, every architecture; cm__gemm_mma_align1_for). Elsewhere its
// kernels are empty and cm__gemm_mma refuses the operands that need it (a1_usable): compiling
// it for the default list's seven sm_80+ architectures took gemm_mma.cu from 95 to 140 s of
// nvcc on a 2-core machine (bench/NOTES-gemm.md).
template <class C, bool A_K, bool B_K, bool BATCHED, bool A1>
__global__ void __launch_bounds__(C::THREADS) gemm_mma_kernel(const MParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (A1 && !CM__GEMM_SM90_ONLY_BODY) {
        (void)p; // no align1 code for this architecture: never launched (a1_usable)
    } else {
        static_assert(!(A1 && C::BF16),
                      "the align1 form is TF32 only (cp.async has no 2-byte size)");
        cm__pdl_launch_dependents(); // kernels/pdl.cuh
        // launched as a dependent of the operand staging (cm__gemm_args_t::pdl): its output
        // complete before A and B are read (nothing otherwise)
        cm__pdl_wait();
        extern __shared__ __align__(16) unsigned char smem[];
        using T = typename std::conditional<C::BF16, uint16_t, float>::type;

        constexpr int GROUP = 8;
        const int pid = (int)blockIdx.x;
        const int in_group = GROUP * p.tiles_n;
        const int first_m = (pid / in_group) * GROUP;
        const int gsize = min(p.tiles_m - first_m, GROUP);
        const int m0 = (first_m + (pid % in_group) % gsize) * C::BM;
        const int n0 = ((pid % in_group) / gsize) * C::BN;

        const int tid = (int)threadIdx.x, lane = tid & 31, warp = tid >> 5;
        const int wm0 = (warp / C::WN) * C::WTM, wn0 = (warp % C::WN) * C::WTN;
        const int g = lane >> 2, t = lane & 3;

        // matrix blockIdx.z of the batch, and its K (the last one may be shorter: split-K)
        const int K = BATCHED ? cm__gemm_k_of_block(p.k, p.klast) : p.k;
        const T *A = static_cast<const T *>(p.a) + (BATCHED ? (long long)blockIdx.z * p.sa : 0);
        const T *B = static_cast<const T *>(p.b) + (BATCHED ? (long long)blockIdx.z * p.sb : 0);

        auto sA = [&](int s) { return reinterpret_cast<T *>(smem + s * C::STAGE_BYTES); };
        auto sB = [&](int s) {
            return reinterpret_cast<T *>(smem + s * C::STAGE_BYTES + C::A_ELEMS * C::ES);
        };

        // one stage of the align1 form: A's elements then B's, thread i + j THREADS on element i +
        // j THREADS of the tile in the order of its contiguous dimension, zero-filled outside. A
        // thread's elements share their place along the contiguous dimension and sit THREADS /
        // (the tile's row length) rows apart: one pointer and one row check a row, moved by a
        // fixed stride (a pointer an element would double the kernel's registers).
        // side: the operand's M (A) or N (B); rows0: the tile's first row or column along it
        auto load_side_a1 = [&](T *sm, const T *X, long long ld, bool along_k, int rows0, int side,
                                int k0, int tile_len, int sstride, auto elems_c) {
            constexpr int ELEMS = decltype(elems_c)::value;
            // along K: rows along M / N of BK elements; else rows along K of tile_len elements
            const int row_len = along_k ? C::BK : tile_len;
            const int step = C::THREADS / row_len; // rows between a thread's elements
            const int r0 = tid / row_len, c0 = tid % row_len;
            // the global row (M / N along K, else K) and column of the thread's first element
            const int grow = along_k ? rows0 + r0 : k0 + r0;
            const int gcol = along_k ? k0 + c0 : rows0 + c0;
            const int row_end = along_k ? side : K, col_end = along_k ? K : side;
            // rows of the thread's elements inside the matrix (e * step < rows_left), 0 past K or
            // past the contiguous dimension's end: one comparison an element, no per-element flag
            const int rows_left = gcol < col_end ? row_end - grow : 0;
            const T *src = X + (long long)grow * ld + gcol;
            const long long src_step = (long long)step * ld;
            uint32_t dst = smem_addr(sm + r0 * sstride + c0);
            const uint32_t dst_step = (uint32_t)(step * sstride * (int)sizeof(T));
#pragma unroll
            for (int e = 0; e < ELEMS; ++e) {
                const bool ok = e * step < rows_left;
                cp_async4(dst, ok ? src : X, ok ? 4 : 0);
                src += src_step;
                dst += dst_step;
            }
        };
        auto load_stage_a1 = [&](int s, int k0) {
            constexpr int EA = C::BM * C::BK / C::THREADS, EB = C::BN * C::BK / C::THREADS;
            static_assert(EA * C::THREADS == C::BM * C::BK && EB * C::THREADS == C::BN * C::BK &&
                              C::THREADS % C::BK == 0 && C::THREADS % C::BM == 0 &&
                              C::THREADS % C::BN == 0,
                          "a thread's elements in whole rows of the tile");
            // A: rows m of BK (K-contiguous) or rows k of BM; B likewise with n
            load_side_a1(sA(s), A, p.lda, A_K, m0, p.m, k0, C::BM, A_K ? C::SK : C::SAM,
                         std::integral_constant<int, EA>());
            load_side_a1(sB(s), B, p.ldb, B_K, n0, p.n, k0, C::BN, B_K ? C::SK : C::SBN,
                         std::integral_constant<int, EB>());
        };

        // one operand's 16-byte chunks of a stage, zero-filled outside the matrix: along K, rows
        // along M / N (side: their count; rows0: the tile's first) of BK elements; else rows
        // along K of tile_len elements. sstride: the shared tile's row stride in elements.
        auto load_side16 = [&](T *sm, const T *X, long long ld, bool along_k, int rows0, int side,
                               int k0, int tile_len, int sstride, auto chunks_c) {
            constexpr int CHUNKS = decltype(chunks_c)::value;
#pragma unroll
            for (int i = 0; i < CHUNKS; ++i) {
                const int idx = tid + i * C::THREADS;
                int valid = 0;
                const T *src = X;
                uint32_t dst;
                if (along_k) { // rows m / n, chunks along k
                    const int r = idx / (C::BK / C::E), kc = (idx % (C::BK / C::E)) * C::E;
                    const int gr = rows0 + r, gk = k0 + kc;
                    if (gr < side && gk < K) {
                        valid = min(C::E, K - gk);
                        src = X + (long long)gr * ld + gk;
                    }
                    dst = smem_addr(sm + r * sstride + kc);
                } else { // rows k, chunks along m / n
                    const int r = idx / (tile_len / C::E), rc = (idx % (tile_len / C::E)) * C::E;
                    const int gk = k0 + r, gr = rows0 + rc;
                    if (gk < K && gr < side) {
                        valid = min(C::E, side - gr);
                        src = X + (long long)gk * ld + gr;
                    }
                    dst = smem_addr(sm + r * sstride + rc);
                }
                cp_async16(dst, src, valid * C::ES);
            }
        };
        // one stage: A chunks then B chunks
        auto load_stage16 = [&](int s, int k0) {
            load_side16(sA(s), A, p.lda, A_K, m0, p.m, k0, C::BM, A_K ? C::SK : C::SAM,
                        std::integral_constant<int, C::CA>());
            load_side16(sB(s), B, p.ldb, B_K, n0, p.n, k0, C::BN, B_K ? C::SK : C::SBN,
                        std::integral_constant<int, C::CB>());
        };
        auto load_stage = [&](int s, int k0) {
            if constexpr (A1)
                load_stage_a1(s, k0);
            else
                load_stage16(s, k0);
        };

        float acc[C::MT][C::NT][4];
#pragma unroll
        for (int i = 0; i < C::MT; ++i)
#pragma unroll
            for (int j = 0; j < C::NT; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

        const int ktiles = (K + C::BK - 1) / C::BK;
#pragma unroll
        for (int s = 0; s < kStages - 1; ++s) {
            if (s < ktiles) load_stage(s, s * C::BK);
            cp_commit();
        }

        for (int kt = 0; kt < ktiles; ++kt) {
            cp_wait<kStages - 2>();
            __syncthreads();
            {
                const int nk = kt + kStages - 1;
                if (nk < ktiles) load_stage(nk % kStages, nk * C::BK);
                cp_commit();
            }
            const int s = kt % kStages;
            const T *a_s = sA(s), *b_s = sB(s);
#pragma unroll
            for (int ks = 0; ks < C::BK; ks += C::KSTEP) {
                uint32_t af[C::MT][4], bfr[C::NT][2];
                if constexpr (C::BF16) {
                    const int r = lane & 7, j = lane >> 3;
#pragma unroll
                    for (int mt = 0; mt < C::MT; ++mt) {
                        const int mb = wm0 + mt * 16;
                        if (A_K) {
                            const int mm = mb + r + (j & 1) * 8, kk = ks + (j >> 1) * 8;
                            ldsm_x4(smem_addr(a_s + mm * C::SK + kk), af[mt]);
                        } else {
                            const int kk = ks + r + (j >> 1) * 8, mm = mb + (j & 1) * 8;
                            ldsm_x4_t(smem_addr(a_s + kk * C::SAM + mm), af[mt]);
                        }
                    }
#pragma unroll
                    for (int nt = 0; nt < C::NT; nt += 2) {
                        const int nb = wn0 + nt * 8;
                        uint32_t r4[4];
                        if (B_K) {
                            const int nn = nb + r + (j >> 1) * 8, kk = ks + (j & 1) * 8;
                            ldsm_x4(smem_addr(b_s + nn * C::SK + kk), r4);
                        } else {
                            const int kk = ks + r + (j & 1) * 8, nn = nb + (j >> 1) * 8;
                            ldsm_x4_t(smem_addr(b_s + kk * C::SBN + nn), r4);
                        }
                        bfr[nt][0] = r4[0];
                        bfr[nt][1] = r4[1];
                        bfr[nt + 1][0] = r4[2];
                        bfr[nt + 1][1] = r4[3];
                    }
#pragma unroll
                    for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
                        for (int nt = 0; nt < C::NT; ++nt) mma_bf16(acc[mt][nt], af[mt], bfr[nt]);
                } else {
                    auto a_at = [&](int m, int k) -> float {
                        return A_K ? a_s[m * C::SK + k] : a_s[k * C::SAM + m];
                    };
                    auto b_at = [&](int k, int n) -> float {
                        return B_K ? b_s[n * C::SK + k] : b_s[k * C::SBN + n];
                    };
#pragma unroll
                    for (int mt = 0; mt < C::MT; ++mt) {
                        const int mb = wm0 + mt * 16;
                        af[mt][0] = to_tf32(a_at(mb + g, ks + t));
                        af[mt][1] = to_tf32(a_at(mb + g + 8, ks + t));
                        af[mt][2] = to_tf32(a_at(mb + g, ks + t + 4));
                        af[mt][3] = to_tf32(a_at(mb + g + 8, ks + t + 4));
                    }
#pragma unroll
                    for (int nt = 0; nt < C::NT; ++nt) {
                        const int nb = wn0 + nt * 8;
                        bfr[nt][0] = to_tf32(b_at(ks + t, nb + g));
                        bfr[nt][1] = to_tf32(b_at(ks + t + 4, nb + g));
                    }
#pragma unroll
                    for (int mt = 0; mt < C::MT; ++mt)
#pragma unroll
                        for (int nt = 0; nt < C::NT; ++nt) mma_tf32(acc[mt][nt], af[mt], bfr[nt]);
                }
            }
        }
        cp_wait<0>();

        // epilogue: fragment (g, 2t..2t+1) and (g+8, ...)
        const long long c0 = BATCHED ? (long long)blockIdx.z * p.sc : 0;
#pragma unroll
        for (int mt = 0; mt < C::MT; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int gm = m0 + wm0 + mt * 16 + g + h * 8;
                if (gm >= p.m) continue;
                const long long row = c0 + (long long)gm * p.ldc;
                // a thread's column pairs start on even columns, so they share this row's
                // alignment: one store a pair where the row starts on an even element
                const uintptr_t esize = p.c_bf16 ? 2 : 4;
                const bool row_pairs = ((uintptr_t)p.c / esize + (uintptr_t)row) % 2 == 0;
#pragma unroll
                for (int nt = 0; nt < C::NT; ++nt) {
                    const int gn = n0 + wn0 + nt * 8 + 2 * t;
                    if (gn >= p.n) continue;
                    float v0 = p.alpha * acc[mt][nt][h * 2];
                    float v1 = p.alpha * acc[mt][nt][h * 2 + 1];
                    const bool pair = row_pairs && gn + 1 < p.n;
                    if (p.c_bf16) {
                        uint16_t *cp = static_cast<uint16_t *>(p.c) + row + gn;
                        if (pair) {
                            uint32_t *cp2 = reinterpret_cast<uint32_t *>(cp);
                            if (p.beta != 0.0f) {
                                const uint32_t old = *cp2;
                                v0 = fmaf(p.beta, __uint_as_float(old << 16), v0);
                                v1 = fmaf(p.beta, __uint_as_float(old & 0xffff0000u), v1);
                            }
                            *cp2 = (uint32_t)f2bf(v0) | ((uint32_t)f2bf(v1) << 16);
                        } else {
                            if (p.beta != 0.0f)
                                v0 = fmaf(p.beta, __uint_as_float((uint32_t)cp[0] << 16), v0);
                            cp[0] = f2bf(v0);
                            if (gn + 1 < p.n) {
                                if (p.beta != 0.0f)
                                    v1 = fmaf(p.beta, __uint_as_float((uint32_t)cp[1] << 16), v1);
                                cp[1] = f2bf(v1);
                            }
                        }
                    } else {
                        float *cp = static_cast<float *>(p.c) + row + gn;
                        if (pair) {
                            float2 *cp2 = reinterpret_cast<float2 *>(cp);
                            if (p.beta != 0.0f) {
                                const float2 old = *cp2;
                                v0 = fmaf(p.beta, old.x, v0);
                                v1 = fmaf(p.beta, old.y, v1);
                            }
                            *cp2 = make_float2(v0, v1);
                        } else {
                            if (p.beta != 0.0f) v0 = fmaf(p.beta, cp[0], v0);
                            cp[0] = v0;
                            if (gn + 1 < p.n) {
                                if (p.beta != 0.0f) v1 = fmaf(p.beta, cp[1], v1);
                                cp[1] = v1;
                            }
                        }
                    }
                }
            }
        }
    }
#else
    (void)p;
#endif
}

using M128x128_T = MCfg<128, 128, 2, 4, false>;
using M128x64_T = MCfg<128, 64, 2, 2, false>;
using M64x64_T = MCfg<64, 64, 2, 2, false>;
using M128x128_B = MCfg<128, 128, 2, 4, true>;
using M128x64_B = MCfg<128, 64, 2, 2, true>;
using M64x64_B = MCfg<64, 64, 2, 2, true>;

// The dynamic shared-memory limit of an instantiation, raised once per device.
// (both instantiations: single matrix and batch)
template <class C, bool A_K, bool B_K, bool A1>
cudaError_t launch_one(const MParams &p, int batch, bool pdl, cudaStream_t stream) {
    static cm__once_per_device once;
    const cudaError_t err = cm__prepare_once(once, [](int) {
        cudaError_t e = cudaFuncSetAttribute(gemm_mma_kernel<C, A_K, B_K, false, A1>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(gemm_mma_kernel<C, A_K, B_K, true, A1>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM);
        return e;
    });
    if (err != cudaSuccess) return err;
    const dim3 grid((unsigned)((long long)p.tiles_m * p.tiles_n), 1, (unsigned)batch);
    return cm__pdl_launch(pdl,
                          batch > 1 ? gemm_mma_kernel<C, A_K, B_K, true, A1>
                                    : gemm_mma_kernel<C, A_K, B_K, false, A1>,
                          grid, dim3(C::THREADS), C::SMEM, stream, p);
}

// One launch: g->batch matrices (at most CM__GEMM_MAX_BATCH_PER_LAUNCH); A1: the align1 form.
template <class C, bool A1 = false>
cudaError_t launch(const cm__gemm_args_t *g, cudaStream_t stream) {
    MParams p;
    p.m = g->m;
    p.n = g->n;
    p.k = g->k;
    p.alpha = g->alpha;
    p.beta = g->beta;
    p.a = g->a;
    p.lda = g->lda;
    p.b = g->b;
    p.ldb = g->ldb;
    p.c = g->c;
    p.ldc = g->ldc;
    p.sa = g->stride_a;
    p.sb = g->stride_b;
    p.sc = g->stride_c;
    p.c_bf16 = g->out_type == CM__GEMM_BF16;
    p.klast = g->k_last;
    const long long tm = ((long long)g->m + C::BM - 1) / C::BM;
    const long long tn = ((long long)g->n + C::BN - 1) / C::BN;
    if (tm * tn > 0x7fffffffLL || tm * tn <= 0) return cudaErrorInvalidValue;
    p.tiles_m = (int)tm;
    p.tiles_n = (int)tn;
    const bool pdl = g->pdl != 0;
    const int nb = g->batch;
    if (g->a_kmajor && g->b_kmajor) return launch_one<C, true, true, A1>(p, nb, pdl, stream);
    if (g->a_kmajor) return launch_one<C, true, false, A1>(p, nb, pdl, stream);
    if (g->b_kmajor) return launch_one<C, false, true, A1>(p, nb, pdl, stream);
    return launch_one<C, false, false, A1>(p, nb, pdl, stream);
}

// The virtual (ptxVersion: __CUDA_ARCH__ of its code) and binary architecture of the current
// device's image of `kernel`; cudaErrorNotSupported (the error cleared) when the library carries
// none for the device.
template <class F>
static cudaError_t image_versions(F *kernel, int *ptx, int *bin) {
    cudaFuncAttributes attr;
    const cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
        (void)cudaGetLastError();
        return cudaErrorNotSupported;
    }
    if (err != cudaSuccess) return err;
    *ptx = attr.ptxVersion;
    *bin = attr.binaryVersion;
    return cudaSuccess;
}

// Whether the current device runs the mma kernels: sm_80+, and the image it runs was built for
// sm_80+ (a library built for sm_75 only would run the empty sm_75 body). Once per device
// (kernels/func_attr.cuh).
cudaError_t mma_usable(void) {
    static cm__once_per_device once;
    return cm__prepare_once(once, [](int dev) {
        int major = 0, ptx = 0, bin = 0;
        cudaError_t err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
        if (err != cudaSuccess) return err;
        if (major < 8) return cudaErrorNotSupported;
        err = image_versions(gemm_mma_kernel<M64x64_T, true, true, false, false>, &ptx, &bin);
        if (err != cudaSuccess) return err;
        /* ptxVersion is the virtual architecture also for an image JIT-compiled from older
         * PTX, whose binaryVersion is the device's: a compute_75 image run on sm_90 has empty
         * mma.sync bodies and must not be used */
        return ptx >= 80 && bin >= 80 ? cudaSuccess : cudaErrorNotSupported;
    });
}

// Whether the current device's image of the align1 form has code (CM__GEMM_SM90_ONLY_BODY).
// Once per device.
cudaError_t a1_usable(void) {
    static cm__once_per_device once;
    return cm__prepare_once(once, [](int) {
        int ptx = 0, bin = 0;
        const cudaError_t err =
            image_versions(gemm_mma_kernel<M64x64_T, true, true, false, true>, &ptx, &bin);
        if (err != cudaSuccess) return err;
        return cm__gemm_sm90_only_has_code(ptx) ? cudaSuccess : cudaErrorNotSupported;
    });
}

// The 128 x 64 tile is not in the dispatch table: its kernels are compiled for tuning builds
// only (BUILT: CM_GEMM_TUNING; a discarded `if constexpr` branch of a template instantiates no
// kernel).
template <bool BUILT>
cudaError_t launch_128x64(const cm__gemm_args_t *q, bool bf16, cudaStream_t stream) {
    if constexpr (BUILT) {
        return bf16 ? launch<M128x64_B>(q, stream) : launch<M128x64_T>(q, stream);
    } else {
        (void)q;
        (void)bf16;
        (void)stream;
        return cudaErrorNotSupported;
    }
}

// The TF32 align1 form of the 128 x 128 and 64 x 64 tiles: compiled with CM__GEMM_MMA_ALIGN1
// only (BUILT), like launch_128x64.
template <bool BUILT>
cudaError_t launch_align1(const cm__gemm_args_t *q, int config, cudaStream_t stream) {
    if constexpr (BUILT) {
        return config == CM__MMA_128x128 ? launch<M128x128_T, true>(q, stream)
                                         : launch<M64x64_T, true>(q, stream);
    } else {
        (void)q;
        (void)config;
        (void)stream;
        return cudaErrorNotSupported;
    }
}

}  // namespace cm_gemm_mma_detail
using namespace cm_gemm_mma_detail;

extern "C" void cm__gemm_mma_tile(int config, int *bm, int *bn) {
    int m = 0, n = 0;
    switch (config) {
    case CM__MMA_128x128: m = 128; n = 128; break;
    case CM__MMA_128x64: m = 128; n = 64; break;
    case CM__MMA_64x64: m = 64; n = 64; break;
    default: break;
    }
    if (bm) *bm = m;
    if (bn) *bn = n;
}

extern "C" int cm__gemm_mma_built(int config) {
    return config == CM__MMA_128x128 || config == CM__MMA_64x64 ||
           (config == CM__MMA_128x64 && CM_GEMM_TUNING);
}

extern "C" int cm__gemm_mma_aligned(const cm__gemm_args_t *p) {
    if (p == NULL) return 0;
    const long long e = p->in_type == CM__GEMM_BF16 ? 8 : 4; // elements per 16 bytes
    // a batch: every matrix's base too (stride_a, stride_b in whole 16-byte units)
    const bool strides = p->batch <= 1 || (p->stride_a % e == 0 && p->stride_b % e == 0);
    return (uintptr_t)p->a % 16u == 0 && (uintptr_t)p->b % 16u == 0 && p->lda % e == 0 &&
           p->ldb % e == 0 && strides;
}

extern "C" int cm__gemm_mma_align1_built(void) { return CM__GEMM_MMA_ALIGN1 != 0; }

extern "C" int cm__gemm_mma_align1_for(int major) {
    return CM__GEMM_MMA_ALIGN1 != 0 && (CM_GEMM_TUNING != 0 || major == 9);
}

extern "C" cudaError_t cm__gemm_mma(const cm__gemm_args_t *g, int tf32, int config,
                                    cudaStream_t stream) {
    if (g == NULL || g->m <= 0 || g->n <= 0 || g->k < 0) return cudaErrorInvalidValue;
    const bool bf16 = g->in_type == CM__GEMM_BF16;
    // operands without 16-byte rows: the TF32 align1 form where built, of whole floats
    const bool align1 = !cm__gemm_mma_aligned(g);
    if (align1 && (bf16 || !cm__gemm_mma_align1_built() ||
                   (config != CM__MMA_128x128 && config != CM__MMA_64x64) ||
                   (uintptr_t)g->a % 4u != 0 || (uintptr_t)g->b % 4u != 0))
        return cudaErrorNotSupported;
    if (!bf16 && !tf32) return cudaErrorNotSupported; // FP32 never runs on tensor cores
    cudaError_t err = mma_usable();
    if (err != cudaSuccess) return err;
    if (config < 0 || config >= CM__MMA_COUNT) return cudaErrorInvalidValue;
    if (!cm__gemm_mma_built(config)) return cudaErrorNotSupported;
    if (align1 && (err = a1_usable()) != cudaSuccess) return err;
    if (align1)
        return cm__gemm_for_each_launch(g, [&](const cm__gemm_args_t *q) {
            return launch_align1<CM__GEMM_MMA_ALIGN1 != 0>(q, config, stream);
        });
    return cm__gemm_for_each_launch(g, [&](const cm__gemm_args_t *q) {
        switch (config) {
        case CM__MMA_128x128:
            return bf16 ? launch<M128x128_B>(q, stream) : launch<M128x128_T>(q, stream);
        case CM__MMA_128x64:
            return launch_128x64<CM_GEMM_TUNING != 0>(q, bf16, stream);
        default:
            return bf16 ? launch<M64x64_B>(q, stream) : launch<M64x64_T>(q, stream);
        }
    });
}
