/**
 * @file diag.h
 * @brief Environment diagnostics: the checklist behind `cudamodel-doctor`, as a library call.
 *
 * Diagnosis is two steps so that every verdict can be tested without a GPU:
 *  1. cm_diag_collect() reads the machine (driver, runtime, devices, this library's
 *     architectures, environment variables, nvcc on PATH, WSL2) into a cm_diag_inputs_t;
 *  2. cm_diag_evaluate() judges those inputs as plain data into a cm_diag_report_t of checks,
 *     each with a verdict (ok / warning / error), a message with the numbers and a fix.
 * Tests fill a cm_diag_inputs_t by hand and call step 2 alone.
 *
 * Exit codes of the doctor (cm_diag_exit_code()) are part of the API:
 *   0 CM_DIAG_EXIT_OK            everything needed to run is there (warnings may be present)
 *   2 CM_DIAG_EXIT_NO_DRIVER     no NVIDIA driver installed (libcuda.so.1 cannot be loaded)
 *   3 CM_DIAG_EXIT_DRIVER_OLD    the driver's major CUDA version is older than the runtime's
 *   4 CM_DIAG_EXIT_NO_DEVICE     driver present but no device visible (also: hidden by
 *                                CUDA_VISIBLE_DEVICES)
 *   5 CM_DIAG_EXIT_NO_IMAGE      a device has no kernel image of this library
 *   6 CM_DIAG_EXIT_OTHER         another error
 *   64 CM_DIAG_EXIT_USAGE        bad command line (the tool only)
 * When several errors are present the lowest non-zero code above wins (the root cause).
 *
 * Threading: cm_diag_collect() is thread-safe but slow (it starts `nvcc --version` and creates a
 * context on each device); the other functions are pure and thread-safe.
 */
#ifndef CUDAMODEL_DIAG_H
#define CUDAMODEL_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/** @brief Most devices cm_diag_collect() describes (the count itself is always exact). */
#define CM_DIAG_MAX_DEVICES 16
/** @brief Most checks a report holds: enough for CM_DIAG_MAX_DEVICES devices with every health
 *         check (each device has up to 3 checks of its own and 7 of its health). */
#define CM_DIAG_MAX_CHECKS 192
/** @brief Capacity of a message, a fix and other short texts, NUL included. */
#define CM_DIAG_TEXT_MAX 512
/** @brief Capacity of a path or an environment variable's value, NUL included (longer: cut). */
#define CM_DIAG_PATH_MAX 1024

/** @brief Exit codes of cudamodel-doctor; see the file comment. */
enum {
    CM_DIAG_EXIT_OK = 0,         /**< everything needed to run is there */
    CM_DIAG_EXIT_NO_DRIVER = 2,  /**< no NVIDIA driver installed */
    CM_DIAG_EXIT_DRIVER_OLD = 3, /**< the driver's major version is older than the runtime's */
    CM_DIAG_EXIT_NO_DEVICE = 4,  /**< driver present, no device visible (or all hidden) */
    CM_DIAG_EXIT_NO_IMAGE = 5,   /**< a device cannot run this library's kernels */
    CM_DIAG_EXIT_OTHER = 6,      /**< another error */
    CM_DIAG_EXIT_USAGE = 64      /**< bad command line (cudamodel-doctor only) */
};

/** @brief An environment variable as seen: whether it is set, and its value. */
typedef struct cm_diag_env_var {
    bool set;                     /**< the variable is in the environment (possibly empty) */
    char value[CM_DIAG_PATH_MAX]; /**< its value, "" when unset */
} cm_diag_env_var_t;

/** @brief One device as collected by cm_diag_collect(). */
typedef struct cm_diag_device {
    cm_device_limits_t limits;   /**< identity and limits (cm_device_get_limits()) */
    int limits_error;            /**< cudaError_t of reading them, 0 on success (cudaErrorUnknown
                                      when the library failed without a CUDA error) */
    int memory_error;            /**< cudaError_t of cudaMemGetInfo, 0 on success */
    size_t free_bytes;           /**< cudaMemGetInfo, 0 when unknown */
    size_t total_bytes;          /**< cudaMemGetInfo, 0 when unknown */
    cm_kernel_image_t image;     /**< probe of a library kernel (cm_device_check_kernel_image());
                                      its predicted fields are informational: cm_diag_evaluate()
                                      predicts from cm_diag_inputs_t::library_archs itself */
    cm_status_t image_status;    /**< what cm_device_check_kernel_image() returned */
    bool image_checked;          /**< false when the probe was not run (e.g. limits failed) */
    char detail[CM_DIAG_TEXT_MAX]; /**< the library's message (cm_last_error()) of the first step
                                        that failed for this device, "" when none failed */
    cm_device_health_t health;   /**< what NVML reports (cm_device_health()): modes, ECC errors,
                                      clocks, PCIe link, processes; nvml_available 0 (what zeroed
                                      inputs hold) skips the health checks */
    bool managed_read;           /**< the two attributes below were read (false in zeroed
                                      inputs: then they are not reported) */
    int concurrent_managed_access; /**< cudaDevAttrConcurrentManagedAccess: 1 when the device
                                      uses managed memory concurrently with the host (memspace.h:
                                      managed memory may exceed device memory, prefetch and
                                      device advice work); 0 on WSL2, Windows and GPUs before
                                      Pascal, where it cannot oversubscribe the device */
    int pageable_memory_access;  /**< cudaDevAttrPageableMemoryAccess: 1 when kernels can access
                                      ordinary (malloc) host memory coherently (HMM or ATS) */
} cm_diag_device_t;

/** @brief Everything the verdicts depend on, as plain data. */
typedef struct cm_diag_inputs {
    /* driver and runtime */
    bool libcuda_loadable;                 /**< dlopen("libcuda.so.1") succeeded */
    char libcuda_path[CM_DIAG_PATH_MAX];   /**< where it was found, or the dlerror() text */
    int driver_version;                    /**< cudaDriverGetVersion, 0 when no driver
                                                (cm_version_info_t::driver) */
    int runtime_version;                   /**< cudaRuntimeGetVersion of the loaded cudart
                                                (cm_version_info_t::runtime) */
    int runtime_version_built;             /**< CUDART_VERSION the library was compiled with
                                                (cm_version_info_t::runtime_built) */
    /* devices */
    int device_count_error;                /**< cudaError_t of cudaGetDeviceCount, 0 on success */
    int device_count;                      /**< cudaGetDeviceCount, 0 on failure */
    cm_diag_device_t devices[CM_DIAG_MAX_DEVICES]; /**< the first min(count, MAX) devices */
    /* this library */
    char library_version[32];              /**< cm_version_string() */
    char library_archs[CM_DIAG_TEXT_MAX];  /**< CMAKE_CUDA_ARCHITECTURES of this build
                                                (cm_version_info_t::cuda_architectures) */
    /* environment */
    cm_diag_env_var_t cuda_home;           /**< CUDA_HOME */
    cm_diag_env_var_t cuda_path;           /**< CUDA_PATH */
    cm_diag_env_var_t ld_library_path;     /**< LD_LIBRARY_PATH */
    cm_diag_env_var_t cuda_visible_devices;/**< CUDA_VISIBLE_DEVICES */
    cm_diag_env_var_t cuda_launch_blocking;/**< CUDA_LAUNCH_BLOCKING */
    cm_diag_env_var_t cudamodel_sync;      /**< CUDAMODEL_SYNC */
    bool cuda_home_exists;                 /**< CUDA_HOME is set and names a directory */
    bool cuda_path_exists;                 /**< CUDA_PATH is set and names a directory */
    char nvcc_path[CM_DIAG_PATH_MAX];      /**< first nvcc on PATH, "" when none */
    int nvcc_version;                      /**< 1000*major + 10*minor from `nvcc --version`,
                                                0 if unknown */
    bool wsl;                              /**< running under WSL2 (/proc/version says
                                                "microsoft" or "WSL", or /dev/dxg exists) */
    /* several GPUs (multi.h) */
    int nccl_version_built;                /**< NCCL_VERSION_CODE the library was built with
                                                (cm_version_info_t::nccl_built_version), 0
                                                without NCCL */
    int nccl_version;                      /**< ncclGetVersion of the loaded NCCL
                                                (cm_version_info_t::nccl), 0 when not built
                                                or unknown */
    int peer_access[CM_DIAG_MAX_DEVICES][CM_DIAG_MAX_DEVICES]; /**< cudaDeviceCanAccessPeer(i, j)
                                                for the first min(count, CM_DIAG_MAX_DEVICES)
                                                devices: a cm_diag_peer_t value (0: not read) */
} cm_diag_inputs_t;

/** @brief Values of cm_diag_inputs_t::peer_access (0, what zeroed inputs hold, is "not read"). */
typedef enum cm_diag_peer {
    CM_DIAG_PEER_UNKNOWN = 0, /**< not read (or the query failed) */
    CM_DIAG_PEER_YES = 1,     /**< device i can access device j's memory (the diagonal too) */
    CM_DIAG_PEER_NO = 2       /**< it cannot: copies between them are staged through host memory */
} cm_diag_peer_t;

/** @brief Verdict of one check, ordered by severity. */
typedef enum cm_diag_verdict {
    CM_DIAG_OK = 0,      /**< fine, or information only */
    CM_DIAG_WARNING = 1, /**< works, but slower or fragile; the fix says how to improve it */
    CM_DIAG_ERROR = 2    /**< the library's kernels cannot run; the fix says what to do */
} cm_diag_verdict_t;

/** @brief One judged check. */
typedef struct cm_diag_check {
    char id[48];                       /**< stable identifier, e.g. "driver", "device0.image" */
    cm_diag_verdict_t verdict;         /**< ok, warning or error */
    int exit_code;                     /**< the CM_DIAG_EXIT_* it implies (0 unless an error) */
    char message[CM_DIAG_TEXT_MAX];    /**< what was found, with the numbers */
    char fix[CM_DIAG_TEXT_MAX];        /**< how to fix it, "" when nothing to fix */
} cm_diag_check_t;

/** @brief The doctor's report: the inputs it judged and the checks in order. */
typedef struct cm_diag_report {
    cm_diag_inputs_t inputs;            /**< a copy of what was judged */
    int n_checks;                       /**< checks used, 0 .. CM_DIAG_MAX_CHECKS */
    cm_diag_check_t checks[CM_DIAG_MAX_CHECKS]; /**< in the order they were judged */
    cm_diag_verdict_t overall;          /**< worst verdict of all checks */
    int exit_code;                      /**< see cm_diag_exit_code() */
} cm_diag_report_t;

/**
 * @brief Read this machine into inputs. Never fails on a machine without a GPU or driver:
 *        missing pieces are recorded as data (driver_version 0, libcuda_loadable false, the
 *        cudaGetDeviceCount error in device_count_error, ...).
 *
 * Reads the driver and runtime versions, dlopen()s libcuda.so.1 to tell "no driver installed"
 * apart, counts the devices and, for each of the first CM_DIAG_MAX_DEVICES, reads its limits and
 * memory and runs cm_device_check_kernel_image() (which creates the device's primary context and
 * launches one tiny kernel), reads its health through NVML (cm_device_health(); without NVML the
 * reason is kept), and the peer-access matrix between them; reads the NCCL versions
 * (built against, loaded; 0 in a build without NCCL). Reads CUDA_HOME, CUDA_PATH, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES,
 * CUDA_LAUNCH_BLOCKING and CUDAMODEL_SYNC, searches PATH for nvcc and runs `nvcc --version`,
 * and detects WSL2. Restores the caller's current device, and clears the calling thread's
 * last-error detail (cm_last_error_clear()) before returning, since the failures it records are
 * expected and kept in inputs.
 *
 * @param[out] inputs  filled completely (zeroed first); owned by the caller.
 * @return CM_OK (also when there is no driver or no device);
 *         CM_ERROR_INVALID_ARGUMENT when inputs is NULL.
 * Thread-safe, but slow (starts a process, creates contexts).
 */
CM_API cm_status_t cm_diag_collect(cm_diag_inputs_t *inputs);

/**
 * @brief Judge inputs into a report: one check per item with a verdict, a message with the
 *        numbers and a fix, the overall verdict and the exit code.
 *
 * Pure: reads nothing but its arguments (no CUDA call that touches the driver, no environment),
 * so every verdict can be produced from injected inputs. The checks, by id: "library",
 * "driver", "runtime", "devices", "device<N>", "device<N>.image", "device<N>.prediction" (only
 * when the runtime disagrees with the prediction), "nvml" (whether NVML answers, the driver
 * version it reports; never a warning: without it the health checks are skipped), and per
 * device whose health NVML reported: "device<N>.persistence" (off: a warning, each program waits
 * for the GPU to initialise), "device<N>.compute_mode" (exclusive-process: a warning that
 * explains "all CUDA-capable devices are busy or unavailable"; prohibited: an error),
 * "device<N>.mig" (enabled or a change pending: a warning), "device<N>.ecc" (uncorrectable errors
 * since the driver loaded, a pending row remapping or page retirement, or a failed remapping: an
 * error, "the GPU reports uncorrectable memory errors"; errors only in the GPU's lifetime count
 * or ECC off: a warning), "device<N>.clocks" (a thermal, hardware or power-brake slowdown: a
 * warning with the temperature and power), "device<N>.pcie" (a link narrower than its maximum,
 * or of a lower generation while the GPU is busy: a warning, "link runs at x8 of x16: check the
 * slot"), "device<N>.processes" (the processes using the GPU and their memory; a warning when
 * other processes hold more than half of it); then "peers" (with two devices or more: a warning
 * when a pair cannot access each other's memory), "nccl" (the NCCL version, or "not built";
 * never an error: only the collectives need it), "nvcc", "nvcc.driver" and "nvcc.runtime"
 * (only when they warn), "env.CUDA_HOME", "env.CUDA_PATH", "env.LD_LIBRARY_PATH",
 * "env.CUDA_VISIBLE_DEVICES", "env.CUDA_LAUNCH_BLOCKING", "env.CUDAMODEL_SYNC", "platform".
 *
 * @param[in]  inputs  what to judge; not modified. May point at report->inputs.
 * @param[out] report  filled completely (a copy of inputs, the checks, overall, exit_code);
 *                     owned by the caller.
 * @return CM_OK whatever the verdicts; CM_ERROR_INVALID_ARGUMENT when inputs or report is NULL.
 *         When inputs->library_archs does not parse, the "library" check is an error and the
 *         calling thread's last-error detail names the bad entry (cm_arch_list_parse()).
 * Thread-safe. Allocates nothing.
 */
CM_API cm_status_t cm_diag_evaluate(const cm_diag_inputs_t *inputs, cm_diag_report_t *report);

/**
 * @brief The doctor's exit code for a report: the lowest non-zero CM_DIAG_EXIT_* of its error
 *        checks (the root cause), 0 when no check is an error.
 * @param[in] report  a report from cm_diag_evaluate(); not modified.
 * @return one of CM_DIAG_EXIT_OK, _NO_DRIVER, _DRIVER_OLD, _NO_DEVICE, _NO_IMAGE, _OTHER;
 *         CM_DIAG_EXIT_OTHER for NULL.
 * Thread-safe.
 */
CM_API int cm_diag_exit_code(const cm_diag_report_t *report);

/**
 * @brief What an exit code means, e.g. "no NVIDIA driver" for CM_DIAG_EXIT_NO_DRIVER.
 * @param[in] exit_code  any value; unknown values give "unknown exit code".
 * @return a static string, never NULL. Thread-safe.
 */
CM_API const char *cm_diag_exit_code_meaning(int exit_code);

/**
 * @brief Name of a verdict.
 * @param[in] v  any value.
 * @return "ok", "warning" or "error"; "unknown" for values outside the enum. Static, never NULL.
 */
CM_API const char *cm_diag_verdict_name(cm_diag_verdict_t v);

/**
 * @brief Print a report for people: a header with the library version and architectures, one
 *        line per check ("[ ok  ] id: message", "[warn ] ...", "[ERROR] ..."), its fix indented
 *        under it ("        fix: ..."), a block of limits and health per device, the peer-access matrix
 *        (two devices or more), and last the overall
 *        verdict ("verdict: ok", "verdict: error (exit 2: no NVIDIA driver)").
 * Control characters in values are written as C-style escapes (backslash n, backslash xNN) so
 * each check stays on one line.
 * @param[in] report  a report from cm_diag_evaluate(); not modified.
 * @param[in] out     stream to write to (e.g. stdout); the library writes nowhere else.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when report or out is NULL. A write error shows
 *         in ferror(out).
 */
CM_API cm_status_t cm_diag_write_text(const cm_diag_report_t *report, FILE *out);

/**
 * @brief Print the same report as one JSON object followed by a newline: "library", "driver",
 *        "devices" (with limits, memory, the predicted and the observed image, and "health":
 *        NVML's numbers, null where not reported, and the processes), "peer_access"
 *        (a matrix of true / false / null), "nccl" (built, versions), "environment",
 *        "checks" (id, verdict, exit_code, message, fix), "overall", "exit_code" and
 *        "exit_meaning". Strings are escaped (quotes, backslashes, control characters) and
 *        invalid UTF-8 bytes become U+FFFD, so the output is always valid JSON. Unset
 *        environment variables are null.
 * @param[in] report  a report from cm_diag_evaluate(); not modified.
 * @param[in] out     stream to write to; the library writes nowhere else.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT when report or out is NULL. A write error shows
 *         in ferror(out).
 */
CM_API cm_status_t cm_diag_write_json(const cm_diag_report_t *report, FILE *out);

CM_EXTERN_C_END

#endif /* CUDAMODEL_DIAG_H */
