// A kernel that faults on purpose (writes through a bad pointer): it loses the context.
#include <cuda_runtime_api.h>

__global__ void fault_kernel(int *bad) {
    bad[threadIdx.x] = 1;
}

extern "C" void launch_fault(void) {
    fault_kernel<<<1, 32>>>((int *)0x10);
}

// The kernel itself, for cm_launch (arguments: {&bad (int *)}).
extern "C" const void *fault_kernel_ptr(void) { return (const void *)fault_kernel; }
