// Programmatic dependent launch (sm_90+): a GEMM kernel
// lets the kernel queued after it on its stream (split-K's reduction, launched with
// cudaLaunchAttributeProgrammaticStreamSerialization) be scheduled once each of its blocks has
// started, so that the reduction's blocks wait on the multiprocessors its last wave leaves
// idle instead of being launched after it ends; the reduction waits (griddepcontrol.wait) for
// the GEMM to complete and its writes to be visible before it reads them. Likewise the
// operand staging's kernels (gemm_pack.cu) let the GEMM after them (cm__gemm_args_t::pdl) be
// scheduled early, and the Hopper and mma.sync GEMM kernels wait before they read A and B.
// Both instructions do nothing for a kernel launched without the attribute, and are left out
// below sm_90.
#ifndef CUDAMODEL_KERNELS_PDL_CUH
#define CUDAMODEL_KERNELS_PDL_CUH

__device__ __forceinline__ void cm__pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void cm__pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

#ifdef __CUDACC__
#include <utility>

#include <cuda_runtime.h>

// kernel<<<grid, block, smem, stream>>>(args...), with dependent as a programmatic dependent
// of the kernel queued before it on stream (sm_90+ devices only: the caller decides); the
// launch's error
template <typename... P, typename... A>
static inline cudaError_t cm__pdl_launch(bool dependent, void (*kernel)(P...), dim3 grid,
                                         dim3 block, size_t smem, cudaStream_t stream,
                                         A &&...args) {
    if (!dependent) {
        kernel<<<grid, block, smem, stream>>>(std::forward<A>(args)...);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}
#endif

#endif
