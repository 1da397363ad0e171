// FP32 GEMM on CUDA cores (FFMA only: the "SGEMM" contract of CM_GEMM_FP32), behind cm_gemm()
// (include/cudamodel/kernels.h). Also the sm_75 fallback of the BF16 precisions (bf16 inputs
// widened to float as they are loaded). Internal form: kernels/gemm.h.
//
// ---------------------------------------------------------------------------------------------
// A tour of the tiling ("shared memory as a cache for data reuse", examples/matmul.c points here)
//
// A naive kernel computes each C element with its own thread: K loads of A and K loads of B per
// 2K flops, a byte moved per 0.5 flop, so it runs at memory speed (a few TFLOP/s at most). The
// whole game is reuse: every element of A is needed by N outputs and every element of B by M.
//
// 1. Block tile (global -> shared). A block of THREADS threads owns a BM x BN tile of C (128 x
//    128 by default). It walks K in steps of BK (8 or 16): each step the block copies a BM x BK
//    slab of A and a BK x BN slab of B into shared memory ONCE, then every thread reads them
//    from there many times. Global traffic per step: (BM + BN) * BK elements for BM * BN * BK
//    multiply-adds, i.e. 128*128*8 / (256*8) = 64 FMAs per element loaded (vs 0.5 naive).
//    Loads are 16 bytes (float4) when the leading dimension and the base allow it, each thread
//    loading a fixed group of 4; a transposed operand (K contiguous for A, N... see below) is
//    transposed on the way into shared memory, so the inner loop sees one layout only:
//    As[k][m] and Bs[k][n], both "row of the k-th step" contiguous in m / n.
// 2. Thread tile (shared -> registers). Each thread owns TM x TN outputs (8 x 8) in registers.
//    Per k it loads TM values of A (a column of As) and TN values of B (a row of Bs) into
//    registers -- 16 floats, as four 16-byte shared loads -- and does TM * TN = 64 FFMAs with
//    them: an outer product. 64 FMAs per 16 shared-memory words, so shared memory bandwidth is
//    not the limit; the FFMA issue rate is.
//    The TM rows of a thread are not contiguous: they are TM/4 chunks of 4 spaced BM/(TM/4)
//    apart (rows ty*4 .. ty*4+3 and ty*4+64 .. +67 for 128 x 128). With the 32 threads of a
//    warp laid out 4 (m) x 8 (n), the 8 threads along n read 8 consecutive float4 of Bs (128
//    bytes: one shared-memory wavefront, no bank conflict) and the 4 along m read 4 float4 of
//    As that the other lanes share (broadcast).
// 3. Double buffering. Two copies of each shared slab: while the block computes on buffer b,
//    every thread has already issued its global loads of the next slab into registers; it
//    stores them into buffer b^1 after the math, and one __syncthreads() per K step separates
//    the steps. Global latency hides behind 8 or 16 k-steps of FFMAs.
// 4. Shared-memory padding. Rows of As / Bs are BM + 4 floats long: 16-byte loads stay aligned
//    and the transposing stores (4 threads writing one column each) land in distinct banks.
// 5. Tails. Any M, N, K: loads outside the matrix read 0 (so they add nothing) and stores
//    outside are skipped; a 16-byte load or store is used only where all 4 elements are inside
//    and aligned, else 4 predicated scalar accesses.
// 6. Epilogue: C = alpha * acc + beta * C, with C not read at all when beta == 0 (NaN in C never
//    leaks), 16-byte stores along n.
// 7. Grid order: tiles are numbered in groups of 8 tile-rows (row-major within a group) so that
//    consecutive blocks share A slabs and B slabs in L2.
// Choosing the tile: bigger tiles reuse more (128 x 256: 85 FMAs per element) but give fewer
// blocks; a 512 x 512 C has only 16 tiles of 128 x 128 for 132 multiprocessors, so small shapes
// take 64 x 64 or 32 x 64 tiles. src/gemm_api.c picks from a table `bench_gemm --tune` produced.
// ---------------------------------------------------------------------------------------------
#include <stdint.h>

#include <type_traits>

#include "func_attr.cuh"
#include "gemm.h"
#include "pdl.cuh"
#include "gemm_batch.cuh"
#include "gemm_elem.cuh"

namespace {

// FAST_: blocks whose tile lies wholly inside M x N load full K steps with 16-byte loads at
// 32-bit offsets fixed per thread from one base pointer stepped per K tile (no predicates, no
// 64-bit index products in the loop); the tails and misaligned operands keep the general path.
// WTX_: threads of a warp along n (8: a warp covers 4 x 8 thread tiles, 4: 8 x 4).
// (nv_diag 177, "declared but never referenced": a tile whose kernels carry no code for the
// architecture being compiled, CM__FFMA_PIPE_BODY below, references none of its members there)
#pragma nv_diag_suppress 177
template <int BM_, int BN_, int BK_, int TM_, int TN_, int MINB_, bool FAST_ = false,
          int WTX_ = 8>
struct Cfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, MINB = MINB_;
    static constexpr bool FAST = FAST_;
    static constexpr int WTX = WTX_;           // threads of a warp along n
    static constexpr int WTY = 32 / WTX;       // ... along m
    static constexpr int TX = BN / TN, TY = BM / TM, THREADS = TX * TY;
    static constexpr int WARPS_N = TX / WTX;
    static constexpr int CM = TM / 4, CN = TN / 4;      // 4-wide chunks of a thread tile
    static constexpr int SM = BM / CM, SN = BN / CN;    // distance between chunks
    static constexpr int PA = BM + 4, PB = BN + 4;      // shared row strides (floats)
    static constexpr int LA = BM * BK / 4 / THREADS;    // 4-element groups each thread loads
    static constexpr int LB = BN * BK / 4 / THREADS;
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tile in chunks of 4");
    static_assert(TX % WTX == 0 && TY % WTY == 0, "whole warps");
    static_assert(LA >= 1 && LB >= 1 && LA * THREADS * 4 == BM * BK && LB * THREADS * 4 == BN * BK,
                  "every thread loads whole groups");
    static_assert(BK % 4 == 0, "BK in groups of 4");
};
#pragma nv_diag_default 177

// Whether tile C's general kernel takes a shorter last matrix (Params::klast) itself: the tiles
// below 128 x 128 do; with the 128 x 128 ones at their register cap (2 blocks a multiprocessor)
// ptxas spilled 16-28 bytes in the batch kernels (sm_90a, nvcc 13.0), so their launcher runs
// that matrix as a launch of its own.
template <class C> __host__ __device__ constexpr bool takes_klast() {
    return C::BM * C::BN < 128 * 128;
}

// One kernel tile type per configuration of the table (kernels/gemm.h): Tile_128x128x8 ...
// Declaring the alias instantiates nothing; only the launcher's cases of built configurations do.
// (The 128-thread 16 x 8 thread tiles of the "t" configurations make warps of 64 x 64, as
// cuBLAS's sm80 FFMA kernel "128x128x8_stage3_warpsize2x2x1" that ncu showed on the H200: 6
// LDS.128 per 128 FFMAs.)
#define CM__FFMA_TILE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship)       \
    using Tile_##id =                                                                         \
        Cfg<bm, bn, bk, tm, tn, minb, CM__FFMA_FORM_##form != CM__FFMA_FORM_GENERAL, wtx>;
CM__FFMA_CONFIGS(CM__FFMA_TILE_)
#undef CM__FFMA_TILE_

struct Params {
    int m, n, k;
    float alpha, beta;
    const void *a;
    long long lda;
    const void *b;
    long long ldb;
    void *c;
    long long ldc;
    long long sa, sb, sc; // elements between the batch's matrices (matrix blockIdx.z)
    int veca, vecb, vecc; // 4-element vector accesses allowed (alignment and leading dimension,
                          // of every matrix of the batch)
    int fasta, fastb;     // veca / vecb and every in-tile offset of the slab fits in 32 bits
    int tiles_m, tiles_n;
    int klast;            // > 0: K of the launch's last matrix (split-K's shorter last part,
                          // kernels/gemm.h); the general, edge and bounded pipelined
                          // kernels take it
};

using cm_gemm_elem::f2bf;
using cm_gemm_elem::to_f;

// Four consecutive elements as floats (vector load: caller checked alignment and range).
__device__ __forceinline__ void load4(const float *p, float v[4]) {
    const float4 q = __ldg(reinterpret_cast<const float4 *>(p));
    v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
__device__ __forceinline__ void load4(const uint16_t *p, float v[4]) {
    const uint2 q = __ldg(reinterpret_cast<const uint2 *>(p));
    v[0] = __uint_as_float(q.x << 16);
    v[1] = __uint_as_float(q.x & 0xffff0000u);
    v[2] = __uint_as_float(q.y << 16);
    v[3] = __uint_as_float(q.y & 0xffff0000u);
}

// Load one group of 4 elements of a K x R operand slab into v: 'KMAJOR' means the group runs
// along k (element (r, k..k+3) at p[r*ld + k]), else along r (element (k, r..r+3) at
// p[k*ld + r]). rows / cols bound r and k. Out-of-range elements read as 0.
template <bool KMAJOR, typename T>
__device__ __forceinline__ void load_group(const T *base, long long ld, int r, int kk, int rows,
                                           int kdim, int vec, float v[4]) {
    if (KMAJOR) {
        const bool rok = r < rows;
        const T *p = base + (rok ? (long long)r * ld + kk : 0);
        if (rok && vec && kk + 3 < kdim) {
            load4(p, v);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) v[q] = (rok && kk + q < kdim) ? to_f(p[q]) : 0.0f;
        }
    } else {
        const bool kok = kk < kdim;
        const T *p = base + (kok ? (long long)kk * ld + r : 0);
        if (kok && vec && r + 3 < rows) {
            load4(p, v);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) v[q] = (kok && r + q < rows) ? to_f(p[q]) : 0.0f;
        }
    }
}

__device__ __forceinline__ void store_out(float *c, long long i, const float *v, int count,
                                          bool vec, float beta) {
    if (vec && count == 4) {
        float4 o = make_float4(v[0], v[1], v[2], v[3]);
        if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4 *>(c + i);
            o.x = fmaf(beta, old.x, o.x);
            o.y = fmaf(beta, old.y, o.y);
            o.z = fmaf(beta, old.z, o.z);
            o.w = fmaf(beta, old.w, o.w);
        }
        *reinterpret_cast<float4 *>(c + i) = o;
        return;
    }
    for (int q = 0; q < count; ++q) {
        float o = v[q];
        if (beta != 0.0f) o = fmaf(beta, c[i + q], o);
        c[i + q] = o;
    }
}

__device__ __forceinline__ void store_out(uint16_t *c, long long i, const float *v, int count,
                                          bool vec, float beta) {
    if (vec && count == 4) {
        float o[4] = {v[0], v[1], v[2], v[3]};
        uint2 *p = reinterpret_cast<uint2 *>(c + i);
        if (beta != 0.0f) {
            const uint2 old = *p;
            o[0] = fmaf(beta, __uint_as_float(old.x << 16), o[0]);
            o[1] = fmaf(beta, __uint_as_float(old.x & 0xffff0000u), o[1]);
            o[2] = fmaf(beta, __uint_as_float(old.y << 16), o[2]);
            o[3] = fmaf(beta, __uint_as_float(old.y & 0xffff0000u), o[3]);
        }
        uint2 r;
        r.x = (uint32_t)f2bf(o[0]) | ((uint32_t)f2bf(o[1]) << 16);
        r.y = (uint32_t)f2bf(o[2]) | ((uint32_t)f2bf(o[3]) << 16);
        *p = r;
        return;
    }
    for (int q = 0; q < count; ++q) {
        float o = v[q];
        if (beta != 0.0f) o = fmaf(beta, to_f(c[i + q]), o);
        c[i + q] = f2bf(o);
    }
}

// The epilogue of a tile whose C has no 16-byte rows (Params::vecc == 0): the thread-tile
// layout stores such C element by element, a warp store writing 8 elements 16 bytes apart in
// each of 4 rows (4 x 4-5 sectors for 32 elements, every sector written 4 times). Here the
// tile goes through shared memory RC rows at a time (cs: CAP floats of the kernel's operand
// buffers, free after the main loop's last barrier; rows of BN + 4 floats, so that each
// thread's 16-byte writes of a row are conflict-free by quarter-warp), and the block then
// writes each row as runs of consecutive elements (a warp store: 32 consecutive elements of
// one row, 4-5 sectors). Rows and columns past M and N are skipped; beta == 0 reads nothing
// of C.
// Only the general kernels of the small tiles take it: in the pipelined and edge kernels it
// moved the main loops' schedules and lost more on aligned shapes (FP32 4096^3 TN, 3001^3)
// than it gained on unaligned ones (bench/NOTES-gemm.md).
template <class C, int CAP, typename TOut>
__device__ __forceinline__ void rows_out(const Params &p, TOut *Cp, float *cs, int m0, int n0,
                                         int tx, int ty, const float (&acc)[C::TM][C::TN]) {
    constexpr int LD = C::BN + 4;
    constexpr int RC = CAP / LD;   // rows a pass
    static_assert(RC >= 4, "at least a thread row a pass");
    const int tid = (int)threadIdx.x;
#pragma unroll 1
    for (int pb = 0; pb < C::BM; pb += RC) {
#pragma unroll
        for (int ci = 0; ci < C::CM; ++ci)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int tr = ci * C::SM + ty * 4 + r - pb;
                if (tr < 0 || tr >= RC) continue;
#pragma unroll
                for (int cj = 0; cj < C::CN; ++cj)
                    *reinterpret_cast<float4 *>(&cs[tr * LD + cj * C::SN + tx * 4]) =
                        make_float4(acc[ci * 4 + r][cj * 4 + 0], acc[ci * 4 + r][cj * 4 + 1],
                                    acc[ci * 4 + r][cj * 4 + 2], acc[ci * 4 + r][cj * 4 + 3]);
            }
        __syncthreads();
        const int rows = min(RC, min(C::BM - pb, p.m - m0 - pb)), cols = min(C::BN, p.n - n0);
#pragma unroll 1
        for (int idx = tid; idx < rows * C::BN; idx += C::THREADS) {
            const int tr = idx / C::BN, tc = idx % C::BN;
            if (tc >= cols) continue;
            TOut *const c = Cp + (long long)(m0 + pb + tr) * p.ldc + (n0 + tc);
            float v = p.alpha * cs[tr * LD + tc];
            if (p.beta != 0.0f) v = fmaf(p.beta, to_f(*c), v);
            if constexpr (sizeof(TOut) == 2)
                *c = f2bf(v);
            else
                *c = v;
        }
        __syncthreads();
    }
}

// ---- the tile order and thread placement every kernel below shares. (The FFMA step and the
// epilogue stay written out in each kernel: as shared inline functions taking the accumulators
// by reference they changed ptxas's sm_90a code of 44 of the 76 kernels, where these two
// helpers leave every kernel's code byte-identical.)

// The origin (m0, n0) in C of block blockIdx.x's tile: grouped order, 8 tile-rows per group,
// for L2 reuse (the tour's point 7).
template <class C>
__device__ __forceinline__ void tile_origin(const Params &p, int &m0, int &n0) {
    constexpr int GROUP = 8;
    const int pid = (int)blockIdx.x;
    const int in_group = GROUP * p.tiles_n;
    const int first_m = (pid / in_group) * GROUP;
    const int gsize = min(p.tiles_m - first_m, GROUP);
    const int tile_m = first_m + (pid % in_group) % gsize;
    const int tile_n = (pid % in_group) / gsize;
    m0 = tile_m * C::BM;
    n0 = tile_n * C::BN;
}

// The thread's place in the block tile: tx along n, ty along m (warps of WTY x WTX threads).
template <class C> __device__ __forceinline__ void thread_place(int &tx, int &ty) {
    const int tid = (int)threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    tx = (warp % C::WARPS_N) * C::WTX + (lane % C::WTX);
    ty = (warp / C::WARPS_N) * C::WTY + (lane / C::WTX);
}

// ALL_FAST: the launcher checked that every block's tile and every K tile is whole and that
// both operands take the fast loads (C::FAST, p.fasta, p.fastb): no general path compiled in.
// BATCHED: matrix blockIdx.z of a strided batch (pointers moved once, at the start and in the
// epilogue). The single-matrix instantiation has no batch offsets at all: with them the
// kernels at their register cap spill (nvcc 13.0: the bf16-input 128x128x8 ones on sm_75 and
// sm_80, ALL_FAST on sm_90). A batch runs the general form, never ALL_FAST.
template <class C, bool A_KMAJOR, bool B_KMAJOR, bool ALL_FAST, bool BATCHED, typename TIn,
          typename TOut>
__global__ void __launch_bounds__(C::THREADS, C::MINB) gemm_ffma_kernel(const Params p) {
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    static_assert(C::FAST || !ALL_FAST, "the fast-interior form only for FAST configurations");
    static_assert(!(ALL_FAST && BATCHED), "the fast-interior form runs single matrices");
    __shared__ __align__(16) float As[2][C::BK][C::PA];
    __shared__ __align__(16) float Bs[2][C::BK][C::PB];

    int m0, n0, tx, ty;
    tile_origin<C>(p, m0, n0);
    thread_place<C>(tx, ty);
    const int tid = (int)threadIdx.x;

    // matrix blockIdx.z of the batch, and its K (the last one may be shorter: split-K; not in
    // the 128 x 128 tiles, whose launcher runs that matrix apart: takes_klast)
    const long long z = BATCHED ? (long long)blockIdx.z : 0;
    const int K = takes_klast<C>() && BATCHED ? cm__gemm_k_of_block(p.k, p.klast) : p.k;
    const TIn *A = static_cast<const TIn *>(p.a) + (BATCHED ? z * p.sa : 0);
    const TIn *B = static_cast<const TIn *>(p.b) + (BATCHED ? z * p.sb : 0);
    // operand slabs as (rows of the tile, k): A rows are m (from m0), B rows are n (from n0)
    const TIn *Ab = A + (A_KMAJOR ? (long long)m0 * p.lda : (long long)m0);
    const TIn *Bb = B + (B_KMAJOR ? (long long)n0 * p.ldb : (long long)n0);
    const int mrem = p.m - m0, nrem = p.n - n0;

    float sa[C::LA][4], sb[C::LB][4];
    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.0f;

    // fast path (C::FAST): per-thread 32-bit offsets of its groups from Ab / Bb, stepped by one
    // K tile per load() (the launcher checked that every offset reached fits in 32 bits)
    constexpr bool fa = ALL_FAST, fb = ALL_FAST;
    int offa[C::LA], offb[C::LB];
#pragma unroll
    for (int i = 0; i < C::LA; ++i) {
        const int idx = tid + i * C::THREADS;
        offa[i] = !fa ? 0
                  : A_KMAJOR ? (idx / (C::BK / 4)) * (int)p.lda + (idx % (C::BK / 4)) * 4
                             : (idx / (C::BM / 4)) * (int)p.lda + (idx % (C::BM / 4)) * 4;
    }
#pragma unroll
    for (int i = 0; i < C::LB; ++i) {
        const int idx = tid + i * C::THREADS;
        offb[i] = !fb ? 0
                  : B_KMAJOR ? (idx / (C::BK / 4)) * (int)p.ldb + (idx % (C::BK / 4)) * 4
                             : (idx / (C::BN / 4)) * (int)p.ldb + (idx % (C::BN / 4)) * 4;
    }

    auto load = [&](int kt) {
        (void)kt;
        if (ALL_FAST) {
#pragma unroll
            for (int i = 0; i < C::LA; ++i) {
                load4(Ab + offa[i], sa[i]);
                offa[i] += A_KMAJOR ? C::BK : C::BK * (int)p.lda;
            }
        } else {
#pragma unroll
        for (int i = 0; i < C::LA; ++i) {
            const int idx = tid + i * C::THREADS;
            if (A_KMAJOR)
                load_group<true>(Ab, p.lda, idx / (C::BK / 4), kt + (idx % (C::BK / 4)) * 4, mrem,
                                 K, p.veca, sa[i]);
            else
                load_group<false>(Ab, p.lda, (idx % (C::BM / 4)) * 4, kt + idx / (C::BM / 4), mrem,
                                  K, p.veca, sa[i]);
        }
        }
        if (ALL_FAST) {
#pragma unroll
            for (int i = 0; i < C::LB; ++i) {
                load4(Bb + offb[i], sb[i]);
                offb[i] += B_KMAJOR ? C::BK : C::BK * (int)p.ldb;
            }
        } else {
#pragma unroll
        for (int i = 0; i < C::LB; ++i) {
            const int idx = tid + i * C::THREADS;
            if (B_KMAJOR)
                load_group<true>(Bb, p.ldb, idx / (C::BK / 4), kt + (idx % (C::BK / 4)) * 4, nrem,
                                 K, p.vecb, sb[i]);
            else
                load_group<false>(Bb, p.ldb, (idx % (C::BN / 4)) * 4, kt + idx / (C::BN / 4), nrem,
                                  K, p.vecb, sb[i]);
        }
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int i = 0; i < C::LA; ++i) {
            const int idx = tid + i * C::THREADS;
            if (A_KMAJOR) {
                const int r = idx / (C::BK / 4), kk = (idx % (C::BK / 4)) * 4;
#pragma unroll
                for (int q = 0; q < 4; ++q) As[buf][kk + q][r] = sa[i][q];
            } else {
                const int r = (idx % (C::BM / 4)) * 4, kk = idx / (C::BM / 4);
                *reinterpret_cast<float4 *>(&As[buf][kk][r]) =
                    make_float4(sa[i][0], sa[i][1], sa[i][2], sa[i][3]);
            }
        }
#pragma unroll
        for (int i = 0; i < C::LB; ++i) {
            const int idx = tid + i * C::THREADS;
            if (B_KMAJOR) {
                const int r = idx / (C::BK / 4), kk = (idx % (C::BK / 4)) * 4;
#pragma unroll
                for (int q = 0; q < 4; ++q) Bs[buf][kk + q][r] = sb[i][q];
            } else {
                const int r = (idx % (C::BN / 4)) * 4, kk = idx / (C::BN / 4);
                *reinterpret_cast<float4 *>(&Bs[buf][kk][r]) =
                    make_float4(sb[i][0], sb[i][1], sb[i][2], sb[i][3]);
            }
        }
    };

    const int ktiles = (K + C::BK - 1) / C::BK;
    if (ktiles > 0) {
        load(0);
        store(0);
        __syncthreads();
    }
    for (int t = 0; t < ktiles; ++t) {
        const int buf = t & 1;
        const bool more = t + 1 < ktiles;
        if (more) load((t + 1) * C::BK);
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            float a[C::TM], b[C::TN];
#pragma unroll
            for (int c = 0; c < C::CM; ++c) {
                const float4 v = *reinterpret_cast<const float4 *>(&As[buf][kk][c * C::SM + ty * 4]);
                a[c * 4 + 0] = v.x; a[c * 4 + 1] = v.y; a[c * 4 + 2] = v.z; a[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int c = 0; c < C::CN; ++c) {
                const float4 v = *reinterpret_cast<const float4 *>(&Bs[buf][kk][c * C::SN + tx * 4]);
                b[c * 4 + 0] = v.x; b[c * 4 + 1] = v.y; b[c * 4 + 2] = v.z; b[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
                for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) store(buf ^ 1);
        __syncthreads();
    }

    // epilogue
    TOut *Cp = static_cast<TOut *>(p.c) + (BATCHED ? (long long)blockIdx.z * p.sc : 0);
    // C without vector rows (block-uniform): through shared memory, in the tiles under
    // CM__FFMA_ROWS_OUT_BELOW (ptxas spilled 8-44 bytes with it in the 128 x 128 ones, nvcc
    // 13.0 sm_90) and in sm_90's code only (kernels/gemm.h, CM__GEMM_SM90_ONLY_BODY: the
    // architecture it is measured on; on every architecture it cost gemm_ffma.cu 16 s more of
    // the default build)
    if constexpr (C::BM * C::BN < CM__FFMA_ROWS_OUT_BELOW && CM__GEMM_SM90_ONLY_BODY) {
        if (!p.vecc) {
            rows_out<C, 2 * C::BK * C::PA>(p, Cp, &As[0][0][0], m0, n0, tx, ty, acc);
            return;
        }
    }
#pragma unroll
    for (int ci = 0; ci < C::CM; ++ci) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int gm = m0 + ci * C::SM + ty * 4 + r;
            if (gm >= p.m) continue;
            const long long row = (long long)gm * p.ldc;
#pragma unroll
            for (int cj = 0; cj < C::CN; ++cj) {
                const int gn = n0 + cj * C::SN + tx * 4;
                if (gn >= p.n) continue;
                float v[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) v[q] = p.alpha * acc[ci * 4 + r][cj * 4 + q];
                const int count = min(4, p.n - gn);
                store_out(Cp, row + gn, v, count, p.vecc != 0, p.beta);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The pipelined kernels (PIPE / PIPE4 configurations) carry code only for the architectures
// whose dispatch selects them: sm_90, where the table's FP32 tile is 128x128x16q3 (every other
// architecture's FP32 tiles are GENERAL / FAST ones); in a tuning build, every architecture.
// Elsewhere their bodies are empty and their launchers run the fallback's kernels
// (pipe_has_code, once per device): compiling them for the default list's eight architectures
// took gemm_ffma.cu from ~220 to ~300 s of nvcc on a 2-core machine once the bounded form had
// two loops (bench/NOTES-gemm.md).
#define CM__FFMA_PIPE_BODY CM__GEMM_SM90_ONLY_BODY

// Pipelined fast-interior kernel (configs "...pR", R cp.async stages).
// Whole tiles only (the launcher's all-fast test); anything else runs the general kernel of the
// same tile. In the "f" kernels ptxas places the next K tile's LDG at the END of the FFMA loop
// (next to its STS, inside the `if (more)` branch), even when written as an `asm volatile`
// register load (it is sunk into the only block that uses it), so global latency is hidden only
// by the other warps. Here no global data passes through registers:
//  - every operand goes global -> shared with cp.async (16 bytes, LDGSTS), R - 1 K tiles ahead,
//    one commit group per K tile: the copy is in flight during R - 1 tiles of FFMAs;
//  - an operand whose rows run along m / n lands directly in its R-stage ring [k][m or n];
//  - a K-contiguous operand lands in a thread-PRIVATE raw ring (each thread later reads back
//    exactly the 16 bytes it copied, so its own wait_group orders it; no barrier needed) and is
//    transposed into a 2-stage [k][m or n] buffer (one LDS.128 + four STS per group) one tile
//    ahead of its use;
//  - iteration t: issue tile t + R - 1; FFMAs on tile t; wait_group(R - 2) (tiles <= t + 1
//    complete); transpose tile t + 1; one __syncthreads.
// Hazards: ring stage (t + R - 1) % R was last read in iteration t - 1, transposed buffer
// (t + 1) % 2 in iteration t - 1: both behind that iteration's barrier.
// The "qR" configs (the sm_90 table's 128x128x16q3): a K-contiguous operand skips the raw ring
// and the transposing pass: each element goes global -> shared with its own 4-byte cp.async
// (LDGSTS.32) into its [k][m] place of the R-stage ring, so every layout runs the same loop
// (issue, FFMAs, wait, one barrier) and K-contiguous operands cost no extra pass (the figures per
// layout are in bench/NOTES-gemm.md).
#if CM__FFMA_PIPE_BODY   // the copies of the pipelined kernels
__device__ __forceinline__ void cp_async16(void *smem, const float *g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(g) : "memory");
#else
    *reinterpret_cast<float4 *>(smem) = __ldg(reinterpret_cast<const float4 *>(g));
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// 4-byte copy (LDGSTS.32, through L1): the "q" configs land a K-contiguous operand element by
// element in its transposed place, with no private ring and no transposing pass
__device__ __forceinline__ void cp_async4(float *smem, const float *g) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(s), "l"(g) : "memory");
#else
    *smem = __ldg(g);
#endif
}
// 4-byte copy that writes 0 instead when !ok (cp.async's zero fill: src-size 0 reads nothing;
// g must still be a valid address, the caller passes the tile's first element then)
__device__ __forceinline__ void cp_async4_or_zero(float *smem, const float *g, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    const int n = ok ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(s), "l"(g), "r"(n)
                 : "memory");
#else
    *smem = ok ? __ldg(g) : 0.0f;
#endif
}

// 16-byte copy of which only the first `bytes` (0, 4, 8, 12 or 16) are read, the rest of the
// 16 bytes written 0 (cp.async's src-size); g 16-byte aligned and valid even when bytes is 0
__device__ __forceinline__ void cp_async16_zfill(float *smem, const float *g, int bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(g), "r"(bytes)
                 : "memory");
#else
#pragma unroll
    for (int q = 0; q < 4; ++q) smem[q] = 4 * q < bytes ? __ldg(g + q) : 0.0f;
#endif
}
template <int N> __device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}
#endif   // CM__FFMA_PIPE_BODY
// Whether pipelined kernel `kernel` carries code on the current device: the PTX its code there
// comes from was compiled for 9.x (CM__FFMA_PIPE_BODY; cudaFuncAttributes::ptxVersion, which
// also tells a build without sm_90 code, run on an H100 through its compute_80 PTX, from one
// with it), or any in a tuning build
template <class Kernel> static bool pipe_has_code(Kernel kernel) {
    if (CM_GEMM_TUNING) return true;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return cm__gemm_sm90_only_has_code(fa.ptxVersion) != 0;
}

// dynamic shared memory of the pipelined kernel, in floats. T4 ("q" configs): K-contiguous
// operands too land in the R-stage ring (4-byte copies), no raw ring, no 2-stage buffer.
template <class C, int R, bool A_KMAJOR, bool B_KMAJOR, bool T4 = false> struct PipeSmem {
    static constexpr bool XA = A_KMAJOR && !T4, XB = B_KMAJOR && !T4;   // transposing pass
    static constexpr int AS = (XA ? 2 : R) * C::BK * C::PA;   // [stage][k][m]
    static constexpr int BS = (XB ? 2 : R) * C::BK * C::PB;   // [stage][k][n]
    static constexpr int RA = XA ? R * C::LA * C::THREADS * 4 : 0;   // private raw rings
    static constexpr int RB = XB ? R * C::LB * C::THREADS * 4 : 0;
    static constexpr size_t BYTES = sizeof(float) * (size_t)(AS + BS + RA + RB);
};

// BATCHED: matrix blockIdx.z of a strided batch. The single-matrix instantiation has no batch
// offsets at all: with them ptxas schedules this loop's integer work differently (4 more
// instructions a K tile for the K-contiguous pair, nvcc 13.0 sm_90a).
// BOUNDED (T4 only): any M, N and K, the batch's last K too (split-K's k_last), the
// MN-contiguous operands still with 16-byte rows. The copies zero-fill what lies outside the
// matrices (a row past M or N, a k past K): a K-contiguous element by its 4-byte copy's
// src-size, an MN-contiguous group of 4 by the 16-byte copy's, which reads only the elements
// before M / N; the last K tile is partly zero and adds nothing; the epilogue skips rows and
// columns past M and N. A last tile past M or N moves back inside where it can, and the K
// tiles inside K of blocks inside M and N run a loop of their own with the whole-tile kernel's
// copies (below). It replaces the edge kernel (4-byte copies of every element) where the
// MN-contiguous operands allow 16-byte copies.
// MOVED (T4, one matrix): the whole-tile kernel for a problem whose last tiles past M / N all
// move back inside (below), and / or with a K tail (K % BK, CM__FFMA_K_TAIL: before the
// pipeline or after the main loop, by the operands' orientation); a separate instantiation,
// so that the whole-tile kernel's code for problems in whole tiles stays as it is (these tests
// change its schedule).
// The moved-tile kernel's K tail from k_from to p.k into acc (gemm_ffma_pipe_kernel, MOVED,
// says where it runs and why): a macro, not a lambda, since the lambda changed all four
// moved-tile kernels' sm_90 code (nvcc 13.0) away from the code measured.
#define CM__FFMA_K_TAIL(k_from)                                                                \
    do {                                                                                       \
        const int A_LD = (int)p.lda, B_LD = (int)p.ldb;                                        \
        for (int kk = (k_from); kk < p.k; ++kk) {                                              \
            float a[C::TM], b[C::TN];                                                          \
            _Pragma("unroll") for (int i = 0; i < C::TM; ++i) {                                \
                const int r = (i / 4) * C::SM + ty * 4 + i % 4; /* row of the tile */         \
                a[i] = A_KMAJOR ? Ab[r * A_LD + kk] : Ab[kk * A_LD + r];                       \
            }                                                                                  \
            _Pragma("unroll") for (int j = 0; j < C::TN; ++j) {                                \
                const int c = (j / 4) * C::SN + tx * 4 + j % 4; /* column of the tile */      \
                b[j] = B_KMAJOR ? Bb[c * B_LD + kk] : Bb[kk * B_LD + c];                       \
            }                                                                                  \
            _Pragma("unroll") for (int i = 0; i < C::TM; ++i)                                  \
                _Pragma("unroll") for (int j = 0; j < C::TN; ++j)                              \
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);                                   \
        }                                                                                      \
    } while (0)

template <class C, int R, bool A_KMAJOR, bool B_KMAJOR, bool T4, bool BATCHED,
          bool BOUNDED = false, bool MOVED = false>
__global__ void __launch_bounds__(C::THREADS, C::MINB) gemm_ffma_pipe_kernel(const Params p) {
#if CM__FFMA_PIPE_BODY
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    static_assert(R >= 2, "two stages at least");
    static_assert(C::THREADS % C::BK == 0, "T4: whole rows per pass of the block");
    static_assert(!BOUNDED || T4, "bounds: K-contiguous operands by 4-byte copies only");
    static_assert(!MOVED || (T4 && !BOUNDED && !BATCHED), "moved tiles: whole-tile T4 form");
    constexpr bool MOVES = BOUNDED || MOVED;
    using L = PipeSmem<C, R, A_KMAJOR, B_KMAJOR, T4>;
    constexpr bool XA = L::XA, XB = L::XB;
    extern __shared__ float4 pipe_smem4[];
    float *const smem = reinterpret_cast<float *>(pipe_smem4);
    float *const As = smem;
    float *const Bs = As + L::AS;
    float4 *const rawA = reinterpret_cast<float4 *>(Bs + L::BS);
    float4 *const rawB = reinterpret_cast<float4 *>(Bs + L::BS + L::RA);

    int m0, n0, tx, ty;
    tile_origin<C>(p, m0, n0);
    thread_place<C>(tx, ty);
    const int tid = (int)threadIdx.x;
    // BOUNDED / MOVED: a last tile that passes M (N) moves back to end at M (N) where the
    // operand along that side can start there (along K: any row; along M / N: a multiple of 4
    // elements, for the 16-byte copies), so that its copies need no row checks; the rows
    // (columns) before m_lo (n_lo) are the previous tile's, which this block computes again
    // but does not store. MOVED runs only problems whose every last tile moves back so
    // (pipe_runs).
    const int m_lo = m0, n_lo = n0;
    if constexpr (BOUNDED) {
        if (p.m - m0 < C::BM && p.m >= C::BM && (A_KMAJOR || p.m % 4 == 0)) m0 = p.m - C::BM;
        if (p.n - n0 < C::BN && p.n >= C::BN && (B_KMAJOR || p.n % 4 == 0)) n0 = p.n - C::BN;
    }
    if constexpr (MOVED) {
        // to end at M (N), or, along M (N), at M (N) rounded up to 4: pipe_end, which the
        // launcher checked (the rows to there readable: the operand's padding, a_pad4 / b_pad4)
        if (p.m - m0 < C::BM) m0 = (A_KMAJOR ? p.m : (p.m + 3) / 4 * 4) - C::BM;
        if (p.n - n0 < C::BN) n0 = (B_KMAJOR ? p.n : (p.n + 3) / 4 * 4) - C::BN;
    }

    const float *Ab = static_cast<const float *>(p.a) +
                      (A_KMAJOR ? (long long)m0 * p.lda : (long long)m0);
    const float *Bb = static_cast<const float *>(p.b) +
                      (B_KMAJOR ? (long long)n0 * p.ldb : (long long)n0);
    if (BATCHED) {   // matrix blockIdx.z of the batch
        const long long z = (long long)blockIdx.z;
        Ab += z * p.sa;
        Bb += z * p.sb;
    }
    const int lda = (int)p.lda, ldb = (int)p.ldb;
    const int stepa = A_KMAJOR ? C::BK : C::BK * lda;   // per K tile
    const int stepb = B_KMAJOR ? C::BK : C::BK * ldb;
    // BOUNDED: the matrix's K and the rows of the operand slabs inside A / B
    const int K = BOUNDED && BATCHED ? cm__gemm_k_of_block(p.k, p.klast) : p.k;
    const int mrem = p.m - m0, nrem = p.n - n0;

    // per-thread groups: 32-bit offset in the slab; position in shared memory (row kk, column r)
    int offa[C::LA], offb[C::LB];
#pragma unroll
    for (int i = 0; i < C::LA; ++i) {
        const int idx = tid + i * C::THREADS;
        offa[i] = A_KMAJOR ? (idx / (C::BK / 4)) * lda + (idx % (C::BK / 4)) * 4
                           : (idx / (C::BM / 4)) * lda + (idx % (C::BM / 4)) * 4;
    }
#pragma unroll
    for (int i = 0; i < C::LB; ++i) {
        const int idx = tid + i * C::THREADS;
        offb[i] = B_KMAJOR ? (idx / (C::BK / 4)) * ldb + (idx % (C::BK / 4)) * 4
                           : (idx / (C::BN / 4)) * ldb + (idx % (C::BN / 4)) * 4;
    }
    auto a_pos = [&](int i) {   // float index inside one [k][m] stage
        const int idx = tid + i * C::THREADS;
        return A_KMAJOR ? ((idx % (C::BK / 4)) * 4) * C::PA + idx / (C::BK / 4)
                        : (idx / (C::BM / 4)) * C::PA + (idx % (C::BM / 4)) * 4;
    };
    auto b_pos = [&](int i) {
        const int idx = tid + i * C::THREADS;
        return B_KMAJOR ? ((idx % (C::BK / 4)) * 4) * C::PB + idx / (C::BK / 4)
                        : (idx / (C::BN / 4)) * C::PB + (idx % (C::BN / 4)) * 4;
    };

    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.0f;
    // MOVED: K's last K % BK (CM__FFMA_K_TAIL, from the whole K tiles' end), each thread
    // reading its own rows of A and columns of B for them straight from global memory (the
    // block's tile lies inside the readable rows: moved back above), no shared memory, no pass
    // over C of their own. Where it runs is what measured best for the operands' orientation
    // (H200 against cuBLAS, bench/NOTES-gemm.md): one along K, the other along M / N, after
    // the main loop (4096 x 4096 x 3001 NN 0.99 -> 1.03x, 3001 x 4096 x 1000 NN 0.81 ->
    // 0.89x against the tail apart / the bounded form; before the pipeline, 0.97x / 0.84x);
    // both along K or both along M / N, before the pipeline (3001^3 TN 0.91 -> 0.96x, 4093^3
    // TN 0.85 -> 0.89x against the tail apart / the bounded form), since after the loop
    // their loop was rescheduled and lost (1000 x 4096 x 4096 TN 0.93 -> 0.87x).
    if constexpr (MOVED && A_KMAJOR == B_KMAJOR) CM__FFMA_K_TAIL(p.k / C::BK * C::BK);

    // T4: element e = tid + j * THREADS of a K-contiguous slab is (row e / BK, k e % BK): a
    // warp reads 32 consecutive floats of 32 / BK rows (whole 32-byte sectors) and stores them
    // to [k][row], banks 4 k + row: conflict-free at BK 8
    constexpr int T4ROWS = C::THREADS / C::BK;   // rows per pass of the block
    const int t4_src_a = (tid / C::BK) * lda + tid % C::BK;
    const int t4_src_b = (tid / C::BK) * ldb + tid % C::BK;
    const int t4_dst_a = (tid % C::BK) * C::PA + tid / C::BK;
    const int t4_dst_b = (tid % C::BK) * C::PB + tid / C::BK;
    // BOUNDED: a 16-byte copy i's k row in its K tile and its first column (a T4 copy's are
    // tid % BK and tid / BK + j T4ROWS)
    auto k_row16 = [&](int i, int bmn) { return (tid + i * C::THREADS) / (bmn / 4); };
    auto col16 = [&](int i, int bmn) { return ((tid + i * C::THREADS) % (bmn / 4)) * 4; };
    // bytes a bounded 16-byte copy reads: the columns before M / N of a k row before K
    auto bytes16 = [&](int k, int col, int rem) {
        return k < K ? 4 * min(max(rem - col, 0), 4) : 0;
    };
    // EDGE (a compile-time flag, the caller's block-uniform test below): the copies check the
    // bounds; without it they are the whole-tile kernel's
    auto issue = [&](int kt, auto edge_flag) {
        constexpr bool EDGE = BOUNDED && decltype(edge_flag)::value;
        const int st = kt % R;
        if (A_KMAJOR && T4) {
            const float *src = Ab + t4_src_a + kt * C::BK;
            float *dst = As + st * C::BK * C::PA + t4_dst_a;
            if constexpr (EDGE) {
                const bool kok = kt * C::BK + tid % C::BK < K;
#pragma unroll
                for (int j = 0; j < C::BM / T4ROWS; ++j) {
                    const bool ok = kok && tid / C::BK + j * T4ROWS < mrem;
                    cp_async4_or_zero(dst + j * T4ROWS, ok ? src + j * T4ROWS * lda : Ab, ok);
                }
            } else {
#pragma unroll
                for (int j = 0; j < C::BM / T4ROWS; ++j)
                    cp_async4(dst + j * T4ROWS, src + j * T4ROWS * lda);
            }
        } else {
#pragma unroll
            for (int i = 0; i < C::LA; ++i) {
                const float *src = Ab + offa[i] + kt * stepa;
                if (A_KMAJOR) {
                    cp_async16(&rawA[(st * C::LA + i) * C::THREADS + tid], src);
                } else if constexpr (EDGE) {
                    const int n = bytes16(kt * C::BK + k_row16(i, C::BM), col16(i, C::BM), mrem);
                    cp_async16_zfill(&As[st * C::BK * C::PA + a_pos(i)], n > 0 ? src : Ab, n);
                } else {
                    cp_async16(&As[st * C::BK * C::PA + a_pos(i)], src);
                }
            }
        }
        if (B_KMAJOR && T4) {
            const float *src = Bb + t4_src_b + kt * C::BK;
            float *dst = Bs + st * C::BK * C::PB + t4_dst_b;
            if constexpr (EDGE) {
                const bool kok = kt * C::BK + tid % C::BK < K;
#pragma unroll
                for (int j = 0; j < C::BN / T4ROWS; ++j) {
                    const bool ok = kok && tid / C::BK + j * T4ROWS < nrem;
                    cp_async4_or_zero(dst + j * T4ROWS, ok ? src + j * T4ROWS * ldb : Bb, ok);
                }
            } else {
#pragma unroll
                for (int j = 0; j < C::BN / T4ROWS; ++j)
                    cp_async4(dst + j * T4ROWS, src + j * T4ROWS * ldb);
            }
        } else {
#pragma unroll
            for (int i = 0; i < C::LB; ++i) {
                const float *src = Bb + offb[i] + kt * stepb;
                if (B_KMAJOR) {
                    cp_async16(&rawB[(st * C::LB + i) * C::THREADS + tid], src);
                } else if constexpr (EDGE) {
                    const int n = bytes16(kt * C::BK + k_row16(i, C::BN), col16(i, C::BN), nrem);
                    cp_async16_zfill(&Bs[st * C::BK * C::PB + b_pos(i)], n > 0 ? src : Bb, n);
                } else {
                    cp_async16(&Bs[st * C::BK * C::PB + b_pos(i)], src);
                }
            }
        }
    };
    // transposing copy of K-contiguous tile kt from the private raw ring into buffer kt % 2
    auto transpose = [&](int kt) {
        const int st = kt % R;
        if (XA) {
#pragma unroll
            for (int i = 0; i < C::LA; ++i) {
                const float4 v = rawA[(st * C::LA + i) * C::THREADS + tid];
                float *d = As + (kt & 1) * C::BK * C::PA + a_pos(i);
                d[0] = v.x; d[C::PA] = v.y; d[2 * C::PA] = v.z; d[3 * C::PA] = v.w;
            }
        }
        if (XB) {
#pragma unroll
            for (int i = 0; i < C::LB; ++i) {
                const float4 v = rawB[(st * C::LB + i) * C::THREADS + tid];
                float *d = Bs + (kt & 1) * C::BK * C::PB + b_pos(i);
                d[0] = v.x; d[C::PB] = v.y; d[2 * C::PB] = v.z; d[3 * C::PB] = v.w;
            }
        }
    };

    // whole K tiles (launcher), BOUNDED the last one zero-filled past K; ktiles >= 1
    const int ktiles = BOUNDED ? (K + C::BK - 1) / C::BK : p.k / C::BK;
    // BOUNDED: only a block with rows past M or N (after the move back above), and every
    // block's K tile that passes K, take the checked copies; every other K tile issues the
    // whole-tile kernel's copies. Checking every copy costs each its own compares and selects:
    // the main loop of sm_90a's SASS (nvcc 13.0) grew from 1183 instructions a K tile (1024 of
    // them FFMAs) to 1301 with both operands along K; the loop of the unchecked copies below
    // has 1186.
    const bool edge_rows = BOUNDED && (mrem < C::BM || nrem < C::BN);
    const int kt_whole = BOUNDED ? K / C::BK : ktiles;   // K tiles with no k past K
    auto issue_tile = [&](int kt) {
        if constexpr (BOUNDED) {
            if (edge_rows || kt >= kt_whole) {
                issue(kt, std::true_type{});
                return;
            }
        }
        issue(kt, std::false_type{});
    };
#pragma unroll
    for (int s = 0; s < R - 1; ++s) {
        if (s < ktiles) issue_tile(s);
        cp_async_commit();
    }
    cp_async_wait<R - 2>();
    transpose(0);
    __syncthreads();

    // iteration t: issue K tile t + R - 1 (EDGE: the checked copies), FFMAs on tile t
    auto step = [&](int t, auto edge_flag) {
        if (t + R - 1 < ktiles) issue(t + R - 1, edge_flag);
        cp_async_commit();
        const float *as = As + (XA ? (t & 1) : t % R) * C::BK * C::PA;
        const float *bs = Bs + (XB ? (t & 1) : t % R) * C::BK * C::PB;
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            float a[C::TM], b[C::TN];
#pragma unroll
            for (int c = 0; c < C::CM; ++c) {
                const float4 v =
                    *reinterpret_cast<const float4 *>(&as[kk * C::PA + c * C::SM + ty * 4]);
                a[c * 4 + 0] = v.x; a[c * 4 + 1] = v.y; a[c * 4 + 2] = v.z; a[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int c = 0; c < C::CN; ++c) {
                const float4 v =
                    *reinterpret_cast<const float4 *>(&bs[kk * C::PB + c * C::SN + tx * 4]);
                b[c * 4 + 0] = v.x; b[c * 4 + 1] = v.y; b[c * 4 + 2] = v.z; b[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
                for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        cp_async_wait<R - 2>();
        if ((XA || XB) && t + 1 < ktiles) transpose(t + 1);
        __syncthreads();
    };
    // BOUNDED: the iterations that issue a K tile inside K in a block inside M and N run in a
    // loop of their own with the whole-tile copies and no test in it; the others in a loop
    // with the checked copies
    int t = 0;
    if constexpr (BOUNDED) {
        const int t_fast = edge_rows ? 0 : max(0, kt_whole - (R - 1));
        for (; t < t_fast; ++t) step(t, std::false_type{});
        for (; t < ktiles; ++t) step(t, std::true_type{});
    } else {
        for (; t < ktiles; ++t) step(t, std::false_type{});
    }
    if constexpr (MOVED && A_KMAJOR != B_KMAJOR) CM__FFMA_K_TAIL(ktiles * C::BK);   // (above)

    float *Cp = static_cast<float *>(p.c) + (BATCHED ? (long long)blockIdx.z * p.sc : 0);
    // a tile moved back along N starts off a multiple of 4 columns: no 16-byte stores
    const bool vecc = p.vecc != 0 && n0 % 4 == 0;
#pragma unroll
    for (int ci = 0; ci < C::CM; ++ci) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int gm = m0 + ci * C::SM + ty * 4 + r;
            if (MOVES && (gm >= p.m || gm < m_lo)) continue;
            const long long row = (long long)gm * p.ldc;
#pragma unroll
            for (int cj = 0; cj < C::CN; ++cj) {
                const int gn = n0 + cj * C::SN + tx * 4;
                // MOVES: the columns gn + first .. gn + count - 1 are this tile's
                const int count = MOVES ? min(4, p.n - gn) : 4;
                const int first = MOVES ? max(n_lo - gn, 0) : 0;
                if (MOVES && count <= first) continue;
                float v[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) v[q] = p.alpha * acc[ci * 4 + r][cj * 4 + q];
                if (first == 0)
                    store_out(Cp, row + gn, v, count, vecc, p.beta);
                else
                    store_out(Cp, row + gn + first, v + first, count - first, false, p.beta);
            }
        }
    }
#else
    (void)p;
#endif
}

// The pipelined kernel for any M, N, K and any leading dimension (FP32): what the whole-tile
// kernel above cannot run (3001^3, 4093^3, K = 3001 with 4096-row operands...). Every element
// of both operands goes global -> shared with its own 4-byte cp.async into its [k][m] / [k][n]
// place of the R-stage ring, so no operand needs 16-byte rows; an element outside the matrix
// (a row past M or N, a k past K in the last K tile) is zero-filled by the copy and adds
// nothing. The FFMA loop is the whole-tile kernel's; the epilogue skips rows and columns past
// M and N. A warp copies 32 consecutive floats of one row (K-contiguous operands: 32 / BK rows
// of BK), whole 32-byte sectors.
template <class C, int R, bool A_KMAJOR, bool B_KMAJOR, bool BATCHED>
__global__ void __launch_bounds__(C::THREADS, C::MINB) gemm_ffma_pipe_edge_kernel(const Params p) {
#if CM__FFMA_PIPE_BODY
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    static_assert(R >= 2, "two stages at least");
    static_assert(C::THREADS % C::BK == 0 && C::THREADS % C::BM == 0 && C::THREADS % C::BN == 0,
                  "each thread copies a fixed column (k or m / n) of the slabs");
    extern __shared__ float4 pipe_smem4[];
    float *const As = reinterpret_cast<float *>(pipe_smem4);
    float *const Bs = As + R * C::BK * C::PA;

    int m0, n0, tx, ty;
    tile_origin<C>(p, m0, n0);
    thread_place<C>(tx, ty);
    const int tid = (int)threadIdx.x;

    const float *Ab = static_cast<const float *>(p.a) +
                      (A_KMAJOR ? (long long)m0 * p.lda : (long long)m0);
    const float *Bb = static_cast<const float *>(p.b) +
                      (B_KMAJOR ? (long long)n0 * p.ldb : (long long)n0);
    if (BATCHED) {
        const long long z = (long long)blockIdx.z;
        Ab += z * p.sa;
        Bb += z * p.sb;
    }
    // the matrix's K (the batch's last one may be shorter: split-K)
    const int K = BATCHED ? cm__gemm_k_of_block(p.k, p.klast) : p.k;
    const int lda = (int)p.lda, ldb = (int)p.ldb;
    const int mrem = p.m - m0, nrem = p.n - n0;   // rows of the operand slabs inside A / B

    // copy j of a K tile: K-contiguous, row (tid / BK) + j * (THREADS / BK), k tid % BK; else
    // k (tid / BM) + j * (THREADS / BM), row tid % BM (the launcher bounded every offset to 32
    // bits)
    constexpr int EA = C::BM * C::BK / C::THREADS, EB = C::BN * C::BK / C::THREADS;
    constexpr int SA = A_KMAJOR ? C::THREADS / C::BK : C::THREADS / C::BM;
    constexpr int SB = B_KMAJOR ? C::THREADS / C::BK : C::THREADS / C::BN;
    const int a_row = A_KMAJOR ? tid / C::BK : tid % C::BM;
    const int a_k = A_KMAJOR ? tid % C::BK : tid / C::BM;
    const int b_row = B_KMAJOR ? tid / C::BK : tid % C::BN;
    const int b_k = B_KMAJOR ? tid % C::BK : tid / C::BN;
    auto issue = [&](int kt) {
        const int st = kt % R;
        const int k0 = kt * C::BK;
        float *const as = As + st * C::BK * C::PA;
        float *const bs = Bs + st * C::BK * C::PB;
#pragma unroll
        for (int j = 0; j < EA; ++j) {
            const int row = A_KMAJOR ? a_row + j * SA : a_row;
            const int kk = A_KMAJOR ? a_k : a_k + j * SA;
            const bool ok = row < mrem && k0 + kk < K;
            const float *src = Ab + (ok ? (A_KMAJOR ? row * lda + k0 + kk : (k0 + kk) * lda + row)
                                        : 0);
            cp_async4_or_zero(&as[kk * C::PA + row], src, ok);
        }
#pragma unroll
        for (int j = 0; j < EB; ++j) {
            const int row = B_KMAJOR ? b_row + j * SB : b_row;
            const int kk = B_KMAJOR ? b_k : b_k + j * SB;
            const bool ok = row < nrem && k0 + kk < K;
            const float *src = Bb + (ok ? (B_KMAJOR ? row * ldb + k0 + kk : (k0 + kk) * ldb + row)
                                        : 0);
            cp_async4_or_zero(&bs[kk * C::PB + row], src, ok);
        }
    };

    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j) acc[i][j] = 0.0f;

    const int ktiles = (K + C::BK - 1) / C::BK;   // the last one zero-filled past K
#pragma unroll
    for (int s = 0; s < R - 1; ++s) {
        if (s < ktiles) issue(s);
        cp_async_commit();
    }
    cp_async_wait<R - 2>();
    __syncthreads();

    for (int t = 0; t < ktiles; ++t) {
        if (t + R - 1 < ktiles) issue(t + R - 1);
        cp_async_commit();
        const float *as = As + (t % R) * C::BK * C::PA;
        const float *bs = Bs + (t % R) * C::BK * C::PB;
#pragma unroll
        for (int kk = 0; kk < C::BK; ++kk) {
            float a[C::TM], b[C::TN];
#pragma unroll
            for (int c = 0; c < C::CM; ++c) {
                const float4 v =
                    *reinterpret_cast<const float4 *>(&as[kk * C::PA + c * C::SM + ty * 4]);
                a[c * 4 + 0] = v.x; a[c * 4 + 1] = v.y; a[c * 4 + 2] = v.z; a[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int c = 0; c < C::CN; ++c) {
                const float4 v =
                    *reinterpret_cast<const float4 *>(&bs[kk * C::PB + c * C::SN + tx * 4]);
                b[c * 4 + 0] = v.x; b[c * 4 + 1] = v.y; b[c * 4 + 2] = v.z; b[c * 4 + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < C::TM; ++i)
#pragma unroll
                for (int j = 0; j < C::TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        cp_async_wait<R - 2>();
        __syncthreads();
    }

    float *Cp = static_cast<float *>(p.c) + (BATCHED ? (long long)blockIdx.z * p.sc : 0);
#pragma unroll
    for (int ci = 0; ci < C::CM; ++ci) {
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int gm = m0 + ci * C::SM + ty * 4 + r;
            if (gm >= p.m) continue;
            const long long row = (long long)gm * p.ldc;
#pragma unroll
            for (int cj = 0; cj < C::CN; ++cj) {
                const int gn = n0 + cj * C::SN + tx * 4;
                const int count = min(4, p.n - gn);
                if (count <= 0) continue;
                float v[4];
#pragma unroll
                for (int q = 0; q < 4; ++q) v[q] = p.alpha * acc[ci * 4 + r][cj * 4 + q];
                store_out(Cp, row + gn, v, count, p.vecc != 0, p.beta);
            }
        }
    }
#else
    (void)p;
#endif
}

// The kernel's parameters of one launch g (cm__gemm_for_each_launch: batch >= 1, strides 0 for
// one matrix), vector flags unset.
static Params make_params(const cm__gemm_args_t *g) {
    Params p;
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
    p.veca = p.vecb = p.vecc = 0;
    p.fasta = p.fastb = 0;
    p.tiles_m = p.tiles_n = 0;
    p.klast = g->k_last;
    return p;
}

// The kernel of tile G (ALL_FAST, BATCHED as gemm_ffma_kernel) for g's layout (the launch's
// error left to the caller).
template <class G, bool AF, bool BATCHED, typename TIn, typename TOut>
void launch_layout(const cm__gemm_args_t *g, const Params &p, dim3 grid, dim3 block,
                   cudaStream_t stream) {
    if (g->a_kmajor && g->b_kmajor)
        gemm_ffma_kernel<G, true, true, AF, BATCHED, TIn, TOut><<<grid, block, 0, stream>>>(p);
    else if (g->a_kmajor)
        gemm_ffma_kernel<G, true, false, AF, BATCHED, TIn, TOut><<<grid, block, 0, stream>>>(p);
    else if (g->b_kmajor)
        gemm_ffma_kernel<G, false, true, AF, BATCHED, TIn, TOut><<<grid, block, 0, stream>>>(p);
    else
        gemm_ffma_kernel<G, false, false, AF, BATCHED, TIn, TOut><<<grid, block, 0, stream>>>(p);
}

// Whether every in-slab offset of operand A (a) or B of tile C fits in 32 bits (the fast and
// pipelined kernels step 32-bit offsets from one base): (rows - 1) * ld + columns, that is BM
// (BN) rows of K + 2 BK for a K-contiguous operand, else K + 2 BK rows of BM (BN).
template <class C> bool slab_offsets_fit(const cm__gemm_args_t *g, bool a) {
    const long long k2 = (long long)g->k + 2 * C::BK;
    if (a) return (g->a_kmajor ? (C::BM - 1) * g->lda + k2 : k2 * g->lda + C::BM) < 0x7fffffffLL;
    return (g->b_kmajor ? (C::BN - 1) * g->ldb + k2 : k2 * g->ldb + C::BN) < 0x7fffffffLL;
}

// One launch (g->batch matrices, at most CM__GEMM_MAX_BATCH_PER_LAUNCH) of tile C's kernels.
template <class C, typename TIn, typename TOut>
cudaError_t launch(const cm__gemm_args_t *g, cudaStream_t stream) {
    Params p = make_params(g);
    // 4-element vectors: 16 bytes (float) or 8 (bf16), in every matrix of the batch
    const uint64_t in_align = sizeof(TIn) * 4;
    p.veca = g->lda % 4 == 0 && cm__gemm_batch_aligned(g->a, g->stride_a, sizeof(TIn), in_align);
    p.vecb = g->ldb % 4 == 0 && cm__gemm_batch_aligned(g->b, g->stride_b, sizeof(TIn), in_align);
    p.vecc = cm__gemm_c_vec4(g);
    p.fasta = p.veca && slab_offsets_fit<C>(g, true);
    p.fastb = p.vecb && slab_offsets_fit<C>(g, false);
    const long long tm = ((long long)g->m + C::BM - 1) / C::BM;
    const long long tn = ((long long)g->n + C::BN - 1) / C::BN;
    if (tm * tn > 0x7fffffffLL || tm * tn <= 0) return cudaErrorInvalidValue;
    p.tiles_m = (int)tm;
    p.tiles_n = (int)tn;
    if (!takes_klast<C>() && g->k_last > 0 && g->batch > 1) {
        // the shorter last matrix apart (takes_klast): the others, then it alone
        const int64_t ein = sizeof(TIn), eout = sizeof(TOut);
        cm__gemm_args_t h = *g;
        h.batch = g->batch - 1;
        h.k_last = 0;
        cudaError_t err = launch<C, TIn, TOut>(&h, stream);
        if (err != cudaSuccess) return err;
        h = *g;
        h.batch = 1;
        h.k = g->k_last;
        h.k_last = 0;
        h.a = static_cast<const char *>(g->a) + (int64_t)(g->batch - 1) * g->stride_a * ein;
        h.b = static_cast<const char *>(g->b) + (int64_t)(g->batch - 1) * g->stride_b * ein;
        h.c = static_cast<char *>(g->c) + (int64_t)(g->batch - 1) * g->stride_c * eout;
        h.stride_a = h.stride_b = h.stride_c = 0;
        return launch<C, TIn, TOut>(&h, stream);
    }
    const dim3 grid((unsigned)(tm * tn), 1, (unsigned)g->batch), block(C::THREADS);
    if constexpr (C::FAST) {
        // one matrix: the ALL_FAST kernel has no batch dimension (a batch runs the general one)
        const bool all_fast = p.fasta && p.fastb && g->m % C::BM == 0 && g->n % C::BN == 0 &&
                              g->k % C::BK == 0 && g->batch == 1;
        if (all_fast) {
            launch_layout<C, true, false, TIn, TOut>(g, p, grid, block, stream);
            return cudaGetLastError();
        }
    }
    // the general kernel of the same tile (FAST is launch-only); at BK 16 it spills at 2 blocks
    // per multiprocessor (nvcc 13.0, sm_90), so it runs at 1 there
    using G = Cfg<C::BM, C::BN, C::BK, C::TM, C::TN, (C::FAST && C::BK > 8 ? 1 : C::MINB), false,
                  C::WTX>;
    if (g->batch > 1)
        launch_layout<G, false, true, TIn, TOut>(g, p, grid, block, stream);
    else
        launch_layout<G, false, false, TIn, TOut>(g, p, grid, block, stream);
    return cudaGetLastError();
}

// The pipelined kernel (BOUNDED: its form for any M, N, K; MOVED: its whole-tile form with last
// tiles moved back, one matrix only) with p's grid (FP32 only); FB's kernels where the device
// cannot give its shared memory.
template <class C, int R, bool AK, bool BK, bool T4, class FB, bool BOUNDED = false,
          bool MOVED = false>
cudaError_t run_pipe(const cm__gemm_args_t *g, const Params &p, dim3 grid, dim3 block,
                     cudaStream_t stream) {
    constexpr size_t bytes = PipeSmem<C, R, AK, BK, T4>::BYTES;
    // above 48 KB only after raising the function's limit, once per device; a device that
    // cannot give that much (sm_75: 64 KB) runs FB's kernels, and is not asked again (both
    // instantiations: single matrix and batch; MOVED has the first only)
    static cm__once_per_device once;
    const cudaError_t err = cm__prepare_once(once, [](int) {
        // no code for this device (CM__FFMA_PIPE_BODY): FB's kernels
        if (!pipe_has_code(gemm_ffma_pipe_kernel<C, R, AK, BK, T4, false, BOUNDED, MOVED>))
            return cudaErrorNotSupported;
        if (cudaFuncSetAttribute(gemm_ffma_pipe_kernel<C, R, AK, BK, T4, false, BOUNDED, MOVED>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            return cudaErrorNotSupported;
        }
        if constexpr (!MOVED) {
            if (cudaFuncSetAttribute(gemm_ffma_pipe_kernel<C, R, AK, BK, T4, true, BOUNDED>,
                                     cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)bytes) != cudaSuccess) {
                (void)cudaGetLastError();
                return cudaErrorNotSupported;
            }
        }
        return cudaSuccess;
    });
    if (err == cudaErrorNotSupported) return launch<FB, float, float>(g, stream);
    if (err != cudaSuccess) return err;
    if constexpr (MOVED) {
        if (grid.z > 1) return cudaErrorInvalidValue;   // (pipe_runs: one matrix)
        gemm_ffma_pipe_kernel<C, R, AK, BK, T4, false, false, true>
            <<<grid, block, bytes, stream>>>(p);
    } else if (grid.z > 1) {
        gemm_ffma_pipe_kernel<C, R, AK, BK, T4, true, BOUNDED><<<grid, block, bytes, stream>>>(p);
    } else {
        gemm_ffma_pipe_kernel<C, R, AK, BK, T4, false, BOUNDED><<<grid, block, bytes, stream>>>(p);
    }
    return cudaGetLastError();
}

// The bounded pipelined kernel (T4) for a problem that is not whole tiles (the caller checked
// launch_pipe's conditions: FP32, K > 0, MN-contiguous operands with 16-byte rows, every
// in-slab offset within 32 bits).
template <class C, int S, class FB>
cudaError_t launch_pipe_bounded(const cm__gemm_args_t *g, cudaStream_t stream) {
    Params p = make_params(g);
    p.vecc = cm__gemm_c_vec4(g);
    const long long tm = ((long long)g->m + C::BM - 1) / C::BM;
    const long long tn = ((long long)g->n + C::BN - 1) / C::BN;
    if (tm * tn > 0x7fffffffLL || tm * tn <= 0) return cudaErrorInvalidValue;
    p.tiles_m = (int)tm;
    p.tiles_n = (int)tn;
    const dim3 grid((unsigned)(tm * tn), 1, (unsigned)g->batch), block(C::THREADS);
    if (g->a_kmajor && g->b_kmajor)
        return run_pipe<C, S, true, true, true, FB, true>(g, p, grid, block, stream);
    if (g->a_kmajor) return run_pipe<C, S, true, false, true, FB, true>(g, p, grid, block, stream);
    if (g->b_kmajor) return run_pipe<C, S, false, true, true, FB, true>(g, p, grid, block, stream);
    return run_pipe<C, S, false, false, true, FB, true>(g, p, grid, block, stream);
}

// The edge kernel of C (any M, N, K, leading dimension) for g's layout; FB's kernels where the
// device cannot give its shared memory.
template <class C, int R, bool AK, bool BK, class FB>
cudaError_t run_pipe_edge(const cm__gemm_args_t *g, const Params &p, dim3 grid, dim3 block,
                          cudaStream_t stream) {
    constexpr size_t bytes = sizeof(float) * (size_t)R * C::BK * (C::PA + C::PB);
    static cm__once_per_device once;
    const cudaError_t err = cm__prepare_once(once, [](int) {
        // no code for this device (CM__FFMA_PIPE_BODY): FB's kernels
        if (!pipe_has_code(gemm_ffma_pipe_edge_kernel<C, R, AK, BK, false>))
            return cudaErrorNotSupported;
        if (cudaFuncSetAttribute(gemm_ffma_pipe_edge_kernel<C, R, AK, BK, false>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)bytes) == cudaSuccess &&
            cudaFuncSetAttribute(gemm_ffma_pipe_edge_kernel<C, R, AK, BK, true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)bytes) == cudaSuccess)
            return cudaSuccess;
        (void)cudaGetLastError();
        return cudaErrorNotSupported;
    });
    if (err == cudaErrorNotSupported) return launch<FB, float, float>(g, stream);
    if (err != cudaSuccess) return err;
    if (grid.z > 1)
        gemm_ffma_pipe_edge_kernel<C, R, AK, BK, true><<<grid, block, bytes, stream>>>(p);
    else
        gemm_ffma_pipe_edge_kernel<C, R, AK, BK, false><<<grid, block, bytes, stream>>>(p);
    return cudaGetLastError();
}

// A problem the whole-tile pipelined kernel cannot run, on the edge kernel: FP32, K > 0 and
// every in-slab offset within 32 bits (else FB's general kernel).
template <class C, int S, class FB>
cudaError_t launch_pipe_edge(const cm__gemm_args_t *g, cudaStream_t stream) {
    if (!slab_offsets_fit<C>(g, true) || !slab_offsets_fit<C>(g, false) || g->k <= 0 ||
        g->in_type != CM__GEMM_F32 || g->out_type != CM__GEMM_F32)
        return launch<FB, float, float>(g, stream);
    Params p = make_params(g);
    p.vecc = cm__gemm_c_vec4(g);
    const long long tm = ((long long)g->m + C::BM - 1) / C::BM;
    const long long tn = ((long long)g->n + C::BN - 1) / C::BN;
    if (tm * tn > 0x7fffffffLL || tm * tn <= 0) return cudaErrorInvalidValue;
    p.tiles_m = (int)tm;
    p.tiles_n = (int)tn;
    const dim3 grid((unsigned)(tm * tn), 1, (unsigned)g->batch), block(C::THREADS);
    if (g->a_kmajor && g->b_kmajor)
        return run_pipe_edge<C, S, true, true, FB>(g, p, grid, block, stream);
    if (g->a_kmajor) return run_pipe_edge<C, S, true, false, FB>(g, p, grid, block, stream);
    if (g->b_kmajor) return run_pipe_edge<C, S, false, true, FB>(g, p, grid, block, stream);
    return run_pipe_edge<C, S, false, false, FB>(g, p, grid, block, stream);
}

// Where the whole-tile kernel's last tile of `rows` rows (M or N) past them moves back to end
// (its MOVED form): at rows where the operand along that side is along K (any row) or along it
// with rows % 4 == 0 (its 16-byte copies start on a multiple of 4), at rows rounded up to 4
// where the operand's padding may be read (pad4); 0 where it cannot (shorter than a tile).
template <int T> int pipe_end(int rows, int kmajor, int pad4) {
    const int end = kmajor || rows % 4 == 0 ? rows : pad4 ? (rows + 3) / 4 * 4 : 0;
    return end >= T ? end : 0;
}

// How the whole-tile kernel of PIPE4 tile C runs g past whole tiles (pipe_runs gave it
// CM__FFMA_RUNS_WHOLE): moved_mn, a last tile past M / N moves back inside; k_tail, the K % BK
// its whole K tiles leave; tail_at, where that tail runs (CM__FFMA_KTAIL_*, gemm.h): apart
// first on the fallback's kernel where both operands are along K (or both along M / N), M and
// N are whole tiles and K >= CM__FFMA_KTAIL_APART_MIN_K, else in the MOVED kernel, before its
// pipeline for those orientations, after its main loop where one operand is along K and the
// other along M / N (CM__FFMA_K_TAIL); moved_kernel, the MOVED kernel runs g (a tile to move,
// or a tail in it).
struct WholeForm {
    bool moved_mn, moved_kernel;
    int k_tail, tail_at;
};
template <class C> WholeForm whole_form(const cm__gemm_args_t *g) {
    WholeForm w;
    w.moved_mn = g->m % C::BM != 0 || g->n % C::BN != 0;
    w.k_tail = g->k % C::BK;
    const bool same = g->a_kmajor == g->b_kmajor;
    w.tail_at = w.k_tail == 0 ? CM__FFMA_KTAIL_NONE
                : !same       ? CM__FFMA_KTAIL_AFTER
                : !w.moved_mn && g->k >= CM__FFMA_KTAIL_APART_MIN_K ? CM__FFMA_KTAIL_APART
                                                                    : CM__FFMA_KTAIL_BEFORE;
    w.moved_kernel = w.moved_mn || w.tail_at == CM__FFMA_KTAIL_AFTER ||
                     w.tail_at == CM__FFMA_KTAIL_BEFORE;
    return w;
}

// What launch_pipe runs for g (tile C of a PIPE / PIPE4 configuration; T4: PIPE4): one of
// CM__FFMA_RUNS_* (gemm.h). The whole-tile kernel for problems in whole tiles whose operands
// have 16-byte rows; PIPE4 also (its K-contiguous operands any leading dimension) one matrix
// whose every last tile past M / N moves back inside (pipe_end) on its MOVED kernel, and a K
// tail from K = CM__FFMA_BOUNDED_MIN_K (whole_form says where it runs; H200 against cuBLAS,
// the bounded form -> these: 4096 x 4096 x 3001 NN 0.79 -> 1.03x, TN 0.87 -> 0.90x; 1000 x
// 4096 x 4096 NN 0.85 -> 0.96x; 3001 x 4096 x 1000 NN 0.81 -> 0.89x; 3001^3 NN, the pitched
// copy's padding read, 0.79 -> 0.88x, TN 0.95 -> 0.96x; 4093^3 TN 0.85 -> 0.89x;
// bench/NOTES-gemm.md); else, PIPE4 only, the bounded form from K = CM__FFMA_BOUNDED_MIN_K
// where the MN-contiguous operands have 16-byte rows (4 elements a copy; its inside K tiles
// copy as the whole-tile kernel does; H200 against cuBLAS, every copy checked -> this form:
// 4096 x 4096 x 3001 TN 0.79 -> 0.87x, 1000 x 4096 x 4096 TN 0.78-0.83 -> 0.92x,
// 3001^3 TN 0.83-0.87 -> 0.94x, 3001 x 4096 x 1000 TN, the fallback's kernel before, 0.75-0.81
// -> 0.83x; bench/NOTES-gemm.md), the edge kernel from K = CM__FFMA_EDGE_MIN_K (below, its
// ring's prologue and 4-byte copies cost more than the pipeline hides: 4096 x 4096 x 7 1.50 ->
// 1.19x cuBLAS, x 1 1.20 -> 1.08x against the fallback's general kernel, H200), and the
// fallback's kernels for the rest.
template <class C, bool T4> int pipe_runs(const cm__gemm_args_t *g) {
    const bool f32 = g->in_type == CM__GEMM_F32 && g->out_type == CM__GEMM_F32;
    const bool veca = g->lda % 4 == 0 && cm__gemm_batch_aligned(g->a, g->stride_a, 4, 16);
    const bool vecb = g->ldb % 4 == 0 && cm__gemm_batch_aligned(g->b, g->stride_b, 4, 16);
    const bool fita = slab_offsets_fit<C>(g, true), fitb = slab_offsets_fit<C>(g, false);
    // (a shorter last matrix, k_last, is not whole K tiles)
    if (veca && fita && vecb && fitb && g->m % C::BM == 0 && g->n % C::BN == 0 &&
        g->k % C::BK == 0 && g->k > 0 && f32 && g->k_last == 0)
        return CM__FFMA_RUNS_WHOLE;
    if constexpr (T4 && C::THREADS % C::BM == 0 && C::THREADS % C::BN == 0) {
        if (!f32 || g->k <= 0 || !fita || !fitb) return CM__FFMA_RUNS_TILE;
        // K-contiguous operands go by 4-byte copies: any leading dimension
        const bool oka = g->a_kmajor || veca, okb = g->b_kmajor || vecb;
        // the whole-tile kernel also where every last tile past M / N moves back inside
        // (gemm_ffma_pipe_kernel, MOVED) and K has a tail (below)
        const bool fit_m = g->m % C::BM == 0 || pipe_end<C::BM>(g->m, g->a_kmajor, g->a_pad4) > 0;
        const bool fit_n = g->n % C::BN == 0 || pipe_end<C::BN>(g->n, g->b_kmajor, g->b_pad4) > 0;
        // a K tail from CM__FFMA_BOUNDED_MIN_K: in the moved-tile kernel, or apart first
        // (whole_form, launch_pipe)
        const WholeForm wf = whole_form<C>(g);
        const bool fit_k = wf.k_tail == 0 || g->k >= CM__FFMA_BOUNDED_MIN_K;
        // (the MOVED kernel: one matrix; it has no batch dimension)
        const bool one = !wf.moved_kernel || g->batch <= 1;
        if (oka && okb && fit_m && fit_n && fit_k && g->k_last == 0 && one)
            return CM__FFMA_RUNS_WHOLE;
        if (oka && okb && g->k >= CM__FFMA_BOUNDED_MIN_K) return CM__FFMA_RUNS_BOUNDED;
        if (g->k >= CM__FFMA_EDGE_MIN_K) return CM__FFMA_RUNS_EDGE;
    }
    return CM__FFMA_RUNS_TILE;
}

// FB: the tile whose kernels run what the pipelined one cannot (tails, misaligned operands, no
// room for its shared memory). BK 16 pipelines fall back to 128x128x8: the general kernel at BK
// 16 runs one block per multiprocessor (it spills at two), 4093^3 ran 0.84x on the BK 8 one.
template <class C, int S, bool T4 = false, class FB = C>
cudaError_t launch_pipe(const cm__gemm_args_t *g, cudaStream_t stream) {
    static_assert(C::FAST, "pipelined: FAST tile");
    const int runs = pipe_runs<C, T4>(g);
    if constexpr (T4 && C::THREADS % C::BM == 0 && C::THREADS % C::BN == 0) {
        if (runs == CM__FFMA_RUNS_BOUNDED) return launch_pipe_bounded<C, S, FB>(g, stream);
        if (runs == CM__FFMA_RUNS_EDGE) return launch_pipe_edge<C, S, FB>(g, stream);
    }
    if (runs != CM__FFMA_RUNS_WHOLE) return launch<FB, float, float>(g, stream);
    [[maybe_unused]] const WholeForm wf = whole_form<C>(g);   // (T4: K tail, moved tiles)
    if constexpr (T4) {
        if (wf.tail_at == CM__FFMA_KTAIL_APART) {
            // both operands along K, or both along M / N, M and N whole tiles, K from
            // CM__FFMA_KTAIL_APART_MIN_K: K's last K % BK first, on FB's kernels (C = alpha
            // A_r B_r + beta C), then the whole K tiles with beta 1: two passes over C more
            const int kw = g->k - g->k % C::BK;
            cm__gemm_args_t r = *g;
            r.k = g->k - kw;
            r.a = static_cast<const float *>(g->a) + (g->a_kmajor ? (int64_t)kw : kw * g->lda);
            r.b = static_cast<const float *>(g->b) + (g->b_kmajor ? (int64_t)kw : kw * g->ldb);
            cudaError_t err = launch<FB, float, float>(&r, stream);
            if (err != cudaSuccess) return err;
            cm__gemm_args_t w = *g;
            w.k = kw;
            w.beta = 1.0f;
            return launch_pipe<C, S, T4, FB>(&w, stream);
        }
    }
    Params p = make_params(g);
    p.veca = 1;
    p.vecb = 1;
    p.vecc = cm__gemm_c_vec4(g);
    p.fasta = 1;
    p.fastb = 1;
    // T4: a last tile past M / N moves back inside (pipe_runs checked that each can)
    const long long tm = (g->m + C::BM - 1) / C::BM, tn = (g->n + C::BN - 1) / C::BN;
    if (tm * tn > 0x7fffffffLL || tm * tn <= 0) return cudaErrorInvalidValue;
    p.tiles_m = (int)tm;
    p.tiles_n = (int)tn;
    const dim3 grid((unsigned)(tm * tn), 1, (unsigned)g->batch), block(C::THREADS);
    if constexpr (T4) {
        // the MOVED kernel: last tiles past M / N moved back, K's tail in it (where the
        // operands' orientation puts it: CM__FFMA_K_TAIL) unless it ran apart, above
        if (wf.moved_kernel) {
            if (g->a_kmajor && g->b_kmajor)
                return run_pipe<C, S, true, true, T4, FB, false, true>(g, p, grid, block, stream);
            if (g->a_kmajor)
                return run_pipe<C, S, true, false, T4, FB, false, true>(g, p, grid, block, stream);
            if (g->b_kmajor)
                return run_pipe<C, S, false, true, T4, FB, false, true>(g, p, grid, block, stream);
            return run_pipe<C, S, false, false, T4, FB, false, true>(g, p, grid, block, stream);
        }
    }
    if (g->a_kmajor && g->b_kmajor)
        return run_pipe<C, S, true, true, T4, FB>(g, p, grid, block, stream);
    if (g->a_kmajor) return run_pipe<C, S, true, false, T4, FB>(g, p, grid, block, stream);
    if (g->b_kmajor) return run_pipe<C, S, false, true, T4, FB>(g, p, grid, block, stream);
    return run_pipe<C, S, false, false, T4, FB>(g, p, grid, block, stream);
}

// What configuration FORM / C runs for g (cm__gemm_ffma_runs; one this build did not compile:
// none, and its tile is not instantiated)
template <bool BUILT, int FORM, class C> int config_runs(const cm__gemm_args_t *g) {
    if constexpr (!BUILT) {
        (void)g;
        return CM__FFMA_RUNS_TILE;
    } else if constexpr (FORM == CM__FFMA_FORM_PIPE || FORM == CM__FFMA_FORM_PIPE4)
        return pipe_runs<C, FORM == CM__FFMA_FORM_PIPE4>(g);
    else
        return CM__FFMA_RUNS_TILE;
}

// One configuration of the table: its kernels when this build carries them, else
// cudaErrorNotSupported (a discarded `if constexpr` branch instantiates no kernel).
template <bool BUILT, int FORM, int STAGES, class C, class FB>
cudaError_t launch_config(const cm__gemm_args_t *g, cudaStream_t stream) {
    if constexpr (!BUILT) {
        (void)g;
        (void)stream;
        return cudaErrorNotSupported;
    } else if constexpr (FORM == CM__FFMA_FORM_PIPE || FORM == CM__FFMA_FORM_PIPE4) {
        return launch_pipe<C, STAGES, FORM == CM__FFMA_FORM_PIPE4, FB>(g, stream);
    } else {
        return launch<C, float, float>(g, stream);
    }
}

}  // namespace

extern "C" int cm__gemm_ffma_blocks_per_sm(int config) {
    switch (config) {
#define CM__FFMA_MINB_CASE_(id, bm_, bn_, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: return minb;
        CM__FFMA_CONFIGS(CM__FFMA_MINB_CASE_)
#undef CM__FFMA_MINB_CASE_
    default: return 0;
    }
}

extern "C" void cm__gemm_ffma_tile(int config, int *bm, int *bn) {
    int m = 0, n = 0;
    switch (config) {
#define CM__FFMA_TILE_CASE_(id, bm_, bn_, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: m = bm_; n = bn_; break;
    CM__FFMA_CONFIGS(CM__FFMA_TILE_CASE_)
#undef CM__FFMA_TILE_CASE_
    default: break;
    }
    if (bm) *bm = m;
    if (bn) *bn = n;
}

extern "C" int cm__gemm_ffma_shipped(int config) {
    switch (config) {
#define CM__FFMA_SHIP_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: return (ship) ? 1 : 0;
    CM__FFMA_CONFIGS(CM__FFMA_SHIP_CASE_)
#undef CM__FFMA_SHIP_CASE_
    default: return 0;
    }
}

extern "C" int cm__gemm_ffma_built(int config) {
    switch (config) {
#define CM__FFMA_BUILT_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: return CM__FFMA_BUILT(ship) ? 1 : 0;
    CM__FFMA_CONFIGS(CM__FFMA_BUILT_CASE_)
#undef CM__FFMA_BUILT_CASE_
    default: return 0;
    }
}

extern "C" int cm__gemm_ffma_fallback(int config) {
    switch (config) {
#define CM__FFMA_FB_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: return CM__FFMA_##fallback;
    CM__FFMA_CONFIGS(CM__FFMA_FB_CASE_)
#undef CM__FFMA_FB_CASE_
    default: return -1;
    }
}

extern "C" int cm__gemm_ffma_runs(const cm__gemm_args_t *g, int config) {
    if (g == NULL || g->in_type != CM__GEMM_F32 || !cm__gemm_ffma_built(config))
        return CM__FFMA_RUNS_TILE;
    switch (config) {
#define CM__FFMA_RUNS_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id:                                                                       \
        return config_runs<CM__FFMA_BUILT(ship), CM__FFMA_FORM_##form, Tile_##id>(g);
    CM__FFMA_CONFIGS(CM__FFMA_RUNS_CASE_)
#undef CM__FFMA_RUNS_CASE_
    default: return CM__FFMA_RUNS_TILE;
    }
}

// The whole-tile form of configuration FORM / C for g (cm__gemm_ffma_whole_form): PIPE4 only
template <int FORM, class C> WholeForm config_whole_form(const cm__gemm_args_t *g) {
    if constexpr (FORM == CM__FFMA_FORM_PIPE4) return whole_form<C>(g);
    (void)g;
    return WholeForm{false, false, 0, CM__FFMA_KTAIL_NONE};
}

extern "C" void cm__gemm_ffma_whole_form(const cm__gemm_args_t *g, int config, int *moved,
                                         int *k_tail, int *tail_at) {
    WholeForm w{false, false, 0, CM__FFMA_KTAIL_NONE};
    if (cm__gemm_ffma_runs(g, config) == CM__FFMA_RUNS_WHOLE) {
        switch (config) {
#define CM__FFMA_WHOLE_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id: w = config_whole_form<CM__FFMA_FORM_##form, Tile_##id>(g); break;
            CM__FFMA_CONFIGS(CM__FFMA_WHOLE_CASE_)
#undef CM__FFMA_WHOLE_CASE_
        default: break;
        }
    }
    if (moved) *moved = w.moved_mn;
    if (k_tail) *k_tail = w.k_tail;
    if (tail_at) *tail_at = w.tail_at;
}

// One launch of configuration `config` (g: batch 1 .. CM__GEMM_MAX_BATCH_PER_LAUNCH).
static cudaError_t ffma_one_launch(const cm__gemm_args_t *g, int config, cudaStream_t stream) {
    if (g->in_type == CM__GEMM_BF16) {
        // widened bf16 inputs: two tiles only (block tiles below 128 x 128 take 64 x 64)
        int bm = 0, bn = 0;
        cm__gemm_ffma_tile(config, &bm, &bn);
        const bool small = bm * bn < 128 * 128;
        if (g->out_type == CM__GEMM_BF16)
            return small ? launch<Tile_64x64x16, uint16_t, uint16_t>(g, stream)
                         : launch<Tile_128x128x8, uint16_t, uint16_t>(g, stream);
        return small ? launch<Tile_64x64x16, uint16_t, float>(g, stream)
                     : launch<Tile_128x128x8, uint16_t, float>(g, stream);
    }
    if (g->out_type != CM__GEMM_F32) return cudaErrorInvalidValue;
    switch (config) {
#define CM__FFMA_LAUNCH_CASE_(id, bm, bn, bk, tm, tn, minb, wtx, form, stages, fallback, ship) \
    case CM__FFMA_##id:                                                                       \
        return launch_config<CM__FFMA_BUILT(ship), CM__FFMA_FORM_##form, stages, Tile_##id,   \
                             Tile_##fallback>(g, stream);
    CM__FFMA_CONFIGS(CM__FFMA_LAUNCH_CASE_)
#undef CM__FFMA_LAUNCH_CASE_
    default: return cudaErrorInvalidValue;
    }
}

extern "C" cudaError_t cm__gemm_ffma(const cm__gemm_args_t *g, int config, cudaStream_t stream) {
    if (g == NULL || g->m <= 0 || g->n <= 0 || g->k < 0) return cudaErrorInvalidValue;
    if (config < 0 || config >= CM__FFMA_COUNT) return cudaErrorInvalidValue;
    if (!cm__gemm_ffma_built(config)) return cudaErrorNotSupported;
    return cm__gemm_for_each_launch(g, [&](const cm__gemm_args_t *q) {
        return ffma_one_launch(q, config, stream);
    });
}
