// Programmatic dependent launch (sm_90+): a GEMM kernel
// lets the kernel queued after it on its stream (split-K's reduction, launched with
// cudaLaunchAttributeProgrammaticStreamSerialization) be scheduled once each of its blocks has
// started, so that the reduction's blocks wait on the multiprocessors its last wave leaves
// idle instead of being launched after it ends; the reduction waits (griddepcontrol.wait) for
// the GEMM to complete and its writes to be visible before it reads them. Both instructions
// do nothing for a kernel launched without the attribute, and are left out below sm_90.
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

#endif
