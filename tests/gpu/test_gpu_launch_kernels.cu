// Kernels for test_gpu_launch.c, handed to the C test as pointers through C-linkage getters.
//
// The "proof" kernels share one signature, (unsigned *out, unsigned param), so the test can
// launch any of them with the same argument array. They differ in what limits a launch:
//   light     nothing special (few registers, no shared memory)
//   bounded   __launch_bounds__(256): maxThreadsPerBlock is 256
//   heavy     128 floats live across a loop: >128 registers, so maxThreadsPerBlock < 1024
//   static    40 KiB of static shared memory (default dynamic limit: 48 - 40 = 8 KiB)
//   dynamic   uses dynamic shared memory; param = how many 32-bit words it may touch
// They are cheap for any configuration and never write out of bounds: only the first thread
// of the grid writes, into out[0] (a marker saying which kernel ran) and out[1].
#include <cuda_runtime.h>

#define TK_MARK 0x5eed0000u

namespace {

__device__ __forceinline__ unsigned thread_in_block() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ __forceinline__ bool first_block() {
    return blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
}

}  // namespace

__global__ void tk_light_kernel(unsigned *out, unsigned param) {
    if (first_block() && thread_in_block() == 0) {
        out[0] = TK_MARK | 0u;
        out[1] = param;
    }
}

__global__ void __launch_bounds__(256) tk_bounded_kernel(unsigned *out, unsigned param) {
    if (first_block() && thread_in_block() == 0) {
        out[0] = TK_MARK | 1u;
        out[1] = param + blockDim.x;
    }
}

#define TK_HEAVY_N 128
// param is the number of loop iterations (0 in the tests: the registers are allocated all
// the same, since the compiler cannot know the loop is skipped).
__global__ void tk_heavy_kernel(unsigned *out, unsigned param) {
    float acc[TK_HEAVY_N];
#pragma unroll
    for (int i = 0; i < TK_HEAVY_N; ++i) acc[i] = (float)(threadIdx.x + i) * 0.5f + (float)param;
    for (unsigned it = 0; it < param; ++it) {
#pragma unroll
        for (int i = 0; i < TK_HEAVY_N; ++i)
            acc[i] = fmaf(acc[i], acc[(i + 1) % TK_HEAVY_N], acc[(i + 7) % TK_HEAVY_N]);
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < TK_HEAVY_N; ++i) s += acc[i] * (float)(i + 1);
    if (first_block() && thread_in_block() == 0) {
        out[0] = TK_MARK | 2u;
        out[1] = __float_as_uint(s);
    }
}

#define TK_STATIC_WORDS 10240u /* 40 KiB */
__global__ void tk_static_smem_kernel(unsigned *out, unsigned param) {
    __shared__ unsigned s[TK_STATIC_WORDS];
    unsigned t = thread_in_block();
    s[t % TK_STATIC_WORDS] = t + param;
    __syncthreads();
    if (first_block() && t == 0) {
        out[0] = TK_MARK | 3u;
        out[1] = s[0]; /* written by thread 0 itself */
    }
}

__global__ void tk_dynamic_smem_kernel(unsigned *out, unsigned param) {
    extern __shared__ unsigned tk_dyn[];
    unsigned t = thread_in_block();
    if (t == 0 && param > 0) tk_dyn[param - 1] = blockIdx.x + 1u; /* the last word it has */
    if (first_block() && t == 0) {
        out[0] = TK_MARK | 4u;
        out[1] = param > 0 ? tk_dyn[param - 1] : 0u;
    }
}

// out[i] = mul * i + add for every global thread index i < n, over a 3-D grid of 3-D blocks:
//   i = ((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * threads_per_block
//       + (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x
__global__ void tk_fill_kernel(unsigned *out, unsigned long long n, unsigned mul, unsigned add) {
    unsigned long long block =
        ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned long long i =
        block * (blockDim.x * blockDim.y * blockDim.z) + thread_in_block();
    if (i < n) out[i] = mul * (unsigned)i + add;
}

// Each block fills all `words` words of its dynamic shared memory, then writes them out
// rotated by one: out[b * words + w] = (((w + 1) % words) * 2654435761u ^ b) + 1.
__global__ void tk_dyn_fill_kernel(unsigned *out, unsigned words) {
    extern __shared__ unsigned tk_dyn_fill[];
    unsigned t = thread_in_block();
    unsigned nt = blockDim.x * blockDim.y * blockDim.z;
    for (unsigned w = t; w < words; w += nt) tk_dyn_fill[w] = (w * 2654435761u) ^ blockIdx.x;
    __syncthreads();
    for (unsigned w = t; w < words; w += nt)
        out[(unsigned long long)blockIdx.x * words + w] = tk_dyn_fill[(w + 1) % words] + 1u;
}

// The first thread waits `microseconds` (device clock), then writes the marker.
__global__ void tk_spin_kernel(unsigned *out, unsigned microseconds) {
    if (!(first_block() && thread_in_block() == 0)) return;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < (unsigned long long)microseconds * 1000ull);
    out[0] = TK_MARK | 7u;
}

typedef void (*tk_proof_fn)(unsigned *, unsigned);

static const tk_proof_fn tk_proof[] = {tk_light_kernel, tk_bounded_kernel, tk_heavy_kernel,
                                       tk_static_smem_kernel, tk_dynamic_smem_kernel};
static const char *const tk_proof_names[] = {"light", "bounded(256)", "heavy-registers",
                                             "static-smem-40KiB", "dynamic-smem"};
#define TK_PROOF_COUNT ((int)(sizeof tk_proof / sizeof tk_proof[0]))

extern "C" int tk_proof_count(void) {
    return TK_PROOF_COUNT;
}

extern "C" unsigned tk_mark(void) {
    return TK_MARK;
}

extern "C" const void *tk_proof_kernel(int which) {
    return (which >= 0 && which < TK_PROOF_COUNT) ? (const void *)tk_proof[which] : NULL;
}

extern "C" const char *tk_proof_kernel_label(int which) {
    return (which >= 0 && which < TK_PROOF_COUNT) ? tk_proof_names[which] : "?";
}

extern "C" const void *tk_fill_kernel_ptr(void) {
    return (const void *)tk_fill_kernel;
}

extern "C" const void *tk_dyn_fill_kernel_ptr(void) {
    return (const void *)tk_dyn_fill_kernel;
}

extern "C" const void *tk_spin_kernel_ptr(void) {
    return (const void *)tk_spin_kernel;
}

// cudaOccupancyMaxPotentialBlockSize is a C++ template of cuda_runtime.h: called here for the
// C test. which: a proof kernel index, or -1 for the fill kernel. Returns a cudaError_t.
extern "C" int tk_max_potential_block_size(int which, size_t dynamic_smem, int *min_grid,
                                           int *block) {
    if (which == -1)
        return (int)cudaOccupancyMaxPotentialBlockSize(min_grid, block, tk_fill_kernel,
                                                       dynamic_smem, 0);
    if (which < 0 || which >= TK_PROOF_COUNT) return (int)cudaErrorInvalidValue;
    return (int)cudaOccupancyMaxPotentialBlockSize(min_grid, block, tk_proof[which],
                                                   dynamic_smem, 0);
}
