/*
 * The one table of every CUDA runtime, CUDA driver and NCCL call the library makes (private).
 *
 * Every call in src/ goes through cm__cuda.<member>(...); nothing calls a cuda*, cu* or nccl*
 * function directly (the ctest test check_cuda_calls, tests/check_calls.cmake, fails otherwise). Each
 * member defaults to the real function; host tests replace members to simulate a GPU
 * (tests/host/test_buffer_fake.h, test_stream_fake.h) or to fail one call (fault injection),
 * and restore the table after (cm__cuda_restore()).
 *
 * The driver calls (cuCtxGetCurrent, cuCtxPushCurrent, cuCtxPopCurrent, cuDevicePrimaryCtxRetain,
 * cuDevicePrimaryCtxGetState; cuStreamGetCtx, cuStreamIsCapturing and cuStreamGetDevice for the
 * stream check of every stream-ordered call; cuMemAllocFromPoolAsync and cuMemFreeAsync for
 * stream-ordered memory) are reached through cudaGetDriverEntryPointByVersion on first use, so
 * the library links only cudart; with no driver they return cudaErrorInsufficientDriver. They
 * are used where the runtime's version of the call costs several times the driver's on the
 * host (bench/NOTES-core.md has the figures) or would bind a context to the calling thread.
 * They take void * for CUcontext so that no driver header is needed here.
 *
 * NVML (NVIDIA's management library: the processes holding a GPU's memory, its health) has a
 * table of its own, cm__nvml, built the same way: every NVML call goes through it and host
 * tests replace its members (tests/host/test_nvml.c; test_buffer_fake.h makes NVML absent). Its
 * members are wrappers of the functions named in the X(...) comments: calls.c opens
 * libnvidia-ml.so.1 with dlopen() once, on first use, and looks each function up then, so
 * nothing NVML is needed to build or to link. They return NVML's codes (core/nvml_api.h):
 * CM__NVML_ERROR_LIBRARY_NOT_FOUND when the library cannot be loaded (cm__nvml_load_error()
 * says why), CM__NVML_ERROR_FUNCTION_NOT_FOUND when this driver's NVML lacks the function.
 * Only core/nvml_query.c calls them. A table apart from cm__cuda: NVML is optional (its absence
 * is data, never a failure of a library call), so the CUDA table's walk of failing entries
 * (tests/host/test_call_table_faults.c) does not apply to it.
 */
#ifndef CUDAMODEL_SRC_CORE_CALLS_H
#define CUDAMODEL_SRC_CORE_CALLS_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#if CM_HAVE_NCCL
#  include <nccl.h>
#endif

#include "nvml_api.h"

/* Library launchers that stand in the table like CUDA calls (kernels/kernels.h). */
cudaError_t cm__kernel_fill(void *ptr, size_t count, const void *pattern, size_t pattern_bytes,
                            cudaStream_t stream);
cudaError_t cm__drv_ctx_get_current(void **ctx);
cudaError_t cm__drv_ctx_push_current(void *ctx);
cudaError_t cm__drv_ctx_pop_current(void **ctx);
cudaError_t cm__drv_primary_ctx_retain(void **ctx, int device);
cudaError_t cm__drv_primary_ctx_state(int device, unsigned int *flags, int *active);
cudaError_t cm__drv_stream_get_device(cudaStream_t stream, int *device);
cudaError_t cm__drv_stream_is_capturing(cudaStream_t stream, enum cudaStreamCaptureStatus *status);
cudaError_t cm__drv_stream_get_ctx(cudaStream_t stream, void **ctx);
cudaError_t cm__drv_malloc_from_pool_async(void **ptr, size_t bytes, cudaMemPool_t pool,
                                           cudaStream_t stream);
cudaError_t cm__drv_free_async(void *ptr, cudaStream_t stream);

/* NVML, loaded at run time (the NVML function each wraps is named in the table below). */
cm__nvml_return_t cm__nvml_init(void);
cm__nvml_return_t cm__nvml_shutdown(void);
cm__nvml_return_t cm__nvml_system_driver_version(char *version, unsigned int length);
cm__nvml_return_t cm__nvml_handle_by_pci_bus_id(const char *pci_bus_id, cm__nvml_device_t *device);
cm__nvml_return_t cm__nvml_compute_processes(cm__nvml_device_t device, unsigned int *count,
                                             cm__nvml_process_info_t *infos);
cm__nvml_return_t cm__nvml_persistence_mode(cm__nvml_device_t device, unsigned int *mode);
cm__nvml_return_t cm__nvml_compute_mode(cm__nvml_device_t device, unsigned int *mode);
cm__nvml_return_t cm__nvml_mig_mode(cm__nvml_device_t device, unsigned int *current,
                                    unsigned int *pending);
cm__nvml_return_t cm__nvml_ecc_mode(cm__nvml_device_t device, unsigned int *current,
                                    unsigned int *pending);
cm__nvml_return_t cm__nvml_total_ecc_errors(cm__nvml_device_t device, unsigned int error_type,
                                            unsigned int counter_type, unsigned long long *count);
cm__nvml_return_t cm__nvml_retired_pages(cm__nvml_device_t device, unsigned int cause,
                                         unsigned int *count, unsigned long long *addresses);
cm__nvml_return_t cm__nvml_retired_pages_pending(cm__nvml_device_t device, unsigned int *pending);
cm__nvml_return_t cm__nvml_remapped_rows(cm__nvml_device_t device, unsigned int *correctable,
                                         unsigned int *uncorrectable, unsigned int *pending,
                                         unsigned int *failure);
cm__nvml_return_t cm__nvml_clocks_event_reasons(cm__nvml_device_t device,
                                                unsigned long long *reasons);
cm__nvml_return_t cm__nvml_temperature(cm__nvml_device_t device, unsigned int sensor,
                                       unsigned int *celsius);
cm__nvml_return_t cm__nvml_power_usage(cm__nvml_device_t device, unsigned int *milliwatts);
cm__nvml_return_t cm__nvml_power_limit(cm__nvml_device_t device, unsigned int *milliwatts);
cm__nvml_return_t cm__nvml_pcie_link_generation(cm__nvml_device_t device, unsigned int *gen);
cm__nvml_return_t cm__nvml_pcie_link_width(cm__nvml_device_t device, unsigned int *width);
cm__nvml_return_t cm__nvml_pcie_max_link_generation(cm__nvml_device_t device, unsigned int *gen);
cm__nvml_return_t cm__nvml_pcie_max_link_width(cm__nvml_device_t device, unsigned int *width);

/** Why libnvidia-ml.so.1 could not be loaded (dlerror()), "" when it was or was never tried. */
const char *cm__nvml_load_error(void);

/* X(member, function): the member's type is the function's. */
#define CM__CUDA_CALLS(X)                                                                    \
    /* versions, devices, contexts */                                                        \
    X(driver_get_version, cudaDriverGetVersion)                                              \
    X(runtime_get_version, cudaRuntimeGetVersion)                                            \
    X(get_device_count, cudaGetDeviceCount)                                                  \
    X(get_device, cudaGetDevice)                                                             \
    X(get_device_properties, cudaGetDeviceProperties)                                        \
    X(device_get_attribute, cudaDeviceGetAttribute)                                          \
    X(device_get_p2p_attribute, cudaDeviceGetP2PAttribute)                                   \
    X(device_synchronize, cudaDeviceSynchronize)                                             \
    X(device_can_access_peer, cudaDeviceCanAccessPeer)                                       \
    X(device_enable_peer_access, cudaDeviceEnablePeerAccess)                                 \
    X(ctx_get_current, cm__drv_ctx_get_current)                                              \
    X(ctx_push_current, cm__drv_ctx_push_current)                                            \
    X(ctx_pop_current, cm__drv_ctx_pop_current)                                              \
    X(primary_ctx_retain, cm__drv_primary_ctx_retain)                                        \
    /* errors */                                                                             \
    X(get_last_error, cudaGetLastError)                                                      \
    X(get_error_name, cudaGetErrorName)                                                      \
    X(get_error_string, cudaGetErrorString)                                                  \
    /* memory */                                                                             \
    X(mem_get_info, cudaMemGetInfo)                                                          \
    X(device_malloc, cudaMalloc)                                                             \
    X(device_free, cudaFree)                                                                 \
    X(malloc_async, cudaMallocAsync)                                                         \
    X(mem_pool_create, cudaMemPoolCreate)                                                    \
    X(mem_pool_destroy, cudaMemPoolDestroy)                                                  \
    X(mem_pool_set_attribute, cudaMemPoolSetAttribute)                                       \
    X(mem_pool_get_attribute, cudaMemPoolGetAttribute)                                       \
    X(mem_pool_trim_to, cudaMemPoolTrimTo)                                                   \
    X(mem_pool_set_access, cudaMemPoolSetAccess)                                             \
    X(malloc_from_pool_async, cm__drv_malloc_from_pool_async)                                \
    X(free_async, cm__drv_free_async)                                                        \
    X(host_alloc, cudaHostAlloc)                                                             \
    X(free_host, cudaFreeHost)                                                               \
    X(host_register, cudaHostRegister)                                                       \
    X(host_unregister, cudaHostUnregister)                                                   \
    X(host_get_device_pointer, cudaHostGetDevicePointer)                                     \
    X(pointer_get_attributes, cudaPointerGetAttributes)                                      \
    X(memcpy_sync, cudaMemcpy)                                                               \
    X(memcpy_async, cudaMemcpyAsync)                                                         \
    X(memcpy_2d_async, cudaMemcpy2DAsync)                                                    \
    X(memcpy_peer, cudaMemcpyPeer)                                                           \
    X(memcpy_peer_async, cudaMemcpyPeerAsync)                                                \
    X(memset_async, cudaMemsetAsync)                                                         \
    X(fill_async, cm__kernel_fill)                                                           \
    /* memory spaces (memspace.h): symbols, pitched buffers, arrays, textures, managed */    \
    X(get_symbol_size, cudaGetSymbolSize)                                                    \
    X(get_symbol_address, cudaGetSymbolAddress)                                              \
    X(memcpy_to_symbol_async, cudaMemcpyToSymbolAsync)                                       \
    X(memcpy_from_symbol_async, cudaMemcpyFromSymbolAsync)                                   \
    X(malloc_pitch, cudaMallocPitch)                                                         \
    X(malloc_array, cudaMallocArray)                                                         \
    X(free_array, cudaFreeArray)                                                             \
    X(memcpy_2d_to_array_async, cudaMemcpy2DToArrayAsync)                                    \
    X(memcpy_2d_from_array_async, cudaMemcpy2DFromArrayAsync)                                \
    X(create_texture_object, cudaCreateTextureObject)                                        \
    X(destroy_texture_object, cudaDestroyTextureObject)                                      \
    X(create_surface_object, cudaCreateSurfaceObject)                                        \
    X(destroy_surface_object, cudaDestroySurfaceObject)                                      \
    X(malloc_managed, cudaMallocManaged)                                                     \
    X(mem_prefetch_async, cudaMemPrefetchAsync)                                              \
    X(mem_advise, cudaMemAdvise)                                                             \
    /* streams, events, graphs */                                                            \
    X(priority_range, cudaDeviceGetStreamPriorityRange)                                      \
    X(stream_create, cudaStreamCreateWithPriority)                                           \
    X(stream_destroy, cudaStreamDestroy)                                                     \
    X(stream_get_device, cm__drv_stream_get_device)                                          \
    X(stream_synchronize, cudaStreamSynchronize)                                             \
    X(stream_query, cudaStreamQuery)                                                         \
    X(stream_wait_event, cudaStreamWaitEvent)                                                \
    X(stream_is_capturing, cm__drv_stream_is_capturing)                                      \
    X(stream_get_ctx, cm__drv_stream_get_ctx)                                                \
    X(launch_host_func, cudaLaunchHostFunc)                                                  \
    X(event_create, cudaEventCreateWithFlags)                                                \
    X(event_destroy, cudaEventDestroy)                                                       \
    X(event_record, cudaEventRecord)                                                         \
    X(event_synchronize, cudaEventSynchronize)                                               \
    X(event_query, cudaEventQuery)                                                           \
    X(event_elapsed, cudaEventElapsedTime)                                                   \
    X(begin_capture, cudaStreamBeginCapture)                                                 \
    X(end_capture, cudaStreamEndCapture)                                                     \
    X(graph_instantiate, cudaGraphInstantiate)                                               \
    X(graph_launch, cudaGraphLaunch)                                                         \
    X(graph_get_nodes, cudaGraphGetNodes)                                                    \
    X(graph_destroy, cudaGraphDestroy)                                                       \
    X(graph_exec_destroy, cudaGraphExecDestroy)                                              \
    /* kernels */                                                                            \
    X(func_get_attributes, cudaFuncGetAttributes)                                            \
    X(func_get_name, cudaFuncGetName)                                                        \
    X(launch_kernel_ex, cudaLaunchKernelExC)

#if CM_HAVE_NCCL
#  define CM__NCCL_CALLS(X)                                                                  \
    X(nccl_get_version, ncclGetVersion)                                                      \
    X(nccl_get_unique_id, ncclGetUniqueId)                                                   \
    X(nccl_comm_init_all, ncclCommInitAll)                                                   \
    X(nccl_comm_init_rank, ncclCommInitRank)                                                 \
    X(nccl_comm_destroy, ncclCommDestroy)                                                    \
    X(nccl_comm_abort, ncclCommAbort)                                                        \
    X(nccl_comm_get_async_error, ncclCommGetAsyncError)                                      \
    X(nccl_get_error_string, ncclGetErrorString)                                             \
    X(nccl_get_last_error, ncclGetLastError)                                                 \
    X(nccl_group_start, ncclGroupStart)                                                      \
    X(nccl_group_end, ncclGroupEnd)                                                          \
    X(nccl_all_reduce, ncclAllReduce)                                                        \
    X(nccl_broadcast, ncclBroadcast)                                                         \
    X(nccl_all_gather, ncclAllGather)
#else
#  define CM__NCCL_CALLS(X)
#endif

/* NVML (the management library), loaded at run time: each wrapper calls the NVML function
 * named in the comment above it (calls.c). */
#define CM__NVML_CALLS(X)                                                                    \
    /* nvmlInit_v2 */                                                                        \
    X(init, cm__nvml_init)                                                                   \
    /* nvmlShutdown */                                                                       \
    X(shutdown, cm__nvml_shutdown)                                                           \
    /* nvmlSystemGetDriverVersion */                                                         \
    X(driver_version, cm__nvml_system_driver_version)                                        \
    /* nvmlDeviceGetHandleByPciBusId_v2 */                                                   \
    X(handle_by_pci_bus_id, cm__nvml_handle_by_pci_bus_id)                                   \
    /* nvmlDeviceGetComputeRunningProcesses_v3 */                                            \
    X(compute_processes, cm__nvml_compute_processes)                                         \
    /* nvmlDeviceGetPersistenceMode */                                                       \
    X(persistence_mode, cm__nvml_persistence_mode)                                           \
    /* nvmlDeviceGetComputeMode */                                                           \
    X(compute_mode, cm__nvml_compute_mode)                                                   \
    /* nvmlDeviceGetMigMode */                                                               \
    X(mig_mode, cm__nvml_mig_mode)                                                           \
    /* nvmlDeviceGetEccMode */                                                               \
    X(ecc_mode, cm__nvml_ecc_mode)                                                           \
    /* nvmlDeviceGetTotalEccErrors */                                                        \
    X(total_ecc_errors, cm__nvml_total_ecc_errors)                                           \
    /* nvmlDeviceGetRetiredPages */                                                          \
    X(retired_pages, cm__nvml_retired_pages)                                                 \
    /* nvmlDeviceGetRetiredPagesPendingStatus */                                             \
    X(retired_pages_pending, cm__nvml_retired_pages_pending)                                 \
    /* nvmlDeviceGetRemappedRows */                                                          \
    X(remapped_rows, cm__nvml_remapped_rows)                                                 \
    /* nvmlDeviceGetCurrentClocksEventReasons */                                             \
    X(clocks_event_reasons, cm__nvml_clocks_event_reasons)                                   \
    /* nvmlDeviceGetTemperature */                                                           \
    X(temperature, cm__nvml_temperature)                                                     \
    /* nvmlDeviceGetPowerUsage */                                                            \
    X(power_usage, cm__nvml_power_usage)                                                     \
    /* nvmlDeviceGetEnforcedPowerLimit */                                                    \
    X(power_limit, cm__nvml_power_limit)                                                     \
    /* nvmlDeviceGetCurrPcieLinkGeneration */                                                \
    X(pcie_link_generation, cm__nvml_pcie_link_generation)                                   \
    /* nvmlDeviceGetCurrPcieLinkWidth */                                                     \
    X(pcie_link_width, cm__nvml_pcie_link_width)                                             \
    /* nvmlDeviceGetMaxPcieLinkGeneration */                                                 \
    X(pcie_max_link_generation, cm__nvml_pcie_max_link_generation)                           \
    /* nvmlDeviceGetMaxPcieLinkWidth */                                                      \
    X(pcie_max_link_width, cm__nvml_pcie_max_link_width)

#define CM__CALL_MEMBER(member, fn) __typeof__(&fn) member;
typedef struct cm__cuda {
    CM__CUDA_CALLS(CM__CALL_MEMBER)
    CM__NCCL_CALLS(CM__CALL_MEMBER)
} cm__cuda_t;
typedef struct cm__nvml_calls {
    CM__NVML_CALLS(CM__CALL_MEMBER)
} cm__nvml_calls_t;
#undef CM__CALL_MEMBER

/** The table the library calls through. */
extern cm__cuda_t cm__cuda;
/** The real functions (what cm__cuda holds until a test changes it). */
extern const cm__cuda_t cm__cuda_real;

/** Put every member back to the real function (tests), NVML's table's too. */
void cm__cuda_restore(void);

/** Entries of the table: count, the i-th member's name and the name of the function it calls
 *  ("cudaMalloc"), and the address of the i-th member (tests that walk the table). */
size_t cm__cuda_count(void);
const char *cm__cuda_member_name(size_t i);
const char *cm__cuda_function_name(size_t i);
void **cm__cuda_member_slot(size_t i);

/** The NVML table the library calls through, and its real functions (the wrappers). */
extern cm__nvml_calls_t cm__nvml;
extern const cm__nvml_calls_t cm__nvml_real;
/** Entries of the NVML table, as for cm__cuda (tests). */
size_t cm__nvml_count(void);
const char *cm__nvml_member_name(size_t i);
const char *cm__nvml_function_name(size_t i);
void **cm__nvml_member_slot(size_t i);

#endif /* CUDAMODEL_SRC_CORE_CALLS_H */
