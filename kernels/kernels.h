/*
 * The host interface of the device code in kernels/: thin launchers with C linkage, called
 * from src/ only. They return the CUDA error of the launch and never record details
 * themselves; the public entry points in src/ validate arguments and report.
 */
#ifndef CUDAMODEL_KERNELS_KERNELS_H
#define CUDAMODEL_KERNELS_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Attributes of the probe kernel (binaryVersion/ptxVersion tell which image the device runs). */
cudaError_t cm__kernel_probe_attributes(struct cudaFuncAttributes *attr);

/** Launch the probe kernel: one thread writes value + 1 into *d_out. */
cudaError_t cm__kernel_probe_launch(int *d_out, int value, cudaStream_t stream);

/**
 * Fill count bytes at dst with a repeated pattern of pattern_bytes (1, 2, 4 or 8) bytes, on
 * stream (kernels/fill.cu). dst must be aligned to pattern_bytes and count a multiple of it;
 * the caller (src/buffer.c) checks both. count = 0 launches nothing.
 */
cudaError_t cm__kernel_fill(void *dst, size_t count, const void *pattern, size_t pattern_bytes,
                            cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* CUDAMODEL_KERNELS_KERNELS_H */
