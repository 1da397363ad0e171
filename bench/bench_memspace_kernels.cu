// Kernels of bench_memspace.c, each behind a C launcher that queues it on a CUDA stream and
// returns cudaGetLastError():
//   - a table read as a broadcast (every lane of a warp reads the same entry) or divergently
//     (each lane its own entry), from __constant__ memory or from global memory: the same
//     integer multiply-add chains, so both versions compute the same numbers;
//   - bilinear resize through a texture (tex2D, the texture unit filters), and the same resize
//     written by hand over a row-major float image in global memory (4 loads, clamp to edge,
//     float weights);
//   - y = 2 y + 1 over n floats (the managed-memory round trip's kernel).
#include <cuda_runtime.h>

#define BM_TABLE 1024

__constant__ unsigned bm_const_table[BM_TABLE];

extern "C" const void *bm_const_table_symbol(void) { return (const void *)&bm_const_table; }

namespace {

template <bool FromGlobal, bool Divergent>
__global__ void table_read(const unsigned *__restrict__ g, unsigned *out, int iters) {
    const unsigned off = Divergent ? (threadIdx.x & 31u) * 33u : 0u;
    unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int i = 0; i < iters; i += 4) {
        const unsigned k = (unsigned)i + off;
        const unsigned k0 = k & (BM_TABLE - 1), k1 = (k + 1u) & (BM_TABLE - 1),
                       k2 = (k + 2u) & (BM_TABLE - 1), k3 = (k + 3u) & (BM_TABLE - 1);
        a0 = a0 * 3u + (FromGlobal ? g[k0] : bm_const_table[k0]);
        a1 = a1 * 5u + (FromGlobal ? g[k1] : bm_const_table[k1]);
        a2 = a2 * 7u + (FromGlobal ? g[k2] : bm_const_table[k2]);
        a3 = a3 * 9u + (FromGlobal ? g[k3] : bm_const_table[k3]);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a0 ^ a1 ^ a2 ^ a3;
}

__global__ void resize_texture(cudaTextureObject_t tex, float *out, int w, int h, float sx,
                               float sy) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h) return;
    out[(size_t)y * (size_t)w + (size_t)x] =
        tex2D<float>(tex, ((float)x + 0.5f) * sx, ((float)y + 0.5f) * sy);
}

// What the texture unit does, by hand: the 4 texels around (u - 0.5, v - 0.5), indices clamped
// to the image, blended with float weights.
__global__ void resize_global(const float *__restrict__ in, int in_w, int in_h, float *out,
                              int w, int h, float sx, float sy) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h) return;
    // rounded like the texture unit's coordinates (no fused multiply-add)
    float u = __fadd_rn(__fmul_rn((float)x + 0.5f, sx), -0.5f);
    float v = __fadd_rn(__fmul_rn((float)y + 0.5f, sy), -0.5f);
    float fu = floorf(u), fv = floorf(v);
    float a = u - fu, b = v - fv;
    int i0 = (int)fu, j0 = (int)fv;
    int i1 = min(max(i0 + 1, 0), in_w - 1), j1 = min(max(j0 + 1, 0), in_h - 1);
    i0 = min(max(i0, 0), in_w - 1);
    j0 = min(max(j0, 0), in_h - 1);
    const float *r0 = in + (size_t)j0 * (size_t)in_w, *r1 = in + (size_t)j1 * (size_t)in_w;
    float top = (1.0f - a) * r0[i0] + a * r0[i1];
    float bottom = (1.0f - a) * r1[i0] + a * r1[i1];
    out[(size_t)y * (size_t)w + (size_t)x] = (1.0f - b) * top + b * bottom;
}

__global__ void scale_add(float *p, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        p[i] = 2.0f * p[i] + 1.0f;
}

dim3 grid_2d(int w, int h, dim3 block) {
    return dim3((unsigned)(w + (int)block.x - 1) / block.x,
                (unsigned)(h + (int)block.y - 1) / block.y);
}

}  // namespace

// table: NULL reads the __constant__ table, otherwise the global one (BM_TABLE entries).
extern "C" cudaError_t bm_table_read(const unsigned *table, int divergent, unsigned *out,
                                     int iters, unsigned blocks, cudaStream_t s) {
    if (table == NULL) {
        if (divergent) table_read<false, true><<<blocks, 256, 0, s>>>(table, out, iters);
        else table_read<false, false><<<blocks, 256, 0, s>>>(table, out, iters);
    } else {
        if (divergent) table_read<true, true><<<blocks, 256, 0, s>>>(table, out, iters);
        else table_read<true, false><<<blocks, 256, 0, s>>>(table, out, iters);
    }
    return cudaGetLastError();
}

extern "C" cudaError_t bm_resize_texture(unsigned long long tex, float *out, int w, int h,
                                         float sx, float sy, cudaStream_t s) {
    dim3 block(32, 8);
    resize_texture<<<grid_2d(w, h, block), block, 0, s>>>((cudaTextureObject_t)tex, out, w, h,
                                                            sx, sy);
    return cudaGetLastError();
}

extern "C" cudaError_t bm_resize_global(const float *in, int in_w, int in_h, float *out, int w,
                                        int h, float sx, float sy, cudaStream_t s) {
    dim3 block(32, 8);
    resize_global<<<grid_2d(w, h, block), block, 0, s>>>(in, in_w, in_h, out, w, h, sx, sy);
    return cudaGetLastError();
}

extern "C" cudaError_t bm_scale_add(float *p, unsigned long long n, unsigned blocks,
                                    cudaStream_t s) {
    scale_add<<<blocks, 256, 0, s>>>(p, n);
    return cudaGetLastError();
}
