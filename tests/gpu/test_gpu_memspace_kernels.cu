// Kernels of tests/gpu/test_gpu_memspace.c: a __constant__ and a __device__ symbol with their
// C-linkage accessors (the pattern of memspace.h, "Symbols from plain C"), kernels that read
// and write them directly and write the __device__ one through the address cm_symbol_address()
// gives, texture fetches (1-D by index, 2-D at given coordinates), surface writes and reads, a
// kernel that indexes a pitched buffer by its pitch, and one that updates managed memory. Each
// launcher queues its kernel on the given CUDA stream and returns cudaGetLastError().
#include <cuda_runtime.h>

// Sizes the test checks cm_symbol_address() against: 64 floats (256 bytes) and 100 ints
// (400 bytes).
__constant__ float tms_const_table[64];
__device__ int tms_device_table[100];

extern "C" const void *tms_const_symbol(void) { return (const void *)&tms_const_table; }
extern "C" const void *tms_device_symbol(void) { return (const void *)&tms_device_table; }

namespace {

__global__ void read_symbols(float *c_out, int *d_out) {
    int i = (int)threadIdx.x;
    if (i < 64) c_out[i] = tms_const_table[i];
    if (i < 100) d_out[i] = tms_device_table[i];
}

// Every thread of a warp reads the same constant element at each step (a broadcast), and the
// __device__ table is updated in place.
__global__ void constant_sum_and_bump(float *sum_out, int add) {
    int i = (int)threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 64; ++k) s += tms_const_table[k];
    if (i == 0) *sum_out = s;
    if (i < 100) tms_device_table[i] += add * i;
}

// Through a plain pointer (cm_symbol_address): write the __device__ table.
__global__ void via_pointer(int *d_ptr, int base) {
    int i = (int)threadIdx.x;
    if (i < 100) d_ptr[i] = base + i;
}

__global__ void tex1d_fetch_f32(cudaTextureObject_t t, float *out, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void tex1d_fetch_i32(cudaTextureObject_t t, int *out, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = tex1Dfetch<int>(t, i);
}

__global__ void tex2d_sample_f32(cudaTextureObject_t t, const float *xs, const float *ys,
                                 float *out, int n) {
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}

__global__ void surf_write_f32(cudaSurfaceObject_t s, int w, int h, float base) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x < w && y < h) surf2Dwrite(base + 0.25f * (float)x + 1000.0f * (float)y, s,
                                    x * (int)sizeof(float), y);
}

__global__ void surf_scale_f32(cudaSurfaceObject_t s, int w, int h, float k) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x < w && y < h) {
        float v = surf2Dread<float>(s, x * (int)sizeof(float), y);
        surf2Dwrite(v * k, s, x * (int)sizeof(float), y);
    }
}

__global__ void surf_read_f32(cudaSurfaceObject_t s, int w, int h, float *out) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x < w && y < h) out[(size_t)y * (size_t)w + (size_t)x] =
        surf2Dread<float>(s, x * (int)sizeof(float), y);
}

// Row y of a pitched buffer starts at base + y * pitch (bytes), not at base + y * width.
__global__ void pitched_fill_f32(void *base, size_t pitch, int w, int h) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x < w && y < h) {
        float *row = (float *)((char *)base + (size_t)y * pitch);
        row[x] = 1000.0f * (float)y + (float)x;
    }
}

__global__ void managed_update_f32(float *p, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = 2.0f * p[i] + 1.0f;
}

dim3 grid_2d(int w, int h, dim3 block) {
    return dim3((unsigned)(w + (int)block.x - 1) / block.x,
                (unsigned)(h + (int)block.y - 1) / block.y);
}

unsigned blocks_1d(int n) { return (unsigned)(n + 255) / 256u; }

}  // namespace

extern "C" cudaError_t tms_read_symbols(float *c_out, int *d_out, cudaStream_t s) {
    read_symbols<<<1, 128, 0, s>>>(c_out, d_out);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_constant_sum_and_bump(float *sum_out, int add, cudaStream_t s) {
    constant_sum_and_bump<<<1, 128, 0, s>>>(sum_out, add);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_via_pointer(int *d_ptr, int base, cudaStream_t s) {
    via_pointer<<<1, 128, 0, s>>>(d_ptr, base);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_tex1d_fetch_f32(unsigned long long t, float *out, int n,
                                           cudaStream_t s) {
    tex1d_fetch_f32<<<blocks_1d(n), 256, 0, s>>>((cudaTextureObject_t)t, out, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_tex1d_fetch_i32(unsigned long long t, int *out, int n,
                                           cudaStream_t s) {
    tex1d_fetch_i32<<<blocks_1d(n), 256, 0, s>>>((cudaTextureObject_t)t, out, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_tex2d_sample_f32(unsigned long long t, const float *xs,
                                            const float *ys, float *out, int n, cudaStream_t s) {
    tex2d_sample_f32<<<blocks_1d(n), 256, 0, s>>>((cudaTextureObject_t)t, xs, ys, out, n);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_surf_write_f32(unsigned long long surf, int w, int h, float base,
                                          cudaStream_t s) {
    dim3 block(16, 16);
    surf_write_f32<<<grid_2d(w, h, block), block, 0, s>>>((cudaSurfaceObject_t)surf, w, h, base);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_surf_scale_f32(unsigned long long surf, int w, int h, float k,
                                          cudaStream_t s) {
    dim3 block(16, 16);
    surf_scale_f32<<<grid_2d(w, h, block), block, 0, s>>>((cudaSurfaceObject_t)surf, w, h, k);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_surf_read_f32(unsigned long long surf, int w, int h, float *out,
                                         cudaStream_t s) {
    dim3 block(16, 16);
    surf_read_f32<<<grid_2d(w, h, block), block, 0, s>>>((cudaSurfaceObject_t)surf, w, h, out);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_pitched_fill_f32(void *base, size_t pitch, int w, int h,
                                            cudaStream_t s) {
    dim3 block(16, 16);
    pitched_fill_f32<<<grid_2d(w, h, block), block, 0, s>>>(base, pitch, w, h);
    return cudaGetLastError();
}

extern "C" cudaError_t tms_managed_update_f32(float *p, size_t n, cudaStream_t s) {
    managed_update_f32<<<264, 256, 0, s>>>(p, n);
    return cudaGetLastError();
}
