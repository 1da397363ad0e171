// Kernel attributes set once per (kernel, device) instead of before every launch: the
// launchers of kernels/gemm_ffma.cu, gemm_mma.cu and gemm_sm90.cu keep one cm__once_per_device
// per kernel instantiation (a function-local static) and call cm__prepare_once() before each
// launch. cudaFuncSetAttribute is a driver round trip of a few microseconds: noise on a
// millisecond product, not on a small one.
//
// Thread-safe: two threads that find the same device unprepared both run `prepare` (it must be
// idempotent, as setting an attribute to the same value is); the bit is set only after it
// succeeded. Devices with ordinal >= 64 are prepared at every call. The flags live as long as
// the process, like the contexts whose kernels they describe: a user's cudaDeviceReset() drops
// the attributes of the device's kernels without clearing them (the library never resets a
// device; the CUDA programming model then requires the process to start over anyway for the
// handles it held).
#ifndef CUDAMODEL_KERNELS_FUNC_ATTR_CUH
#define CUDAMODEL_KERNELS_FUNC_ATTR_CUH

#include <atomic>

#include <cuda_runtime_api.h>

struct cm__once_per_device {
    std::atomic<unsigned long long> ready{0};   // bit d: prepared on device d
    std::atomic<unsigned long long> refused{0}; // bit d: prepare said cudaErrorNotSupported
};

// Runs prepare(device) for the current device unless it already succeeded there (then
// cudaSuccess) or already answered cudaErrorNotSupported (a fact of the device and of the
// images the library carries: then cudaErrorNotSupported again, without a call). Any other
// error of prepare, or of cudaGetDevice, is returned and nothing is remembered.
template <class Prepare>
static inline cudaError_t cm__prepare_once(cm__once_per_device &once, Prepare &&prepare) {
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return err;
    const unsigned long long bit = dev >= 0 && dev < 64 ? 1ull << dev : 0ull;
    if (bit != 0) {
        if (once.ready.load(std::memory_order_acquire) & bit) return cudaSuccess;
        if (once.refused.load(std::memory_order_acquire) & bit) return cudaErrorNotSupported;
    }
    err = prepare(dev);
    if (bit != 0 && err == cudaSuccess) once.ready.fetch_or(bit, std::memory_order_release);
    if (bit != 0 && err == cudaErrorNotSupported)
        once.refused.fetch_or(bit, std::memory_order_release);
    return err;
}

#endif // CUDAMODEL_KERNELS_FUNC_ATTR_CUH
