// Helpers of bench_gemm.c: device-side random fill (floats in [-1, 1), and their bf16
// roundings), and a float64 reference for sampled entries of a column-major GEMM (one block per
// entry; optionally also sum_k |a_ik b_kj| per entry, the scale of an entry's rounding error),
// a gather of the same entries from a float or bf16 C, and a count of the non-finite elements
// of a packed C (the poison left where nothing was written).
#include <stdint.h>

#include <cuda_runtime_api.h>

namespace {

__device__ __forceinline__ float rnd_at(size_t i, uint32_t seed) {
    uint32_t x = (uint32_t)i * 2654435761u ^ seed ^ (uint32_t)(i >> 32) * 0x9E3779B9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

__device__ __forceinline__ uint16_t f2bf(float f) {
    uint32_t u = __float_as_uint(f);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

__global__ void fill_f32(float *p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = rnd_at(i, seed);
}

__global__ void fill_bf16(uint16_t *p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = f2bf(rnd_at(i, seed));
}

__device__ __forceinline__ double ld_in(const void *p, long long i, int bf16) {
    if (bf16) return (double)__uint_as_float((uint32_t)static_cast<const uint16_t *>(p)[i] << 16);
    return (double)static_cast<const float *>(p)[i];
}

// column-major: op(A)(i, l) = opa ? A[i*lda + l] : A[l*lda + i]; op(B)(l, j) = opb ? B[l*ldb + j]
// : B[j*ldb + l]
// (256 threads per block; a * b of two floats is exact in double)
__global__ void ref_samples(int bf16, int opa, int opb, const void *A, long long lda,
                            const void *B, long long ldb, int k, const int *ij, double *out,
                            double *abs_out) {
    __shared__ double part[256], apart[256];
    const int s = blockIdx.x;
    const int i = ij[2 * s], j = ij[2 * s + 1];
    double acc = 0, aacc = 0;
    for (int l = threadIdx.x; l < k; l += blockDim.x) {
        const double a = ld_in(A, opa ? (long long)i * lda + l : (long long)l * lda + i, bf16);
        const double b = ld_in(B, opb ? (long long)l * ldb + j : (long long)j * ldb + l, bf16);
        acc += a * b;
        aacc += fabs(a * b);
    }
    part[threadIdx.x] = acc;
    apart[threadIdx.x] = aacc;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) {
            part[threadIdx.x] += part[threadIdx.x + w];
            apart[threadIdx.x] += apart[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[s] = part[0];
        if (abs_out) abs_out[s] = apart[0];
    }
}

__global__ void count_nonfinite(const void *C, size_t n, int bf16, unsigned long long *count) {
    unsigned long long local = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (!isfinite(ld_in(C, (long long)i, bf16))) ++local;
    for (int o = 16; o > 0; o >>= 1) local += __shfl_down_sync(0xffffffffu, local, o);
    if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

__global__ void gather(const void *C, long long ldc, int bf16, const int *ij, int count,
                       double *out) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    out[s] = ld_in(C, (long long)ij[2 * s + 1] * ldc + ij[2 * s], bf16);
}

}  // namespace

extern "C" cudaError_t bench_gemm_fill(void *p, size_t n, int bf16, uint32_t seed, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    if (bf16)
        fill_bf16<<<2048, 256, 0, s>>>(static_cast<uint16_t *>(p), n, seed);
    else
        fill_f32<<<2048, 256, 0, s>>>(static_cast<float *>(p), n, seed);
    return cudaGetLastError();
}

// out[s] = sum_k op(A)(i, l) op(B)(l, j) in float64 for each sample (i, j) = ij[2s], ij[2s + 1];
// abs_out (or NULL) the same sum of |op(A)(i, l) op(B)(l, j)|
extern "C" cudaError_t bench_gemm_ref(int bf16, int opa, int opb, const void *A, long long lda,
                                      const void *B, long long ldb, int k, const int *ij,
                                      int count, double *out, double *abs_out, cudaStream_t s) {
    if (count <= 0) return cudaSuccess;
    ref_samples<<<count, 256, 0, s>>>(bf16, opa, opb, A, lda, B, ldb, k, ij, out, abs_out);
    return cudaGetLastError();
}

// *count += the elements of C[0 .. n) (float, or bf16 when bf16) that are NaN or infinite;
// *count must be set (e.g. to 0) before, on the same stream
extern "C" cudaError_t bench_gemm_count_nonfinite(const void *C, size_t n, int bf16,
                                                  unsigned long long *count, cudaStream_t s) {
    if (n == 0) return cudaSuccess;
    const size_t blocks = (n + 255) / 256;
    count_nonfinite<<<blocks < 1024 ? (unsigned)blocks : 1024u, 256, 0, s>>>(C, n, bf16, count);
    return cudaGetLastError();
}

extern "C" cudaError_t bench_gemm_gather(const void *C, long long ldc, int bf16, const int *ij,
                                         int count, double *out, cudaStream_t s) {
    if (count <= 0) return cudaSuccess;
    gather<<<(count + 255) / 256, 256, 0, s>>>(C, ldc, bf16, ij, count, out);
    return cudaGetLastError();
}
