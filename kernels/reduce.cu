// Deterministic single-launch reductions behind cm_reduce_* (include/cudamodel/kernels.h).
//
// One kernel: each thread folds a fixed set of elements in a fixed order (16-byte vector loads,
// Op::kUnroll of them in flight, over a grid-stride loop; a scalar head up to the first 16-byte
// boundary and a scalar tail), each block folds its threads in a fixed tree (warp shuffles,
// then the warps' values), writes its partial and counts itself done; the last block to finish
// folds the partials in index order with the same tree and writes the result. No floating-point
// atomics: the bits depend only on n, the grid (from n and the multiprocessor count) and the
// input's alignment modulo 16 bytes. A grid of one block skips the counter.
#include <float.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <type_traits>

#include "kernels.h"
#include "vec.cuh"

namespace {

constexpr unsigned kThreads = CM__REDUCE_THREADS;

using cm_kernels::Vec;

template <typename T> struct Pair {
    T v;
    unsigned long long i;
};

template <typename T> __device__ __forceinline__ bool is_nan(T x) {
    if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) return isnan(x);
    else if constexpr (sizeof(T) == 8) return isnan(x);
    else {
        (void)x;
        return false;
    }
}

// ------------------------------------------------------------------ the operations
// Each: Acc (accumulator), identity(), from(x, index) (one element), from2(x, y, index) for dot,
// combine(a, b) with a folded before b, fold(acc, x, index) (one more element into a thread's
// accumulator: elements reach it in increasing index order), kUnroll (16-byte loads per input
// in flight per thread), store(acc, result, value_too); value_too ==
// CM__REDUCE_STORE_RAW stores sums and dots as their accumulator (the split reductions of
// src/multi.c combine those partials) and the arg reductions with their value.

template <typename T> struct Sum {
    using Acc = typename std::conditional<(T(0.5) == T(0)), long long, double>::type;
    __device__ static Acc identity() { return Acc(0); }
    __device__ static Acc from(T x, unsigned long long) { return Acc(x); }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
    __device__ static Acc fold(Acc a, T x, unsigned long long) { return a + Acc(x); }
    static constexpr int kUnroll = 8;  // H200, 2^28 floats: 1.006-1.011x CUB against 1.003-1.005x with 4
    __device__ static void store(Acc a, void *r, int mode) {
        if constexpr (T(0.5) == T(0)) *static_cast<long long *>(r) = a;
        else if (mode == CM__REDUCE_STORE_RAW) *static_cast<Acc *>(r) = a;  // float64 partial
        else *static_cast<T *>(r) = static_cast<T>(a);
    }
};

template <typename T> struct Dot {
    using Acc = double;
    __device__ static Acc identity() { return 0.0; }
    __device__ static Acc from2(T x, T y, Acc acc) { return fma((double)x, (double)y, acc); }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
    static constexpr int kUnroll = 4;
    __device__ static void store(Acc a, void *r, int mode) {
        if (mode == CM__REDUCE_STORE_RAW) *static_cast<Acc *>(r) = a;  // float64 partial
        else *static_cast<T *>(r) = static_cast<T>(a);
    }
};

template <typename T> __device__ __forceinline__ T inf_of() {
    if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) return __int_as_float(0x7f800000);
    else if constexpr (sizeof(T) == 8) return __longlong_as_double(0x7ff0000000000000ll);
    else return INT_MAX;
}

template <typename T, bool MAX> struct Ext {
    using Acc = T;
    __device__ static Acc identity() {
        if constexpr (T(0.5) == T(0)) return MAX ? T(INT_MIN) : T(INT_MAX);
        else return MAX ? -inf_of<T>() : inf_of<T>();
    }
    __device__ static Acc from(T x, unsigned long long) { return x; }
    __device__ static Acc combine(Acc a, Acc b) {
        if (is_nan(a)) return a;
        if (is_nan(b)) return b;
        return (MAX ? b > a : b < a) ? b : a;
    }
    // One instruction per float element where the hardware has NaN-propagating max/min (sm_80+:
    // the result is NaN when either input is; the generic form tests both for NaN first). H200,
    // 2^28 floats: 1.005-1.008x CUB's Max against 0.994-1.000x.
    __device__ static Acc fold(Acc a, T x, unsigned long long i) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) {
            float r;
            if constexpr (MAX) asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(x));
            else asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(x));
            return r;
        }
#endif
        return combine(a, from(x, i));
    }
    static constexpr int kUnroll = 4;
    __device__ static void store(Acc a, void *r, int) { *static_cast<T *>(r) = a; }
};

template <typename T, bool MAX> struct Arg {
    using Acc = Pair<T>;
    __device__ static Acc identity() { return Acc{Ext<T, MAX>::identity(), ~0ull}; }
    __device__ static Acc from(T x, unsigned long long i) { return Acc{x, i}; }
    __device__ static Acc combine(Acc a, Acc b) {
        const bool an = is_nan(a.v), bn = is_nan(b.v);
        if (an || bn) {
            if (an && bn) return b.i < a.i ? b : a;
            return an ? a : b;
        }
        if (MAX ? b.v > a.v : b.v < a.v) return b;
        if (b.v == a.v && b.i < a.i) return b;
        return a;
    }
    // A thread meets its elements in increasing index order, so an equal value never replaces
    // the one held: take x when it is more extreme, when nothing is held yet, or when it is the
    // first NaN. H200, 2^28 floats: 1.006x CUB's ArgMax against 0.79x for combine(a, from(x, i)).
    __device__ static Acc fold(Acc a, T x, unsigned long long i) {
        if ((MAX ? x > a.v : x < a.v) || a.i == ~0ull || (is_nan(x) && !is_nan(a.v)))
            return Acc{x, i};
        return a;
    }
    static constexpr int kUnroll = 4;
    __device__ static void store(Acc a, void *r, int value_too) {
        *static_cast<unsigned long long *>(r) = a.i;
        if (value_too) *reinterpret_cast<T *>(static_cast<char *>(r) + 8) = a.v;
    }
};

// ------------------------------------------------------------------ block-level folding

template <typename A> __device__ __forceinline__ A shfl_down(A a, int off) {
    static_assert(sizeof(A) % 4 == 0 && sizeof(A) <= 16, "accumulator size");
    int w[sizeof(A) / 4];
    memcpy(w, &a, sizeof(A));
#pragma unroll
    for (int k = 0; k < (int)(sizeof(A) / 4); ++k) w[k] = __shfl_down_sync(0xffffffffu, w[k], off);
    A r;
    memcpy(&r, w, sizeof(A));
    return r;
}

// Fixed tree: lanes fold by halving distance, then warp 0 folds the warps' values. The result
// is valid in thread 0.
template <class Op> __device__ typename Op::Acc block_fold(typename Op::Acc acc) {
    using Acc = typename Op::Acc;
    __shared__ Acc warp_acc[kThreads / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc = Op::combine(acc, shfl_down(acc, off));
    if (lane == 0) warp_acc[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (int)(kThreads / 32) ? warp_acc[lane] : Op::identity();
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc = Op::combine(acc, shfl_down(acc, off));
    }
    __syncthreads();  // warp_acc may be reused by a second fold
    return acc;
}

// ------------------------------------------------------------------ per-thread folding

// Element i of x (and y): folded into acc. For Dot the accumulator takes the fma directly.
template <class Op, typename T, bool DOT>
__device__ __forceinline__ typename Op::Acc fold1(typename Op::Acc acc, const T *x, const T *y,
                                                  size_t i) {
    if constexpr (DOT) return Op::from2(x[i], y[i], acc);
    else {
        (void)y;
        return Op::fold(acc, x[i], (unsigned long long)i);
    }
}

template <class Op, typename T, bool DOT>
__device__ __forceinline__ typename Op::Acc foldv(typename Op::Acc acc,
                                                  const typename Vec<T>::type &vx,
                                                  const typename Vec<T>::type &vy, size_t base) {
    constexpr int W = Vec<T>::width;
    T xs[W], ys[W];
    memcpy(xs, &vx, sizeof xs);
    memcpy(ys, &vy, sizeof ys);
#pragma unroll
    for (int k = 0; k < W; ++k) {
        if constexpr (DOT) acc = Op::from2(xs[k], ys[k], acc);
        else {
            (void)ys;
            acc = Op::fold(acc, xs[k], (unsigned long long)(base + k));
        }
    }
    return acc;
}

template <class Op, typename T, bool DOT>
__global__ void __launch_bounds__(kThreads)
    cm__reduce_kernel(const T *x, const T *y, size_t n, size_t head, size_t nvec, bool vec,
                      unsigned *counter, uint4 *partials, void *result, int value_too) {
    using Acc = typename Op::Acc;
    using V = typename Vec<T>::type;
    constexpr int W = Vec<T>::width;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    Acc acc = Op::identity();
    if (vec) {
        if (tid < head) acc = fold1<Op, T, DOT>(acc, x, y, tid);
        const V *xv = reinterpret_cast<const V *>(x + head);
        const V *yv = reinterpret_cast<const V *>((DOT ? y : x) + head);
        size_t v = tid;
        for (; v + (Op::kUnroll - 1) * stride < nvec; v += Op::kUnroll * stride) {
            V rx[Op::kUnroll], ry[Op::kUnroll];
#pragma unroll
            for (int k = 0; k < Op::kUnroll; ++k) {
                rx[k] = xv[v + k * stride];
                if constexpr (DOT) ry[k] = yv[v + k * stride];
                else ry[k] = rx[k];
            }
#pragma unroll
            for (int k = 0; k < Op::kUnroll; ++k)
                acc = foldv<Op, T, DOT>(acc, rx[k], ry[k], head + (v + k * stride) * W);
        }
        for (; v < nvec; v += stride) {
            V rx = xv[v];
            V ry = rx;
            if constexpr (DOT) ry = yv[v];
            acc = foldv<Op, T, DOT>(acc, rx, ry, head + v * W);
        }
        const size_t tail = head + nvec * W;
        if (tid < n - tail) acc = fold1<Op, T, DOT>(acc, x, y, tail + tid);
    } else {
        size_t i = tid;
        for (; i + (Op::kUnroll - 1) * stride < n; i += Op::kUnroll * stride) {
            T rx[Op::kUnroll], ry[Op::kUnroll];
#pragma unroll
            for (int k = 0; k < Op::kUnroll; ++k) {
                rx[k] = x[i + k * stride];
                ry[k] = DOT ? y[i + k * stride] : rx[k];
            }
#pragma unroll
            for (int k = 0; k < Op::kUnroll; ++k) {
                if constexpr (DOT) acc = Op::from2(rx[k], ry[k], acc);
                else acc = Op::fold(acc, rx[k], (unsigned long long)(i + k * stride));
            }
        }
        for (; i < n; i += stride) acc = fold1<Op, T, DOT>(acc, x, y, i);
    }
    acc = block_fold<Op>(acc);

    if (gridDim.x == 1) {
        if (threadIdx.x == 0) Op::store(acc, result, value_too);
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        uint4 raw = make_uint4(0u, 0u, 0u, 0u);
        memcpy(&raw, &acc, sizeof acc);
        __stcg(&partials[blockIdx.x], raw);
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    acc = Op::identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
        uint4 raw = __ldcg(&partials[b]);
        Acc p;
        memcpy(&p, &raw, sizeof p);
        acc = Op::combine(acc, p);
    }
    acc = block_fold<Op>(acc);
    if (threadIdx.x == 0) {
        Op::store(acc, result, value_too);
        *counter = 0u;
    }
}

// Resident blocks per SM of one kernel on the current device, cached per device ordinal (the
// grid, and so the bits of a result, depend on it: it must not change between calls).
template <class Op, typename T, bool DOT> int blocks_per_sm() {
    static std::atomic<int> cache[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0) {
        (void)cudaGetLastError();
        return 0;
    }
    if (dev < 64) {
        int v = cache[dev].load(std::memory_order_relaxed);
        if (v > 0) return v;
    }
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, cm__reduce_kernel<Op, T, DOT>,
                                                      (int)kThreads, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (dev < 64 && blocks > 0) cache[dev].store(blocks, std::memory_order_relaxed);
    return blocks;
}

template <class Op, typename T, bool DOT>
cudaError_t launch(const void *x_, const void *y_, size_t n, unsigned grid, void *scratch,
                   bool counter_zero, void *result, int value_too, cudaStream_t stream) {
    static_assert(sizeof(typename Op::Acc) <= CM__REDUCE_PARTIAL_BYTES, "partial size");
    const T *x = static_cast<const T *>(x_);
    const T *y = static_cast<const T *>(y_);
    const uintptr_t addrs[2] = {reinterpret_cast<uintptr_t>(x), reinterpret_cast<uintptr_t>(y)};
    const cm__vec_plan_t plan = cm__vector_plan(addrs, DOT ? 2 : 1, sizeof(T), n);
    const bool vec = plan.vectorized != 0;
    const size_t head = plan.head, nvec = plan.nvec;
    if (grid < 1) grid = 1;
    unsigned *counter = static_cast<unsigned *>(scratch);
    uint4 *partials =
        reinterpret_cast<uint4 *>(static_cast<char *>(scratch) + CM__REDUCE_PARTIALS_OFFSET);
    if (grid > 1 && !counter_zero) {
        cudaError_t err = cudaMemsetAsync(counter, 0, sizeof(unsigned), stream);
        if (err != cudaSuccess) return err;
    }
    cm__reduce_kernel<Op, T, DOT><<<grid, kThreads, 0, stream>>>(x, y, n, head, nvec, vec, counter,
                                                                 partials, result, value_too);
    return cudaGetLastError();
}

template <typename T>
cudaError_t dispatch(int op, const void *x, const void *y, size_t n, unsigned grid, void *scratch,
                     bool cz, void *result, int value_too, cudaStream_t s) {
    switch (op) {
    case CM__ROP_SUM: return launch<Sum<T>, T, false>(x, y, n, grid, scratch, cz, result, value_too, s);
    case CM__ROP_MIN: return launch<Ext<T, false>, T, false>(x, y, n, grid, scratch, cz, result, value_too, s);
    case CM__ROP_MAX: return launch<Ext<T, true>, T, false>(x, y, n, grid, scratch, cz, result, value_too, s);
    default: break;
    }
    if constexpr (T(0.5) != T(0)) {
        switch (op) {
        case CM__ROP_ARGMIN:
            return launch<Arg<T, false>, T, false>(x, y, n, grid, scratch, cz, result, value_too, s);
        case CM__ROP_ARGMAX:
            return launch<Arg<T, true>, T, false>(x, y, n, grid, scratch, cz, result, value_too, s);
        case CM__ROP_DOT: return launch<Dot<T>, T, true>(x, y, n, grid, scratch, cz, result, value_too, s);
        default: break;
        }
    }
    return cudaErrorInvalidValue;
}

template <typename T> int occupancy(int op) {
    switch (op) {
    case CM__ROP_SUM: return blocks_per_sm<Sum<T>, T, false>();
    case CM__ROP_MIN: return blocks_per_sm<Ext<T, false>, T, false>();
    case CM__ROP_MAX: return blocks_per_sm<Ext<T, true>, T, false>();
    default: break;
    }
    if constexpr (T(0.5) != T(0)) {
        switch (op) {
        case CM__ROP_ARGMIN: return blocks_per_sm<Arg<T, false>, T, false>();
        case CM__ROP_ARGMAX: return blocks_per_sm<Arg<T, true>, T, false>();
        case CM__ROP_DOT: return blocks_per_sm<Dot<T>, T, true>();
        default: break;
        }
    }
    return 0;
}

}  // namespace

extern "C" int cm__kernel_reduce_blocks_per_sm(int op, int dtype) {
    switch (dtype) {
    case CM__DT_F32: return occupancy<float>(op);
    case CM__DT_F64: return occupancy<double>(op);
    case CM__DT_I32: return occupancy<int32_t>(op);
    default: return 0;
    }
}

extern "C" cudaError_t cm__kernel_reduce(int op, int dtype, const void *x, const void *y, size_t n,
                                         unsigned grid, void *scratch, int counter_zero,
                                         void *result, int value_too, cudaStream_t stream) {
    switch (dtype) {
    case CM__DT_F32: return dispatch<float>(op, x, y, n, grid, scratch, counter_zero != 0, result, value_too, stream);
    case CM__DT_F64: return dispatch<double>(op, x, y, n, grid, scratch, counter_zero != 0, result, value_too, stream);
    case CM__DT_I32: return dispatch<int32_t>(op, x, y, n, grid, scratch, counter_zero != 0, result, value_too, stream);
    default: return cudaErrorInvalidValue;
    }
}
