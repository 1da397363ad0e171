// Peers and helpers of bench_vector.c: CUB's DeviceReduce (Sum, Max, ArgMax) on floats with
// their temporary storage allocated once, and a device-side random fill (fresh data each check
// without a 1 GiB host upload).
#include <stdint.h>

#include <cub/device/device_reduce.cuh>

namespace {

__global__ void bench_random_kernel(float *p, size_t n, uint32_t seed) {
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        x ^= x >> 16;
        p[i] = (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
    }
}

}  // namespace

extern "C" cudaError_t bench_random_fill(float *p, size_t n, uint32_t seed, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    bench_random_kernel<<<2048, 256, 0, s>>>(p, n, seed);
    return cudaGetLastError();
}

// op: 0 sum, 1 max, 2 argmax. d_temp NULL: *temp_bytes receives the size needed.
// out: a float (sum, max) or, for argmax, a float at out and an int64 index at out + 8.
extern "C" cudaError_t bench_cub_reduce(int op, void *d_temp, size_t *temp_bytes, const float *in,
                                        void *out, size_t n, cudaStream_t s) {
    size_t bytes = *temp_bytes;
    cudaError_t err = cudaErrorInvalidValue;
    switch (op) {
    case 0:
        err = cub::DeviceReduce::Sum(d_temp, bytes, in, static_cast<float *>(out), (int64_t)n, s);
        break;
    case 1:
        err = cub::DeviceReduce::Max(d_temp, bytes, in, static_cast<float *>(out), (int64_t)n, s);
        break;
    case 2:
        err = cub::DeviceReduce::ArgMax(d_temp, bytes, in, static_cast<float *>(out),
                                        reinterpret_cast<int64_t *>(static_cast<char *>(out) + 8),
                                        (::cuda::std::int64_t)n, s);
        break;
    default: break;
    }
    *temp_bytes = bytes;
    return err;
}
