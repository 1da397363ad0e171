/**
 * @file launch.h
 * @brief Launch configurations: grid and block shapes in the model's words.
 *
 * The front door of the library: including this header gives a C program the status layer,
 * the device limits and the launch configuration types, without any CUDA header.
 *
 * A configuration is a zero-initialised struct (CM_LAUNCH_CONFIG_INIT) where 0 means "default":
 * a y or z extent of 0 stands for 1, a zero cluster for no cluster. grid.x = 0 is an empty launch (nothing to do, e.g. n = 0).
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
/** @var cm_dim3::x
 *  @brief Extent along x (blocks of a grid, threads of a block, blocks of a cluster). */
/** @var cm_dim3::y
 *  @brief Extent along y; 0 stands for 1 in a launch configuration. */
/** @var cm_dim3::z
 *  @brief Extent along z; 0 stands for 1 in a launch configuration. */

/** @brief An opaque stream handle of the library (see stream.h). */
typedef struct cm_stream cm_stream_t;

/** @brief How to launch a kernel. Zero-initialise (CM_LAUNCH_CONFIG_INIT); 0 means default. */
typedef struct cm_launch_config {
    cm_dim3_t grid;                  /**< blocks per grid in x, y, z */
    cm_dim3_t block;                 /**< threads per block in x, y, z */
    size_t dynamic_shared_bytes;     /**< dynamic shared memory per block */
    cm_dim3_t cluster;               /**< thread-block cluster shape (sm_90+); 0s: no cluster */
} cm_launch_config_t;

/** @brief A zero-initialised configuration: every field at its default. */
#define CM_LAUNCH_CONFIG_INIT {{0u, 0u, 0u}, {0u, 0u, 0u}, 0u, {0u, 0u, 0u}}

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

/**
 * @brief Total threads a configuration launches (grid x block; y, z of 0 count as 1; 0 for NULL or grid.x = 0;
 *        saturates at UINT64_MAX).
 * @param[in] cfg  the configuration, or NULL; not modified.
 * @return the number of threads. Pure function. Thread-safe.
 */
CM_API uint64_t cm_launch_config_threads(const cm_launch_config_t *cfg);

/** @brief What CUDA knows about one compiled kernel (cudaFuncGetAttributes), as plain data. */
typedef struct cm_kernel_attrs {
    char name[128];                  /**< the kernel's name for messages ("" when unknown) */
    int num_regs;                    /**< registers per thread */
    size_t static_shared_bytes;      /**< __shared__ arrays of fixed size */
    size_t max_dynamic_shared_bytes; /**< dynamic shared memory the kernel may use now (48 KiB -
                                          static by default; raised by
                                          cudaFuncAttributeMaxDynamicSharedMemorySize) */
    int max_threads_per_block;       /**< the most threads a launch may have: __launch_bounds__,
                                          or what the registers allow (0 = unknown: not checked) */
    size_t local_bytes;              /**< local memory per thread (spills, stack) */
    int binary_version;              /**< SASS architecture used, e.g. 90 (0 = unknown) */
    int ptx_version;                 /**< PTX architecture compiled from, e.g. 90 (0 = unknown) */
    int non_portable_cluster_allowed;/**< cluster sizes above 8 were allowed for this kernel */
} cm_kernel_attrs_t;

/**
 * @brief Validate a launch configuration against a device's limits and a kernel's attributes.
 *
 * Checks every rule and reports all violations, not only the first: threads per block; each
 * block dimension; each grid dimension; block.x of 0; static + dynamic shared memory against
 * the per-block limit, the opt-in limit and the kernel's current dynamic limit (whether the
 * attribute was raised); registers per thread x threads against the per-block and per-SM
 * register files (in the hardware's allocation units); the kernel's own maximum threads
 * (__launch_bounds__); and for clusters: sm_90+, at most 8 blocks (16 when the kernel allows
 * non-portable sizes), each grid dimension a multiple of the cluster's. grid.x = 0 is a valid
 * empty launch.
 *
 * @param[in]  cfg     configuration to check; not modified.
 * @param[in]  limits  limits of a real device (cm_device_get_limits()) or of a built-in target
 *                     (cm_target_limits("sm_89")).
 * @param[in]  kernel  kernel attributes, or NULL to check the device limits alone.
 * @return CM_OK when the launch would be accepted;
 *         CM_ERROR_INVALID_LAUNCH with cm_last_error() naming each broken rule and its numbers,
 *         e.g. "block has 2048 threads; NVIDIA H200 (sm_90) allows 1024 per block";
 *         CM_ERROR_INVALID_ARGUMENT when cfg or limits is NULL.
 * Thread-safe. Allocates nothing.
 */
CM_API cm_status_t cm_launch_config_validate(const cm_launch_config_t *cfg,
                                             const cm_device_limits_t *limits,
                                             const cm_kernel_attrs_t *kernel);

/**
 * @brief A 2-D tiling configuration: one tile_x x tile_y block per tile of a width x height
 *        domain (x along width), grid = ceil(width / tile_x) x ceil(height / tile_y).
 * @param[in]  width   elements along x.
 * @param[in]  height  elements along y.
 * @param[in]  tile_x  threads per block along x, at least 1.
 * @param[in]  tile_y  threads per block along y, at least 1; tile_x * tile_y at most 1024.
 * @param[out] cfg     overwritten on success (other fields zeroed); unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when cfg is NULL, a tile extent is 0, the tile has
 *         more than 1024 threads, or the grid exceeds 2^31-1 x 65535 (the message gives numbers).
 *         A width or height of 0 gives an empty launch (grid.x = 0).
 */
CM_API cm_status_t cm_launch_config_2d(uint64_t width, uint64_t height, unsigned int tile_x,
                                       unsigned int tile_y, cm_launch_config_t *cfg);

/**
 * @brief The limits of a GPU you may not have: built-in descriptions of sm_75, 80, 86, 87, 89, 90,
 *        100 and 120 (the programming guide's per-compute-capability table).
 *
 * @param[in]  target  an architecture ("sm_89", "89", "8.9", "compute_89") or a product or
 *                     family name, case-insensitive ("RTX 4060 Ti", "H200", "A100", "T4",
 *                     "Jetson Orin", "RTX 50"); products map to their architecture.
 * @param[out] out     filled with the architecture's limits; ordinal -1; name says which target
 *                     ("sm_89 (Ada: RTX 40, L4, L40, L40S, RTX 6000 Ada)"); multiprocessor_count
 *                     is that of a representative product, total_global_mem and l2_cache_bytes
 *                     are 0 (they vary by product).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments; CM_ERROR_NOT_SUPPORTED for an
 *         unknown name (the message lists the known targets).
 */
CM_API cm_status_t cm_target_limits(const char *target, cm_device_limits_t *out);

/** @brief Number of built-in targets (cm_target_limits()). Pure function. Thread-safe. */
CM_API int cm_target_count(void);
/**
 * @brief Name of a built-in target, in ascending architecture order ("sm_75", "sm_80" ...).
 * @param[in] i  index, 0 .. cm_target_count()-1.
 * @return a static string, a valid argument of cm_target_limits(); NULL for an index out of
 *         range. Pure function. Thread-safe.
 */
CM_API const char *cm_target_name(int i);

/** @brief What limits occupancy (a bit set: several may bind at once). */
enum {
    CM_OCC_LIMIT_WARPS = 1,          /**< threads (warps) per SM */
    CM_OCC_LIMIT_REGISTERS = 2,      /**< the register file */
    CM_OCC_LIMIT_SHARED_MEMORY = 4,  /**< shared memory per SM */
    CM_OCC_LIMIT_BLOCKS = 8,         /**< resident blocks per SM */
    CM_OCC_LIMIT_BARRIERS = 16       /**< block barriers */
};

/** @brief Occupancy of one kernel configuration on one SM. */
typedef struct cm_occupancy {
    int active_blocks_per_sm;   /**< resident blocks per SM (0: the block cannot run at all) */
    int active_warps_per_sm;    /**< resident warps per SM */
    int max_warps_per_sm;       /**< the SM's warp slots */
    double occupancy;           /**< active / max warps, 0..1 */
    unsigned int limiters;      /**< CM_OCC_LIMIT_* bits of the binding limits */
    int blocks_limit_warps;     /**< blocks per SM allowed by each resource alone: warp slots */
    int blocks_limit_registers; /**< blocks per SM the register file allows */
    int blocks_limit_shared_memory; /**< blocks per SM the shared memory allows */
    int blocks_limit_blocks;    /**< the SM's limit of resident blocks */
} cm_occupancy_t;

/**
 * @brief Occupancy of a kernel at a block size and dynamic shared memory, for any device or target,
 *        computed on the host with the CUDA toolkit's cuda_occupancy.h (the same arithmetic as
 *        cudaOccupancyMaxActiveBlocksPerMultiprocessor; default shared-memory carveout). Like
 *        CUDA's call it counts the device's limits only: a block larger than the kernel's own
 *        maximum (__launch_bounds__) still gets a figure; cm_launch_config_validate() rejects it.
 * @param[in]  limits                device or target limits.
 * @param[in]  kernel                the kernel's registers and shared memory.
 * @param[in]  threads_per_block     1..1024.
 * @param[in]  dynamic_shared_bytes  dynamic shared memory per block.
 * @param[out] out                   the result.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, a block size of 0, or inputs the
 *         occupancy calculator rejects (the message says which).
 */
CM_API cm_status_t cm_occupancy_compute(const cm_device_limits_t *limits,
                                        const cm_kernel_attrs_t *kernel,
                                        unsigned int threads_per_block,
                                        size_t dynamic_shared_bytes, cm_occupancy_t *out);

/**
 * @brief The block size that maximises occupancy for a kernel (cuda_occupancy.h's
 *        cudaOccMaxPotentialOccupancyBlockSize), and the grid that fills the device once.
 * @param[in]  limits                device or target limits; not NULL.
 * @param[in]  kernel                the kernel's registers and shared memory; not NULL.
 * @param[in]  dynamic_shared_bytes  dynamic shared memory per block, in bytes (the same for
 *                                   every block size tried).
 * @param[out] block_size     threads per block.
 * @param[out] min_grid_size  blocks needed to fill every SM at that occupancy (may be NULL).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or rejected inputs.
 */
CM_API cm_status_t cm_occupancy_best_block_size(const cm_device_limits_t *limits,
                                                const cm_kernel_attrs_t *kernel,
                                                size_t dynamic_shared_bytes,
                                                unsigned int *block_size, int *min_grid_size);

/**
 * @brief Short name of the most important limiter in a CM_OCC_LIMIT_* set ("registers", ...).
 * @param[in] limiters  an OR of CM_OCC_LIMIT_* bits (cm_occupancy_t::limiters).
 * @return a static string: "registers", "shared memory", "warps (threads per SM)",
 *         "blocks per SM", "barriers", in that order of importance, or "none" for no bit.
 */
CM_API const char *cm_occupancy_limiter_name(unsigned int limiters);

/**
 * @brief Attributes of one of your kernels on a device (cudaFuncGetAttributes, plus its name).
 * @param[in]  kernel   the __global__ function, as a pointer (C: the address of the kernel
 *                      symbol, from a .cu file: `(const void *)my_kernel`).
 * @param[in]  device   device ordinal.
 * @param[out] out      filled on success.
 * @return CM_OK; CM_ERROR_NO_KERNEL_IMAGE when the binary has no code for this device (the
 *         message names the device's sm_XY and the hint the exact rebuild flag);
 *         CM_ERROR_INVALID_ARGUMENT for NULL arguments or a pointer that is not a kernel; other
 *         CUDA failures as recorded.
 * Does not change the caller's current device.
 */
CM_API cm_status_t cm_kernel_attrs_get(const void *kernel, int device, cm_kernel_attrs_t *out);

/** @brief How a kernel's image was found for a device (cm_kernel_check_image()). */
typedef struct cm_kernel_image_report {
    int device_cc;          /**< 10*major + minor of the device */
    int binary_version;     /**< SASS version the runtime loaded, 0 when none */
    int ptx_version;        /**< PTX version it was compiled from, 0 when none */
    int jit_likely;         /**< 1 when ptx_version < device_cc == binary_version: the driver most
                                 likely compiled PTX at load time (slow first launch) */
    char message[512];      /**< one line for people, with the fix when there is one */
} cm_kernel_image_report_t;

/**
 * @brief Check before launching that a kernel has an image for a device ("no kernel image is
 *        available" diagnosed ahead of time), and say whether PTX JIT is involved.
 * @param[in]  kernel  the __global__ function (see cm_kernel_attrs_get()).
 * @param[in]  device  device ordinal.
 * @param[out] report  zeroed, then filled; on CM_ERROR_NO_KERNEL_IMAGE its message carries the
 *                     library's message as well.
 * @return CM_OK (report filled); CM_ERROR_NO_KERNEL_IMAGE with the device's architecture and
 *         the rebuild flag (-DCMAKE_CUDA_ARCHITECTURES=XY, or
 *         -gencode arch=compute_XY,code=sm_XY) in the detail; CM_ERROR_INVALID_ARGUMENT.
 */
CM_API cm_status_t cm_kernel_check_image(const void *kernel, int device,
                                         cm_kernel_image_report_t *report);

/**
 * @brief Launch one of your kernels safely, from plain C.
 *
 * On the device of stream (its device object's, whatever device the calling thread has
 * current, which is left as it was), or on the current device when stream is NULL: on the
 * first launch of this kernel there, checks its image (cm_kernel_check_image()) and reads its
 * attributes (cached per kernel and device, so later launches only re-validate the
 * configuration, a few arithmetic checks); validates cfg (cm_launch_config_validate());
 * launches with cudaLaunchKernelEx (cluster dimensions as a launch attribute); checks the
 * launch error. grid.x = 0 launches nothing.
 *
 * @param[in] stream  NULL: synchronous, as everywhere in the library: the kernel runs on the
 *                    legacy default stream of the current device and the call returns when it
 *                    has finished, reporting a fault as this launch's. Otherwise an acquired or
 *                    wrapped stream (stream.h; cm_stream_wrap() in interop.h adopts a CUDA
 *                    stream of your own): the launch runs on that stream's device, is queued on
 *                    it and is remembered as its last launch, so a later fault reported by
 *                    cm_stream_synchronize() names it; in synchronous debug mode
 *                    (CUDAMODEL_SYNC=1) the call waits and names a fault itself. A released
 *                    stream is refused before anything is queued. Launches on a stream being
 *                    captured into a graph are recorded (not synchronized in debug mode).
 * @param[in] kernel  the __global__ function (see cm_kernel_attrs_get()).
 * @param[in] cfg     the configuration.
 * @param[in] args    array of pointers to the kernel's arguments, as for cudaLaunchKernel.
 * @return CM_OK; CM_ERROR_INVALID_LAUNCH (every broken rule listed); CM_ERROR_NO_KERNEL_IMAGE;
 *         CM_ERROR_INVALID_ARGUMENT (NULL kernel/cfg, or args NULL while the kernel has
 *         parameters cannot be detected: pass NULL only for kernels without parameters);
 *         CM_ERROR_INVALID_ARGUMENT also for a stream that is released or not a stream handle
 *         (the message names its kind);
 *         CM_ERROR_CONTEXT_LOST; with a NULL stream, the fault of the kernel as recorded.
 * Thread-safe (the cache is shared and locked).
 */
CM_API cm_status_t cm_launch(cm_stream_t *stream, const void *kernel, const cm_launch_config_t *cfg,
                             void **args);

/**
 * @brief cm_launch() that records the caller's file:line in the error detail (see CM_LAUNCH).
 * @param[in] stream  NULL (synchronous) or a library stream, as for cm_launch().
 * @param[in] kernel  the __global__ function, as for cm_launch().
 * @param[in] cfg     the configuration, as for cm_launch().
 * @param[in] args    the argument pointers, as for cm_launch().
 * @param[in] file    the caller's source file, or NULL: a string of static storage duration
 *                    such as __FILE__ (a stream keeps the pointer to name its last launch).
 * @param[in] line    the caller's line.
 * @return the statuses of cm_launch().
 */
CM_API cm_status_t cm_launch_at(cm_stream_t *stream, const void *kernel,
                                const cm_launch_config_t *cfg, void **args, const char *file,
                                int line);

/** @brief Launch through cm_launch_at() with this file and line; evaluates to a cm_status_t. */
#define CM_LAUNCH(stream, kernel, cfg, args)                                                  \
    cm_launch_at((stream), (const void *)(kernel), (cfg), (args), __FILE__, __LINE__)

/**
 * @brief Pick a block size by occupancy for a kernel on the current device and cover n elements
 *        with a 1-D grid (cm_launch_config_1d with the best block size).
 * @param[in]  kernel                the __global__ function (see cm_kernel_attrs_get()); not NULL.
 * @param[in]  n                     elements to cover, one thread each; 0 gives an empty launch.
 * @param[in]  dynamic_shared_bytes  dynamic shared memory per block, in bytes; stored in cfg.
 * @param[out] cfg                   overwritten on success (cluster zeroed);
 *                                   unchanged on failure.
 * @return the statuses of cm_kernel_attrs_get(), cm_occupancy_best_block_size() and
 *         cm_launch_config_1d().
 */
CM_API cm_status_t cm_launch_config_auto(const void *kernel, uint64_t n, size_t dynamic_shared_bytes,
                                         cm_launch_config_t *cfg);

CM_EXTERN_C_END

#endif /* CUDAMODEL_LAUNCH_H */
