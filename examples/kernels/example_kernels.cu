// Kernels of the plain-C examples (launch_validation.c, grid_indexing.c).
//
// A C program cannot define __global__ functions, so they live here, compiled by nvcc into the
// example_kernels static library, and the C side gets each one as a pointer through a
// C-linkage getter, `const void *example_<name>(void)`, which it passes to cm_launch() along
// with an array of pointers to the kernel's arguments (as for cudaLaunchKernel).
#include <cuda_runtime.h>

// y[i] = a * x[i] + y[i] for i < n.
// Arguments: {&a (float), &x (const float *), &y (float *), &n (unsigned long long)}.
__global__ void saxpy_kernel(float a, const float *x, float *y, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// One thread per element of a 2-D grid of 2-D blocks. Each thread computes its global index
//     block  = blockIdx.y * gridDim.x + blockIdx.x             (blocks numbered row by row)
//     thread = threadIdx.y * blockDim.x + threadIdx.x          (threads numbered row by row)
//     g      = block * (blockDim.x * blockDim.y) + thread
// and stores at out[g] who it is: blockIdx.x | blockIdx.y << 8 | threadIdx.x << 16 |
// threadIdx.y << 24 (each coordinate below 256 in the example), so the host can check that
// every thread wrote exactly the slot the formula gives it.
// Arguments: {&out (unsigned *)}.
__global__ void grid_index_kernel(unsigned *out) {
    unsigned block = blockIdx.y * gridDim.x + blockIdx.x;
    unsigned thread = threadIdx.y * blockDim.x + threadIdx.x;
    unsigned g = block * (blockDim.x * blockDim.y) + thread;
    out[g] = blockIdx.x | (blockIdx.y << 8) | (threadIdx.x << 16) | (threadIdx.y << 24);
}

extern "C" const void *example_saxpy_kernel(void) {
    return (const void *)saxpy_kernel;
}

extern "C" const void *example_grid_index_kernel(void) {
    return (const void *)grid_index_kernel;
}

// y[i] = f(x[i]) for i < n, with `iters` dependent multiply-adds per element (a light kernel
// for the copy-bound pipeline of streams_overlap.c; events_timing.c times it).
// Arguments: {&y (float *), &x (const float *), &n (unsigned long long), &iters (int)}.
__global__ void transform_kernel(float *y, const float *x, unsigned long long n, int iters) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float v = x[i];
        for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.001f;
        y[i] = v;
    }
}

extern "C" const void *example_transform_kernel(void) {
    return (const void *)transform_kernel;
}
