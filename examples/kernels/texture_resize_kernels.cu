// Kernel of texture_resize.c: bilinear image resize through a texture. The texture unit
// fetches the 4 texels around each sample, applies the address mode at the edges and blends
// them (9-bit fixed-point weights), so the kernel is one tex2D per output pixel. It writes a
// pitched buffer: row y starts y * pitch bytes after the first.
#include <cuda_runtime.h>

// out(x, y) = tex(u, v), u = (x + 0.5) sx, v = (y + 0.5) sy (unnormalised coordinates: texel
// centres at i + 0.5; sx = input width / output width, sy likewise).
// Arguments: {&tex (unsigned long long), &out (void *), &out_pitch (size_t), &w (int),
// &h (int), &sx (float), &sy (float)}.
__global__ void texture_resize_kernel(cudaTextureObject_t tex, void *out, size_t out_pitch,
                                      int w, int h, float sx, float sy) {
    int x = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    int y = (int)(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= w || y >= h) return;
    float u = ((float)x + 0.5f) * sx, v = ((float)y + 0.5f) * sy;
    float *row = (float *)((char *)out + (size_t)y * out_pitch);
    row[x] = tex2D<float>(tex, u, v);
}

extern "C" const void *texture_resize_kernel_ptr(void) { return (const void *)texture_resize_kernel; }
