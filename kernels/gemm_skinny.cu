// Skinny products behind cm_gemm(): one side of C has 2 .. CM__GEMM_SKINNY_MAX rows or columns
// (normalised M or N, kernels/gemm.h). A tile kernel would spend most of a 32- to 128-row tile
// on nothing and, with few tiles, leave multiprocessors idle; the product is a handful of
// matrix-vector products that read the large operand once, so it runs as one pass over it,
// bandwidth-bound, in FP32 arithmetic for every precision (TF32 problems get at least TF32
// accuracy; BF16 inputs are widened exactly; a BF16 output is rounded once at the end).
//
// The problem in this file's terms: R vectors (R = the small side),
//   Y(i, r) = alpha * sum_k Mat(i, k) X(k, r) + beta * Y(i, r),  i < rows, r < R  (beta == 0: Y
// never read), with X(k, r) = x[k * xk + r * xr], Y(i, r) = y[i * yi + r * yr] and Mat in one of
// two orientations:
//   rows: Mat(i, k) = mat[i * ld + k]  (K contiguous)
//   cols: Mat(i, k) = mat[k * ld + i]  (i contiguous)
// Small M: i runs over N, Mat is B, X(k, r) = A(r, k), Y(i, r) = C(r, i). Small N: i runs over
// M, Mat is A, X(k, r) = B(k, r), Y(i, r) = C(i, r).
//
// cols: blocks of 32 x KG threads; lane l of every warp owns column i = 32 * block + l and keeps
// R running sums; warp w takes k = w, w + KG, ... (four matrix loads in flight per lane), and
// reads X(k, r) as a warp-uniform load (one transaction, from L1). The block then adds its KG
// warps' sums in warp order through shared memory, warp r finishing output r.
// rows: blocks of 8 warps, each warp two rows (16 rows a block; four, 32 a block, for FP32 rows
// in the 16-vector bucket where the grid fills the GPU: rows_take_rpw4). The block stages X for
// a chunk of KC values of k in shared memory as floats (once, for all its rows; FP32 X with
// contiguous vectors in 16-byte aligned columns by 16-byte loads: stage_x_vec), then each lane
// reads 16-byte vectors of its rows (two of 4 floats at k0 + 4 l and k0 + 128 + 4 l, or one of 8
// bf16 at k0 + 8 l; scalar loads when the rows are not 16-byte aligned) and adds them times the
// staged X into RPW x R sums. At the end the warp adds its lanes' sums with shuffles.
// Every sum is formed in a fixed order (it depends on the shape and the alignment only, not on
// the rows a warp takes): results are bit-identical run to run and across devices, without
// atomics or scratch memory.
// A strided batch runs as gridDim.z: block z moves mat, x and y by z times their strides (smat,
// sx, sy elements) first; with klast > 0 the launch's last product has K = klast (split-K's
// shorter last part, kernels/gemm.h).
#include <stdint.h>

#include "gemm.h"
#include "pdl.cuh"
#include "gemm_batch.cuh"
#include "gemm_elem.cuh"

namespace cm_skinny_detail {

using cm_gemm_elem::epilogue;
using cm_gemm_elem::to_f;

constexpr int RMAX = CM__GEMM_SKINNY_MAX; // sums per lane (and row): R <= RMAX

// ---------------------------------------------------------------- cols (Mat i-contiguous)

constexpr int COLS_KG = 16; // warps per block, splitting K
static_assert(COLS_KG >= RMAX, "warp r finishes output r");

template <typename TI, typename TO>
__global__ void __launch_bounds__(32 * COLS_KG)
skinny_cols(int rows, int K, int R, const TI *__restrict__ mat, int64_t ld,
            const TI *__restrict__ x, int64_t xk, int64_t xr, TO *y, int64_t yi, int64_t yr,
            float alpha, float beta, int64_t smat, int64_t sx, int64_t sy, int klast) {
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    {
        const int64_t z = (int64_t)blockIdx.z; // product z of the batch (0 for one)
        mat += z * smat;
        x += z * sx;
        y += z * sy;
    }
    K = cm__gemm_k_of_block(K, klast); // split-K's shorter last part
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int i = blockIdx.x * 32 + lane;
    float acc[RMAX];
#pragma unroll
    for (int r = 0; r < RMAX; ++r) acc[r] = 0.0f;
    if (i < rows) {
        constexpr int U = 4;
        const TI *c = mat + i;
        int k = w;
        for (; k + (U - 1) * COLS_KG < K; k += U * COLS_KG) {
            float m[U];
#pragma unroll
            for (int j = 0; j < U; ++j) m[j] = to_f(__ldg(c + (int64_t)(k + j * COLS_KG) * ld));
#pragma unroll
            for (int j = 0; j < U; ++j) {
                const TI *xp = x + (int64_t)(k + j * COLS_KG) * xk;
#pragma unroll
                for (int r = 0; r < RMAX; ++r)
                    if (r < R) acc[r] = fmaf(m[j], to_f(__ldg(xp + (int64_t)r * xr)), acc[r]);
            }
        }
        for (; k < K; k += COLS_KG) {
            const float m = to_f(__ldg(c + (int64_t)k * ld));
            const TI *xp = x + (int64_t)k * xk;
#pragma unroll
            for (int r = 0; r < RMAX; ++r)
                if (r < R) acc[r] = fmaf(m, to_f(__ldg(xp + (int64_t)r * xr)), acc[r]);
        }
    }
    __shared__ float sums[COLS_KG][RMAX][33];
#pragma unroll
    for (int r = 0; r < RMAX; ++r)
        if (r < R) sums[w][r][lane] = acc[r];
    __syncthreads();
    if (w >= R || i >= rows) return;
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < COLS_KG; ++j) s += sums[j][w][lane];
    epilogue(y + (int64_t)i * yi + (int64_t)w * yr, s, alpha, beta);
}

// ---------------------------------------------------------------- rows (Mat K-contiguous)

constexpr int ROWS_WARPS = 8; // warps per block
constexpr int ROWS_RPW = 2;   // rows per warp
constexpr int KC = 256;       // k values staged per chunk
constexpr int XS_LD = KC + 4; // staged row pitch (floats): 16-byte rows, fewer bank conflicts
static_assert(KC == 32 * ROWS_WARPS, "X's staging: one k of the chunk a thread");

// A lane's segment of a row, as loaded: 4 floats, or 8 bf16 in 4 words (low half first)
template <typename TI> struct Seg;
template <> struct Seg<float> {
    static constexpr int N = 4;
    float4 w;
};
template <> struct Seg<uint16_t> {
    static constexpr int N = 8;
    uint4 w;
};

// The N elements of a row from p (n_left of them inside the row; zeros after): one 16-byte
// load where vec (the row's segments 16-byte aligned) and all are inside, else element loads
__device__ __forceinline__ void load_seg(const float *p, int n_left, bool vec, Seg<float> &s) {
    if (vec && n_left >= 4) {
        s.w = __ldg(reinterpret_cast<const float4 *>(p));
    } else {
        s.w.x = n_left > 0 ? __ldg(p) : 0.0f;
        s.w.y = n_left > 1 ? __ldg(p + 1) : 0.0f;
        s.w.z = n_left > 2 ? __ldg(p + 2) : 0.0f;
        s.w.w = n_left > 3 ? __ldg(p + 3) : 0.0f;
    }
}
__device__ __forceinline__ void load_seg(const uint16_t *p, int n_left, bool vec,
                                         Seg<uint16_t> &s) {
    if (vec && n_left >= 8) {
        s.w = __ldg(reinterpret_cast<const uint4 *>(p));
    } else {
        uint32_t h[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) h[e] = e < n_left ? (uint32_t)__ldg(p + e) : 0u;
        s.w = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                         h[6] | h[7] << 16);
    }
}
// element e of a loaded segment as a float
__device__ __forceinline__ float seg_at(const Seg<float> &s, int e) {
    return e == 0 ? s.w.x : e == 1 ? s.w.y : e == 2 ? s.w.z : s.w.w;
}
__device__ __forceinline__ float seg_at(const Seg<uint16_t> &s, int e) {
    const uint32_t w = e < 2 ? s.w.x : e < 4 ? s.w.y : e < 6 ? s.w.z : s.w.w;
    return __uint_as_float(e % 2 == 0 ? w << 16 : w & 0xffff0000u);
}

// X's chunk (k0 .. k0 + kc - 1) into xs when X(k, r) = x[k * xk + r] with 16-byte aligned
// columns (float, XV): the chunk is KC x RB / 4 groups of 4 vectors, group g at k = g / (RB / 4),
// r = 4 (g % (RB / 4)); thread t loads groups t, t + 32 ROWS_WARPS, ... with one 16-byte load
// each (element loads for a group that crosses R, so that nothing past vector R - 1 is read:
// a column may end there), all in flight before the stores. In the per-k form a warp's load
// of one vector touches 32 columns 4 xk bytes apart (at xk = 16: 16 cache lines a load, 16
// loads a chunk); here a warp's 16-byte load covers 32 / (RB / 4) whole columns (at RB = xk =
// 16: 8 columns, 4 lines, 4 loads a chunk). The L1 / shared-memory pipe these loads share
// with the sums' reads of xs is what the kernel waits on at R = 16.
template <int RB>
__device__ __forceinline__ void stage_x_vec(const float *__restrict__ x, int64_t xk, int R,
                                            int k0, int kc, int t, float (&xs)[RB][XS_LD]) {
    constexpr int G = RB / 4;              // 4-vector groups a k
    constexpr int NJ = KC * G / (32 * ROWS_WARPS); // groups a thread
    static_assert(NJ * 32 * ROWS_WARPS == KC * G, "whole groups a thread");
    const int r0 = 4 * (t % G), kt = t / G;   // thread t's first group
    constexpr int KSTEP = 32 * ROWS_WARPS / G; // k between a thread's groups
    const float *xp = x + (int64_t)(k0 + kt) * xk + r0;
    const int64_t step = (int64_t)KSTEP * xk;
    float4 v[NJ];
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
        const float *q = xp + (int64_t)j * step;
        v[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (kt + j * KSTEP < kc && r0 < R) {
            if (r0 + 4 <= R) {
                v[j] = __ldg(reinterpret_cast<const float4 *>(q));
            } else { // the group that crosses R
                v[j].x = __ldg(q);
                if (r0 + 1 < R) v[j].y = __ldg(q + 1);
                if (r0 + 2 < R) v[j].z = __ldg(q + 2);
            }
        }
    }
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
        const int kk = kt + j * KSTEP;
        xs[r0][kk] = v[j].x;
        xs[r0 + 1][kk] = v[j].y;
        xs[r0 + 2][kk] = v[j].z;
        xs[r0 + 3][kk] = v[j].w;
    }
}

// RB: R rounded up to 4, 8 or 16 (the launcher's bucket): every loop over the vectors runs RB
// times without a test, the vectors R .. RB - 1 staged as zeros (they add nothing and are
// never stored), and the sums take 2 RB registers rather than 2 RMAX. MINB: the blocks a
// multiprocessor is to hold (the launch bounds' minimum, which caps the registers a thread):
// 4 for RB <= 8 and 2 for 16, but 1 for BF16 rows read by element loads in the 8-vector
// bucket (rows_kernel).
// acc[p][r] for a p and r known only at run time, read without dynamic indexing so that acc
// stays in registers
template <int RPW, int RB>
__device__ __forceinline__ float acc_at(const float (&acc)[RPW][RB], int p, int r) {
    float total = 0.0f;
#pragma unroll
    for (int q = 0; q < RPW; ++q)
#pragma unroll
        for (int u = 0; u < RB; ++u)
            if (q == p && u == r) total = acc[q][u];
    return total;
}

// XV: X's vectors are contiguous (xr == 1) in 16-byte aligned columns (xk and the batch stride
// multiples of 4 floats, x 16-byte aligned), staged by 16-byte loads (stage_x_vec): FP32 in the
// 16-vector bucket only (the launcher, run).
template <typename TI, typename TO, int RB, int MINB, int RPW = ROWS_RPW, bool XV = false>
__global__ void __launch_bounds__(32 * ROWS_WARPS, MINB)
skinny_rows(int rows, int K, int R, const TI *__restrict__ mat, int64_t ld,
            const TI *__restrict__ x, int64_t xk, int64_t xr, TO *y, int64_t yi, int64_t yr,
            float alpha, float beta, int vec, int64_t smat, int64_t sx, int64_t sy, int klast) {
    static_assert(RB == 4 || RB == 8 || RB == 16, "the vector buckets");
    static_assert(RB <= RMAX, "at most RMAX vectors");
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    // a lane's k of a chunk: SEGS segments of SE elements at k0 + s * 32 * SE + lane * SE
    constexpr int SE = Seg<TI>::N;
    constexpr int SEGS = KC / (32 * SE);
    static_assert(SEGS * 32 * SE == KC, "a chunk is whole segments");
    __shared__ __align__(16) float xs[RB][XS_LD];
    {
        const int64_t z = (int64_t)blockIdx.z; // product z of the batch (0 for one)
        mat += z * smat;
        x += z * sx;
        y += z * sy;
    }
    K = cm__gemm_k_of_block(K, klast); // split-K's shorter last part
    const int t = (int)threadIdx.x, lane = t & 31, w = t >> 5;
    const int row0 = (blockIdx.x * ROWS_WARPS + w) * RPW;
    const TI *rp[RPW];
    bool rok[RPW];
#pragma unroll
    for (int p = 0; p < RPW; ++p) {
        rok[p] = row0 + p < rows;
        rp[p] = mat + (int64_t)(rok[p] ? row0 + p : 0) * ld;
    }
    float acc[RPW][RB];
#pragma unroll
    for (int p = 0; p < RPW; ++p)
#pragma unroll
        for (int r = 0; r < RB; ++r) acc[p][r] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += KC) {
        const int kc = K - k0 < KC ? K - k0 : KC;
        // 1. the lane's matrix words of this chunk, every one in flight before X's staging
        //    below, so that their latency and the staging's overlap (one of each a chunk)
        Seg<TI> m[SEGS][RPW];
#pragma unroll
        for (int s = 0; s < SEGS; ++s)
#pragma unroll
            for (int p = 0; p < RPW; ++p) {
                const int kk = s * 32 * SE + lane * SE; // first k of the segment in the chunk
                load_seg(rp[p] + k0 + kk, rok[p] ? kc - kk : 0, vec != 0, m[s][p]);
            }
        // 2. X's chunk as floats: thread t stages k0 + t of every vector, all its loads in
        //    flight before its stores (zeros past K and for the vectors R .. RB - 1); XV:
        //    consecutive threads load consecutive 4-vector groups of one k instead
        __syncthreads(); // the previous chunk's reads of xs are done
        if constexpr (XV) {
            stage_x_vec<RB>(x, xk, R, k0, kc, t, xs);
        } else {
            const bool kin = t < kc;
            const TI *xp = x + (int64_t)(k0 + (kin ? t : 0)) * xk;
            float v[RB];
#pragma unroll
            for (int r = 0; r < RB; ++r)
                v[r] = kin && r < R ? to_f(__ldg(xp + (int64_t)r * xr)) : 0.0f;
#pragma unroll
            for (int r = 0; r < RB; ++r) xs[r][t] = v[r];
        }
        __syncthreads();
        // 3. the sums
#pragma unroll
        for (int s = 0; s < SEGS; ++s) {
            const int kk = s * 32 * SE + lane * SE;
#pragma unroll
            for (int r = 0; r < RB; ++r) {
                float xv[SE];
#pragma unroll
                for (int q = 0; q < SE / 4; ++q) {
                    const float4 u = *reinterpret_cast<const float4 *>(&xs[r][kk + 4 * q]);
                    xv[4 * q] = u.x;
                    xv[4 * q + 1] = u.y;
                    xv[4 * q + 2] = u.z;
                    xv[4 * q + 3] = u.w;
                }
#pragma unroll
                for (int p = 0; p < RPW; ++p)
#pragma unroll
                    for (int e = 0; e < SE; ++e)
                        acc[p][r] = fmaf(seg_at(m[s][p], e), xv[e], acc[p][r]);
            }
        }
    }
    // every lane ends with the warp's totals; lane l writes outputs l, l + 32, ... (row o / R,
    // vector o % R)
#pragma unroll
    for (int p = 0; p < RPW; ++p)
#pragma unroll
        for (int r = 0; r < RB; ++r) {
            if (r >= R) continue; // the same on every lane
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                acc[p][r] += __shfl_xor_sync(0xffffffffu, acc[p][r], o);
        }
    if constexpr (RPW * RMAX <= 32) { // one output per lane
        const int p = lane / R, r = lane % R;
        if (p >= RPW || row0 + p >= rows) return;
        epilogue(y + (int64_t)(row0 + p) * yi + (int64_t)r * yr, acc_at(acc, p, r), alpha, beta);
    } else {
        for (int o = lane; o < RPW * R; o += 32) {
            const int p = o / R, r = o % R;
            if (row0 + p >= rows) break; // later outputs are on later rows
            epilogue(y + (int64_t)(row0 + p) * yi + (int64_t)r * yr, acc_at(acc, p, r), alpha,
                     beta);
        }
    }
}

// The skinny_rows form for R vectors: R's bucket (RB) and its bound on registers (MINB).
// BF16 rows that are not 16-byte aligned (a leading dimension off a multiple of 8: an odd K,
// say) are read 8 elements a segment by element loads (elem); in the 8-vector bucket, bounded
// to 4 blocks a multiprocessor (64 registers a thread), they ran 0.78x cuBLAS at 7 x 3001 x
// 3001 "TN" and 0.84x at 5 x 10000 x 999, and unbounded 0.97x and 0.95x (H100; the same change
// cost FP32 and vector-load BF16 shapes up to 20 %: bench/NOTES-gemm.md). FP32 has no such form
// (not instantiated).
template <typename TI, typename TO> auto rows_kernel(int R, bool elem) {
    if constexpr (sizeof(TI) == 2) {
        if (elem && R > 4 && R <= 8) return skinny_rows<TI, TO, 8, 1>;
    }
    return R <= 4 ? skinny_rows<TI, TO, 4, 4>
                  : R <= 8 ? skinny_rows<TI, TO, 8, 4> : skinny_rows<TI, TO, 16, 2>;
}

// The FP32-input 16-vector bucket with 4 rows a warp (RPW 4) where its grid still fills the
// GPU. With 2 rows a warp each 16-byte shared-memory read of staged X feeds 8 FMAs, and at R =
// 16 a chunk spends about twice as long on shared memory as on FMAs, above the matrix's DRAM
// time; 4 rows halve the reads a sum. It halves the blocks too, so it takes only grids of at
// least a block a multiprocessor (H100 against cuBLAS, 2 rows -> 4: FP32 16 x 4096 x 4096
// NN 0.69 -> 0.95x, TN 0.87 -> 1.15x, 16 x 8192 x 8192 NN 0.55 -> 0.80x, 12 x 8192 x 1024 TN
// 1.13 -> 1.27x, TF32 16 x 4096 x 4096 NN 0.49 -> 0.68x; on grids of 1.2-1.4 blocks a
// multiprocessor, once left on 2 rows: 16 x 6000 x 2001 NN / TN 0.56 / 0.74 -> 0.79 / 0.98x,
// 16 x 5000 x 1501 0.56 / 0.82 -> 0.76 / 0.95x, 12 x 6000 x 2001 0.83 / 0.79 -> 1.01 / 1.02x,
// 14 x 5000 x 1500 0.94 / 0.87 -> 1.07 / 1.00x, 10 x 5000 x 1500 1.00 / 0.92 -> 1.09 / 1.08x,
// 6000 x 16 x 2001 TN 0.85 -> 1.12x; on grids under a block a multiprocessor (94-128 blocks)
// 2 rows win: 16 x 4096 x 2048 TN 1.26 -> 0.97x, 13 x 4096 x 2048 1.31 -> 1.09x, 3001 x 12 x
// 2001 TN 1.41 -> 1.21x, 16 x 3001 x 2001 TN 1.02 -> 0.87x: bench/NOTES-gemm.md).
// BF16 rows keep 2 (unmeasured), as does sm_count < 1 (unknown).
constexpr int ROWS_RPW4 = 4;
template <typename TI> bool rows_take_rpw4(int R, int rows, unsigned nz, int sm_count) {
    if (sizeof(TI) != 4 || R <= 8 || sm_count < 1) return false;
    const int64_t per_block = ROWS_WARPS * ROWS_RPW4;
    const int64_t blocks = (rows + per_block - 1) / per_block * (int64_t)nz;
    return blocks >= (int64_t)sm_count;
}

// One launch of the vector view v (kernels/gemm_elem.cuh): `batch` products (at most
// CM__GEMM_MAX_BATCH_PER_LAUNCH) as gridDim.z.
template <typename TI, typename TO>
cudaError_t run(const cm__gemm_vec_view &v, int K, int klast, float alpha, float beta, int batch,
                int sm_count, cudaStream_t stream) {
    const int rows = v.rows, R = v.R;
    const int64_t ld = v.ld, xk = v.xk, xr = v.xr, yi = v.yi, yr = v.yr, smat = v.smat,
                  sx = v.sx, sy = v.sy;
    const TI *mat = static_cast<const TI *>(v.mat);
    const TI *x = static_cast<const TI *>(v.x);
    TO *y = static_cast<TO *>(v.y);
    const unsigned nz = (unsigned)batch;
    if (v.kmajor) {
        const int64_t ve = 16 / (int64_t)sizeof(TI); // elements per 16-byte vector
        const int vec = ld % ve == 0 && cm__gemm_batch_aligned(mat, smat, (int64_t)sizeof(TI), 16);
        const bool rpw4 = rows_take_rpw4<TI>(R, rows, nz, sm_count);
        const int per_block = ROWS_WARPS * (rpw4 ? ROWS_RPW4 : ROWS_RPW);
        const dim3 grid((unsigned)((rows + per_block - 1) / per_block), 1, nz);
        auto kernel = rows_kernel<TI, TO>(R, vec == 0);
        if constexpr (sizeof(TI) == 4) {
            // X's vectors contiguous in 16-byte aligned columns (small M "NN": X = A, xk =
            // lda) in the 16-vector bucket: the 16-byte staging (stage_x_vec). Below R = 9 the
            // per-k form issues at most 8 loads a chunk (16 at R > 8) and those buckets ran
            // 1.3-2.3x cuBLAS with it at lda = R (H100, bench/NOTES-gemm.md): not compiled
            const bool xv = R > 8 && xr == 1 && xk % 4 == 0 &&
                            cm__gemm_batch_aligned(x, sx, 4, 16);
            if (rpw4)
                kernel = xv ? skinny_rows<TI, TO, 16, 2, ROWS_RPW4, true>
                            : skinny_rows<TI, TO, 16, 2, ROWS_RPW4>;
            else if (xv)
                kernel = skinny_rows<TI, TO, 16, 2, ROWS_RPW, true>;
        }
        kernel<<<grid, 32 * ROWS_WARPS, 0, stream>>>(rows, K, R, mat, ld, x, xk, xr, y, yi, yr,
                                                     alpha, beta, vec, smat, sx, sy, klast);
    } else {
        const dim3 grid((unsigned)((rows + 31) / 32), 1, nz);
        skinny_cols<TI, TO><<<grid, 32 * COLS_KG, 0, stream>>>(
            rows, K, R, mat, ld, x, xk, xr, y, yi, yr, alpha, beta, smat, sx, sy, klast);
    }
    return cudaGetLastError();
}

} // namespace cm_skinny_detail

// One launch of p (batch 1 .. CM__GEMM_MAX_BATCH_PER_LAUNCH; strides 0 for one product): the
// smaller side of C is the vectors.
static cudaError_t skinny_one_launch(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream) {
    using namespace cm_skinny_detail;
    const cm__gemm_vec_view v = cm__gemm_vec_view_of(p, p->m <= p->n);
    const bool bf16_in = p->in_type == CM__GEMM_BF16, bf16_out = p->out_type == CM__GEMM_BF16;
    if (!bf16_in && !bf16_out)
        return run<float, float>(v, p->k, p->k_last, p->alpha, p->beta, p->batch, sm_count,
                                 stream);
    if (bf16_in && !bf16_out)
        return run<uint16_t, float>(v, p->k, p->k_last, p->alpha, p->beta, p->batch, sm_count,
                                    stream);
    return run<uint16_t, uint16_t>(v, p->k, p->k_last, p->alpha, p->beta, p->batch, sm_count,
                                   stream);
}

extern "C" cudaError_t cm__gemm_skinny(const cm__gemm_args_t *p, int sm_count,
                                       cudaStream_t stream) {
    if (p == NULL || p->k <= 0 || p->m <= 0 || p->n <= 0) return cudaErrorInvalidValue;
    const int small = p->m <= p->n ? p->m : p->n;
    if (small > CM__GEMM_SKINNY_MAX) return cudaErrorInvalidValue;
    // float in, bf16 out: no precision asks for it
    if (p->in_type != CM__GEMM_BF16 && p->out_type == CM__GEMM_BF16) return cudaErrorInvalidValue;
    return cm__gemm_for_each_launch(p, [&](const cm__gemm_args_t *q) {
        return skinny_one_launch(q, sm_count, stream);
    });
}
