// Kernels of memory_spaces.c: one per row of the CUDA memory table. Each computes something
// the host can check exactly (integer arithmetic, or sums of small integers in float), so a
// number is printed only for work that was done right. The plain-C program gets each kernel
// through a C-linkage getter (see example_kernels.cu) and the constant table's symbol through
// memory_spaces_table_symbol() (memspace.h, "Symbols from plain C").
#include <cuda_runtime.h>

// Constant memory: 256 entries, filled by the host with cm_symbol_copy_from_host().
__constant__ unsigned ms_table[256];

// Registers: four independent chains of integer multiply-adds (linear congruential steps),
// all operands in registers; no memory is touched until the final store.
// Arguments: {&out (unsigned *), &iters (int)}.
__global__ void ms_registers_kernel(unsigned *out, int iters) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned a = t, b = t ^ 0x9E3779B9u, c = t * 7u + 1u, d = ~t;
    for (int i = 0; i < iters; ++i) {
        a = a * 1664525u + 1013904223u;
        b = b * 22695477u + 1u;
        c = c * 1103515245u + 12345u;
        d = d * 134775813u + 1u;
    }
    out[t] = a ^ b ^ c ^ d;
}

// Local memory: a per-thread array indexed by a value known only at run time cannot live in
// registers, so the compiler puts it in local memory (the thread's slice of device memory,
// cached in L1 and L2): one load and one store of 4 bytes per step.
// Arguments: {&out (unsigned *), &iters (int)}.
#define MS_LOCAL_WORDS 64
__global__ void ms_local_kernel(unsigned *out, int iters) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned buf[MS_LOCAL_WORDS];
    for (int j = 0; j < MS_LOCAL_WORDS; ++j) buf[j] = t + (unsigned)j;
    unsigned x = t;
    for (int i = 0; i < iters; ++i) {
        x = x * 1664525u + 1013904223u;
        buf[x >> 26] += x; /* index 0..63, data dependent */
    }
    unsigned s = x;
    for (int j = 0; j < MS_LOCAL_WORDS; ++j) s = s * 31u + buf[j];
    out[t] = s;
}

// Shared memory: the block fills a tile of `words` floats (a power of two, dynamic shared
// memory) with j & 255, then each thread reads it 4 times per step at consecutive words across
// the warp (one word per bank: no conflicts). The sums are integers below 2^24: exact in float.
// Arguments: {&out (float *), &iters (int), &words (int)}.
__global__ void ms_shared_kernel(float *out, int iters, int words) {
    extern __shared__ float tile[];
    for (int j = (int)threadIdx.x; j < words; j += (int)blockDim.x) tile[j] = (float)(j & 255);
    __syncthreads();
    const unsigned m = (unsigned)words - 1u;
    unsigned idx = threadIdx.x & m;
    float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
    for (int i = 0; i < iters; ++i) {
        a0 += tile[idx];
        a1 += tile[(idx + 64u) & m];
        a2 += tile[(idx + 128u) & m];
        a3 += tile[(idx + 192u) & m];
        idx = (idx + 32u) & m;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = (a0 + a1) + (a2 + a3);
}

// Global memory: x[i] = 3 i + 1 (written first), then a grid-stride copy of 16-byte words.
// Arguments: {&x (unsigned *), &n (unsigned long long)} and {&y (uint4 *), &x (const uint4 *),
// &n4 (unsigned long long)}.
__global__ void ms_iota_kernel(unsigned *x, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        x[i] = (unsigned)(3ull * i + 1ull);
}

__global__ void ms_global_kernel(uint4 *y, const uint4 *x, unsigned long long n4) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n4;
         i += (unsigned long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}

// Constant memory: four reads of the table per step. Broadcast: every thread of a warp reads
// the same entry (one constant-cache access serves the warp). Divergent: each lane reads its
// own entry (lane * 7 apart), and the accesses of a warp are served one address at a time.
// Arguments: {&out (unsigned *), &iters (int, a multiple of 4)}.
template <bool Divergent>
__global__ void ms_constant_kernel(unsigned *out, int iters) {
    const unsigned off = Divergent ? (threadIdx.x & 31u) * 7u : 0u;
    unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < iters; i += 4) {
        const unsigned k = (unsigned)i + off;
        a0 = a0 * 3u + ms_table[k & 255u];
        a1 = a1 * 5u + ms_table[(k + 1u) & 255u];
        a2 = a2 * 7u + ms_table[(k + 2u) & 255u];
        a3 = a3 * 9u + ms_table[(k + 3u) & 255u];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a0 ^ a1 ^ a2 ^ a3;
}

// Texture with filtering: each output pixel of a w x h image samples the texture (bilinear,
// unnormalised coordinates) at its centre rotated about the image centre by (c, s) = (cos,
// sin) of an angle; outside the texture its address mode decides.
// Arguments: {&tex (unsigned long long), &out (float *), &w (int), &h (int), &c (float),
// &s (float)}.
__global__ void ms_texture_kernel(cudaTextureObject_t tex, float *out, int w, int h, float c,
                                  float s) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h) return;
    float cx = 0.5f * (float)w, cy = 0.5f * (float)h;
    float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
    float u = cx + c * dx - s * dy, v = cy + s * dx + c * dy;
    out[(size_t)y * (size_t)w + (size_t)x] = tex2D<float>(tex, u, v);
}

// Managed memory: p[i] = 0.5 p[i] + 1 (grid-stride), on memory the host wrote last.
// Arguments: {&p (float *), &n (unsigned long long)}.
__global__ void ms_managed_kernel(float *p, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = 0.5f * p[i] + 1.0f;
}

extern "C" const void *memory_spaces_table_symbol(void) { return (const void *)&ms_table; }
extern "C" const void *memory_spaces_registers_kernel(void) { return (const void *)ms_registers_kernel; }
extern "C" const void *memory_spaces_local_kernel(void) { return (const void *)ms_local_kernel; }
extern "C" const void *memory_spaces_shared_kernel(void) { return (const void *)ms_shared_kernel; }
extern "C" const void *memory_spaces_iota_kernel(void) { return (const void *)ms_iota_kernel; }
extern "C" const void *memory_spaces_global_kernel(void) { return (const void *)ms_global_kernel; }
extern "C" const void *memory_spaces_constant_kernel(int divergent) {
    return divergent ? (const void *)ms_constant_kernel<true> : (const void *)ms_constant_kernel<false>;
}
extern "C" const void *memory_spaces_texture_kernel(void) { return (const void *)ms_texture_kernel; }
extern "C" const void *memory_spaces_managed_kernel(void) { return (const void *)ms_managed_kernel; }
