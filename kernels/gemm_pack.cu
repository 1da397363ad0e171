// Operand staging for the GEMM (kernels/gemm.h, cm__gemm_pack_pair and cm__gemm_pack_batched):
// the Hopper path's wgmma kernel (kernels/gemm_sm90.cu) reads both operands contiguous along K
// with 16-byte rows through bulk tensor copies, and mma.sync's cp.async chunks need 16-byte
// rows too. An operand
// that runs along M / N ("NN", "NT"... in the public API) is transposed here into
// stream-ordered scratch; one that is K-contiguous but has rows off 16 bytes (K = 3001, 127...)
// is copied into rows of a padded length (src/compute/gemm_api.c, cm__gemm_stage). Two
// operands go in one launch (a small product's staging costs one launch, not two); one operand
// runs its own transpose kernel, which was faster on large one-sided transposes than the pair
// kernel on the H200 (bench/NOTES-gemm.md), or a pitched copy.
//
// 32 x 32 element tiles, a block of 32 x 8 threads per tile. A transposed tile goes through
// shared memory: read with consecutive threads on consecutive r (coalesced), written with
// consecutive threads on consecutive k (coalesced). Rows of the shared tile are padded so that
// the column-wise reads hit 32 different banks: 33 words for 4-byte elements, 34 halves (17
// words, odd) for 2-byte ones. A K-contiguous operand is copied row by row, consecutive threads on
// consecutive k: 16 bytes a thread where the destination's rows start on 16 bytes (loads as wide
// as the source's alignment allows), else an element a thread.
#include <stdint.h>

#include <cuda_bf16.h>

#include "gemm.h"
#include "pdl.cuh"

namespace {

constexpr int TILE = 32, ROWS = 8;

// One 32 x 32 tile (rows r0.., k values k0..) of an r-contiguous source, src[k*ld + r], into
// dst[r*ldd + k] through the shared tile; every thread of the block calls it (its barriers).
template <typename T, int PAD>
__device__ __forceinline__ void transpose_tile(const T *src, long long ld, T *dst, long long ldd,
                                               int r0, int k0, int kdim, int rdim,
                                               T (&tile)[TILE][PAD]) {
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        const int k = k0 + ty + j, r = r0 + tx;
        if (k < kdim && r < rdim) tile[ty + j][tx] = __ldg(&src[(long long)k * ld + r]);
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        const int r = r0 + ty + j, k = k0 + tx;
        if (k < kdim && r < rdim) dst[(long long)r * ldd + k] = tile[tx][ty + j];
    }
    __syncthreads();
}

// The transpose of one operand (cm__gemm_pack_batched): blocks (r-tile, k-tile), k-tiles
// gridDim.y apart. blockIdx.z: matrix z of a batch, src + z * src_stride, dst + z * dst_stride
template <typename T>
__global__ void __launch_bounds__(TILE *ROWS) gemm_pack_kernel(const T *__restrict__ src,
                                                               long long ld, int kdim, int rdim,
                                                               T *__restrict__ dst,
                                                               long long ldd, int k_tiles,
                                                               long long src_stride,
                                                               long long dst_stride) {
    cm__pdl_launch_dependents(); // the GEMM after it may be scheduled (kernels/pdl.cuh)
    constexpr int PAD = TILE + (int)(4 / sizeof(T));
    __shared__ T tile[TILE][PAD];
    src += (long long)blockIdx.z * src_stride;
    dst += (long long)blockIdx.z * dst_stride;
    const int r0 = (int)blockIdx.x * TILE;
    for (int kt = (int)blockIdx.y; kt < k_tiles; kt += (int)gridDim.y)
        transpose_tile(src, ld, dst, ldd, r0, kt * TILE, kdim, rdim, tile);
}

template <typename T>
struct PackSide {
    const T *src;
    T *dst;
    long long ld, ldd, src_stride, dst_stride;
    int rows, count, kmajor;
    int r_tiles;  // 0 for an operand not staged
    // K-contiguous side: 1 when every dst row starts on 16 bytes (16-byte stores), and the
    // bytes every src row start is aligned to (16, 8, 4 or 2: the loads' width)
    int vec, src_align;
};

// 16 bytes (16 / sizeof(T) elements) from p, read in units of src_align bytes (the alignment of
// p: 16, 8, 4 or 2), as one 16-byte vector
template <typename T>
__device__ __forceinline__ uint4 load16(const T *p, int src_align) {
    if (src_align >= 16) return __ldg(reinterpret_cast<const uint4 *>(p));
    if (src_align == 8) {
        const uint2 *q = reinterpret_cast<const uint2 *>(p);
        const uint2 x = __ldg(q), y = __ldg(q + 1);
        return make_uint4(x.x, x.y, y.x, y.y);
    }
    if (src_align == 4) {
        const unsigned *q = reinterpret_cast<const unsigned *>(p);
        return make_uint4(__ldg(q), __ldg(q + 1), __ldg(q + 2), __ldg(q + 3));
    }
    const unsigned short *q = reinterpret_cast<const unsigned short *>(p);
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
        w[i] = (unsigned)__ldg(q + 2 * i) | ((unsigned)__ldg(q + 2 * i + 1) << 16);
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Grid x: operand a's r-tiles, then b's; y: k-tiles, a block walks its k-tiles gridDim.y
// apart; z: matrix z0 + blockIdx.z of the batch (a side with fewer matrices, one shared by the
// batch, stages only its own). The block's side, tile row and matrix come from its indices
// without a division; the fields are picked one by one (not a copy of the whole side). At
// least CM__PACK_MIN_BLOCKS blocks a multiprocessor (40 registers on sm_90, no spills).
// Blocks of 256 threads a multiprocessor holds at most: 4 on sm_75 (1024 threads), 6 on sm_80+
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#  define CM__PACK_MIN_BLOCKS 4
#else
#  define CM__PACK_MIN_BLOCKS 6
#endif

template <typename T>
__global__ void __launch_bounds__(TILE *ROWS, CM__PACK_MIN_BLOCKS)
    gemm_pack_pair_kernel(PackSide<T> a, PackSide<T> b, int kdim, int k_tiles, int z0) {
    cm__pdl_launch_dependents(); // the GEMM after it may be scheduled (kernels/pdl.cuh)
    constexpr int PAD = TILE + (int)(4 / sizeof(T));
    __shared__ T tile[TILE][PAD];
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const bool on_a = (int)blockIdx.x < a.r_tiles;
    const int z = z0 + (int)blockIdx.z;
    if (z >= (on_a ? a.count : b.count)) return;  // the whole block: no barrier skipped
    const int r0 = (on_a ? (int)blockIdx.x : (int)blockIdx.x - a.r_tiles) * TILE;
    const int rows = on_a ? a.rows : b.rows;
    const long long ld = on_a ? a.ld : b.ld, ldd = on_a ? a.ldd : b.ldd;
    const T *src = (on_a ? a.src : b.src) + (long long)z * (on_a ? a.src_stride : b.src_stride);
    T *dst = (on_a ? a.dst : b.dst) + (long long)z * (on_a ? a.dst_stride : b.dst_stride);
    if (on_a ? a.kmajor : b.kmajor) {
        for (int kt = (int)blockIdx.y; kt < k_tiles; kt += (int)gridDim.y) {
#pragma unroll
            for (int j = 0; j < TILE; j += ROWS) {
                const int r = r0 + ty + j, k = kt * TILE + tx;
                if (k < kdim && r < rows)
                    dst[(long long)r * ldd + k] = __ldg(&src[(long long)r * ld + k]);
            }
        }
        return;
    }
    for (int kt = (int)blockIdx.y; kt < k_tiles; kt += (int)gridDim.y)
        transpose_tile(src, ld, dst, ldd, r0, kt * TILE, kdim, rows, tile);
}

// The K-contiguous sides whose dst rows start on 16 bytes (PackSide::vec), 16 bytes a thread:
// a warp copies 512 contiguous bytes of one row (loads as wide as src_align allows), a block
// 32 rows of TILE such chunks, its chunk tiles gridDim.y apart; the last chunk of a row, past
// K, element by element. Grid x: a's r-tiles, then b's (a side not copied here has none);
// z: matrix z0 + blockIdx.z. No shared memory, so not the pair kernel's register budget.
template <typename T>
__global__ void __launch_bounds__(TILE *ROWS)
    gemm_copy_rows_kernel(PackSide<T> a, PackSide<T> b, int kdim, int c_tiles, int z0) {
    cm__pdl_launch_dependents(); // the GEMM after it may be scheduled (kernels/pdl.cuh)
    constexpr int V = 16 / (int)sizeof(T);
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    const bool on_a = (int)blockIdx.x < a.r_tiles;
    const int z = z0 + (int)blockIdx.z;
    if (z >= (on_a ? a.count : b.count)) return;
    const int r0 = (on_a ? (int)blockIdx.x : (int)blockIdx.x - a.r_tiles) * TILE;
    const int rows = on_a ? a.rows : b.rows, src_align = on_a ? a.src_align : b.src_align;
    const long long ld = on_a ? a.ld : b.ld, ldd = on_a ? a.ldd : b.ldd;
    const T *src = (on_a ? a.src : b.src) + (long long)z * (on_a ? a.src_stride : b.src_stride);
    T *dst = (on_a ? a.dst : b.dst) + (long long)z * (on_a ? a.dst_stride : b.dst_stride);
    for (int ct = (int)blockIdx.y; ct < c_tiles; ct += (int)gridDim.y) {
        const int k = (ct * TILE + tx) * V;
        if (k >= kdim) continue;
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            const int r = r0 + ty + j;
            if (r >= rows) continue;
            const T *s = src + (long long)r * ld + k;
            T *d = dst + (long long)r * ldd + k;
            if (k + V <= kdim) {
                *reinterpret_cast<uint4 *>(d) = load16(s, src_align);
            } else {
                for (int i = 0; k + i < kdim; ++i) d[i] = __ldg(s + i);
            }
        }
    }
}

// the side's kernel form; false for arguments the header's rules refuse
template <typename T>
bool pack_side(const cm__gemm_pack_side_t *in, int kdim, PackSide<T> *out) {
    *out = PackSide<T>{};
    if (in == NULL) return true;
    if (in->src == NULL || in->dst == NULL || in->rows < 0 || in->ldd < kdim ||
        in->ld < (in->kmajor ? (int64_t)kdim : (int64_t)in->rows) || in->src_stride < 0 ||
        in->dst_stride < 0)
        return false;
    const long long r_tiles = ((long long)in->rows + TILE - 1) / TILE;
    out->src = static_cast<const T *>(in->src);
    out->dst = static_cast<T *>(in->dst);
    out->ld = (long long)in->ld;
    out->ldd = (long long)in->ldd;
    out->src_stride = (long long)in->src_stride;
    out->dst_stride = (long long)in->dst_stride;
    out->rows = in->rows;
    out->count = in->count > 1 ? in->count : 1;
    out->kmajor = in->kmajor != 0;
    out->r_tiles = (int)r_tiles; /* rows < 2^31: at most 2^26 */
    const uint64_t e = sizeof(T);
    const int many = out->count > 1;
    out->vec = out->kmajor && (uintptr_t)in->dst % 16u == 0 && (uint64_t)in->ldd * e % 16u == 0 &&
               (!many || (uint64_t)in->dst_stride * e % 16u == 0);
    // the largest power of two (at most 16) dividing every src row's start
    const uint64_t bits = (uint64_t)(uintptr_t)in->src | (uint64_t)in->ld * e |
                          (many ? (uint64_t)in->src_stride * e : 0u) | 16u;
    out->src_align = (int)(bits & (~bits + 1u));
    return true;
}

// one launch per CM__GEMM_MAX_BATCH_PER_LAUNCH matrices of `kernel` over sides a and b
template <typename T, typename K>
cudaError_t launch_sides(K kernel, const PackSide<T> &a, const PackSide<T> &b, int kdim,
                         int y_tiles, cudaStream_t stream) {
    const int r_tiles = a.r_tiles + b.r_tiles; /* each at most 2^26 */
    if (r_tiles == 0) return cudaSuccess;
    const int count = a.count > b.count ? a.count : b.count;
    const dim3 block(TILE, ROWS);
    const dim3 grid((unsigned)r_tiles, (unsigned)(y_tiles < 65535 ? y_tiles : 65535), 1);
    for (int z0 = 0; z0 < count; z0 += CM__GEMM_MAX_BATCH_PER_LAUNCH) {
        const int nb = count - z0 < CM__GEMM_MAX_BATCH_PER_LAUNCH ? count - z0
                                                                 : CM__GEMM_MAX_BATCH_PER_LAUNCH;
        kernel<<<dim3(grid.x, grid.y, (unsigned)nb), block, 0, stream>>>(a, b, kdim, y_tiles,
                                                                         z0);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

// the bytes a side copies (rows x kdim elements of each of its matrices)
template <typename T> unsigned long long side_bytes(const PackSide<T> &s, int kdim) {
    return (unsigned long long)s.rows * (unsigned long long)kdim *
           (unsigned long long)s.count * sizeof(T);
}

template <typename T>
cudaError_t pack_pair(int kdim, const cm__gemm_pack_side_t *a, const cm__gemm_pack_side_t *b,
                      cudaStream_t stream) {
    PackSide<T> sa, sb;
    if (!pack_side<T>(a, kdim, &sa) || !pack_side<T>(b, kdim, &sb)) return cudaErrorInvalidValue;
    if (kdim == 0 || sa.r_tiles + sb.r_tiles == 0) return cudaSuccess;
    // the sides with 16-byte rows in dst go to the copy kernel, the others to the pair kernel
    // (one launch each where both sides go to one); the pair kernel also takes small sides of
    // short rows, and a small side along where it runs anyway (cm__gemm_pack_copy_kernel)
    const PackSide<T> none{};
    const bool pair_runs = (sa.r_tiles > 0 && !sa.vec) || (sb.r_tiles > 0 && !sb.vec);
    const unsigned long long ba = side_bytes(sa, kdim), bb = side_bytes(sb, kdim); // 0 unstaged
    const int eb = (int)sizeof(T);
    const bool va = sa.vec && cm__gemm_pack_copy_kernel(eb, kdim, ba, ba + bb, pair_runs);
    const bool vb = sb.vec && cm__gemm_pack_copy_kernel(eb, kdim, bb, ba + bb, pair_runs);
    const PackSide<T> &ca = va ? sa : none, &cb = vb ? sb : none;
    const PackSide<T> &pa = va ? none : sa, &pb = vb ? none : sb;
    const int k_tiles = (int)(((long long)kdim + TILE - 1) / TILE);
    const int c_tiles = (int)(((long long)kdim + TILE * (16 / (int)sizeof(T)) - 1) /
                              (TILE * (16 / (int)sizeof(T))));
    cudaError_t e = launch_sides<T>(gemm_copy_rows_kernel<T>, ca, cb, kdim, c_tiles, stream);
    if (e == cudaSuccess)
        e = launch_sides<T>(gemm_pack_pair_kernel<T>, pa, pb, kdim, k_tiles, stream);
    return e;
}

}  // namespace

extern "C" cudaError_t cm__gemm_pack_pair(int elem_bytes, int kdim,
                                          const cm__gemm_pack_side_t *a,
                                          const cm__gemm_pack_side_t *b, cudaStream_t stream) {
    if (kdim < 0) return cudaErrorInvalidValue;
    if (elem_bytes == 4) return pack_pair<uint32_t>(kdim, a, b, stream);
    if (elem_bytes == 2) return pack_pair<uint16_t>(kdim, a, b, stream);
    return cudaErrorInvalidValue;
}

extern "C" cudaError_t cm__gemm_pack_batched(int elem_bytes, const void *src, int64_t ld,
                                             int kdim, int rdim, void *dst, int64_t ldd,
                                             int batch, int64_t src_stride, int64_t dst_stride,
                                             cudaStream_t stream) {
    if (src == NULL || dst == NULL || kdim < 0 || rdim < 0 || ld < rdim || ldd < kdim ||
        (elem_bytes != 2 && elem_bytes != 4) || src_stride < 0 || dst_stride < 0)
        return cudaErrorInvalidValue;
    if (batch < 1) batch = 1;
    if (kdim == 0 || rdim == 0) return cudaSuccess;
    const int r_tiles = (rdim + TILE - 1) / TILE, k_tiles = (kdim + TILE - 1) / TILE;
    const dim3 block(TILE, ROWS);
    for (int z0 = 0; z0 < batch; z0 += CM__GEMM_MAX_BATCH_PER_LAUNCH) {
        const int nb = batch - z0 < CM__GEMM_MAX_BATCH_PER_LAUNCH ? batch - z0
                                                                  : CM__GEMM_MAX_BATCH_PER_LAUNCH;
        const dim3 grid((unsigned)r_tiles, (unsigned)(k_tiles < 65535 ? k_tiles : 65535),
                        (unsigned)nb);
        const char *s0 = static_cast<const char *>(src) + (int64_t)z0 * src_stride * elem_bytes;
        char *d0 = static_cast<char *>(dst) + (int64_t)z0 * dst_stride * elem_bytes;
        if (elem_bytes == 4)
            gemm_pack_kernel<uint32_t><<<grid, block, 0, stream>>>(
                reinterpret_cast<const uint32_t *>(s0), (long long)ld, kdim, rdim,
                reinterpret_cast<uint32_t *>(d0), (long long)ldd, k_tiles,
                (long long)src_stride, (long long)dst_stride);
        else
            gemm_pack_kernel<uint16_t><<<grid, block, 0, stream>>>(
                reinterpret_cast<const uint16_t *>(s0), (long long)ld, kdim, rdim,
                reinterpret_cast<uint16_t *>(d0), (long long)ldd, k_tiles,
                (long long)src_stride, (long long)dst_stride);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

// ---------------------------------------------------------------- the 3xTF32 split (kernels/gemm.h)
//
// Each float x becomes big = tf32(x) and small = tf32(x - big), both rounded to nearest (ties
// away, as cvt.rna.tf32.f32) with the bit arithmetic below so that every architecture the
// library is built for runs the same code. x - big is exact in FP32 (big is x rounded at bit 13),
// so big + small carries x to within 2^-22 of itself. A row of the destination holds two
// segments of kpad elements (part order[0], order[1]), zero past kdim.

namespace {

__device__ __forceinline__ float tf32_rna(float x) {
    unsigned u = __float_as_uint(x);
    if ((u & 0x7f800000u) != 0x7f800000u) {  // finite: add half an ulp of TF32, cut 13 bits
        u += 0x1000u;
        u &= 0xffffe000u;
    }
    return __uint_as_float(u);
}

// big and small of x; a finite x whose rounding overflows keeps its truncation as big; an
// infinite or NaN x has small 0 (so that inf stays inf instead of inf - inf = NaN)
__device__ __forceinline__ void tf32_split(float x, float *big, float *small) {
    float b = tf32_rna(x);
    if (isinf(b) && !isinf(x)) b = __uint_as_float(__float_as_uint(x) & 0xffffe000u);
    *big = b;
    *small = isfinite(x) ? tf32_rna(x - b) : 0.0f;
}

struct SplitOrder {
    int o0, o1;
};

__device__ __forceinline__ void split_store(float *__restrict__ row, long long kpad, int k,
                                            float x, SplitOrder o) {
    float part[2];
    tf32_split(x, &part[0], &part[1]);
    row[k] = part[o.o0];
    row[kpad + k] = part[o.o1];
}

// K-contiguous source: consecutive threads on consecutive k (coalesced reads and writes)
__global__ void __launch_bounds__(256) gemm_split_kmajor(const float *__restrict__ src,
                                                         long long ld, int k0, int kdim, int rdim,
                                                         SplitOrder o, float *__restrict__ dst,
                                                         long long kpad, long long ldd) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= kpad) return;
    for (long long r = blockIdx.y; r < rdim; r += gridDim.y) {
        const float x = k < kdim ? src[r * ld + k0 + k] : 0.0f;
        split_store(dst + r * ldd, kpad, (int)k, x, o);
    }
}

// r-contiguous source: 32 x 32 tiles through shared memory (as gemm_pack_kernel)
__global__ void __launch_bounds__(TILE *ROWS) gemm_split_rmajor(const float *__restrict__ src,
                                                                long long ld, int k0, int kdim,
                                                                int rdim, SplitOrder o,
                                                                float *__restrict__ dst,
                                                                long long kpad, long long ldd,
                                                                int k_tiles) {
    __shared__ float tile[TILE][TILE + 1];
    const int r0 = (int)blockIdx.x * TILE;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    for (int kt = (int)blockIdx.y; kt < k_tiles; kt += (int)gridDim.y) {
        const int kb = kt * TILE;
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            const int k = kb + ty + j, r = r0 + tx;
            if (r < rdim)
                tile[ty + j][tx] = k < kdim ? src[(long long)(k0 + k) * ld + r] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            const int r = r0 + ty + j, k = kb + tx;
            if (r < rdim && k < kpad) split_store(dst + (long long)r * ldd, kpad, k, tile[tx][ty + j], o);
        }
        __syncthreads();
    }
}

}  // namespace

extern "C" cudaError_t cm__gemm_split_tf32(const float *src, int64_t ld, int kmajor, int k0,
                                           int kdim, int rdim, const int order[2], float *dst,
                                           int64_t kpad, int64_t ldd, cudaStream_t stream) {
    if (src == NULL || dst == NULL || order == NULL || k0 < 0 || kdim < 0 || rdim < 0 ||
        kpad < kdim || kpad > INT32_MAX || ldd < 2 * kpad || ld < 1 ||
        (kmajor && ld < (int64_t)k0 + kdim) || (!kmajor && ld < rdim))
        return cudaErrorInvalidValue;
    for (int s = 0; s < 2; ++s)
        if (order[s] != 0 && order[s] != 1) return cudaErrorInvalidValue;
    if (rdim == 0 || kpad == 0) return cudaSuccess;
    const SplitOrder o = {order[0], order[1]};
    if (kmajor) {
        const dim3 grid((unsigned)((kpad + 255) / 256), (unsigned)(rdim < 65535 ? rdim : 65535));
        gemm_split_kmajor<<<grid, 256, 0, stream>>>(src, (long long)ld, k0, kdim, rdim, o, dst,
                                                    (long long)kpad, (long long)ldd);
    } else {
        const int r_tiles = (rdim + TILE - 1) / TILE;
        const int k_tiles = (int)((kpad + TILE - 1) / TILE);
        const dim3 grid((unsigned)r_tiles, (unsigned)(k_tiles < 65535 ? k_tiles : 65535));
        gemm_split_rmajor<<<grid, dim3(TILE, ROWS), 0, stream>>>(
            src, (long long)ld, k0, kdim, rdim, o, dst, (long long)kpad, (long long)ldd, k_tiles);
    }
    return cudaGetLastError();
}

// ---------------------------------------------------------------- split-K reduction (kernels/gemm.h)
//
// C = alpha * sum over the parts of P + beta * C, element by element, the parts summed in
// order 0, 1, ... (deterministic). P holds `parts` row-major m x n float matrices, mn apart.
namespace {

// The parts' loads of an element are issued 8 at a time before they are added (in order, so
// the sum is the same as one load and add after another): a thread waits for memory once per
// 8 parts instead of once per part. The row of an element comes from a 32-bit division where
// m x n fits 32 bits.
__global__ void __launch_bounds__(256) gemm_splitk_reduce_kernel(
    const float *__restrict__ P, int parts, long long mn, int n, float alpha, float beta,
    void *__restrict__ c, long long ldc, int c_bf16) {
    cm__pdl_wait(); // the parts' kernel complete, its writes visible (kernels/pdl.cuh)
    constexpr int G = 8;
    const bool narrow = mn <= 0xFFFFFFFFLL;
    for (long long idx = (long long)blockIdx.x * 256 + threadIdx.x; idx < mn;
         idx += (long long)gridDim.x * 256) {
        float s = 0.0f;
        int q = 0;
        for (; q + G <= parts; q += G) {
            float v[G];
#pragma unroll
            for (int u = 0; u < G; ++u) v[u] = __ldg(&P[(long long)(q + u) * mn + idx]);
#pragma unroll
            for (int u = 0; u < G; ++u) s += v[u];
        }
        for (; q < parts; ++q) s += __ldg(&P[(long long)q * mn + idx]);
        const long long i = narrow ? (long long)((unsigned)idx / (unsigned)n) : idx / n;
        const long long j = idx - i * n;
        float v = alpha * s;
        if (c_bf16) {
            __nv_bfloat16 *p = static_cast<__nv_bfloat16 *>(c) + i * ldc + j;
            if (beta != 0.0f) v = fmaf(beta, __bfloat162float(*p), v);
            *p = __float2bfloat16_rn(v);
        } else {
            float *p = static_cast<float *>(c) + i * ldc + j;
            if (beta != 0.0f) v = fmaf(beta, *p, v);
            *p = v;
        }
    }
}

}  // namespace

extern "C" cudaError_t cm__gemm_splitk_reduce(const float *partials, int parts, int m, int n,
                                              float alpha, float beta, void *c, int64_t ldc,
                                              int c_bf16, int dependent, cudaStream_t stream) {
    if (partials == NULL || c == NULL || parts < 1 || m < 0 || n < 0 || ldc < n)
        return cudaErrorInvalidValue;
    const long long mn = (long long)m * n;
    if (mn == 0) return cudaSuccess;
    long long blocks = (mn + 255) / 256;
    if (blocks > 132LL * 16) blocks = 132LL * 16;  // grid-stride beyond ~16 blocks a multiprocessor
    // dependent (sm_90+): a programmatic dependent launch (kernels/pdl.cuh), scheduled while
    // the parts' kernel before it on the stream still runs
    return cm__pdl_launch(dependent != 0, gemm_splitk_reduce_kernel, dim3((unsigned)blocks),
                          dim3(256), 0, stream, partials, parts, mn, n, alpha, beta, c,
                          (long long)ldc, c_bf16);
}
