// A kernel compiled for sm_120 only: machine code, no PTX (tests/noimage.cmake builds this file
// alone with CUDA_ARCHITECTURES "120-real", i.e. -gencode arch=compute_120,code=sm_120). On any
// GPU that is not sm_12x the runtime has no image for it: "no kernel image is available".
#include <cuda_runtime.h>

__global__ void noimage_kernel(unsigned *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = 0x120120u;
}

extern "C" const void *noimage_kernel_ptr(void) {
    return (const void *)noimage_kernel;
}

extern "C" unsigned noimage_kernel_marker(void) {
    return 0x120120u;
}
