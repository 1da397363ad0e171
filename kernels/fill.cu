// The fill kernel behind cm_buffer_fill(): write a 2-, 4- or 8-byte pattern over a range.
// (1-byte patterns, and patterns whose bytes are all equal, go to cudaMemset in src/buffer.c.)
// Grid-stride loop over elements of the pattern's width; the caller guarantees dst is aligned to
// the width and count is a multiple of it.
#include <stdint.h>
#include <string.h>

#include "kernels.h"

namespace {

template <typename T>
__global__ void cm__fill_kernel(T *dst, size_t n, T value) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = value;
}

template <typename T>
cudaError_t cm__fill_launch(void *dst, size_t count, const void *pattern, cudaStream_t stream) {
    T value;
    memcpy(&value, pattern, sizeof value);
    size_t n = count / sizeof(T);
    if (n == 0) return cudaSuccess;
    const unsigned threads = 256;
    // enough blocks to fill any GPU several times over; the loop covers the rest
    size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535u) blocks = 65535u;
    cm__fill_kernel<T><<<(unsigned)blocks, threads, 0, stream>>>(static_cast<T *>(dst), n, value);
    return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t cm__kernel_fill(void *dst, size_t count, const void *pattern,
                                       size_t pattern_bytes, cudaStream_t stream) {
    switch (pattern_bytes) {
    case 1: return cm__fill_launch<uint8_t>(dst, count, pattern, stream);
    case 2: return cm__fill_launch<uint16_t>(dst, count, pattern, stream);
    case 4: return cm__fill_launch<uint32_t>(dst, count, pattern, stream);
    case 8: return cm__fill_launch<uint64_t>(dst, count, pattern, stream);
    default: return cudaErrorInvalidValue;
    }
}
