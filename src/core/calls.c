/*
 * The table of every CUDA runtime, driver, NCCL and NVML call the library makes (core/calls.h).
 */
#define _POSIX_C_SOURCE 200809L /* pthread_once */

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_<name>_v<version>: the ABI of each driver entry point */

#include "calls.h"

#define CM__CALL_INIT(member, fn) .member = fn,
const cm__cuda_t cm__cuda_real = {
    CM__CUDA_CALLS(CM__CALL_INIT)
    CM__NCCL_CALLS(CM__CALL_INIT)
};
cm__cuda_t cm__cuda = {
    CM__CUDA_CALLS(CM__CALL_INIT)
    CM__NCCL_CALLS(CM__CALL_INIT)
};
const cm__nvml_calls_t cm__nvml_real = {
    CM__NVML_CALLS(CM__CALL_INIT)
};
cm__nvml_calls_t cm__nvml = {
    CM__NVML_CALLS(CM__CALL_INIT)
};
#undef CM__CALL_INIT

void cm__cuda_restore(void) {
    memcpy(&cm__cuda, &cm__cuda_real, sizeof cm__cuda);
    memcpy(&cm__nvml, &cm__nvml_real, sizeof cm__nvml);
}

/* Name, function and slot of each entry of the two tables, for the tests that walk them. */
typedef struct cm__call_row {
    const char *member;
    const char *function;
    size_t offset;
} cm__call_row_t;

#define CM__CUDA_ROW(member, fn) {#member, #fn, offsetof(cm__cuda_t, member)},
static const cm__call_row_t cm__cuda_rows[] = {
    CM__CUDA_CALLS(CM__CUDA_ROW)
    CM__NCCL_CALLS(CM__CUDA_ROW)
};
#undef CM__CUDA_ROW

#define CM__NVML_ROW(member, fn) {#member, #fn, offsetof(cm__nvml_calls_t, member)},
static const cm__call_row_t cm__nvml_rows[] = {
    CM__NVML_CALLS(CM__NVML_ROW)
};
#undef CM__NVML_ROW

#define CM__ROW_COUNT(rows) (sizeof rows / sizeof rows[0])

/* Row i of a table of n rows, or NULL past its end. */
static const cm__call_row_t *cm__call_row(const cm__call_row_t *rows, size_t n, size_t i) {
    return i < n ? &rows[i] : NULL;
}

size_t cm__cuda_count(void) {
    return CM__ROW_COUNT(cm__cuda_rows);
}

const char *cm__cuda_member_name(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__cuda_rows, CM__ROW_COUNT(cm__cuda_rows), i);
    return r != NULL ? r->member : NULL;
}

const char *cm__cuda_function_name(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__cuda_rows, CM__ROW_COUNT(cm__cuda_rows), i);
    return r != NULL ? r->function : NULL;
}

void **cm__cuda_member_slot(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__cuda_rows, CM__ROW_COUNT(cm__cuda_rows), i);
    return r != NULL ? (void **)((char *)&cm__cuda + r->offset) : NULL;
}

size_t cm__nvml_count(void) {
    return CM__ROW_COUNT(cm__nvml_rows);
}

const char *cm__nvml_member_name(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__nvml_rows, CM__ROW_COUNT(cm__nvml_rows), i);
    return r != NULL ? r->member : NULL;
}

const char *cm__nvml_function_name(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__nvml_rows, CM__ROW_COUNT(cm__nvml_rows), i);
    return r != NULL ? r->function : NULL;
}

void **cm__nvml_member_slot(size_t i) {
    const cm__call_row_t *r = cm__call_row(cm__nvml_rows, CM__ROW_COUNT(cm__nvml_rows), i);
    return r != NULL ? (void **)((char *)&cm__nvml + r->offset) : NULL;
}

/* ------------------------------------------------------------------ driver entry points */

/*
 * The driver calls the library makes without linking libcuda: each entry point is found once
 * through cudart (cudaGetDriverEntryPointByVersion). A missing driver or entry point answers
 * cudaErrorInsufficientDriver / cudaErrorNotSupported.
 *
 * The version asked for selects the ABI of the entry point, and it is not the prototype of the
 * plain name in cuda.h: asked with CUDA_VERSION 13000, "cuStreamGetCtx" answers the 12.5 form
 * cuStreamGetCtx_v2(stream, ctx *, green ctx *), whose third pointer a two-argument call leaves
 * as whatever the register held, and the driver writes through it. So every wrapper names the
 * ABI it calls as the function-pointer type of cudaTypedefs.h, PFN_<name>_v<version>, and asks
 * for exactly that version: the type and the version are the same two tokens (CM__DRV_FN below),
 * so they cannot disagree.
 */
static cudaError_t cm__drv_entry(const char *symbol, int version, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, fn, (unsigned int)version,
                                                       cudaEnableDefault, &q);
    if (err != cudaSuccess) {
        *fn = NULL;
        (void)cudaGetLastError();
        return err;
    }
    if (q != cudaDriverEntryPointSuccess || *fn == NULL) {
        *fn = NULL;
        return cudaErrorNotSupported;
    }
    return cudaSuccess;
}

static cudaError_t cm__drv_result(CUresult r) {
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_HANDLE: return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_CONTEXT_IS_DESTROYED: return cudaErrorContextIsDestroyed;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: return cudaErrorStreamCaptureUnsupported;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: return cudaErrorStreamCaptureInvalidated;
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: return cudaErrorStreamCaptureImplicit;
    case CUDA_ERROR_ILLEGAL_ADDRESS: return cudaErrorIllegalAddress;
    case CUDA_ERROR_LAUNCH_FAILED: return cudaErrorLaunchFailure;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_PERMITTED: return cudaErrorNotPermitted;
    case CUDA_ERROR_ECC_UNCORRECTABLE: return cudaErrorECCUncorrectable;
    case CUDA_ERROR_LAUNCH_TIMEOUT: return cudaErrorLaunchTimeout;
    case CUDA_ERROR_HARDWARE_STACK_ERROR: return cudaErrorHardwareStackError;
    case CUDA_ERROR_ILLEGAL_INSTRUCTION: return cudaErrorIllegalInstruction;
    case CUDA_ERROR_MISALIGNED_ADDRESS: return cudaErrorMisalignedAddress;
    case CUDA_ERROR_INVALID_ADDRESS_SPACE: return cudaErrorInvalidAddressSpace;
    case CUDA_ERROR_INVALID_PC: return cudaErrorInvalidPc;
    case CUDA_ERROR_ASSERT: return cudaErrorAssert;
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: return cudaErrorUnsupportedPtxVersion;
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: return cudaErrorStreamCaptureWrongThread;
    case CUDA_ERROR_OPERATING_SYSTEM: return cudaErrorOperatingSystem;
    default: return cudaErrorUnknown;
    }
}

/* A driver has no such entry point (older than the cuda.h compiled against): kept in a cache
 * so that the lookup is not repeated. */
static char cm__drv_absent;

/* The entry point `symbol`, looked up on first use and kept in *cache (a racing first use looks
 * it up twice and gets the same answer). */
static cudaError_t cm__drv_fn(void *_Atomic *cache, const char *symbol, int version,
                              void **fn) {
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (f == NULL) {
        cudaError_t err = cm__drv_entry(symbol, version, &f);
        if (err == cudaErrorNotSupported) {
            atomic_store_explicit(cache, (void *)&cm__drv_absent, memory_order_release);
            return err;
        }
        if (err != cudaSuccess) return err;
        atomic_store_explicit(cache, f, memory_order_release);
    }
    if (f == (void *)&cm__drv_absent) return cudaErrorNotSupported;
    *fn = f;
    return cudaSuccess;
}

/* In a wrapper: `call` becomes the entry point `name` in the ABI of CUDA `version` (the type
 * PFN_<name>_v<version> of cudaTypedefs.h, asked for with that version), or the wrapper returns
 * why there is none. name and version are only pasted and stringified, never macro-expanded
 * (cuda.h defines some names as macros). */
#define CM__DRV_FN(name, version, call)                                                      \
    static void *_Atomic call##_cache;                                                       \
    void *call##_ptr = NULL;                                                                 \
    do {                                                                                     \
        cudaError_t lookup_ = cm__drv_fn(&call##_cache, #name, version, &call##_ptr);        \
        if (lookup_ != cudaSuccess) return lookup_;                                          \
    } while (0);                                                                             \
    PFN_##name##_v##version call;                                                            \
    memcpy(&call, &call##_ptr, sizeof call) /* object to function pointer, as for dlsym */

cudaError_t cm__drv_ctx_get_current(void **ctx) {
    CM__DRV_FN(cuCtxGetCurrent, 4000, f);
    CUcontext c = NULL;
    cudaError_t err = cm__drv_result(f(&c));
    *ctx = (void *)c;
    return err;
}

cudaError_t cm__drv_ctx_push_current(void *ctx) {
    CM__DRV_FN(cuCtxPushCurrent, 4000, f);
    return cm__drv_result(f((CUcontext)ctx));
}

cudaError_t cm__drv_ctx_pop_current(void **ctx) {
    CM__DRV_FN(cuCtxPopCurrent, 4000, f);
    CUcontext c = NULL;
    cudaError_t err = cm__drv_result(f(&c));
    if (ctx != NULL) *ctx = (void *)c;
    return err;
}

cudaError_t cm__drv_primary_ctx_retain(void **ctx, int device) {
    CM__DRV_FN(cuDevicePrimaryCtxRetain, 7000, f);
    CUcontext c = NULL;
    cudaError_t err = cm__drv_result(f(&c, (CUdevice)device));
    *ctx = (void *)c;
    return err;
}

cudaError_t cm__drv_primary_ctx_state(int device, unsigned int *flags, int *active) {
    CM__DRV_FN(cuDevicePrimaryCtxGetState, 7000, f);
    return cm__drv_result(f((CUdevice)device, flags, active));
}

/* Stream queries through the driver (same meaning as cudaStreamGetDevice / cudaStreamIsCapturing
 * for a stream the runtime created: runtime streams are driver streams). The special streams
 * (0, cudaStreamLegacy, cudaStreamPerThread) are the driver's too. */
static cudaError_t cm__drv_stream_device(cudaStream_t stream, int *device) {
    CM__DRV_FN(cuStreamGetDevice, 12080, f);
    CUdevice d = -1;
    cudaError_t err = cm__drv_result(f((CUstream)stream, &d));
    *device = (int)d;
    return err;
}

cudaError_t cm__drv_stream_get_device(cudaStream_t stream, int *device) {
    cudaError_t err = cm__drv_stream_device(stream, device);
    /* a driver without cuStreamGetDevice (before 12.8): the runtime's query answers */
    return err == cudaErrorNotSupported ? cudaStreamGetDevice(stream, device) : err;
}

cudaError_t cm__drv_stream_get_ctx(cudaStream_t stream, void **ctx) {
    CM__DRV_FN(cuStreamGetCtx, 9020, f);
    CUcontext c = NULL;
    cudaError_t err = cm__drv_result(f((CUstream)stream, &c));
    *ctx = (void *)c;
    return err;
}

/* Stream-ordered allocation and free through the driver: the same operations as
 * cudaMallocFromPoolAsync / cudaFreeAsync (which call them), without the runtime's per-call
 * work, and without a current context on the thread (the stream names the context; a runtime
 * call would first bind the current device's primary context to the thread). Stream 0 is the
 * legacy default stream of the current context, as in the runtime built without per-thread
 * default streams. */
static cudaError_t cm__drv_alloc_pool_async(void **ptr, size_t bytes, cudaMemPool_t pool,
                                            cudaStream_t stream) {
    CM__DRV_FN(cuMemAllocFromPoolAsync, 11020, f);
    CUdeviceptr p = 0;
    cudaError_t err = cm__drv_result(f(&p, bytes, (CUmemoryPool)pool, (CUstream)stream));
    *ptr = (void *)(uintptr_t)p;
    return err;
}

cudaError_t cm__drv_malloc_from_pool_async(void **ptr, size_t bytes, cudaMemPool_t pool,
                                           cudaStream_t stream) {
    cudaError_t err = cm__drv_alloc_pool_async(ptr, bytes, pool, stream);
    return err == cudaErrorNotSupported ? cudaMallocFromPoolAsync(ptr, bytes, pool, stream) : err;
}

static cudaError_t cm__drv_free(void *ptr, cudaStream_t stream) {
    CM__DRV_FN(cuMemFreeAsync, 11020, f);
    return cm__drv_result(f((CUdeviceptr)(uintptr_t)ptr, (CUstream)stream));
}

cudaError_t cm__drv_free_async(void *ptr, cudaStream_t stream) {
    cudaError_t err = cm__drv_free(ptr, stream);
    return err == cudaErrorNotSupported ? cudaFreeAsync(ptr, stream) : err;
}

cudaError_t cm__drv_stream_is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status) {
    CM__DRV_FN(cuStreamIsCapturing, 10000, f);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cudaError_t err = cm__drv_result(f((CUstream)stream, &st));
    *status = st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? cudaStreamCaptureStatusActive
              : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? cudaStreamCaptureStatusInvalidated
                                                           : cudaStreamCaptureStatusNone;
    return err;
}

/* ------------------------------------------------------------------ NVML */

/*
 * libnvidia-ml.so.1 is opened once (pthread_once), on the first NVML call, and never closed:
 * NVML keeps its own state until the process ends. Each function is looked up on its first use
 * and kept, as for the driver's entry points above.
 */
static pthread_once_t cm__nvml_once = PTHREAD_ONCE_INIT;
static void *cm__nvml_lib;
static char cm__nvml_lib_error[256];

static void cm__nvml_open(void) {
    (void)dlerror();
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        size_t n = strlen(why != NULL ? why : "");
        if (n >= sizeof cm__nvml_lib_error) n = sizeof cm__nvml_lib_error - 1;
        memcpy(cm__nvml_lib_error, why != NULL ? why : "", n);
        cm__nvml_lib_error[n] = '\0';
        return;
    }
    cm__nvml_lib = h;
}

const char *cm__nvml_load_error(void) {
    return cm__nvml_lib_error;
}

static char cm__nvml_absent;

/* The NVML function `symbol`, looked up on first use and kept in *cache. */
static cm__nvml_return_t cm__nvml_fn(void *_Atomic *cache, const char *symbol, void **fn) {
    void *f = atomic_load_explicit(cache, memory_order_acquire);
    if (f == NULL) {
        (void)pthread_once(&cm__nvml_once, cm__nvml_open);
        if (cm__nvml_lib == NULL) return CM__NVML_ERROR_LIBRARY_NOT_FOUND;
        f = dlsym(cm__nvml_lib, symbol);
        atomic_store_explicit(cache, f != NULL ? f : (void *)&cm__nvml_absent,
                              memory_order_release);
        if (f == NULL) return CM__NVML_ERROR_FUNCTION_NOT_FOUND;
    }
    if (f == (void *)&cm__nvml_absent) return CM__NVML_ERROR_FUNCTION_NOT_FOUND;
    *fn = f;
    return CM__NVML_SUCCESS;
}

/* In a wrapper: `call` becomes NVML's `symbol` of type `type`, or the wrapper returns why there
 * is none. */
#define CM__NVML_FN(type, symbol, call)                                                      \
    static void *_Atomic call##_cache;                                                       \
    void *call##_ptr = NULL;                                                                 \
    do {                                                                                     \
        cm__nvml_return_t lookup_ = cm__nvml_fn(&call##_cache, symbol, &call##_ptr);         \
        if (lookup_ != CM__NVML_SUCCESS) return lookup_;                                     \
    } while (0);                                                                             \
    type call;                                                                               \
    memcpy(&call, &call##_ptr, sizeof call) /* object to function pointer, as for dlsym */

typedef cm__nvml_return_t (*cm__nvml_fn_void)(void);
typedef cm__nvml_return_t (*cm__nvml_fn_dev_uint)(cm__nvml_device_t, unsigned int *);
typedef cm__nvml_return_t (*cm__nvml_fn_dev_uint2)(cm__nvml_device_t, unsigned int *,
                                                   unsigned int *);
typedef cm__nvml_return_t (*cm__nvml_fn_dev_ull)(cm__nvml_device_t, unsigned long long *);

cm__nvml_return_t cm__nvml_init(void) {
    CM__NVML_FN(cm__nvml_fn_void, "nvmlInit_v2", f);
    return f();
}

cm__nvml_return_t cm__nvml_shutdown(void) {
    CM__NVML_FN(cm__nvml_fn_void, "nvmlShutdown", f);
    return f();
}

typedef cm__nvml_return_t (*cm__nvml_fn_driver_version)(char *, unsigned int);
cm__nvml_return_t cm__nvml_system_driver_version(char *version, unsigned int length) {
    CM__NVML_FN(cm__nvml_fn_driver_version, "nvmlSystemGetDriverVersion", f);
    return f(version, length);
}

typedef cm__nvml_return_t (*cm__nvml_fn_by_bus_id)(const char *, cm__nvml_device_t *);
cm__nvml_return_t cm__nvml_handle_by_pci_bus_id(const char *pci_bus_id,
                                                cm__nvml_device_t *device) {
    CM__NVML_FN(cm__nvml_fn_by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2", f);
    return f(pci_bus_id, device);
}

typedef cm__nvml_return_t (*cm__nvml_fn_processes)(cm__nvml_device_t, unsigned int *,
                                                   cm__nvml_process_info_t *);
cm__nvml_return_t cm__nvml_compute_processes(cm__nvml_device_t device, unsigned int *count,
                                             cm__nvml_process_info_t *infos) {
    CM__NVML_FN(cm__nvml_fn_processes, "nvmlDeviceGetComputeRunningProcesses_v3", f);
    return f(device, count, infos);
}

cm__nvml_return_t cm__nvml_persistence_mode(cm__nvml_device_t device, unsigned int *mode) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetPersistenceMode", f);
    return f(device, mode);
}

cm__nvml_return_t cm__nvml_compute_mode(cm__nvml_device_t device, unsigned int *mode) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetComputeMode", f);
    return f(device, mode);
}

cm__nvml_return_t cm__nvml_mig_mode(cm__nvml_device_t device, unsigned int *current,
                                    unsigned int *pending) {
    CM__NVML_FN(cm__nvml_fn_dev_uint2, "nvmlDeviceGetMigMode", f);
    return f(device, current, pending);
}

cm__nvml_return_t cm__nvml_ecc_mode(cm__nvml_device_t device, unsigned int *current,
                                    unsigned int *pending) {
    CM__NVML_FN(cm__nvml_fn_dev_uint2, "nvmlDeviceGetEccMode", f);
    return f(device, current, pending);
}

typedef cm__nvml_return_t (*cm__nvml_fn_ecc_errors)(cm__nvml_device_t, unsigned int, unsigned int,
                                                    unsigned long long *);
cm__nvml_return_t cm__nvml_total_ecc_errors(cm__nvml_device_t device, unsigned int error_type,
                                            unsigned int counter_type, unsigned long long *count) {
    CM__NVML_FN(cm__nvml_fn_ecc_errors, "nvmlDeviceGetTotalEccErrors", f);
    return f(device, error_type, counter_type, count);
}

typedef cm__nvml_return_t (*cm__nvml_fn_retired)(cm__nvml_device_t, unsigned int, unsigned int *,
                                                 unsigned long long *);
cm__nvml_return_t cm__nvml_retired_pages(cm__nvml_device_t device, unsigned int cause,
                                         unsigned int *count, unsigned long long *addresses) {
    CM__NVML_FN(cm__nvml_fn_retired, "nvmlDeviceGetRetiredPages", f);
    return f(device, cause, count, addresses);
}

cm__nvml_return_t cm__nvml_retired_pages_pending(cm__nvml_device_t device, unsigned int *pending) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetRetiredPagesPendingStatus", f);
    return f(device, pending);
}

typedef cm__nvml_return_t (*cm__nvml_fn_remapped)(cm__nvml_device_t, unsigned int *,
                                                  unsigned int *, unsigned int *, unsigned int *);
cm__nvml_return_t cm__nvml_remapped_rows(cm__nvml_device_t device, unsigned int *correctable,
                                         unsigned int *uncorrectable, unsigned int *pending,
                                         unsigned int *failure) {
    CM__NVML_FN(cm__nvml_fn_remapped, "nvmlDeviceGetRemappedRows", f);
    return f(device, correctable, uncorrectable, pending, failure);
}

/* nvmlDeviceGetCurrentClocksEventReasons (R535 and later), else the older name of the same
 * function and bits, nvmlDeviceGetCurrentClocksThrottleReasons. */
static cm__nvml_return_t cm__nvml_clocks_throttle_reasons(cm__nvml_device_t device,
                                                          unsigned long long *reasons) {
    CM__NVML_FN(cm__nvml_fn_dev_ull, "nvmlDeviceGetCurrentClocksThrottleReasons", f);
    return f(device, reasons);
}

static cm__nvml_return_t cm__nvml_clocks_event(cm__nvml_device_t device,
                                               unsigned long long *reasons) {
    CM__NVML_FN(cm__nvml_fn_dev_ull, "nvmlDeviceGetCurrentClocksEventReasons", f);
    return f(device, reasons);
}

cm__nvml_return_t cm__nvml_clocks_event_reasons(cm__nvml_device_t device,
                                                unsigned long long *reasons) {
    cm__nvml_return_t r = cm__nvml_clocks_event(device, reasons);
    if (r == CM__NVML_ERROR_FUNCTION_NOT_FOUND) r = cm__nvml_clocks_throttle_reasons(device, reasons);
    return r;
}

typedef cm__nvml_return_t (*cm__nvml_fn_temperature)(cm__nvml_device_t, unsigned int,
                                                     unsigned int *);
cm__nvml_return_t cm__nvml_temperature(cm__nvml_device_t device, unsigned int sensor,
                                       unsigned int *celsius) {
    CM__NVML_FN(cm__nvml_fn_temperature, "nvmlDeviceGetTemperature", f);
    return f(device, sensor, celsius);
}

cm__nvml_return_t cm__nvml_power_usage(cm__nvml_device_t device, unsigned int *milliwatts) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetPowerUsage", f);
    return f(device, milliwatts);
}

cm__nvml_return_t cm__nvml_power_limit(cm__nvml_device_t device, unsigned int *milliwatts) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetEnforcedPowerLimit", f);
    return f(device, milliwatts);
}

cm__nvml_return_t cm__nvml_pcie_link_generation(cm__nvml_device_t device, unsigned int *gen) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetCurrPcieLinkGeneration", f);
    return f(device, gen);
}

cm__nvml_return_t cm__nvml_pcie_link_width(cm__nvml_device_t device, unsigned int *width) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetCurrPcieLinkWidth", f);
    return f(device, width);
}

cm__nvml_return_t cm__nvml_pcie_max_link_generation(cm__nvml_device_t device, unsigned int *gen) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetMaxPcieLinkGeneration", f);
    return f(device, gen);
}

cm__nvml_return_t cm__nvml_pcie_max_link_width(cm__nvml_device_t device, unsigned int *width) {
    CM__NVML_FN(cm__nvml_fn_dev_uint, "nvmlDeviceGetMaxPcieLinkWidth", f);
    return f(device, width);
}
