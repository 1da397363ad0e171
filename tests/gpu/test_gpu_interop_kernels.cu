// Kernels for test_gpu_interop.c, launched through C-callable wrappers.
#include <cuda_runtime_api.h>

__global__ void iota_kernel(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * i + 1;
}

extern "C" void launch_iota(int *d_out, int n, unsigned grid, unsigned block) {
    iota_kernel<<<grid, block>>>(d_out, n);
}
