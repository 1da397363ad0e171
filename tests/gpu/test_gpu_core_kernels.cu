/* Kernels of test_gpu_core.c. */
#include <cuda_runtime.h>

__global__ void gc_iota(unsigned *out, unsigned n, unsigned base) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = base + i;
}

extern "C" const void *gc_iota_kernel(void) { return (const void *)gc_iota; }
