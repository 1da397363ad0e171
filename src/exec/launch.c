/*
 * Launch configurations (launch.h): helpers, validation against device limits and kernel
 * attributes, occupancy through the toolkit's cuda_occupancy.h, kernel-image checks, and the
 * checked launch with its per-kernel cache.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_occupancy.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

#include "../core/internal.h"
#include "stream_internal.h"

/* ------------------------------------------------------------------ configuration helpers */

static uint64_t cm__extent(unsigned int v) {
    return v == 0 ? 1u : v;
}

/* a * b, saturating at UINT64_MAX */
static uint64_t cm__mul_sat(uint64_t a, uint64_t b) {
    return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b;
}

cm_status_t cm_launch_config_1d(uint64_t n, unsigned int threads_per_block, cm_launch_config_t *cfg) {
    CM__REQUIRE(cfg != NULL, "pass the address of a cm_launch_config_t", "cfg is NULL");
    if (threads_per_block == 0) threads_per_block = 256;
    CM__REQUIRE(threads_per_block <= 1024,
                "use at most 1024 threads per block (the limit of every GPU since Fermi); 128-512 "
                "is usually best",
                "block has %u threads; CUDA allows at most 1024 per block", threads_per_block);
    /* ceil(n / tpb) without overflow for n near UINT64_MAX */
    uint64_t blocks = n / threads_per_block + (n % threads_per_block != 0);
    CM__REQUIRE(blocks <= CM_MAX_GRID_X,
                "use a grid-stride loop with a fixed grid (e.g. 4 x SMs blocks), or more threads "
                "per block",
                "%llu elements at %u threads per block need %llu blocks; grid.x allows at most %u",
                (unsigned long long)n, threads_per_block, (unsigned long long)blocks,
                CM_MAX_GRID_X);
    cm_launch_config_t c;
    memset(&c, 0, sizeof c);
    c.grid.x = (unsigned int)blocks;
    c.grid.y = c.grid.z = 1;
    c.block.x = threads_per_block;
    c.block.y = c.block.z = 1;
    *cfg = c;
    return CM_OK;
}

cm_status_t cm_launch_config_2d(uint64_t width, uint64_t height, unsigned int tile_x,
                                unsigned int tile_y, cm_launch_config_t *cfg) {
    CM__REQUIRE(cfg != NULL, "pass the address of a cm_launch_config_t", "cfg is NULL");
    CM__REQUIRE(tile_x > 0 && tile_y > 0, "use tiles such as 16 x 16 or 32 x 8",
                "tile is %u x %u: both extents must be at least 1", tile_x, tile_y);
    CM__REQUIRE((uint64_t)tile_x * tile_y <= 1024 && tile_x <= 1024 && tile_y <= 1024,
                "use at most 1024 threads per tile (e.g. 32 x 32, 16 x 16)",
                "tile %u x %u has %llu threads; CUDA allows at most 1024 per block", tile_x,
                tile_y, (unsigned long long)tile_x * tile_y);
    uint64_t gx = width / tile_x + (width % tile_x != 0);
    uint64_t gy = height / tile_y + (height % tile_y != 0);
    CM__REQUIRE(gx <= CM_MAX_GRID_X && gy <= 65535,
                "use larger tiles, put the long dimension along x, or loop over the domain",
                "%llu x %llu domain in %u x %u tiles needs a grid of %llu x %llu; CUDA allows at "
                "most %u x 65535",
                (unsigned long long)width, (unsigned long long)height, tile_x, tile_y,
                (unsigned long long)gx, (unsigned long long)gy, CM_MAX_GRID_X);
    cm_launch_config_t c;
    memset(&c, 0, sizeof c);
    if (width != 0 && height != 0) {
        c.grid.x = (unsigned int)gx;
        c.grid.y = (unsigned int)gy;
    }
    c.grid.z = 1;
    c.block.x = tile_x;
    c.block.y = tile_y;
    c.block.z = 1;
    *cfg = c;
    return CM_OK;
}

uint64_t cm_launch_config_threads(const cm_launch_config_t *cfg) {
    if (cfg == NULL || cfg->grid.x == 0) return 0;
    uint64_t blocks =
        cm__mul_sat((uint64_t)cfg->grid.x * cm__extent(cfg->grid.y), cm__extent(cfg->grid.z));
    uint64_t threads = cm__extent(cfg->block.x) * cm__extent(cfg->block.y) * cm__extent(cfg->block.z);
    return cm__mul_sat(blocks, threads);
}

/* ------------------------------------------------------------------ occupancy */

static void cm__occ_props(const cm_device_limits_t *l, cudaOccDeviceProp *p) {
    memset(p, 0, sizeof *p);
    p->computeMajor = l->cc_major;
    p->computeMinor = l->cc_minor;
    p->maxThreadsPerBlock = l->max_threads_per_block;
    p->maxThreadsPerMultiprocessor = l->max_threads_per_multiprocessor;
    p->regsPerBlock = l->regs_per_block;
    p->regsPerMultiprocessor = l->regs_per_multiprocessor;
    p->warpSize = l->warp_size;
    p->sharedMemPerBlock = l->shared_mem_per_block;
    p->sharedMemPerMultiprocessor = l->shared_mem_per_multiprocessor;
    p->numSms = l->multiprocessor_count > 0 ? l->multiprocessor_count : 1;
    p->sharedMemPerBlockOptin = l->shared_mem_per_block_optin;
    p->reservedSharedMemPerBlock = l->reserved_shared_mem_per_block;
}

static void cm__occ_attrs(const cm_kernel_attrs_t *k, cudaOccFuncAttributes *a) {
    memset(a, 0, sizeof *a);
    a->maxThreadsPerBlock = k->max_threads_per_block > 0 ? k->max_threads_per_block : 1024;
    a->numRegs = k->num_regs;
    a->sharedSizeBytes = k->static_shared_bytes;
    a->partitionedGCConfig = PARTITIONED_GC_OFF;
    a->shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a->maxDynamicSharedSizeBytes = k->max_dynamic_shared_bytes;
    a->numBlockBarriers = 1;
}

static const char *cm__occ_error_text(cudaOccError e) {
    return e == CUDA_OCC_ERROR_INVALID_INPUT ? "an input is out of range"
                                             : "the configuration is unknown to the calculator";
}

cm_status_t cm_occupancy_compute(const cm_device_limits_t *limits, const cm_kernel_attrs_t *kernel,
                                 unsigned int threads_per_block, size_t dynamic_shared_bytes,
                                 cm_occupancy_t *out) {
    CM__REQUIRE(limits != NULL && kernel != NULL && out != NULL,
                "pass device or target limits, kernel attributes and an output",
                "limits, kernel or out is NULL");
    CM__REQUIRE(threads_per_block > 0 && threads_per_block <= (unsigned)limits->max_threads_per_block,
                "use 1 to 1024 threads per block",
                "block of %u threads; %s allows 1 to %d", threads_per_block, limits->name,
                limits->max_threads_per_block);
    cudaOccDeviceProp p;
    cudaOccFuncAttributes a;
    cudaOccDeviceState st;
    cudaOccResult r;
    cm__occ_props(limits, &p);
    cm__occ_attrs(kernel, &a);
    memset(&st, 0, sizeof st);
    st.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    memset(&r, 0, sizeof r);
    cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &st, (int)threads_per_block,
                                                             dynamic_shared_bytes);
    if (e != CUDA_OCC_SUCCESS) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, limits->ordinal,
                        "check the block size, registers and shared memory against the limits",
                        "occupancy calculator rejected %u threads, %d registers, %zu + %zu bytes of "
                        "shared memory on %s: %s",
                        threads_per_block, kernel->num_regs, kernel->static_shared_bytes,
                        dynamic_shared_bytes, limits->name, cm__occ_error_text(e));
    }
    cm_occupancy_t o;
    memset(&o, 0, sizeof o);
    int warps_per_block = (int)((threads_per_block + (unsigned)limits->warp_size - 1) /
                                (unsigned)limits->warp_size);
    o.active_blocks_per_sm = r.activeBlocksPerMultiprocessor;
    o.active_warps_per_sm = r.activeBlocksPerMultiprocessor * warps_per_block;
    o.max_warps_per_sm = limits->max_threads_per_multiprocessor / limits->warp_size;
    o.occupancy = o.max_warps_per_sm > 0 ? (double)o.active_warps_per_sm / o.max_warps_per_sm : 0.0;
    if (r.limitingFactors & OCC_LIMIT_WARPS) o.limiters |= CM_OCC_LIMIT_WARPS;
    if (r.limitingFactors & OCC_LIMIT_REGISTERS) o.limiters |= CM_OCC_LIMIT_REGISTERS;
    if (r.limitingFactors & OCC_LIMIT_SHARED_MEMORY) o.limiters |= CM_OCC_LIMIT_SHARED_MEMORY;
    if (r.limitingFactors & OCC_LIMIT_BLOCKS) o.limiters |= CM_OCC_LIMIT_BLOCKS;
    if (r.limitingFactors & OCC_LIMIT_BARRIERS) o.limiters |= CM_OCC_LIMIT_BARRIERS;
    o.blocks_limit_warps = r.blockLimitWarps;
    o.blocks_limit_registers = r.blockLimitRegs;
    o.blocks_limit_shared_memory = r.blockLimitSharedMem;
    o.blocks_limit_blocks = r.blockLimitBlocks;
    *out = o;
    return CM_OK;
}

cm_status_t cm_occupancy_best_block_size(const cm_device_limits_t *limits,
                                         const cm_kernel_attrs_t *kernel,
                                         size_t dynamic_shared_bytes, unsigned int *block_size,
                                         int *min_grid_size) {
    CM__REQUIRE(limits != NULL && kernel != NULL && block_size != NULL,
                "pass limits, kernel attributes and an output", "limits, kernel or block_size is NULL");
    cudaOccDeviceProp p;
    cudaOccFuncAttributes a;
    cudaOccDeviceState st;
    cm__occ_props(limits, &p);
    cm__occ_attrs(kernel, &a);
    memset(&st, 0, sizeof st);
    st.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    int grid = 0, block = 0;
    cudaOccError e = cudaOccMaxPotentialOccupancyBlockSize(&grid, &block, &p, &a, &st, NULL,
                                                           dynamic_shared_bytes);
    if (e != CUDA_OCC_SUCCESS || block <= 0) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, limits->ordinal,
                        "reduce the kernel's registers or shared memory",
                        "no block size of %s can run a kernel with %d registers and %zu + %zu bytes "
                        "of shared memory (%s)",
                        limits->name, kernel->num_regs, kernel->static_shared_bytes,
                        dynamic_shared_bytes, e != CUDA_OCC_SUCCESS ? cm__occ_error_text(e) : "0 blocks fit");
    }
    *block_size = (unsigned int)block;
    if (min_grid_size != NULL) *min_grid_size = grid;
    return CM_OK;
}

const char *cm_occupancy_limiter_name(unsigned int limiters) {
    if (limiters & CM_OCC_LIMIT_REGISTERS) return "registers";
    if (limiters & CM_OCC_LIMIT_SHARED_MEMORY) return "shared memory";
    if (limiters & CM_OCC_LIMIT_WARPS) return "warps (threads per SM)";
    if (limiters & CM_OCC_LIMIT_BLOCKS) return "blocks per SM";
    if (limiters & CM_OCC_LIMIT_BARRIERS) return "barriers";
    return "none";
}

/* ------------------------------------------------------------------ validation */

typedef struct {
    char text[CM_ERROR_MESSAGE_MAX];
    size_t len;
    int count;
} cm__violations_t;

static void cm__violation(cm__violations_t *v, const char *fmt, ...) CM__PRINTF(2, 3);
static void cm__violation(cm__violations_t *v, const char *fmt, ...) {
    ++v->count;
    if (v->len + 8 >= sizeof v->text) return;
    int n = snprintf(v->text + v->len, sizeof v->text - v->len, "%s(%d) ", v->count > 1 ? "; " : "",
                     v->count);
    if (n > 0) v->len += (size_t)n;
    if (v->len >= sizeof v->text) {
        v->len = sizeof v->text - 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    n = vsnprintf(v->text + v->len, sizeof v->text - v->len, fmt, ap);
    va_end(ap);
    if (n > 0) v->len += (size_t)n;
    if (v->len >= sizeof v->text) v->len = sizeof v->text - 1;
}

/* "NVIDIA H200 (sm_90)" for devices, the target's own label for targets */
static void cm__device_label(const cm_device_limits_t *l, char *buf, size_t size) {
    if (l->ordinal >= 0) snprintf(buf, size, "%.200s (sm_%d%d)", l->name, l->cc_major, l->cc_minor);
    else snprintf(buf, size, "%.200s", l->name);
}

static void cm__kib(size_t bytes, char *buf, size_t size) {
    if (bytes % 1024 == 0) snprintf(buf, size, "%zu KiB", bytes / 1024);
    else snprintf(buf, size, "%zu bytes", bytes);
}

/* Whether the register file holds one block (the occupancy calculator's allocation rule). */
static int cm__registers_fit(const cm_device_limits_t *limits, const cm_kernel_attrs_t *kernel,
                             uint64_t threads) {
    cm_kernel_attrs_t k = *kernel;
    k.max_threads_per_block = limits->max_threads_per_block;
    k.static_shared_bytes = 0;
    k.max_dynamic_shared_bytes = limits->shared_mem_per_block_optin;
    cudaOccDeviceProp p;
    cudaOccFuncAttributes fa;
    cudaOccDeviceState st;
    cudaOccResult r;
    cm__occ_props(limits, &p);
    cm__occ_attrs(&k, &fa);
    memset(&st, 0, sizeof st);
    memset(&r, 0, sizeof r);
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &fa, &st, (int)threads, 0) != CUDA_OCC_SUCCESS)
        return 1; /* the calculator cannot judge it: leave it to the other rules */
    return r.blockLimitRegs > 0;
}

cm_status_t cm_launch_config_validate(const cm_launch_config_t *cfg, const cm_device_limits_t *limits,
                                      const cm_kernel_attrs_t *kernel) {
    CM__REQUIRE(cfg != NULL && limits != NULL,
                "pass a configuration and limits from cm_device_get_limits() or cm_target_limits()",
                "cfg or limits is NULL");
    cm__violations_t v;
    memset(&v, 0, sizeof v);
    char dev[256];
    cm__device_label(limits, dev, sizeof dev);
    const char *kname = (kernel != NULL && kernel->name[0]) ? kernel->name : "the kernel";

    const unsigned int block[3] = {cfg->block.x, (unsigned)cm__extent(cfg->block.y),
                                   (unsigned)cm__extent(cfg->block.z)};
    const unsigned int grid[3] = {cfg->grid.x, (unsigned)cm__extent(cfg->grid.y),
                                  (unsigned)cm__extent(cfg->grid.z)};
    static const char axis[3] = {'x', 'y', 'z'};
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];

    if (block[0] == 0) cm__violation(&v, "block.x is 0: a block needs at least one thread");
    if (threads > (uint64_t)limits->max_threads_per_block) {
        cm__violation(&v, "block has %llu threads (%u x %u x %u); %s allows %d per block",
                      (unsigned long long)threads, block[0], block[1], block[2], dev,
                      limits->max_threads_per_block);
    }
    for (int i = 0; i < 3; ++i) {
        if (block[i] > (unsigned)limits->max_block_dim[i]) {
            cm__violation(&v, "block.%c is %u; %s allows %d", axis[i], block[i], dev,
                          limits->max_block_dim[i]);
        }
    }
    for (int i = 0; i < 3; ++i) {
        if (grid[i] > (unsigned)limits->max_grid_dim[i]) {
            cm__violation(&v, "grid.%c is %u; %s allows %d", axis[i], grid[i], dev,
                          limits->max_grid_dim[i]);
        }
    }

    /* shared memory */
    size_t stat = kernel != NULL ? kernel->static_shared_bytes : 0;
    size_t dyn = cfg->dynamic_shared_bytes;
    char a[32], b[32], c[32];
    if (stat + dyn > limits->shared_mem_per_block_optin) {
        cm__kib(stat + dyn, a, sizeof a);
        cm__kib(limits->shared_mem_per_block_optin, b, sizeof b);
        cm__violation(&v, "%s of shared memory per block (%zu static + %zu dynamic); %s allows at "
                      "most %s per block even with opt-in",
                      a, stat, dyn, dev, b);
    } else if (kernel != NULL && dyn > kernel->max_dynamic_shared_bytes) {
        cm__kib(dyn, a, sizeof a);
        cm__kib(kernel->max_dynamic_shared_bytes, b, sizeof b);
        cm__kib(limits->shared_mem_per_block_optin - stat, c, sizeof c);
        cm__violation(&v, "%s of dynamic shared memory; %s may use %s now: raise it with "
                      "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, %zu) "
                      "(up to %s on %s)",
                      a, kname, b, dyn, c, dev);
    }

    if (kernel != NULL && threads > 0 && threads <= (uint64_t)limits->max_threads_per_block) {
        /* the kernel's own maximum: __launch_bounds__ or what its registers allow */
        if (kernel->max_threads_per_block > 0 && threads > (uint64_t)kernel->max_threads_per_block) {
            cm__violation(&v, "block has %llu threads; %s can run at most %d per block "
                          "(__launch_bounds__ or %d registers per thread)",
                          (unsigned long long)threads, kname, kernel->max_threads_per_block,
                          kernel->num_regs);
        }
        /* registers, in the hardware's allocation units */
        if (kernel->num_regs > 0 && !cm__registers_fit(limits, kernel, threads)) {
            cm__violation(&v, "block needs %llu registers (%d per thread x %llu threads, before "
                          "allocation rounding); %s has %d per block and %d per SM",
                          (unsigned long long)kernel->num_regs * threads, kernel->num_regs,
                          (unsigned long long)threads, dev, limits->regs_per_block,
                          limits->regs_per_multiprocessor);
        }
    }

    /* thread-block clusters */
    if (cfg->cluster.x | cfg->cluster.y | cfg->cluster.z) {
        const unsigned int cl[3] = {(unsigned)cm__extent(cfg->cluster.x),
                                    (unsigned)cm__extent(cfg->cluster.y),
                                    (unsigned)cm__extent(cfg->cluster.z)};
        uint64_t size = (uint64_t)cl[0] * cl[1] * cl[2];
        if (!limits->cluster_launch) {
            cm__violation(&v, "a cluster of %u x %u x %u blocks was asked for; %s has no "
                          "thread-block clusters (sm_90 and newer)",
                          cl[0], cl[1], cl[2], dev);
        } else {
            int max = (kernel != NULL && kernel->non_portable_cluster_allowed) ? 16 : 8;
            if (size > (uint64_t)max) {
                cm__violation(&v, "cluster has %llu blocks; at most %d are allowed%s",
                              (unsigned long long)size, max,
                              max == 8 ? " portably (16 with cudaFuncAttributeNonPortableClusterSizeAllowed on sm_90)" : "");
            }
            for (int i = 0; i < 3; ++i) {
                if (grid[i] % cl[i] != 0) {
                    cm__violation(&v, "grid.%c = %u is not a multiple of cluster.%c = %u", axis[i],
                                  grid[i], axis[i], cl[i]);
                }
            }
        }
    }

    if (v.count == 0) return CM_OK;
    return CM__FAIL(CM_ERROR_INVALID_LAUNCH, limits->ordinal,
                    "fix each rule listed; cudamodel-doctor prints the device's limits",
                    "%d launch rule%s broken: %s", v.count, v.count == 1 ? "" : "s", v.text);
}

/* ------------------------------------------------------------------ kernel attributes */

cm_status_t cm_kernel_attrs_from_cuda(const struct cudaFuncAttributes *attr, const char *name,
                                      cm_kernel_attrs_t *out) {
    CM__REQUIRE(attr != NULL && out != NULL, "pass attributes from cudaFuncGetAttributes and an output",
                "attr or out is NULL");
    cm_kernel_attrs_t k;
    memset(&k, 0, sizeof k);
    cm__strlcpy(k.name, name, sizeof k.name);
    k.num_regs = attr->numRegs;
    k.static_shared_bytes = attr->sharedSizeBytes;
    k.max_dynamic_shared_bytes =
        attr->maxDynamicSharedSizeBytes > 0 ? (size_t)attr->maxDynamicSharedSizeBytes : 0;
    k.max_threads_per_block = attr->maxThreadsPerBlock;
    k.local_bytes = attr->localSizeBytes;
    k.binary_version = attr->binaryVersion;
    k.ptx_version = attr->ptxVersion;
    k.non_portable_cluster_allowed = attr->nonPortableClusterSizeAllowed;
    *out = k;
    return CM_OK;
}

/* The device's architecture as a number, or 0 */
static int cm__device_cc(int device) {
    int major = 0, minor = 0;
    if (cm__cuda.device_get_attribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cm__cuda.device_get_attribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        return 0;
    }
    return major * 10 + minor;
}

static cm_status_t cm__no_image(int device, int cc, cudaError_t err) {
    char hint[CM_ERROR_HINT_MAX];
    snprintf(hint, sizeof hint,
             "rebuild the code that defines this kernel for sm_%d: with CMake "
             "-DCMAKE_CUDA_ARCHITECTURES=%d (or add %d to the list), with nvcc "
             "-gencode arch=compute_%d,code=sm_%d; add code=compute_%d to also carry PTX for "
             "newer GPUs",
             cc, cc, cc, cc, cc, cc);
    (void)cm__cuda.get_last_error();
    return cm__fail(CM_ERROR_NO_KERNEL_IMAGE, device, __FILE__, __LINE__, "cudaFuncGetAttributes",
                    hint,
                    "no kernel image is available for device %d (sm_%d): the binary holds neither "
                    "machine code for sm_%d.x at or below %d.%d nor PTX at or below compute_%d (%s)",
                    device, cc, cc / 10, cc / 10, cc % 10, cc, cm__cuda.get_error_name(err));
}

cm_status_t cm_kernel_attrs_get(const void *kernel, int device, cm_kernel_attrs_t *out) {
    CM__REQUIRE(kernel != NULL && out != NULL, "pass a __global__ function and an output",
                "kernel or out is NULL");
    CM_TRY(cm__context_guard(device));
    cm__scope_t sc;
    CM_TRY(cm__enter(device, 1, &sc));
    struct cudaFuncAttributes attr;
    memset(&attr, 0, sizeof attr);
    cudaError_t err = cm__cuda.func_get_attributes(&attr, kernel);
    cm_status_t s = CM_OK;
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidKernelImage) {
        s = cm__no_image(device, cm__device_cc(device), err);
    } else if (err == cudaErrorInvalidDeviceFunction) {
        (void)cm__cuda.get_last_error();
        s = cm__fail(CM_ERROR_INVALID_ARGUMENT, device, __FILE__, __LINE__, "cudaFuncGetAttributes",
                     cm_cuda_error_hint(err),
                     "the pointer %p is not a kernel known to this CUDA runtime (%s)", kernel,
                     cm__cuda.get_error_name(err));
    } else if (err != cudaSuccess) {
        s = cm_record_cuda_error(err, "cudaFuncGetAttributes", __FILE__, __LINE__);
    } else {
        const char *name = NULL;
        if (cm__cuda.func_get_name(&name, kernel) != cudaSuccess) {
            name = NULL;
            (void)cm__cuda.get_last_error();
        }
        char readable[sizeof out->name];
        s = cm_kernel_attrs_from_cuda(&attr, cm__kernel_name(name, readable, sizeof readable), out);
    }
    cm__leave(&sc);
    return s;
}

cm_status_t cm_kernel_check_image(const void *kernel, int device, cm_kernel_image_report_t *report) {
    CM__REQUIRE(kernel != NULL && report != NULL, "pass a __global__ function and an output",
                "kernel or report is NULL");
    memset(report, 0, sizeof *report);
    cm_kernel_attrs_t k;
    cm_status_t s = cm_kernel_attrs_get(kernel, device, &k);
    report->device_cc = cm__device_cc(device);
    if (s != CM_OK) {
        cm__strlcpy(report->message, cm_last_error()->message, sizeof report->message);
        return s;
    }
    report->binary_version = k.binary_version;
    report->ptx_version = k.ptx_version;
    report->jit_likely = k.binary_version == report->device_cc && k.ptx_version < report->device_cc;
    if (report->jit_likely) {
        snprintf(report->message, sizeof report->message,
                 "%.200s runs on sm_%d through PTX JIT (compiled from compute_%d at load time; slow "
                 "first launch): rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d for native code",
                 k.name[0] ? k.name : "the kernel", report->device_cc, k.ptx_version,
                 report->device_cc);
    } else {
        snprintf(report->message, sizeof report->message,
                 "%.200s runs on sm_%d as native code for sm_%d (compiled from compute_%d)",
                 k.name[0] ? k.name : "the kernel", report->device_cc, k.binary_version,
                 k.ptx_version);
    }
    return CM_OK;
}

/* ------------------------------------------------------------------ the launch cache */

#define CM__CACHE_SIZE 512 /* power of two */
#define CM__CACHE_PROBES 8

typedef struct {
    const void *kernel; /* NULL: empty slot */
    int device;
    cm_kernel_attrs_t attrs;
    int has_ok;                 /* ok_cfg holds the last configuration that passed validation */
    cm_launch_config_t ok_cfg;
} cm__cache_entry_t;

static pthread_mutex_t cm__cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cm__cache_entry_t cm__cache[CM__CACHE_SIZE];
static cm_device_limits_t cm__cache_limits[CM__MAX_DEVICES];
static int cm__cache_limits_ok[CM__MAX_DEVICES];

static size_t cm__cache_slot(const void *kernel, int device) {
    uint64_t h = (uint64_t)(uintptr_t)kernel ^ ((uint64_t)(unsigned)device * 0x9e3779b97f4a7c15ull);
    h ^= h >> 17;
    h *= 0xed5ad4bbu;
    h ^= h >> 11;
    return (size_t)h & (CM__CACHE_SIZE - 1);
}

static int cm__same_shape(const cm_launch_config_t *a, const cm_launch_config_t *b) {
    return a->grid.x == b->grid.x && a->grid.y == b->grid.y && a->grid.z == b->grid.z &&
           a->block.x == b->block.x && a->block.y == b->block.y && a->block.z == b->block.z &&
           a->dynamic_shared_bytes == b->dynamic_shared_bytes && a->cluster.x == b->cluster.x &&
           a->cluster.y == b->cluster.y && a->cluster.z == b->cluster.z;
}

/* The slot of (kernel, device), or with claim the first free slot for it; NULL when absent (or
 * the neighbourhood is full). Call with cm__cache_lock held. */
static cm__cache_entry_t *cm__cache_find_locked(const void *kernel, int device, int claim) {
    size_t i = cm__cache_slot(kernel, device);
    for (int probe = 0; probe < CM__CACHE_PROBES; ++probe, i = (i + 1) & (CM__CACHE_SIZE - 1)) {
        cm__cache_entry_t *e = &cm__cache[i];
        if (e->kernel == kernel && e->device == device) return e;
        if (e->kernel == NULL) return claim ? e : NULL;
    }
    return NULL;
}

/* The fast path: 1 when (kernel, device) is cached and cfg has the shape that last passed
 * validation, so it needs no new check. */
static int cm__cache_known_good(const void *kernel, int device, const cm_launch_config_t *cfg) {
    pthread_mutex_lock(&cm__cache_lock);
    const cm__cache_entry_t *e = cm__cache_find_locked(kernel, device, 0);
    int good = e != NULL && e->has_ok && cm__same_shape(&e->ok_cfg, cfg);
    pthread_mutex_unlock(&cm__cache_lock);
    return good;
}

/* Remember that cfg passed validation for (kernel, device). */
static void cm__cache_mark_good(const void *kernel, int device, const cm_launch_config_t *cfg) {
    pthread_mutex_lock(&cm__cache_lock);
    cm__cache_entry_t *e = cm__cache_find_locked(kernel, device, 0);
    if (e != NULL) {
        e->ok_cfg = *cfg;
        e->has_ok = 1;
    }
    pthread_mutex_unlock(&cm__cache_lock);
}

/* Look up (kernel, device); copies out attrs and limits. Returns 1 when found. */
static int cm__cache_get(const void *kernel, int device, cm_kernel_attrs_t *attrs,
                         cm_device_limits_t *limits) {
    pthread_mutex_lock(&cm__cache_lock);
    const cm__cache_entry_t *e = cm__cache_find_locked(kernel, device, 0);
    int found = e != NULL && cm__cache_limits_ok[device];
    if (found) {
        *attrs = e->attrs;
        *limits = cm__cache_limits[device];
    }
    pthread_mutex_unlock(&cm__cache_lock);
    return found;
}

/* Store fresh attributes; a full neighbourhood is not cached (the next launch asks again). */
static void cm__cache_put(const void *kernel, int device, const cm_kernel_attrs_t *attrs) {
    pthread_mutex_lock(&cm__cache_lock);
    cm__cache_entry_t *e = cm__cache_find_locked(kernel, device, 1);
    if (e != NULL) {
        e->kernel = kernel;
        e->device = device;
        e->attrs = *attrs;
        e->has_ok = 0; /* fresh attributes: validate again */
    }
    pthread_mutex_unlock(&cm__cache_lock);
}

static cm_status_t cm__limits_for(int device, cm_device_limits_t *out) {
    pthread_mutex_lock(&cm__cache_lock);
    int ok = cm__cache_limits_ok[device];
    if (ok) *out = cm__cache_limits[device];
    pthread_mutex_unlock(&cm__cache_lock);
    if (ok) return CM_OK;
    CM_TRY(cm_device_get_limits(device, out));
    pthread_mutex_lock(&cm__cache_lock);
    cm__cache_limits[device] = *out;
    cm__cache_limits_ok[device] = 1;
    pthread_mutex_unlock(&cm__cache_lock);
    return CM_OK;
}

void cm__launch_cache_reset_for_tests(void) {
    pthread_mutex_lock(&cm__cache_lock);
    memset(cm__cache, 0, sizeof cm__cache);
    memset(cm__cache_limits_ok, 0, sizeof cm__cache_limits_ok);
    pthread_mutex_unlock(&cm__cache_lock);
}

/* Attributes of kernel on device: from the cache, or (first launch, or refresh) from CUDA,
 * which also checks that the kernel has an image for the device. */
static cm_status_t cm__kernel_info(const void *kernel, int device, int refresh,
                                   cm_kernel_attrs_t *attrs, cm_device_limits_t *limits) {
    if (!refresh && cm__cache_get(kernel, device, attrs, limits)) return CM_OK;
    CM_TRY(cm__limits_for(device, limits));
    CM_TRY(cm_kernel_attrs_get(kernel, device, attrs));
    cm__cache_put(kernel, device, attrs);
    return CM_OK;
}

/* The current device, or the reason there is none (the device count explains it). */
static cm_status_t cm__current_device(int *device) {
    if (cm__cuda.get_device(device) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        int n = 0;
        cm_status_t s = cm_device_count(&n);
        return s != CM_OK ? s : CM__FAIL(CM_ERROR_CUDA, -1, "call cudaSetDevice first",
                                          "no current device could be read");
    }
    CM__REQUIRE(*device >= 0 && *device < CM__MAX_DEVICES, "use a device ordinal below 64",
                "current device %d is beyond what the library tracks", *device);
    return CM_OK;
}

/* ------------------------------------------------------------------ launch */

/* A synchronous launch (NULL stream) waits for its kernel on the legacy default stream; a fault
 * is this launch's, and the detail says so. */
static cm_status_t cm__launch_wait(const char *what, const char *file, int line) {
    cudaError_t err = cm__cuda.stream_synchronize(0);
    if (err == cudaSuccess) return CM_OK;
    char call[CM_ERROR_CALL_MAX + 48];
    snprintf(call, sizeof call, "%s (synchronous launch: NULL stream)", what);
    cm_status_t s = cm_record_cuda_error(err, call, file, line);
    cm_error_t *e = cm__detail();
    char msg[CM_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "kernel %s launched at %s:%d failed while running: %s", what,
             file ? file : "?", line, cm__cuda.get_error_string(err));
    cm__strlcpy(e->message, msg, sizeof e->message);
    return s;
}

/* The launch itself, inside the scope of `device` (the stream's device, current); sync for a
 * NULL stream (the legacy default stream, waited for). */
static cm_status_t cm__launch_on(int device, const void *kernel, const cm_launch_config_t *cfg,
                                 void **args, cudaStream_t stream, bool sync, const char *file,
                                 int line) {
    CM_TRY(cm__context_guard(device));
    if (cfg->grid.x == 0) return CM_OK; /* an empty launch */

    cm_kernel_attrs_t attrs;
    cm_device_limits_t limits;
    attrs.name[0] = '\0';
    if (!cm__cache_known_good(kernel, device, cfg)) {
        CM_TRY(cm__kernel_info(kernel, device, 0, &attrs, &limits));
        if (cm_launch_config_validate(cfg, &limits, &attrs) != CM_OK) {
            /* the cached attributes may be stale (cudaFuncSetAttribute since): look again once */
            CM_TRY(cm__kernel_info(kernel, device, 1, &attrs, &limits));
            CM_TRY(cm_launch_config_validate(cfg, &limits, &attrs));
        }
        cm__cache_mark_good(kernel, device, cfg);
    }

    cudaLaunchConfig_t lc;
    cudaLaunchAttribute attr[1];
    memset(&lc, 0, sizeof lc);
    lc.gridDim.x = cfg->grid.x;
    lc.gridDim.y = (unsigned)cm__extent(cfg->grid.y);
    lc.gridDim.z = (unsigned)cm__extent(cfg->grid.z);
    lc.blockDim.x = cfg->block.x;
    lc.blockDim.y = (unsigned)cm__extent(cfg->block.y);
    lc.blockDim.z = (unsigned)cm__extent(cfg->block.z);
    lc.dynamicSmemBytes = cfg->dynamic_shared_bytes;
    lc.stream = stream;
    if (cfg->cluster.x | cfg->cluster.y | cfg->cluster.z) {
        memset(attr, 0, sizeof attr);
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)cm__extent(cfg->cluster.x);
        attr[0].val.clusterDim.y = (unsigned)cm__extent(cfg->cluster.y);
        attr[0].val.clusterDim.z = (unsigned)cm__extent(cfg->cluster.z);
        lc.attrs = attr;
        lc.numAttrs = 1;
    }
    cudaError_t err = cm__cuda.launch_kernel_ex(&lc, kernel, args);
    if (err == cudaSuccess && !sync && !cm_sync_mode()) return CM_OK; /* the fast path */
    /* synchronous debug mode cannot synchronize inside a graph capture: the launch is only
     * recorded there, and synchronizing would invalidate the capture */
    if (err == cudaSuccess && stream != 0 && cm__stream_capturing(stream)) return CM_OK;
    if (err == cudaErrorInvalidValue || err == cudaErrorInvalidConfiguration ||
        err == cudaErrorLaunchOutOfResources) {
        /* CUDA refused what the cached attributes allowed (a limit lowered with
         * cudaFuncSetAttribute since): look again, and name the broken rule if there is one */
        (void)cm__cuda.get_last_error();
        CM_TRY(cm__kernel_info(kernel, device, 1, &attrs, &limits));
        CM_TRY(cm_launch_config_validate(cfg, &limits, &attrs));
    }

    if (attrs.name[0] == '\0' && cm__cache_get(kernel, device, &attrs, &limits) == 0)
        attrs.name[0] = '\0';
    char what[CM_ERROR_CALL_MAX];
    snprintf(what, sizeof what, "%.100s<<<(%u,%u,%u), (%u,%u,%u)>>>",
             attrs.name[0] ? attrs.name : "kernel", lc.gridDim.x, lc.gridDim.y, lc.gridDim.z,
             lc.blockDim.x, lc.blockDim.y, lc.blockDim.z);
    if (err != cudaSuccess) {
        char call[CM_ERROR_CALL_MAX + 32];
        snprintf(call, sizeof call, "cudaLaunchKernelExC(%s)", what);
        return cm_record_cuda_error(err, call, file, line);
    }
    /* a synchronous launch waits first: a fault of the running kernel is named as such even
     * when it surfaced before the launch error could be read */
    if (sync) return cm__launch_wait(what, file, line);
    return cm_check_launch(what, file, line);
}

/*
 * A checked launch. With a library stream the launch runs on the stream's device, made current
 * for the launch (cm__enter) whatever device the caller has current, and the caller's context
 * comes back after. Without one (NULL: synchronous, on the legacy default stream) the current
 * device is the only device named, as for <<<>>>.
 */
static cm_status_t cm__launch_checked(cm_stream_t *s, const void *kernel,
                                      const cm_launch_config_t *cfg, void **args, const char *file,
                                      int line) {
    CM__REQUIRE(kernel != NULL && cfg != NULL, "pass a __global__ function and a configuration",
                "kernel or cfg is NULL");
    int device = 0;
    cudaStream_t stream = 0;
    if (s != NULL)
        CM_TRY(cm__stream_for_launch(s, kernel, file, line, "cm_launch", &stream, &device));
    else
        CM_TRY(cm__current_device(&device));
    cm__scope_t sc;
    CM_TRY(cm__enter(device, s != NULL, &sc));
    cm_status_t st = cm__launch_on(device, kernel, cfg, args, stream, s == NULL, file, line);
    cm__leave(&sc);
    return st;
}

cm_status_t cm_launch_at(cm_stream_t *stream, const void *kernel, const cm_launch_config_t *cfg,
                         void **args, const char *file, int line) {
    CM__NVTX_PUSH("cm_launch");
    cm_status_t s = cm__launch_checked(stream, kernel, cfg, args, file, line);
    CM__NVTX_POP();
    /* failures found before the launch are reported at the caller's file:line */
    if (s != CM_OK && s != CM_ERROR_CONTEXT_LOST && file != NULL) cm__error_set_location(file, line);
    return s;
}

cm_status_t cm_launch(cm_stream_t *stream, const void *kernel, const cm_launch_config_t *cfg,
                      void **args) {
    return cm_launch_at(stream, kernel, cfg, args, NULL, 0);
}

cm_status_t cm_launch_config_auto(const void *kernel, uint64_t n, size_t dynamic_shared_bytes,
                                  cm_launch_config_t *cfg) {
    CM__REQUIRE(kernel != NULL && cfg != NULL, "pass a __global__ function and a configuration",
                "kernel or cfg is NULL");
    int device = 0;
    CM_TRY(cm__current_device(&device));
    CM_TRY(cm__context_guard(device));
    cm_kernel_attrs_t attrs;
    cm_device_limits_t limits;
    CM_TRY(cm__kernel_info(kernel, device, 0, &attrs, &limits));
    unsigned int block = 0;
    CM_TRY(cm_occupancy_best_block_size(&limits, &attrs, dynamic_shared_bytes, &block, NULL));
    cm_launch_config_t c;
    CM_TRY(cm_launch_config_1d(n, block, &c));
    c.dynamic_shared_bytes = dynamic_shared_bytes;
    *cfg = c;
    return CM_OK;
}
