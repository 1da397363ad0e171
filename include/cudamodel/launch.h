/**
 * @file launch.h
 * @brief Launch configurations: grid and block shapes in the model's words.
 *
 * The front door of the library: including this header gives a C program the status layer,
 * the device limits and the launch configuration types, without any CUDA header.
 *
 * A configuration is a zero-initialised struct (CM_LAUNCH_CONFIG_INIT) where 0 means "default":
 * a y or z extent of 0 stands for 1, a NULL stream for the library's default stream, a zero
 * cluster for no cluster. grid.x = 0 is an empty launch (nothing to do, e.g. n = 0).
 *
 * Threading: the functions here are pure and thread-safe.
 */
#ifndef CUDAMODEL_LAUNCH_H
#define CUDAMODEL_LAUNCH_H

#include <stddef.h>
#include <stdint.h>

#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/** @brief Three extents (like CUDA's dim3); in a config a y or z of 0 means 1. */
typedef struct cm_dim3 {
    unsigned int x, y, z;
} cm_dim3_t;

/** @brief An opaque stream handle of the library (see stream.h). */
typedef struct cm_stream cm_stream_t;

/** @brief How to launch a kernel. Zero-initialise (CM_LAUNCH_CONFIG_INIT); 0 means default. */
typedef struct cm_launch_config {
    cm_dim3_t grid;                  /**< blocks per grid in x, y, z */
    cm_dim3_t block;                 /**< threads per block in x, y, z */
    size_t dynamic_shared_bytes;     /**< dynamic shared memory per block */
    cm_stream_t *stream;             /**< NULL: the library's default for the device */
    cm_dim3_t cluster;               /**< thread-block cluster shape (sm_90+); 0s: no cluster */
} cm_launch_config_t;

/** @brief A zero-initialised configuration: every field at its default. */
#define CM_LAUNCH_CONFIG_INIT {{0u, 0u, 0u}, {0u, 0u, 0u}, 0u, NULL, {0u, 0u, 0u}}

/** @brief Largest grid.x CUDA accepts on every architecture the library supports (2^31 - 1). */
#define CM_MAX_GRID_X 2147483647u

/**
 * @brief A 1-D configuration with one thread per element: block = threads_per_block,
 *        grid = ceil(n / threads_per_block), computed without overflow for any size_t n.
 * @param[in]  n                  elements to cover; 0 gives a grid of 0 blocks (launch nothing).
 * @param[in]  threads_per_block  1..1024 (0 picks 256).
 * @param[out] cfg                overwritten on success (other fields zeroed); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when cfg is NULL, threads_per_block > 1024, or n needs
 *         more than 2^31 - 1 blocks (the message gives the numbers; use a grid-stride loop).
 */
CM_API cm_status_t cm_launch_config_1d(uint64_t n, unsigned int threads_per_block,
                                       cm_launch_config_t *cfg);

/** @brief Total threads a configuration launches (grid x block; y, z of 0 count as 1; 0 for NULL or grid.x = 0;
 *         saturates at UINT64_MAX). */
CM_API uint64_t cm_launch_config_threads(const cm_launch_config_t *cfg);

CM_EXTERN_C_END

#endif /* CUDAMODEL_LAUNCH_H */
