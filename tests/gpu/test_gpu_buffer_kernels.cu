// Kernels of tests/gpu/test_gpu_buffer.c: a kernel that keeps writing into a buffer for a while
// (to destroy the buffer in stream order while it runs), and one that writes mapped host memory.
#include <cuda_runtime_api.h>

namespace {

__global__ void spin_write(unsigned *buf, size_t n, long long cycles, unsigned *done) {
    long long start = clock64();
    unsigned round = 0;
    do {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
             i += (size_t)gridDim.x * blockDim.x)
            buf[i] = round;
        ++round;
    } while (clock64() - start < cycles);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(done, 1u);
}

__global__ void write_index(unsigned *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = (unsigned)(i * 3u + 1u);
}

}  // namespace

extern "C" cudaError_t test_spin_write(unsigned *buf, size_t n, long long cycles, unsigned *done,
                                       unsigned blocks, cudaStream_t stream) {
    spin_write<<<blocks, 256, 0, stream>>>(buf, n, cycles, done);
    return cudaGetLastError();
}

extern "C" cudaError_t test_write_index(unsigned *p, size_t n, cudaStream_t stream) {
    write_index<<<64, 256, 0, stream>>>(p, n);
    return cudaGetLastError();
}
