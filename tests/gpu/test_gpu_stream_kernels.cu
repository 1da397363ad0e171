// Kernels for test_gpu_stream.c, handed to the C test as pointers through C-linkage getters.
#include <cuda_runtime.h>

// Thread 0 of the grid waits `ns` nanoseconds of the GPU's global timer, then every thread
// writes out[i] = value + i for i < n (grid-stride).
// Arguments: {&out (unsigned *), &n (unsigned), &value (unsigned), &ns (unsigned long long)}.
__global__ void gs_spin_then_fill(unsigned *out, unsigned n, unsigned value, unsigned long long ns) {
    if (ns != 0) {
        if (threadIdx.x == 0) {
            unsigned long long t0, t;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
            do {
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
            } while (t - t0 < ns);
        }
        __syncthreads();
    }
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = value + i;
}

// dst[i] = src[i] for i < n. Arguments: {&dst (unsigned *), &src (const unsigned *), &n (unsigned)}.
__global__ void gs_copy(unsigned *dst, const unsigned *src, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        dst[i] = src[i];
}

// x[i] = x[i] * a + b for i < n. Arguments: {&x (float *), &a (float), &b (float), &n (unsigned)}.
__global__ void gs_axpb(float *x, float a, float b, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = x[i] * a + b;
}

extern "C" const void *gs_spin_then_fill_kernel(void) { return (const void *)gs_spin_then_fill; }
extern "C" const void *gs_copy_kernel(void) { return (const void *)gs_copy; }
extern "C" const void *gs_axpb_kernel(void) { return (const void *)gs_axpb; }
