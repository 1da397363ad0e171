// The soak's own kernel (bench/soak.c), handed over as a pointer: an XOR of a range of 32-bit
// words with a key that depends on the word's index in the range, so the host can apply the
// same change to its shadow copy and compare bit for bit.
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void soak_xor(uint32_t *p, unsigned long long n, uint32_t key) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] ^= key + (uint32_t)i * 0x9E3779B9u;
}

extern "C" const void *soak_xor_kernel(void) {
    return (const void *)soak_xor;
}
