// Helper of bench_multigpu.c: a device-side random fill whose values depend on the element's
// index in the whole array (first + i), so an array on one GPU and the same array split over two
// hold the same numbers without a 4 GiB upload.
#include <stdint.h>

namespace {

__global__ void bench_mg_random_kernel(float *p, size_t n, uint64_t first, uint32_t seed) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint64_t g = first + i;
        uint32_t x = (uint32_t)g * 2654435761u ^ (uint32_t)(g >> 32) ^ seed;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        x ^= x >> 16;
        p[i] = (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
    }
}

}  // namespace

extern "C" cudaError_t bench_mg_random_fill(float *p, size_t n, uint64_t first, uint32_t seed,
                                            cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    bench_mg_random_kernel<<<2048, 256, 0, s>>>(p, n, first, seed);
    return cudaGetLastError();
}
