// Reduction variants vs CUB at 2^28 floats (sum / max / argmax).
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cub/cub.cuh>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)
static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
template <typename F> static double time_ev(F f, int reps = 40) {
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (int i = 0; i < 5; ++i) f();
    std::vector<double> v;
    for (int i = 0; i < reps; ++i) { float ms; CK(cudaEventRecord(e0)); f(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1)); v.push_back(ms); }
    return med(v);
}
struct ArgAcc { float v; unsigned long long i; };
// OP 0 sum (double acc), 1 max (NaN-propagating, generic), 2 max via max.NaN, 3 argmax generic-ish, 4 argmax fast
template <int OP> struct Acc { using T = double; };
template <> struct Acc<1> { using T = float; };
template <> struct Acc<2> { using T = float; };
template <> struct Acc<3> { using T = ArgAcc; };
template <> struct Acc<4> { using T = ArgAcc; };
template <int OP> __device__ __forceinline__ typename Acc<OP>::T ident() {
    if constexpr (OP == 0) return 0.0; else if constexpr (OP <= 2) return -INFINITY; else return ArgAcc{-INFINITY, ~0ull}; }
template <int OP> __device__ __forceinline__ void fold(typename Acc<OP>::T &a, float x, unsigned long long i) {
    if constexpr (OP == 0) a += (double)x;
    else if constexpr (OP == 1) { if (isnan(a)) return; if (isnan(x)) { a = x; return; } a = x > a ? x : a; }
    else if constexpr (OP == 2) { float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(x)); a = r; }
    else if constexpr (OP == 3) { bool an = isnan(a.v), bn = isnan(x); if (an || bn) { if (!an) a = ArgAcc{x, i}; return; } if (x > a.v || (x == a.v && i < a.i)) a = ArgAcc{x, i}; }
    else { if (x > a.v || a.i == ~0ull || (x != x && a.v == a.v)) a = ArgAcc{x, i}; }
}
template <int OP> __device__ __forceinline__ typename Acc<OP>::T comb(typename Acc<OP>::T a, typename Acc<OP>::T b) {
    if constexpr (OP == 0) return a + b;
    else if constexpr (OP <= 2) { if (isnan(a)) return a; if (isnan(b)) return b; return b > a ? b : a; }
    else { bool an = isnan(a.v), bn = isnan(b.v); if (an || bn) { if (an && bn) return b.i < a.i ? b : a; return an ? a : b; }
           if (b.v > a.v) return b; if (b.v == a.v && b.i < a.i) return b; return a; }
}
template <typename A> __device__ A shfl(A a, int off) { static_assert(sizeof(A) % 4 == 0); int w[sizeof(A) / 4]; memcpy(w, &a, sizeof a);
    for (int k = 0; k < (int)(sizeof(A) / 4); ++k) w[k] = __shfl_down_sync(~0u, w[k], off); A r; memcpy(&r, w, sizeof r); return r; }
template <int OP> __device__ typename Acc<OP>::T block_fold(typename Acc<OP>::T a) {
    using A = typename Acc<OP>::T; __shared__ A wa[8];
    for (int o = 16; o; o >>= 1) a = comb<OP>(a, shfl(a, o));
    if ((threadIdx.x & 31) == 0) wa[threadIdx.x >> 5] = a; __syncthreads();
    if (threadIdx.x < 32) { a = threadIdx.x < 8 ? wa[threadIdx.x] : ident<OP>(); for (int o = 16; o; o >>= 1) a = comb<OP>(a, shfl(a, o)); }
    __syncthreads(); return a;
}
// MODE 0: persistent grid-stride, U float4 in flight. MODE 1: block-contiguous chunk, each block CH float4 per thread, coalesced.
template <int OP, int MODE, int U>
__global__ void __launch_bounds__(256) k_red(const float4 *x, size_t nvec, unsigned *counter, typename Acc<OP>::T *parts, typename Acc<OP>::T *res) {
    using A = typename Acc<OP>::T; A a = ident<OP>();
    if constexpr (MODE == 0) {
        size_t stride = (size_t)gridDim.x * 256, v = (size_t)blockIdx.x * 256 + threadIdx.x;
        for (; v + (U - 1) * stride < nvec; v += U * stride) { float4 r[U];
#pragma unroll
            for (int k = 0; k < U; ++k) r[k] = x[v + k * stride];
#pragma unroll
            for (int k = 0; k < U; ++k) { size_t b = (v + k * stride) * 4; fold<OP>(a, r[k].x, b); fold<OP>(a, r[k].y, b + 1); fold<OP>(a, r[k].z, b + 2); fold<OP>(a, r[k].w, b + 3); } }
        for (; v < nvec; v += stride) { float4 r = x[v]; size_t b = v * 4; fold<OP>(a, r.x, b); fold<OP>(a, r.y, b + 1); fold<OP>(a, r.z, b + 2); fold<OP>(a, r.w, b + 3); }
    } else {
        size_t base = (size_t)blockIdx.x * 256 * U;
        float4 r[U];
#pragma unroll
        for (int k = 0; k < U; ++k) { size_t v = base + k * 256 + threadIdx.x; r[k] = v < nvec ? x[v] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY); }
#pragma unroll
        for (int k = 0; k < U; ++k) { size_t v = base + k * 256 + threadIdx.x; if (v < nvec) { size_t b = v * 4; fold<OP>(a, r[k].x, b); fold<OP>(a, r[k].y, b + 1); fold<OP>(a, r[k].z, b + 2); fold<OP>(a, r[k].w, b + 3); } }
    }
    a = block_fold<OP>(a);
    __shared__ bool last;
    if (threadIdx.x == 0) { parts[blockIdx.x] = a; __threadfence(); last = atomicAdd(counter, 1u) == gridDim.x - 1; }
    __syncthreads(); if (!last) return; __threadfence();
    a = ident<OP>();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += 256) { int w[sizeof(A) / 4]; const int *src = (const int *)(parts + b);
        for (int k = 0; k < (int)(sizeof(A) / 4); ++k) w[k] = __ldcg(src + k); A p; memcpy(&p, w, sizeof p); a = comb<OP>(a, p); }
    a = block_fold<OP>(a); if (threadIdx.x == 0) { *res = a; *counter = 0; }
}

__global__ void k_rand(float *p, size_t n, uint32_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u ^ seed; x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
        p[i] = (x >> 8) * (1.0f / 16777216.0f) * 2.f - 1.f; }
}
int main() {
    const size_t N = (size_t)1 << 28, NV = N / 4; float *x; CK(cudaMalloc(&x, N * 4)); k_rand<<<2048, 256>>>(x, N, 7); CK(cudaDeviceSynchronize());
    unsigned *cnt; CK(cudaMalloc(&cnt, 4)); CK(cudaMemset(cnt, 0, 4)); void *parts; CK(cudaMalloc(&parts, 16 << 20)); void *res; CK(cudaMalloc(&res, 64));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const double gb = 4.0 * N / 1e9;
    void *tmp = nullptr; size_t tb = 0, t2 = 0; float *fr = (float *)res;
    cub::KeyValuePair<int, float> *kv; CK(cudaMalloc(&kv, 64));
    CK(cub::DeviceReduce::Sum(nullptr, tb, x, fr, (int)N)); CK(cub::DeviceReduce::ArgMax(nullptr, t2, x, kv, (int)N)); tb = std::max(tb, t2); CK(cub::DeviceReduce::Max(nullptr, t2, x, fr, (int)N)); tb = std::max(tb, t2);
    CK(cudaMalloc(&tmp, tb));
    for (int round = 0; round < 2; ++round) {
    double cs = time_ev([&] { size_t t = tb; CK(cub::DeviceReduce::Sum(tmp, t, x, fr, (int)N)); });
    double cm = time_ev([&] { size_t t = tb; CK(cub::DeviceReduce::Max(tmp, t, x, fr, (int)N)); });
    double ca = time_ev([&] { size_t t = tb; CK(cub::DeviceReduce::ArgMax(tmp, t, x, kv, (int)N)); });
    printf("CUB sum %.0f max %.0f argmax %.0f GB/s\n", gb / cs * 1e3, gb / cm * 1e3, gb / ca * 1e3);
#define RUN(OP, MODE, U, GRID, NAME, PEER) { auto kk = k_red<OP, MODE, U>; using A = typename Acc<OP>::T; unsigned g = (GRID); \
        double t = time_ev([&] { kk<<<g, 256>>>((const float4 *)x, NV, cnt, (A *)parts, (A *)res); }); \
        CK(cudaGetLastError()); printf("  %-34s grid %6u %.0f GB/s ratio %.3f\n", NAME, g, gb / t * 1e3, (PEER) / t); }
    unsigned p8 = sms * 8, p4 = sms * 4;
    RUN(0, 0, 4, p8, "sum persistent u4 8bps (ours now)", cs); RUN(0, 0, 8, p8, "sum persistent u8 8bps", cs); RUN(0, 0, 4, p4, "sum persistent u4 4bps", cs);
    RUN(0, 1, 16, (unsigned)(NV / (256 * 16)), "sum chunk 16/thread", cs); RUN(0, 1, 8, (unsigned)(NV / (256 * 8)), "sum chunk 8/thread", cs); RUN(0, 1, 32, (unsigned)(NV / (256 * 32)), "sum chunk 32/thread", cs);
    RUN(1, 0, 4, p8, "max persistent generic (ours now)", cm); RUN(2, 0, 4, p8, "max persistent max.NaN", cm); RUN(2, 1, 16, (unsigned)(NV / (256 * 16)), "max chunk16 max.NaN", cm); RUN(1, 1, 16, (unsigned)(NV / (256 * 16)), "max chunk16 generic", cm);
    RUN(3, 0, 4, p8, "argmax persistent generic (ours now)", ca); RUN(4, 0, 4, p8, "argmax persistent fast", ca); RUN(4, 1, 16, (unsigned)(NV / (256 * 16)), "argmax chunk16 fast", ca); RUN(3, 1, 16, (unsigned)(NV / (256 * 16)), "argmax chunk16 generic", ca);
    }
    double h = 0; std::vector<float> hx(N); CK(cudaMemcpy(hx.data(), x, N * 4, cudaMemcpyDeviceToHost)); for (size_t i = 0; i < N; ++i) h += hx[i];
    k_red<0, 1, 16><<<(unsigned)(NV / (256 * 16)), 256>>>((const float4 *)x, NV, cnt, (double *)parts, (double *)res); double d; CK(cudaMemcpy(&d, res, 8, cudaMemcpyDeviceToHost));
    printf("check sum chunk16 %.6f vs cpu %.6f\n", d, h);
    return 0;
}
