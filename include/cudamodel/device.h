/**
 * @file device.h
 * @brief Devices and architectures: what the GPU is, what it allows, and whether this
 *        library's kernels can run on it.
 *
 * The driver and runtime versions, and the architectures this build carries, are fields of
 * cm_version_info() (version.h).
 *
 * The limits here are the ones launch validation uses. The architecture functions answer the
 * question behind "no kernel image is available for execution on the device" before any launch:
 * this build of the library carries machine code (SASS) for some architectures and PTX for
 * others; a device runs native code when a SASS build of its major version and an equal or
 * lower minor version exists, runs through PTX JIT when only PTX of an equal or lower version
 * exists, and cannot run the library's kernels otherwise.
 *
 * Threading: every function is thread-safe. No function leaves the caller's current device
 * (cudaSetDevice) changed.
 */
#ifndef CUDAMODEL_DEVICE_H
#define CUDAMODEL_DEVICE_H

#include <stddef.h>

#include <cudamodel/export.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/** @brief The limits and identity of a GPU (or of a built-in target description). */
typedef struct cm_device_limits {
    char name[256];                     /**< e.g. "NVIDIA H200" */
    int ordinal;                        /**< device ordinal, -1 for a target description */
    int cc_major;                       /**< compute capability, e.g. 9 */
    int cc_minor;                       /**< e.g. 0 */
    int multiprocessor_count;           /**< SMs */
    int warp_size;                      /**< 32 on every NVIDIA GPU so far */
    int max_threads_per_block;          /**< 1024 */
    int max_block_dim[3];               /**< x, y, z: 1024, 1024, 64 */
    int max_grid_dim[3];                /**< x, y, z: 2^31-1, 65535, 65535 */
    size_t shared_mem_per_block;        /**< default per-block limit (48 KiB) */
    size_t shared_mem_per_block_optin;  /**< limit after cudaFuncSetAttribute opt-in */
    size_t shared_mem_per_multiprocessor; /**< shared memory of one SM, all resident blocks together */
    size_t reserved_shared_mem_per_block; /**< used by the system per block */
    int regs_per_block;                 /**< 32-bit registers available to one block */
    int regs_per_multiprocessor;        /**< 32-bit registers of one SM (65536 so far) */
    int max_threads_per_multiprocessor; /**< resident threads per SM, e.g. 2048 (sm_90), 1536 (sm_89) */
    int max_blocks_per_multiprocessor;  /**< resident blocks per SM, e.g. 32 (sm_90), 24 (sm_89) */
    size_t l2_cache_bytes;              /**< L2 cache size; 0 for a target description */
    size_t total_global_mem;            /**< bytes of device memory */
    int cluster_launch;                 /**< 1 when thread-block clusters are supported (sm_90+) */
    char pci_bus_id[32];                /**< "0000:3b:00.0", "" for a target description */
} cm_device_limits_t;

/**
 * @brief Number of CUDA devices visible to this process.
 * @param[out] count  set to the number of devices (0 on any failure).
 * @return CM_OK;
 *         CM_ERROR_NO_DRIVER when no NVIDIA driver is installed (what cudart calls
 *         "CUDA driver version is insufficient" on such a machine);
 *         CM_ERROR_DRIVER_TOO_OLD when the driver is older than the runtime;
 *         CM_ERROR_NO_DEVICE when the driver sees no device (the hint names CUDA_VISIBLE_DEVICES
 *         when it is set); CM_ERROR_INVALID_ARGUMENT when count is NULL.
 * Thread-safe.
 */
CM_API cm_status_t cm_device_count(int *count);

/**
 * @brief The limits and identity of a device, from cudaGetDeviceProperties.
 * @param[in]  ordinal  device ordinal, 0 .. count-1.
 * @param[out] out      filled on success; left unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out or an ordinal out of range (the
 *         message names the count); the statuses of cm_device_count(); CM_ERROR_CONTEXT_LOST.
 * Thread-safe.
 */
CM_API cm_status_t cm_device_get_limits(int ordinal, cm_device_limits_t *out);

/**
 * @brief Free and total device memory of a device (cudaMemGetInfo), bytes.
 * @param[in]  ordinal      device ordinal, 0 .. count-1.
 * @param[out] free_bytes   receives the free memory in bytes (all processes counted); not NULL;
 *                          unchanged on failure.
 * @param[out] total_bytes  receives the total memory in bytes; not NULL; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL pointers or a bad ordinal; CUDA failures
 *         as recorded by the error layer. Creates the device's primary context if needed.
 */
CM_API cm_status_t cm_device_memory_info(int ordinal, size_t *free_bytes, size_t *total_bytes);

/** @brief Most architectures an architecture list holds. */
#define CM_ARCH_LIST_MAX 32

/** @brief A set of architectures with code in a binary: machine code (SASS) and PTX. */
typedef struct cm_arch_list {
    int sass[CM_ARCH_LIST_MAX];     /**< 10*major + minor for each SASS build, e.g. 90 */
    int sass_specific[CM_ARCH_LIST_MAX]; /**< 1 when that SASS is arch-specific (sm_90a): exact match only */
    int n_sass;                     /**< entries used in sass and sass_specific */
    int ptx[CM_ARCH_LIST_MAX];      /**< 10*major + minor for each PTX build, e.g. 120 */
    int n_ptx;                      /**< entries used in ptx */
} cm_arch_list_t;

/**
 * @brief Parse a CMake CUDA_ARCHITECTURES list ("75-real;90a-real;120") into an arch list.
 *
 * "XY-real" adds SASS, "XY-virtual" adds PTX, a bare "XY" adds both (CMake's rule).
 * Suffixes "a" (arch-specific) and "f" (family) are understood.
 *
 * @param[in]  cmake_list  the list, entries separated by ';'.
 * @param[out] out         filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, an empty list, an entry that is
 *         not an architecture (the message quotes it) or more than CM_ARCH_LIST_MAX entries.
 */
CM_API cm_status_t cm_arch_list_parse(const char *cmake_list, cm_arch_list_t *out);

/** @brief How a binary's kernels would run on a device. */
typedef enum cm_image_kind {
    CM_IMAGE_NONE = 0,     /**< no compatible SASS or PTX: "no kernel image is available" */
    CM_IMAGE_PTX_JIT = 1,  /**< compiled from PTX by the driver at first use (slow start) */
    CM_IMAGE_NATIVE = 2    /**< compatible machine code is in the binary */
} cm_image_kind_t;

/**
 * @brief Short name of an image kind: "native", "PTX JIT", "none".
 * @param[in] kind  any value; values outside the enum give "unknown".
 * @return a static string, never NULL. Thread-safe.
 */
CM_API const char *cm_image_kind_name(cm_image_kind_t kind);

/**
 * @brief Predict how code from an arch list runs on a device of compute capability cc.
 * @param[in]  archs  the binary's architectures (e.g. the library's: cm_arch_list_parse() of
 *                    the cuda_architectures field of cm_version_info()).
 * @param[in]  cc     the device's 10*major + minor, e.g. 90.
 * @param[out] used_arch  optional: the SASS or PTX arch that would be used, 0 for none.
 * @return the kind; CM_IMAGE_NONE also for NULL archs or cc <= 0.
 * Pure function: no CUDA call. Thread-safe.
 */
CM_API cm_image_kind_t cm_arch_image_for(const cm_arch_list_t *archs, int cc, int *used_arch);

/** @brief What the runtime reports for one of the library's own kernels on a device. */
typedef struct cm_kernel_image {
    cm_image_kind_t predicted;  /**< from the build's architectures
                                     (cm_version_info_t::cuda_architectures) and the device's cc */
    int predicted_arch;         /**< the arch the prediction would use */
    int cuda_error;             /**< cudaFuncGetAttributes result, 0 on success */
    int binary_version;         /**< cudaFuncAttributes::binaryVersion (e.g. 90), 0 on error */
    int ptx_version;            /**< cudaFuncAttributes::ptxVersion, 0 on error */
    int launch_ok;              /**< 1 when a probe kernel ran and wrote its expected result */
} cm_kernel_image_t;

/**
 * @brief Check for real that the library's kernels have an image for a device: ask
 *        cudaFuncGetAttributes about a library kernel and launch it once on a 1-element buffer.
 * @param[in]  ordinal  device ordinal.
 * @param[out] out      the prediction and what the runtime said.
 * @return CM_OK when the kernel ran; CM_ERROR_NO_KERNEL_IMAGE (with the rebuild flag in the
 *         hint) when the runtime has no image for the device; other statuses as recorded.
 */
CM_API cm_status_t cm_device_check_kernel_image(int ordinal, cm_kernel_image_t *out);

/**
 * @brief Write "sm_XY" for a 10*major + minor value into buf (snprintf rules).
 * @param[in]  cc    10*major + minor, e.g. 90 gives "sm_90"; 0 or less gives "sm_?".
 * @param[out] buf   destination, at least 12 bytes for any int; NULL writes nothing.
 * @param[in]  size  capacity of buf; 0 writes nothing.
 * @return buf. Pure function. Thread-safe.
 */
CM_API char *cm_arch_name(int cc, char *buf, size_t size);

/* ==============================================================================================
 * The per-device object (memory module, see buffer.h)
 *
 * A cm_device_t owns what the library keeps per GPU: the memory pool behind stream-ordered
 * buffers, the pinned staging buffers of pageable copies, and the count of every live buffer
 * (device and pinned host) with where each was created. Opening is cheap; a program usually
 * opens each GPU once. Closing with live buffers is refused with a leak report.
 *
 * Threading: a cm_device_t may be used by several threads at once (creating buffers, copying,
 * reports); cm_device_close() must not race with any other use of it.
 * ============================================================================================== */

/** @brief The per-device object (opaque). Created by cm_device_open(), released by cm_device_close(). */
typedef struct cm_device cm_device_t;

/**
 * @brief Open a device: check the ordinal, create the library's memory pool for it (release
 *        threshold: keep everything cached) and start counting its buffers.
 * @param[in]  ordinal  device ordinal, 0 .. count-1.
 * @param[out] out      receives the new handle; left unchanged on failure.
 * @return CM_OK;
 *         CM_ERROR_INVALID_ARGUMENT when out is NULL or the ordinal does not exist (the message
 *         names the device count);
 *         CM_ERROR_HOST_OUT_OF_MEMORY when the handle cannot be allocated;
 *         CM_ERROR_NO_DRIVER, CM_ERROR_DRIVER_TOO_OLD, CM_ERROR_NO_DEVICE (see cm_device_count());
 *         CM_ERROR_NOT_SUPPORTED in a child process forked (fork()) after this process opened
 *         a device: CUDA cannot be used there (start children with exec, e.g. posix_spawn, or
 *         fork before any CUDA call); every handle of the parent is refused there as well;
 *         CM_ERROR_CONTEXT_LOST; other CUDA failures as recorded.
 * A device without memory-pool support opens; only stream-ordered buffers are then refused.
 * The open (and every close) of a device also releases what the library's own device objects
 * of that device (a device set's members) left when their close could not make the context
 * current (cm_device_set_close(), a failed cm_device_set_open()).
 * Ownership: the caller owns the handle and releases it with cm_device_close().
 */
CM_API cm_status_t cm_device_open(int ordinal, cm_device_t **out);

/**
 * @brief Close a device: release its pool, streams, events and staging buffers and free the
 *        handle.
 *
 * Refused while buffers of the device are alive: the call then returns CM_ERROR_BUSY, releases
 * nothing, and the detail (cm_last_error()) says how many buffers, how many bytes, and where
 * the first ones were created; cm_device_leak_report() lists every one. Destroy them and close
 * again. Refused as well, releasing nothing, when the device's context cannot be made current
 * (the device stays open: close again), and with CM_ERROR_BUSY while the calling thread captures
 * a graph (cm_graph_capture_begin(): CUDA refuses the frees and the pool's destroy of a close
 * during a capture; end the capture, then close).
 *
 * Once the close goes ahead the handle is gone, whatever it returns. When a CUDA destroy fails
 * (cudaMemPoolDestroy, cudaStreamDestroy, cudaEventDestroy, a free), the close returns that
 * failure and its message lists what it could not release (those objects stay with the driver
 * until the process exits). A context lost to a sticky error is no failure here: its objects
 * went with it.
 *
 * @param[in] dev  the device, or NULL (a no-op returning CM_OK).
 * @return CM_OK;
 *         CM_ERROR_BUSY with the leak report while buffers, streams or events are alive, or
 *         while the calling thread captures a graph (nothing was closed);
 *         CM_ERROR_INVALID_ARGUMENT when dev was already closed or is not a device handle;
 *         a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain when the context
 *         cannot be made current (the device is still open);
 *         a CUDA failure of a destroy, the message listing what was not released (the device
 *         is closed; a failure that would read as CM_ERROR_BUSY or CM_ERROR_INVALID_ARGUMENT,
 *         e.g. cudaErrorNotReady, is CM_ERROR_CUDA there: those two always mean "still open").
 * Ownership: on CM_OK, and on a failure that lists what was not released, the handle is gone;
 * do not use it again (cm_device_ordinal() tells whether a device is still open).
 */
CM_API cm_status_t cm_device_close(cm_device_t *dev);

/**
 * @brief Cleanup function of CM_SCOPED(cm_device) (buffer.h): closes *dev when it is not NULL
 *        and sets it to NULL. A refused close (live buffers) leaves *dev open and unchanged,
 *        with the leak report in the detail (cm_last_error()).
 * @param[in,out] dev  address of the handle variable; NULL and *dev == NULL are no-ops.
 * Ownership: releases the device the variable owned (unless buffers are still alive).
 */
static inline void cm_device_scope_exit(cm_device_t **dev) {
    if (dev == NULL || *dev == NULL) return;
    /* every status but BUSY ended the handle (or it was not a live one): never keep it */
    if (cm_device_close(*dev) != CM_ERROR_BUSY) *dev = NULL;
}

/**
 * @brief The ordinal a device object was opened on.
 * @param[in]  dev      the device.
 * @param[out] ordinal  receives the ordinal; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed handle.
 */
CM_API cm_status_t cm_device_ordinal(const cm_device_t *dev, int *ordinal);

/**
 * @brief Write the list of a device's live buffers into buf (snprintf rules): a summary line
 *        (how many buffers, how many bytes) and one line per buffer in creation order with its
 *        kind, size, the file:line that created it and its label.
 * @param[in]  dev     the device.
 * @param[out] buf     destination; may be NULL when size is 0.
 * @param[in]  size    capacity of buf; the text is truncated (still NUL-terminated) when short.
 * @param[out] length  optional: the length the full report needs, excluding the NUL.
 * @return CM_OK (also when truncated); CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev, or a
 *         NULL buf with a non-zero size.
 * Allocates nothing.
 */
CM_API cm_status_t cm_device_leak_report(const cm_device_t *dev, char *buf, size_t size,
                                         size_t *length);

/** @brief What a device object holds, from cm_device_memory_report(). Bytes unless named. */
typedef struct cm_memory_report {
    int device;                    /**< ordinal */
    size_t live_buffers;           /**< device buffers alive (cm_buffer_t) */
    size_t live_bytes;             /**< their bytes (as asked for) */
    size_t peak_live_bytes;        /**< high-water mark of live_bytes since the device was opened */
    size_t live_host_buffers;      /**< pinned or registered host buffers alive (cm_host_buffer_t) */
    size_t live_host_bytes;        /**< their bytes */
    size_t pool_reserved_bytes;    /**< device memory the pool holds from the driver (live + cached) */
    size_t pool_used_bytes;        /**< of which in use by stream-ordered buffers */
    size_t pool_peak_reserved_bytes; /**< high-water mark of pool_reserved_bytes */
    unsigned long long pool_release_threshold; /**< bytes the pool keeps cached at a synchronization */
    size_t staging_bytes;          /**< pinned host memory held for pageable-copy staging */
    size_t device_free_bytes;      /**< cudaMemGetInfo free memory of the device (all processes) */
    size_t device_total_bytes;     /**< cudaMemGetInfo total memory */
} cm_memory_report_t;

/**
 * @brief Fill a memory report for a device object; usable at any time.
 * @param[in]  dev  the device.
 * @param[out] out  filled on success; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed handle;
 *         CM_ERROR_CONTEXT_LOST; CUDA failures of the pool or memory queries as recorded.
 */
CM_API cm_status_t cm_device_memory_report(const cm_device_t *dev, cm_memory_report_t *out);

/**
 * @brief Write a memory report as text (several lines, snprintf rules).
 * @param[in]  report  the report; not modified.
 * @param[out] buf     destination; may be NULL when size is 0.
 * @param[in]  size    capacity of buf.
 * @param[out] length  optional: the length the full text needs, excluding the NUL.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL report, or a NULL buf with a non-zero size.
 * Pure function. Thread-safe.
 */
CM_API cm_status_t cm_memory_report_format(const cm_memory_report_t *report, char *buf, size_t size,
                                           size_t *length);

/* ==============================================================================================
 * Who holds a GPU and how healthy it is (NVML)
 *
 * NVIDIA's management library (NVML, libnvidia-ml.so.1, installed with every driver) knows
 * which processes hold a GPU's memory and the GPU's health: ECC errors, clock slowdowns, the
 * PCIe link, persistence, compute and MIG modes. The library loads it at run time (dlopen, once,
 * on first use; nothing NVML is needed to build or link) and keeps it initialised until the
 * process ends. NVML devices are matched to CUDA ordinals by PCI bus id, so a renumbering
 * CUDA_VISIBLE_DEVICES does not mix GPUs up. Without NVML (no driver, a container without it)
 * these calls say "not available" with the reason; nothing else of the library depends on it.
 * The out-of-memory report (buffer.h) names the processes holding the GPU through the same call.
 *
 * Threading: both functions are thread-safe.
 * ============================================================================================== */

/** @brief used_bytes of a process whose memory NVML does not report. */
#define CM_PROCESS_BYTES_UNKNOWN (~0ull)

/** @brief A process using a GPU (a CUDA context on it), from cm_device_processes(). */
typedef struct cm_process_info {
    unsigned int pid;               /**< process id as the driver reports it */
    unsigned long long used_bytes;  /**< device memory it holds, its CUDA context included;
                                         CM_PROCESS_BYTES_UNKNOWN when NVML does not say */
    char name[64];                  /**< command name (/proc/PID/comm, control characters as
                                         '?'), "" when the process is not visible or its name
                                         cannot be read */
    int visible;                    /**< 1 when the process can be seen from here (/proc/PID
                                         exists); 0 for one of another PID namespace (another
                                         container) */
    int self;                       /**< 1 for the calling process */
} cm_process_info_t;

/**
 * @brief The processes using a GPU and the device memory each holds, largest first.
 *
 * Asks NVML for the GPU's compute processes (the device matched by PCI bus id), then looks each
 * one up in /proc for its command name. A process of another PID namespace (another container)
 * has no /proc entry here: it is listed with visible 0 and no name. With a driver that reports
 * host process ids inside a container, a listed pid may not name the same process here.
 *
 * @param[in]  ordinal  device ordinal, 0 .. count-1.
 * @param[out] out      receives min(cap, *count) entries, largest used_bytes first (unknown
 *                      amounts last); may be NULL when cap is 0 (to count only).
 * @param[in]  cap      entries out can hold.
 * @param[out] count    receives the number of processes on the GPU (may exceed cap); 0 on failure.
 * @return CM_OK (also when no process uses the GPU);
 *         CM_ERROR_INVALID_ARGUMENT for a NULL count, a NULL out with a non-zero cap, or an
 *         ordinal that does not exist (the message names the count);
 *         CM_ERROR_NOT_SUPPORTED when NVML is not available or cannot list this GPU's processes
 *         (the message says why: no libnvidia-ml.so.1, no permission, a MIG GPU without
 *         administrator rights...; the hint names nvidia-smi as the fallback);
 *         the statuses of cm_device_count(); CM_ERROR_CONTEXT_LOST.
 * Thread-safe. Creates no CUDA context. Allocates only a temporary list, freed before it returns.
 */
CM_API cm_status_t cm_device_processes(int ordinal, cm_process_info_t *out, size_t cap,
                                       size_t *count);

/** @brief A field of cm_device_health_t that NVML does not report for this GPU. */
#define CM_HEALTH_UNKNOWN (-1)
/** @brief Most processes a cm_device_health_t lists (process_count is always exact). */
#define CM_HEALTH_MAX_PROCESSES 16

/** @brief Compute modes (NVML's values): who may create a CUDA context on a GPU. */
typedef enum cm_compute_mode {
    CM_COMPUTE_MODE_DEFAULT = 0,           /**< any number of processes */
    CM_COMPUTE_MODE_EXCLUSIVE_THREAD = 1,  /**< deprecated; one context, as exclusive-process */
    CM_COMPUTE_MODE_PROHIBITED = 2,        /**< no process may use the GPU */
    CM_COMPUTE_MODE_EXCLUSIVE_PROCESS = 3  /**< one process at a time: a second one gets "all
                                                CUDA-capable devices are busy or unavailable" */
} cm_compute_mode_t;

/** @brief Bits of cm_device_health_t::clock_event_reasons: why the clocks are below their
 *         maximum (NVML's nvmlClocksEventReasons, the same values). */
enum {
    CM_CLOCKS_IDLE = 0x1,                 /**< nothing runs: the clocks drop to idle */
    CM_CLOCKS_APPLICATIONS_SETTING = 0x2, /**< limited by the application clocks setting */
    CM_CLOCKS_SW_POWER_CAP = 0x4,         /**< held under the power limit (normal at full load) */
    CM_CLOCKS_HW_SLOWDOWN = 0x8,          /**< hardware slowdown (factor 2 or more): heat or power */
    CM_CLOCKS_SYNC_BOOST = 0x10,          /**< held to the slowest GPU of a sync-boost group */
    CM_CLOCKS_SW_THERMAL = 0x20,          /**< software thermal slowdown */
    CM_CLOCKS_HW_THERMAL = 0x40,          /**< hardware thermal slowdown: too hot */
    CM_CLOCKS_HW_POWER_BRAKE = 0x80,      /**< external power brake (the power supply) */
    CM_CLOCKS_DISPLAY_SETTING = 0x100     /**< limited by the display clocks setting */
};

/**
 * @brief A GPU's health as NVML reports it (cm_device_health()).
 *
 * Zero-initialised it means "not read" (nvml_available 0). When nvml_available is 1, every
 * number NVML does not report for this GPU (a GeForce has no ECC, a GPU before Ampere no MIG or
 * row remapping...) is CM_HEALTH_UNKNOWN.
 */
typedef struct cm_device_health {
    int nvml_available;             /**< 1 when NVML answered for this device */
    char nvml_reason[256];          /**< why not, e.g. "libnvidia-ml.so.1 cannot be loaded (...)";
                                         "" when available */
    char driver_version[80];        /**< the driver's version as NVML reports it, "580.65.06" */
    char pci_bus_id[32];            /**< the PCI bus id that matched the CUDA device to NVML's */
    int persistence_mode;           /**< 1 on, 0 off */
    int compute_mode;               /**< a cm_compute_mode_t */
    int mig_mode;                   /**< 1 MIG enabled, 0 disabled */
    int mig_mode_pending;           /**< the MIG mode after the next GPU reset */
    int ecc_mode;                   /**< 1 ECC on, 0 off */
    int ecc_mode_pending;           /**< the ECC mode after the next reboot */
    long long ecc_volatile_uncorrected;  /**< uncorrectable ECC errors since the driver loaded */
    long long ecc_aggregate_uncorrected; /**< uncorrectable ECC errors over the GPU's life */
    int retired_pages;              /**< memory pages retired (double-bit and repeated single-bit
                                         errors; GPUs before Ampere) */
    int retired_pages_pending;      /**< 1 when a page retirement waits for a reset or reboot */
    int remapped_rows_correctable;  /**< rows remapped for correctable errors (Ampere and later) */
    int remapped_rows_uncorrectable;/**< rows remapped for uncorrectable errors */
    int row_remap_pending;          /**< 1 when a row remapping waits for a GPU reset */
    int row_remap_failed;           /**< 1 when a row could not be remapped: the GPU needs service */
    long long clock_event_reasons;  /**< CM_CLOCKS_* bits now active (0: full clocks) */
    int temperature_c;              /**< GPU temperature, degrees Celsius */
    int power_mw;                   /**< power draw, milliwatts */
    int power_limit_mw;             /**< enforced power limit, milliwatts */
    int pcie_gen;                   /**< current PCIe link generation (drops while idle) */
    int pcie_gen_max;               /**< the highest generation this GPU and slot can run */
    int pcie_width;                 /**< current PCIe link width (lanes) */
    int pcie_width_max;             /**< the widest link this GPU and slot can run */
    int processes_known;            /**< 1 when the process list below was read */
    char processes_reason[160];     /**< why not, "" when read */
    size_t process_count;           /**< processes using the GPU (may exceed the list) */
    cm_process_info_t processes[CM_HEALTH_MAX_PROCESSES]; /**< the largest first
                                         (cm_device_processes()) */
} cm_device_health_t;

/**
 * @brief Read a GPU's health through NVML: driver version, persistence, compute and MIG modes,
 *        ECC mode and uncorrectable error counts, retired pages and row remapping, active clock
 *        event reasons with temperature and power, the PCIe link (current and maximum
 *        generation and width) and the processes using it.
 *
 * Never fails because of NVML: without it (or for this GPU) out->nvml_available is 0 and
 * out->nvml_reason says why. The doctor (diag.h) judges these numbers.
 *
 * @param[in]  ordinal  device ordinal, 0 .. count-1.
 * @param[out] out      filled completely (zeroed first) on CM_OK; owned by the caller.
 * @return CM_OK, with or without NVML; CM_ERROR_INVALID_ARGUMENT for a NULL out or an ordinal
 *         that does not exist; the statuses of cm_device_count(); CM_ERROR_CONTEXT_LOST.
 * Thread-safe. Creates no CUDA context. About 20 NVML queries; the first NVML use of a process
 * also initialises NVML (nvmlInit_v2), which is the slow part.
 */
CM_API cm_status_t cm_device_health(int ordinal, cm_device_health_t *out);

CM_EXTERN_C_END

#endif /* CUDAMODEL_DEVICE_H */
