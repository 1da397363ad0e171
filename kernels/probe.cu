// The probe kernel: the smallest library kernel, used to ask the runtime which image of the
// library's code (native SASS or PTX JIT) a device runs, and to prove a launch works.
#include "kernels.h"

namespace {

__global__ void cm__probe_kernel(int *out, int value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *out = value + 1;
}

}  // namespace

extern "C" cudaError_t cm__kernel_probe_attributes(struct cudaFuncAttributes *attr) {
    return cudaFuncGetAttributes(attr, cm__probe_kernel);
}

extern "C" cudaError_t cm__kernel_probe_launch(int *d_out, int value, cudaStream_t stream) {
    cm__probe_kernel<<<1, 1, 0, stream>>>(d_out, value);
    return cudaGetLastError();
}
