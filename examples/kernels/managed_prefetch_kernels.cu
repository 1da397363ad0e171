// Kernel of managed_prefetch.c: y[i] = a x[i] + y[i] over managed memory. The pointers are
// the managed buffers' own addresses (cm_managed_data), valid on the host and on the device;
// where their pages are when the kernel touches them decides how fast it runs.
#include <cuda_runtime.h>

// Arguments: {&y (float *), &x (const float *), &n (unsigned long long), &a (float)}.
__global__ void managed_axpy_kernel(float *y, const float *x, unsigned long long n, float a) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

extern "C" const void *managed_prefetch_axpy_kernel(void) { return (const void *)managed_axpy_kernel; }
