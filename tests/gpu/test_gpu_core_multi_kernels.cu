/* Kernels of test_gpu_core_multi.c. */
#include <cuda_runtime.h>

__global__ void gm_iota(unsigned *out, unsigned n, unsigned base) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

extern "C" const void *gm_iota_kernel(void) { return (const void *)gm_iota; }
