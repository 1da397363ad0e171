// Transposing copy for the GEMM's Hopper path: the wgmma kernel (kernels/gemm_sm90.cu)
// reads both operands contiguous along K through bulk tensor copies. A problem whose A or B runs
// along M / N instead ("NN", "NT"... in the public API) first has that operand transposed here
// into stream-ordered scratch (src/compute/gemm_api.c, cm__gemm_sm90_packed). Internal form:
// kernels/gemm.h.
//
// 32 x 32 element tiles through shared memory: a block of 32 x 8 threads reads a tile with
// consecutive threads on consecutive r (coalesced), and writes it transposed with consecutive
// threads on consecutive k (coalesced). Rows of the shared tile are padded so that the
// column-wise reads hit 32 different banks: 33 words for 4-byte elements, 34 halves (17 words,
// odd) for 2-byte ones.
#include <stdint.h>

#include "gemm.h"

namespace {

constexpr int TILE = 32, ROWS = 8;

template <typename T>
__global__ void __launch_bounds__(TILE *ROWS) gemm_pack_kernel(const T *__restrict__ src,
                                                               long long ld, int kdim, int rdim,
                                                               T *__restrict__ dst,
                                                               long long ldd, int k_tiles) {
    constexpr int PAD = TILE + (int)(4 / sizeof(T));
    __shared__ T tile[TILE][PAD];
    const int r0 = (int)blockIdx.x * TILE;
    const int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    for (int kt = (int)blockIdx.y; kt < k_tiles; kt += (int)gridDim.y) {
        const int k0 = kt * TILE;
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            const int k = k0 + ty + j, r = r0 + tx;
            if (k < kdim && r < rdim) tile[ty + j][tx] = src[(long long)k * ld + r];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            const int r = r0 + ty + j, k = k0 + tx;
            if (k < kdim && r < rdim) dst[(long long)r * ldd + k] = tile[tx][ty + j];
        }
        __syncthreads();
    }
}

}  // namespace

extern "C" cudaError_t cm__gemm_pack(int elem_bytes, const void *src, int64_t ld, int kdim,
                                     int rdim, void *dst, int64_t ldd, cudaStream_t stream) {
    if (src == NULL || dst == NULL || kdim < 0 || rdim < 0 || ld < rdim || ldd < kdim ||
        (elem_bytes != 2 && elem_bytes != 4))
        return cudaErrorInvalidValue;
    if (kdim == 0 || rdim == 0) return cudaSuccess;
    const int r_tiles = (rdim + TILE - 1) / TILE, k_tiles = (kdim + TILE - 1) / TILE;
    const dim3 grid((unsigned)r_tiles, (unsigned)(k_tiles < 65535 ? k_tiles : 65535));
    const dim3 block(TILE, ROWS);
    if (elem_bytes == 4)
        gemm_pack_kernel<uint32_t><<<grid, block, 0, stream>>>(
            static_cast<const uint32_t *>(src), (long long)ld, kdim, rdim,
            static_cast<uint32_t *>(dst), (long long)ldd, k_tiles);
    else
        gemm_pack_kernel<uint16_t><<<grid, block, 0, stream>>>(
            static_cast<const uint16_t *>(src), (long long)ld, kdim, rdim,
            static_cast<uint16_t *>(dst), (long long)ldd, k_tiles);
    return cudaGetLastError();
}
