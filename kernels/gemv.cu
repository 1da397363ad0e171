// Matrix-vector products behind cm_gemm() for the shapes where one side of C is a vector
// (normalised M == 1 or N == 1, kernels/gemm.h): y = alpha * Mat x + beta * y, bandwidth-bound,
// for every precision (FP32 arithmetic with FP32 accumulation: TF32 problems get at least TF32
// accuracy; BF16 inputs are widened exactly; a BF16 output is rounded once at the end).
//
// One problem y[i], i < rows, y[i] = alpha * sum_k Mat(i, k) x(k) + beta * y[i]  (beta == 0:
// y never read), with x(k) = x[k * incx] and Mat in one of two orientations:
//   rows: Mat(i, k) = mat[i * ld + k]  (K contiguous: one dot product per row)
//   cols: Mat(i, k) = mat[k * ld + i]  (i contiguous: every k adds a scaled column)
// N == 1: i runs over M, Mat is A (rows when A is K-contiguous), x is B's column, y is C's
// column (stride ldc). M == 1: i runs over N, Mat is B (rows when B is K-contiguous), x is A's
// row, y is C's row.
//
// rows: warps read 16-byte vectors of a row (when the row starts and the leading dimension keep
// 16-byte alignment and x is contiguous and aligned; scalar loads otherwise), each lane keeps one
// running sum, the warp combines them with shuffles; with few rows several warps share a row and
// combine through shared memory. cols: each lane owns one i (two adjacent bf16 ones, read as one
// 32-bit word, when aligned), the block's warps split K, and the block combines their sums
// through shared memory. Every sum is formed in a fixed order (the
// order depends on the shape, the alignment and the multiprocessor count only), so results are
// bit-identical run to run, without atomics or scratch memory.
// A strided batch runs as gridDim.z: block z moves mat, x and y by z times their strides
// (smat, sx, sy elements) before anything else. Each kernel has a single-product instantiation
// (BATCHED false) without those offsets, so that its code is what it was before batches existed
// (with them these kernels take 6 to 8 more registers: 38 instead of 32 costs a quarter of the
// resident warps of the 256-thread rows kernels).
#include <stdint.h>

#include <type_traits>

#include "gemm.h"
#include "pdl.cuh"
#include "gemm_batch.cuh"
#include "gemm_elem.cuh"

namespace cm_gemv_detail {

using cm_gemm_elem::epilogue;
using cm_gemm_elem::store;
using cm_gemm_elem::to_f;

// Dot product of one 16-byte vector of each operand, added to acc.
__device__ __forceinline__ float dot16(const float *a, const float *b, float acc) {
    const float4 u = __ldg(reinterpret_cast<const float4 *>(a));
    const float4 v = __ldg(reinterpret_cast<const float4 *>(b));
    acc = fmaf(u.x, v.x, acc);
    acc = fmaf(u.y, v.y, acc);
    acc = fmaf(u.z, v.z, acc);
    return fmaf(u.w, v.w, acc);
}
__device__ __forceinline__ float dot16(const uint16_t *a, const uint16_t *b, float acc) {
    const uint4 u = __ldg(reinterpret_cast<const uint4 *>(a));
    const uint4 v = __ldg(reinterpret_cast<const uint4 *>(b));
    const uint32_t uw[4] = {u.x, u.y, u.z, u.w}, vw[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        acc = fmaf(__uint_as_float(uw[j] << 16), __uint_as_float(vw[j] << 16), acc);
        acc = fmaf(__uint_as_float(uw[j] & 0xffff0000u), __uint_as_float(vw[j] & 0xffff0000u), acc);
    }
    return acc;
}

// rows: WARPS warps per block, WPR of them per row (WARPS / WPR rows per block).
template <typename TI, typename TO, int WARPS, int WPR, bool BATCHED>
__global__ void __launch_bounds__(WARPS * 32)
gemv_rows(int rows, int K, const TI *__restrict__ mat, int64_t ld, const TI *__restrict__ x,
          int64_t incx, TO *y, int64_t incy, float alpha, float beta, int vec, int64_t smat,
          int64_t sx, int64_t sy, int klast) {
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    constexpr int VE = 16 / (int)sizeof(TI); // elements per 16-byte vector
    if (BATCHED) {                           // product blockIdx.z of the batch
        const int64_t z = (int64_t)blockIdx.z;
        mat += z * smat;
        x += z * sx;
        y += z * sy;
        K = cm__gemm_k_of_block(K, klast); // split-K's shorter last part
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int row = blockIdx.x * (WARPS / WPR) + warp / WPR;
    const int part = warp % WPR;
    float acc = 0.0f;
    if (row < rows) {
        const TI *r = mat + (int64_t)row * ld;
        int k0 = 0;
        if (vec) {
            const int nv = K / VE;
            float acc2 = 0.0f; // a second chain: two independent loads in flight per lane
            int v = part * 32 + lane;
            for (; v + WPR * 32 < nv; v += 2 * WPR * 32) {
                acc = dot16(r + (int64_t)v * VE, x + (int64_t)v * VE, acc);
                acc2 = dot16(r + (int64_t)(v + WPR * 32) * VE, x + (int64_t)(v + WPR * 32) * VE,
                             acc2);
            }
            if (v < nv) acc = dot16(r + (int64_t)v * VE, x + (int64_t)v * VE, acc);
            acc += acc2;
            k0 = nv * VE;
        }
#pragma unroll 4
        for (int k = k0 + part * 32 + lane; k < K; k += WPR * 32)
            acc = fmaf(to_f(r[k]), to_f(x[(int64_t)k * incx]), acc);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (WPR > 1) {
        __shared__ float sums[WARPS];
        if (lane == 0) sums[warp] = acc;
        __syncthreads();
        if (part != 0 || lane != 0 || row >= rows) return;
        acc = 0.0f;
#pragma unroll
        for (int w = 0; w < WPR; ++w) acc += sums[warp + w];
    } else if (lane != 0 || row >= rows) {
        return;
    }
    epilogue(y + (int64_t)row * incy, acc, alpha, beta);
}

// cols: blocks of 32 x KG threads; lane i of every warp owns column i of the block's 32, warp w
// takes k = w, w + KG, ... (eight loads in flight per lane), then the block adds the KG sums in
// warp order.
template <typename TI, typename TO, int KG, bool BATCHED>
__global__ void __launch_bounds__(32 * KG)
gemv_cols(int rows, int K, const TI *__restrict__ mat, int64_t ld, const TI *__restrict__ x,
          int64_t incx, TO *y, int64_t incy, float alpha, float beta, int64_t smat, int64_t sx,
          int64_t sy, int klast) {
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    if (BATCHED) { // product blockIdx.z of the batch
        const int64_t z = (int64_t)blockIdx.z;
        mat += z * smat;
        x += z * sx;
        y += z * sy;
        K = cm__gemm_k_of_block(K, klast); // split-K's shorter last part
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int i = blockIdx.x * 32 + lane;
    float acc = 0.0f;
    if (i < rows) {
        constexpr int U = 8;
        const TI *c = mat + i;
        int k = w;
        for (; k + (U - 1) * KG < K; k += U * KG) {
            float m[U], v[U];
#pragma unroll
            for (int j = 0; j < U; ++j) {
                m[j] = to_f(__ldg(c + (int64_t)(k + j * KG) * ld));
                v[j] = to_f(__ldg(x + (int64_t)(k + j * KG) * incx));
            }
#pragma unroll
            for (int j = 0; j < U; ++j) acc = fmaf(m[j], v[j], acc);
        }
        for (; k < K; k += KG) acc = fmaf(to_f(c[(int64_t)k * ld]), to_f(x[(int64_t)k * incx]), acc);
    }
    __shared__ float sums[KG][33];
    sums[w][lane] = acc;
    __syncthreads();
    if (w != 0 || i >= rows) return;
    acc = 0.0f;
#pragma unroll 8
    for (int j = 0; j < KG; ++j) acc += sums[j][lane];
    epilogue(y + (int64_t)i * incy, acc, alpha, beta);
}

// cols for bf16 with 4-byte aligned pairs (base and leading dimension even): lane l owns the two
// columns 2l, 2l + 1 of the block's 64 and reads them with one 32-bit load (a warp reads 128
// contiguous bytes of a row of the matrix, as the float kernel does), otherwise as gemv_cols.
template <typename TO, int KG, bool BATCHED>
__global__ void __launch_bounds__(32 * KG)
gemv_cols_bf16x2(int rows, int K, const uint16_t *__restrict__ mat, int64_t ld,
                 const uint16_t *__restrict__ x, int64_t incx, TO *y, int64_t incy, float alpha,
                 float beta, int64_t smat, int64_t sx, int64_t sy, int klast) {
    cm__pdl_launch_dependents(); // kernels/pdl.cuh
    if (BATCHED) { // product blockIdx.z of the batch
        const int64_t z = (int64_t)blockIdx.z;
        mat += z * smat;
        x += z * sx;
        y += z * sy;
        K = cm__gemm_k_of_block(K, klast); // split-K's shorter last part
    }
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int i = blockIdx.x * 64 + 2 * lane;
    float acc0 = 0.0f, acc1 = 0.0f;
    if (i < rows) {
        const uint32_t *c = reinterpret_cast<const uint32_t *>(mat + i);
        const int64_t ldw = ld / 2; // leading dimension in 32-bit words
        int k = w;
        for (; k + 7 * KG < K; k += 8 * KG) {
            uint32_t m[8];
            float v[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                m[j] = __ldg(c + (int64_t)(k + j * KG) * ldw);
                v[j] = to_f(__ldg(x + (int64_t)(k + j * KG) * incx));
            }
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                acc0 = fmaf(__uint_as_float(m[j] << 16), v[j], acc0);
                acc1 = fmaf(__uint_as_float(m[j] & 0xffff0000u), v[j], acc1);
            }
        }
        for (; k < K; k += KG) {
            const uint32_t m = c[(int64_t)k * ldw];
            const float v = to_f(x[(int64_t)k * incx]);
            acc0 = fmaf(__uint_as_float(m << 16), v, acc0);
            acc1 = fmaf(__uint_as_float(m & 0xffff0000u), v, acc1);
        }
    }
    __shared__ float sums[KG][65];
    sums[w][2 * lane] = acc0;
    sums[w][2 * lane + 1] = acc1;
    __syncthreads();
    if (w != 0 || i >= rows) return;
    acc0 = 0.0f;
    acc1 = 0.0f;
#pragma unroll 8
    for (int j = 0; j < KG; ++j) {
        acc0 += sums[j][2 * lane];
        acc1 += sums[j][2 * lane + 1];
    }
    epilogue(y + (int64_t)i * incy, acc0, alpha, beta);
    if (i + 1 < rows) epilogue(y + (int64_t)(i + 1) * incy, acc1, alpha, beta);
}

// One launch: `batch` products (at most CM__GEMM_MAX_BATCH_PER_LAUNCH) as gridDim.z, product
// z on mat, x, y moved by z * smat, z * sx, z * sy elements (all 0 for one product); with
// klast > 0 the last product has K = klast (split-K's shorter last part, kernels/gemm.h).
// The vector view v (kernels/gemm_elem.cuh) with R = 1: x(k) = X(k, 0), y[i] = Y(i, 0).
template <typename TI, typename TO, bool BATCHED>
cudaError_t run(const cm__gemm_vec_view &v, int K, int klast, float alpha, float beta,
                int sm_count, int batch, cudaStream_t stream) {
    const int rows = v.rows, mat_kmajor = v.kmajor;
    const int64_t ld = v.ld, incx = v.xk, incy = v.yi, smat = v.smat, sx = v.sx, sy = v.sy;
    const TI *mat = static_cast<const TI *>(v.mat);
    const TI *x = static_cast<const TI *>(v.x);
    TO *y = static_cast<TO *>(v.y);
    const unsigned nz = (unsigned)batch;
    if (mat_kmajor) {
        constexpr int VE = 16 / (int)sizeof(TI);
        // 16-byte vectors of every product's rows and x
        const int vec = ld % VE == 0 && incx == 1 &&
                        cm__gemm_batch_aligned(mat, smat, (int64_t)sizeof(TI), 16) &&
                        cm__gemm_batch_aligned(x, sx, (int64_t)sizeof(TI), 16);
        // one warp per row when the rows (of every product) alone fill the GPU (>= 4 warps per
        // multiprocessor of 64 resident), else eight warps share a row, or 32 for a handful
        const long long work = (long long)rows * batch;
        if (work >= 32LL * sm_count) {
            const dim3 grid((unsigned)(rows + 7) / 8, 1, nz);
            gemv_rows<TI, TO, 8, 1, BATCHED><<<grid, 256, 0, stream>>>(
                rows, K, mat, ld, x, incx, y, incy, alpha, beta, vec, smat, sx, sy, klast);
        } else if (work >= 2LL * sm_count) {
            gemv_rows<TI, TO, 8, 8, BATCHED><<<dim3((unsigned)rows, 1, nz), 256, 0, stream>>>(
                rows, K, mat, ld, x, incx, y, incy, alpha, beta, vec, smat, sx, sy, klast);
        } else {
            gemv_rows<TI, TO, 32, 32, BATCHED><<<dim3((unsigned)rows, 1, nz), 1024, 0, stream>>>(
                rows, K, mat, ld, x, incx, y, incy, alpha, beta, vec, smat, sx, sy, klast);
        }
    } else if (sizeof(TI) == 2 && ld % 2 == 0 && cm__gemm_batch_aligned(mat, smat, 2, 4)) {
        const dim3 grid((unsigned)(rows + 63) / 64, 1, nz);
        gemv_cols_bf16x2<TO, 32, BATCHED><<<grid, 1024, 0, stream>>>(
            rows, K, reinterpret_cast<const uint16_t *>(mat), ld,
            reinterpret_cast<const uint16_t *>(x), incx, y, incy, alpha, beta, smat, sx, sy,
            klast);
    } else {
        const dim3 grid((unsigned)(rows + 31) / 32, 1, nz);
        gemv_cols<TI, TO, 32, BATCHED><<<grid, 1024, 0, stream>>>(
            rows, K, mat, ld, x, incx, y, incy, alpha, beta, smat, sx, sy, klast);
    }
    return cudaGetLastError();
}

} // namespace cm_gemv_detail

// One launch of p (batch 1 .. CM__GEMM_MAX_BATCH_PER_LAUNCH; strides 0 for one product).
static cudaError_t gemv_one_launch(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream) {
    using namespace cm_gemv_detail;
    // n == 1: y = C's column, Mat = A, x = B's column; m == 1: y = C's row, Mat = B, x = A's row
    const cm__gemm_vec_view v = cm__gemm_vec_view_of(p, p->n != 1);
    const bool bf16_in = p->in_type == CM__GEMM_BF16, bf16_out = p->out_type == CM__GEMM_BF16;
    // the kernels of one product, or of a batch
    auto go = [&](auto batched) {
        constexpr bool B = decltype(batched)::value;
        const int K = p->k, kl = p->k_last;
        if (!bf16_in && !bf16_out)
            return run<float, float, B>(v, K, kl, p->alpha, p->beta, sm_count, p->batch, stream);
        if (bf16_in && !bf16_out)
            return run<uint16_t, float, B>(v, K, kl, p->alpha, p->beta, sm_count, p->batch,
                                           stream);
        return run<uint16_t, uint16_t, B>(v, K, kl, p->alpha, p->beta, sm_count, p->batch,
                                          stream);
    };
    return p->batch > 1 ? go(std::true_type{}) : go(std::false_type{});
}

extern "C" cudaError_t cm__gemm_gemv(const cm__gemm_args_t *p, int sm_count, cudaStream_t stream) {
    if (p == NULL || p->k <= 0 || (p->m != 1 && p->n != 1) || p->m <= 0 || p->n <= 0)
        return cudaErrorInvalidValue;
    // float in, bf16 out: no precision asks for it
    if (p->in_type != CM__GEMM_BF16 && p->out_type == CM__GEMM_BF16) return cudaErrorInvalidValue;
    if (sm_count < 1) sm_count = 1;
    return cm__gemm_for_each_launch(p, [&](const cm__gemm_args_t *q) {
        return gemv_one_launch(q, sm_count, stream);
    });
}
