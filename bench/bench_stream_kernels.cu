// Kernel of bench_stream.c: a small kernel (one block adds one to a counter), the kind of
// launch whose cost is mostly launch overhead.
#include <cuda_runtime.h>

__global__ void bench_stream_tick(unsigned *counter) {
    if (threadIdx.x == 0) atomicAdd(counter, 1u);
}

extern "C" const void *bench_stream_tick_kernel(void) {
    return (const void *)bench_stream_tick;
}
