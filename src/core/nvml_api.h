/*
 * The part of NVIDIA's management library (NVML, libnvidia-ml.so.1) the library uses, declared
 * from NVIDIA's documented API (NVML API Reference, nvml.h of R525 and later) under our own
 * names, so that no NVML header or library is needed to build (private).
 *
 * NVML is loaded at run time (core/calls.c: dlopen("libnvidia-ml.so.1") on first use) and
 * reached only through the call table (core/calls.h), whose NVML members have the types below.
 * The names carry a cm__ prefix so that a test can include NVIDIA's nvml.h beside this header
 * and compare layouts. Enumerations are passed as unsigned int: NVML's enums are C enums with
 * non-negative values, passed and stored like unsigned int on every ABI the library supports.
 */
#ifndef CUDAMODEL_SRC_CORE_NVML_API_H
#define CUDAMODEL_SRC_CORE_NVML_API_H

/** nvmlReturn_t. */
typedef int cm__nvml_return_t;
/** nvmlDevice_t: an opaque handle. */
typedef struct cm__nvml_device_st *cm__nvml_device_t;

/* nvmlReturn_t values */
#define CM__NVML_SUCCESS 0
#define CM__NVML_ERROR_UNINITIALIZED 1
#define CM__NVML_ERROR_INVALID_ARGUMENT 2
#define CM__NVML_ERROR_NOT_SUPPORTED 3
#define CM__NVML_ERROR_NO_PERMISSION 4
#define CM__NVML_ERROR_ALREADY_INITIALIZED 5
#define CM__NVML_ERROR_NOT_FOUND 6
#define CM__NVML_ERROR_INSUFFICIENT_SIZE 7
#define CM__NVML_ERROR_INSUFFICIENT_POWER 8
#define CM__NVML_ERROR_DRIVER_NOT_LOADED 9
#define CM__NVML_ERROR_TIMEOUT 10
#define CM__NVML_ERROR_IRQ_ISSUE 11
#define CM__NVML_ERROR_LIBRARY_NOT_FOUND 12
#define CM__NVML_ERROR_FUNCTION_NOT_FOUND 13
#define CM__NVML_ERROR_CORRUPTED_INFOROM 14
#define CM__NVML_ERROR_GPU_IS_LOST 15
#define CM__NVML_ERROR_RESET_REQUIRED 16
#define CM__NVML_ERROR_OPERATING_SYSTEM 17
#define CM__NVML_ERROR_LIB_RM_VERSION_MISMATCH 18
#define CM__NVML_ERROR_IN_USE 19
#define CM__NVML_ERROR_MEMORY 20
#define CM__NVML_ERROR_NO_DATA 21
#define CM__NVML_ERROR_UNKNOWN 999

/** nvmlProcessInfo_t (nvmlProcessInfo_v2_t), as filled by nvmlDeviceGetComputeRunningProcesses_v3:
 *  24 bytes on LP64 (4 bytes of padding after pid). */
typedef struct cm__nvml_process_info {
    unsigned int pid;                /* in the PID namespace the driver reports (see nvml_query.c) */
    unsigned long long usedGpuMemory; /* bytes; CM__NVML_VALUE_NOT_AVAILABLE when unknown */
    unsigned int gpuInstanceId;      /* MIG instance, 0xFFFFFFFF outside MIG */
    unsigned int computeInstanceId;
} cm__nvml_process_info_t;

/** NVML_VALUE_NOT_AVAILABLE: a usedGpuMemory NVML cannot report. */
#define CM__NVML_VALUE_NOT_AVAILABLE (~0ull)

/** NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE. */
#define CM__NVML_DRIVER_VERSION_BUFFER_SIZE 80

/* nvmlEnableState_t */
#define CM__NVML_FEATURE_DISABLED 0u
#define CM__NVML_FEATURE_ENABLED 1u

/* nvmlComputeMode_t */
#define CM__NVML_COMPUTEMODE_DEFAULT 0u
#define CM__NVML_COMPUTEMODE_EXCLUSIVE_THREAD 1u /* deprecated; treated as exclusive-process */
#define CM__NVML_COMPUTEMODE_PROHIBITED 2u
#define CM__NVML_COMPUTEMODE_EXCLUSIVE_PROCESS 3u

/* MIG modes (NVML_DEVICE_MIG_DISABLE / _ENABLE) */
#define CM__NVML_MIG_DISABLE 0u
#define CM__NVML_MIG_ENABLE 1u

/* nvmlMemoryErrorType_t and nvmlEccCounterType_t */
#define CM__NVML_MEMORY_ERROR_TYPE_CORRECTED 0u
#define CM__NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1u
#define CM__NVML_VOLATILE_ECC 0u  /* since the last driver load */
#define CM__NVML_AGGREGATE_ECC 1u /* over the GPU's life */

/* nvmlPageRetirementCause_t */
#define CM__NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS 0u
#define CM__NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR 1u

/* nvmlTemperatureSensors_t */
#define CM__NVML_TEMPERATURE_GPU 0u

/* nvmlClocksEventReasons (the same bits as the older nvmlClocksThrottleReasons) */
#define CM__NVML_CLOCKS_EVENT_GPU_IDLE 0x0000000000000001ull
#define CM__NVML_CLOCKS_EVENT_APPLICATIONS_CLOCKS_SETTING 0x0000000000000002ull
#define CM__NVML_CLOCKS_EVENT_SW_POWER_CAP 0x0000000000000004ull
#define CM__NVML_CLOCKS_EVENT_HW_SLOWDOWN 0x0000000000000008ull
#define CM__NVML_CLOCKS_EVENT_SYNC_BOOST 0x0000000000000010ull
#define CM__NVML_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN 0x0000000000000020ull
#define CM__NVML_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN 0x0000000000000040ull
#define CM__NVML_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN 0x0000000000000080ull
#define CM__NVML_CLOCKS_EVENT_DISPLAY_CLOCK_SETTING 0x0000000000000100ull

#endif /* CUDAMODEL_SRC_CORE_NVML_API_H */
