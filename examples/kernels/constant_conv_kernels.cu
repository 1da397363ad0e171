// Kernels of constant_conv.c: a 1-D convolution whose filter taps live in __constant__ memory
// (every thread of a warp reads the same tap at the same step: one constant-cache access
// serves the whole warp), and the same convolution with the taps in global memory, for
// comparison. The taps are filled from plain C with cm_symbol_copy_from_host() on the symbol
// that constant_conv_taps_symbol() exports (memspace.h, "Symbols from plain C").
#include <cuda_runtime.h>

#define CONV_MAX_TAPS 63 /* radius up to 31 */

__constant__ float conv_taps[CONV_MAX_TAPS];

// out[i] = sum over k = 0 .. 2 radius of taps[k] * in[clamp(i + k - radius)], the index
// clamped to 0 .. n - 1 (the signal's edge values repeat), summed in order of k in float.
// Arguments: {&out (float *), &in (const float *), &n (unsigned long long), &radius (int)}.
__global__ void conv1d_constant_kernel(float *out, const float *in, unsigned long long n,
                                       int radius) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; ++k) {
            long long j = (long long)i + k - radius;
            j = j < 0 ? 0 : j >= (long long)n ? (long long)n - 1 : j;
            acc += conv_taps[k] * in[j];
        }
        out[i] = acc;
    }
}

// The same with the taps read from global memory.
// Arguments: as above, then &taps (const float *).
__global__ void conv1d_global_kernel(float *out, const float *in, unsigned long long n,
                                     int radius, const float *taps) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float acc = 0.0f;
        for (int k = 0; k <= 2 * radius; ++k) {
            long long j = (long long)i + k - radius;
            j = j < 0 ? 0 : j >= (long long)n ? (long long)n - 1 : j;
            acc += taps[k] * in[j];
        }
        out[i] = acc;
    }
}

extern "C" const void *constant_conv_taps_symbol(void) { return (const void *)&conv_taps; }
extern "C" const void *constant_conv_kernel(void) { return (const void *)conv1d_constant_kernel; }
extern "C" const void *constant_conv_global_kernel(void) {
    return (const void *)conv1d_global_kernel;
}
