/*
 * Every cudaError_t of the CUDA 13 runtime: the status it maps to, whether it loses the
 * context (sticky), and a hint that says how to fix it. tests/host/test_cuda_errors.c walks
 * the enum in the toolkit's driver_types.h and checks that each value has an entry here.
 */
#include "cuda_errors.h"

#include <stddef.h>

#define CM__E(code, status, sticky, hint) {code, #code, status, sticky, hint}

#define H_ARG "check each argument of the named call against its documentation; "
#define H_RESTART \
    "the CUDA context is lost: restart the process. To find the faulting kernel run with " \
    "CUDAMODEL_SYNC=1 (or CUDA_LAUNCH_BLOCKING=1) and under compute-sanitizer"
#define H_DEPRECATED "this error is deprecated and no longer returned by CUDA 13; "
#define H_CAPTURE \
    "during stream capture only asynchronous work on the capturing stream (and streams joined " \
    "to it by events) is allowed: move synchronizing calls, legacy-stream work and queries out " \
    "of the capture region"
#define H_MPS "the MPS server refused or lost this client: check nvidia-cuda-mps-control and its log"

static const cm__cuda_error_entry_t cm__cuda_error_table[] = {
    CM__E(cudaSuccess, CM_OK, false, "no error"),
    CM__E(cudaErrorInvalidValue, CM_ERROR_INVALID_ARGUMENT, false,
          H_ARG "typical causes are a NULL or already freed pointer, a size or count of 0 where "
                "it is not allowed, a block of more than 1024 threads, or a value out of range"),
    CM__E(cudaErrorMemoryAllocation, CM_ERROR_DEVICE_OUT_OF_MEMORY, false,
          "free device memory you no longer need, process the data in smaller batches, or check "
          "with nvidia-smi which other processes hold memory on this GPU"),
    CM__E(cudaErrorInitializationError, CM_ERROR_CUDA, false,
          "the driver could not initialise CUDA: run nvidia-smi; after a driver update reboot so "
          "the kernel module matches the user-space driver"),
    CM__E(cudaErrorCudartUnloading, CM_ERROR_CUDA, false,
          "a CUDA call ran while the process was exiting and the runtime was already unloaded: "
          "release GPU resources before exit (not from static destructors or atexit handlers)"),
    CM__E(cudaErrorProfilerDisabled, CM_ERROR_NOT_SUPPORTED, false,
          "profiling APIs were called while no profiler is attached; run under a profiler or "
          "remove the cudaProfilerStart/Stop calls"),
    CM__E(cudaErrorProfilerNotInitialized, CM_ERROR_CUDA, false,
          H_DEPRECATED "remove the profiler initialisation call"),
    CM__E(cudaErrorProfilerAlreadyStarted, CM_ERROR_CUDA, false,
          H_DEPRECATED "cudaProfilerStart was called twice"),
    CM__E(cudaErrorProfilerAlreadyStopped, CM_ERROR_CUDA, false,
          H_DEPRECATED "cudaProfilerStop was called twice"),
    CM__E(cudaErrorInvalidConfiguration, CM_ERROR_INVALID_LAUNCH, false,
          "the launch configuration breaks a device limit (more than 1024 threads per block, a "
          "block or grid dimension too large or 0, too much shared memory): compare it with the "
          "limits cudamodel-doctor prints"),
    CM__E(cudaErrorInvalidPitchValue, CM_ERROR_INVALID_ARGUMENT, false,
          "a pitch is smaller than the row width or larger than the device's maximum pitch: use "
          "the pitch cudaMallocPitch returned"),
    CM__E(cudaErrorInvalidSymbol, CM_ERROR_INVALID_ARGUMENT, false,
          "pass the __device__/__constant__ variable itself (not a string or a host copy) and "
          "make sure it is defined in the same binary that makes the call"),
    CM__E(cudaErrorInvalidHostPointer, CM_ERROR_INVALID_ARGUMENT, false,
          "a host pointer was expected: pass host memory (the copy's direction may be reversed)"),
    CM__E(cudaErrorInvalidDevicePointer, CM_ERROR_INVALID_ARGUMENT, false,
          "a device pointer was expected: pass memory from cudaMalloc (or a library buffer), not a "
          "host pointer, and check the copy's direction"),
    CM__E(cudaErrorInvalidTexture, CM_ERROR_INVALID_ARGUMENT, false,
          "the texture object is invalid: create it with cudaCreateTextureObject and keep its "
          "array or memory alive while it is used"),
    CM__E(cudaErrorInvalidTextureBinding, CM_ERROR_INVALID_ARGUMENT, false,
          "the texture is not bound to valid memory: recreate the texture object"),
    CM__E(cudaErrorInvalidChannelDescriptor, CM_ERROR_INVALID_ARGUMENT, false,
          "the channel format descriptor is not supported: check cudaCreateChannelDesc's widths "
          "and kind"),
    CM__E(cudaErrorInvalidMemcpyDirection, CM_ERROR_INVALID_ARGUMENT, false,
          "the cudaMemcpyKind does not match the pointers: use cudaMemcpyDefault with unified "
          "addressing, or swap source and destination"),
    CM__E(cudaErrorAddressOfConstant, CM_ERROR_CUDA, false,
          H_DEPRECATED "use cudaGetSymbolAddress on a __device__ variable instead"),
    CM__E(cudaErrorTextureFetchFailed, CM_ERROR_CUDA, false,
          H_DEPRECATED "check the texture object and its coordinates"),
    CM__E(cudaErrorTextureNotBound, CM_ERROR_CUDA, false,
          H_DEPRECATED "use texture objects instead of texture references"),
    CM__E(cudaErrorSynchronizationError, CM_ERROR_CUDA, false,
          H_DEPRECATED "check the synchronisation call and its stream"),
    CM__E(cudaErrorInvalidFilterSetting, CM_ERROR_INVALID_ARGUMENT, false,
          "linear filtering needs a floating-point texture format: use point filtering or "
          "cudaReadModeNormalizedFloat"),
    CM__E(cudaErrorInvalidNormSetting, CM_ERROR_INVALID_ARGUMENT, false,
          "normalised reads are not supported for this format: use cudaReadModeElementType"),
    CM__E(cudaErrorMixedDeviceExecution, CM_ERROR_CUDA, false,
          H_DEPRECATED "keep each call's resources on one device"),
    CM__E(cudaErrorNotYetImplemented, CM_ERROR_NOT_SUPPORTED, false,
          "this feature is not implemented by this driver: update the driver or avoid the call"),
    CM__E(cudaErrorMemoryValueTooLarge, CM_ERROR_CUDA, false,
          H_DEPRECATED "check the size of the emulated device memory"),
    CM__E(cudaErrorStubLibrary, CM_ERROR_NO_DRIVER, false,
          "the process loaded the toolkit's stub libcuda.so (lib64/stubs) instead of the real "
          "driver: remove the stubs directory from LD_LIBRARY_PATH and the rpath, and install the "
          "NVIDIA driver"),
    CM__E(cudaErrorInsufficientDriver, CM_ERROR_DRIVER_TOO_OLD, false,
          "install an NVIDIA driver at least as new as this CUDA runtime (CUDA 13.0 needs driver "
          "580 or newer); cudamodel-doctor shows both versions"),
    CM__E(cudaErrorCallRequiresNewerDriver, CM_ERROR_DRIVER_TOO_OLD, false,
          "this call needs a newer driver than the one installed: update the NVIDIA driver or "
          "avoid the call"),
    CM__E(cudaErrorInvalidSurface, CM_ERROR_INVALID_ARGUMENT, false,
          "the surface object is invalid: create it with cudaCreateSurfaceObject on an array "
          "allocated with cudaArraySurfaceLoadStore"),
    CM__E(cudaErrorDuplicateVariableName, CM_ERROR_CUDA, false,
          "two global variables share a name across translation units: rename one or make it "
          "static"),
    CM__E(cudaErrorDuplicateTextureName, CM_ERROR_CUDA, false,
          "two textures share a name across translation units: rename one"),
    CM__E(cudaErrorDuplicateSurfaceName, CM_ERROR_CUDA, false,
          "two surfaces share a name across translation units: rename one"),
    CM__E(cudaErrorDevicesUnavailable, CM_ERROR_BUSY, false,
          "the GPU is in exclusive-process or prohibited compute mode and is in use: see "
          "'nvidia-smi -q -d COMPUTE' and stop the other process or pick another device"),
    CM__E(cudaErrorIncompatibleDriverContext, CM_ERROR_CUDA, false,
          "a driver-API context of an incompatible kind is current: make the primary context "
          "current (cuDevicePrimaryCtxRetain) before runtime calls"),
    CM__E(cudaErrorMissingConfiguration, CM_ERROR_INVALID_LAUNCH, false,
          "a kernel was launched without a configuration: use <<<grid, block>>> or "
          "cudaLaunchKernel with explicit dimensions"),
    CM__E(cudaErrorPriorLaunchFailure, CM_ERROR_CUDA, false,
          H_DEPRECATED "an earlier launch failed; check errors after every launch"),
    CM__E(cudaErrorLaunchMaxDepthExceeded, CM_ERROR_INVALID_LAUNCH, false,
          "device-side launches nest deeper than allowed: flatten the recursion or raise "
          "cudaLimitDevRuntimeSyncDepth"),
    CM__E(cudaErrorLaunchFileScopedTex, CM_ERROR_INVALID_LAUNCH, false,
          "a device-side launch uses file-scoped textures: use texture objects"),
    CM__E(cudaErrorLaunchFileScopedSurf, CM_ERROR_INVALID_LAUNCH, false,
          "a device-side launch uses file-scoped surfaces: use surface objects"),
    CM__E(cudaErrorSyncDepthExceeded, CM_ERROR_INVALID_LAUNCH, false,
          "device-side synchronisation nests too deep: raise cudaLimitDevRuntimeSyncDepth"),
    CM__E(cudaErrorLaunchPendingCountExceeded, CM_ERROR_INVALID_LAUNCH, false,
          "too many device-side launches are pending: raise cudaLimitDevRuntimePendingLaunchCount"),
    CM__E(cudaErrorInvalidDeviceFunction, CM_ERROR_CUDA, false,
          "the function is not a kernel this CUDA runtime knows: when it comes from another "
          "library or executable, build all CUDA code with the shared runtime (nvcc -cudart "
          "shared) so there is one cudart in the process; also check it was built for this GPU"),
    CM__E(cudaErrorNoDevice, CM_ERROR_NO_DEVICE, false,
          "the driver sees no CUDA device: run nvidia-smi; in a container start it with --gpus "
          "all; check that CUDA_VISIBLE_DEVICES does not hide every device"),
    CM__E(cudaErrorInvalidDevice, CM_ERROR_INVALID_ARGUMENT, false,
          "the device ordinal is out of range or the device cannot be used: ordinals run from 0 "
          "to cudaGetDeviceCount()-1 and CUDA_VISIBLE_DEVICES renumbers them"),
    CM__E(cudaErrorDeviceNotLicensed, CM_ERROR_NOT_SUPPORTED, false,
          "the device is not licensed for this use (vGPU licensing): check the license server"),
    CM__E(cudaErrorSoftwareValidityNotEstablished, CM_ERROR_CUDA, false,
          "the software validity check at start-up failed: reinstall the driver, then reboot"),
    CM__E(cudaErrorStartupFailure, CM_ERROR_CUDA, false,
          "the CUDA runtime failed to start: run nvidia-smi and check the driver installation"),
    CM__E(cudaErrorInvalidKernelImage, CM_ERROR_NO_KERNEL_IMAGE, false,
          "the kernel image is invalid for this device: rebuild the binary for this GPU's "
          "architecture (cudamodel-doctor names the -DCMAKE_CUDA_ARCHITECTURES value)"),
    CM__E(cudaErrorDeviceUninitialized, CM_ERROR_CUDA, false,
          "no valid context is current: it was destroyed (cudaDeviceReset) or never created; "
          "call cudaSetDevice before using the device again"),
    CM__E(cudaErrorMapBufferObjectFailed, CM_ERROR_CUDA, false,
          "mapping a graphics buffer failed: unmap it from the graphics API first"),
    CM__E(cudaErrorUnmapBufferObjectFailed, CM_ERROR_CUDA, false,
          "unmapping a graphics buffer failed: it was not mapped, or was mapped by another context"),
    CM__E(cudaErrorArrayIsMapped, CM_ERROR_CUDA, false,
          "the array is mapped: unmap the graphics resource before destroying it"),
    CM__E(cudaErrorAlreadyMapped, CM_ERROR_CUDA, false,
          "the resource is already mapped: unmap it before mapping again"),
    CM__E(cudaErrorNoKernelImageForDevice, CM_ERROR_NO_KERNEL_IMAGE, false,
          "the binary carries no machine code or PTX this GPU can run: rebuild with "
          "-DCMAKE_CUDA_ARCHITECTURES=<the GPU's sm number> (cudamodel-doctor names it) or nvcc "
          "-gencode arch=compute_XY,code=sm_XY, and include PTX for forward compatibility"),
    CM__E(cudaErrorAlreadyAcquired, CM_ERROR_CUDA, false,
          "the resource is already acquired: release it before acquiring it again"),
    CM__E(cudaErrorNotMapped, CM_ERROR_CUDA, false,
          "the resource is not mapped: map it (cudaGraphicsMapResources) before use"),
    CM__E(cudaErrorNotMappedAsArray, CM_ERROR_CUDA, false,
          "the resource is not mapped as an array: use cudaGraphicsResourceGetMappedPointer"),
    CM__E(cudaErrorNotMappedAsPointer, CM_ERROR_CUDA, false,
          "the resource is not mapped as a pointer: use cudaGraphicsSubResourceGetMappedArray"),
    CM__E(cudaErrorECCUncorrectable, CM_ERROR_CONTEXT_LOST, true,
          "an uncorrectable ECC memory error occurred: restart the process; if it repeats, check "
          "'nvidia-smi -q -d ECC' and have the GPU serviced"),
    CM__E(cudaErrorUnsupportedLimit, CM_ERROR_NOT_SUPPORTED, false,
          "this cudaLimit is not supported on this device: check the device's compute capability"),
    CM__E(cudaErrorDeviceAlreadyInUse, CM_ERROR_BUSY, false,
          "the device is in use by another thread or process in exclusive mode: wait or pick "
          "another device"),
    CM__E(cudaErrorPeerAccessUnsupported, CM_ERROR_NOT_SUPPORTED, false,
          "these two GPUs cannot access each other's memory (cudaDeviceCanAccessPeer is 0): copy "
          "through the host instead"),
    CM__E(cudaErrorInvalidPtx, CM_ERROR_NO_KERNEL_IMAGE, false,
          "JIT compilation of the PTX failed: the PTX may be newer than the driver; update the "
          "driver or build native code for this GPU (-DCMAKE_CUDA_ARCHITECTURES)"),
    CM__E(cudaErrorInvalidGraphicsContext, CM_ERROR_CUDA, false,
          "the OpenGL or Direct3D context is invalid: make it current before the interop call"),
    CM__E(cudaErrorNvlinkUncorrectable, CM_ERROR_CONTEXT_LOST, true,
          "an uncorrectable NVLink error occurred: restart the process; if it repeats, check "
          "'nvidia-smi nvlink -e' and have the system serviced"),
    CM__E(cudaErrorJitCompilerNotFound, CM_ERROR_NO_KERNEL_IMAGE, false,
          "the driver's PTX JIT compiler library is missing: install the full NVIDIA driver, or "
          "build native code for this GPU so no JIT is needed"),
    CM__E(cudaErrorUnsupportedPtxVersion, CM_ERROR_DRIVER_TOO_OLD, false,
          "the PTX was produced by a newer CUDA toolkit than this driver supports: update the "
          "driver, or build native code for this GPU (-DCMAKE_CUDA_ARCHITECTURES=XY)"),
    CM__E(cudaErrorJitCompilationDisabled, CM_ERROR_NO_KERNEL_IMAGE, false,
          "PTX JIT is disabled (CUDA_DISABLE_PTX_JIT is set) and no native code matches this GPU: "
          "unset it or build native code for this GPU"),
    CM__E(cudaErrorUnsupportedExecAffinity, CM_ERROR_NOT_SUPPORTED, false,
          "this execution-affinity type is not supported on this device"),
    CM__E(cudaErrorUnsupportedDevSideSync, CM_ERROR_NOT_SUPPORTED, false,
          "device-side cudaDeviceSynchronize is not supported with this compilation: compile with "
          "-DCUDA_FORCE_CDP1_IF_SUPPORTED or restructure without device-side synchronisation"),
    CM__E(cudaErrorContained, CM_ERROR_CONTEXT_LOST, true, H_RESTART),
    CM__E(cudaErrorInvalidSource, CM_ERROR_CUDA, false,
          "the kernel source or module is invalid: recompile it"),
    CM__E(cudaErrorFileNotFound, CM_ERROR_CUDA, false,
          "a module file was not found: check the path given to the loading call"),
    CM__E(cudaErrorSharedObjectSymbolNotFound, CM_ERROR_CUDA, false,
          "a shared-object symbol could not be resolved: rebuild the library against this toolkit"),
    CM__E(cudaErrorSharedObjectInitFailed, CM_ERROR_CUDA, false,
          "a shared object failed to initialise: check that every CUDA library in the process "
          "comes from one toolkit version (ldd, LD_LIBRARY_PATH)"),
    CM__E(cudaErrorOperatingSystem, CM_ERROR_CUDA, false,
          "an operating-system call inside CUDA failed: check memory limits (ulimit -l for pinned "
          "memory), permissions on /dev/nvidia*, and the kernel log (dmesg)"),
    CM__E(cudaErrorInvalidResourceHandle, CM_ERROR_INVALID_ARGUMENT, false,
          "a stream, event, graph or module handle is invalid: it was destroyed already, never "
          "created, or belongs to another device"),
    CM__E(cudaErrorIllegalState, CM_ERROR_CUDA, false,
          "the call is not allowed in the current state (e.g. recording an event that is being "
          "waited on in a capture): check the order of the calls"),
    CM__E(cudaErrorLossyQuery, CM_ERROR_NOT_SUPPORTED, false,
          "the query cannot be answered without losing information: use the more detailed query"),
    CM__E(cudaErrorSymbolNotFound, CM_ERROR_INVALID_ARGUMENT, false,
          "the named symbol does not exist in the module: check its spelling and extern \"C\" "
          "linkage"),
    CM__E(cudaErrorNotReady, CM_ERROR_BUSY, false,
          "not a failure: the queued work has not finished yet; query again later or synchronize"),
    CM__E(cudaErrorIllegalAddress, CM_ERROR_CONTEXT_LOST, true,
          "a kernel read or wrote an invalid address (out of bounds, freed, or host memory). "
          H_RESTART),
    CM__E(cudaErrorLaunchOutOfResources, CM_ERROR_LAUNCH_OUT_OF_RESOURCES, false,
          "registers x threads per block (or shared memory) exceed what one SM provides: use "
          "fewer threads per block, or cap registers with __launch_bounds__ or -maxrregcount"),
    CM__E(cudaErrorLaunchTimeout, CM_ERROR_CONTEXT_LOST, true,
          "the kernel ran longer than the display watchdog allows: split the work into shorter "
          "kernels or use a GPU without a display attached. " H_RESTART),
    CM__E(cudaErrorLaunchIncompatibleTexturing, CM_ERROR_INVALID_LAUNCH, false,
          "the kernel uses textures in a way this launch does not support: use texture objects"),
    CM__E(cudaErrorPeerAccessAlreadyEnabled, CM_ERROR_CUDA, false,
          "peer access between these devices is already enabled: harmless, the call can be "
          "skipped (cudaGetLastError clears it)"),
    CM__E(cudaErrorPeerAccessNotEnabled, CM_ERROR_INVALID_ARGUMENT, false,
          "peer access was not enabled: call cudaDeviceEnablePeerAccess first, or copy with "
          "cudaMemcpyPeer"),
    CM__E(cudaErrorSetOnActiveProcess, CM_ERROR_BUSY, false,
          "device flags cannot change once the context is active: call cudaSetDeviceFlags before "
          "any other CUDA call on that device"),
    CM__E(cudaErrorContextIsDestroyed, CM_ERROR_CUDA, false,
          "the context was destroyed (cudaDeviceReset or a driver-API destroy): recreate "
          "resources after cudaSetDevice"),
    CM__E(cudaErrorAssert, CM_ERROR_CONTEXT_LOST, true,
          "a device-side assert() failed in a kernel: the kernel's output says which. " H_RESTART),
    CM__E(cudaErrorTooManyPeers, CM_ERROR_NOT_SUPPORTED, false,
          "the hardware limit of peer mappings is reached: disable peer access to devices not in "
          "use"),
    CM__E(cudaErrorHostMemoryAlreadyRegistered, CM_ERROR_INVALID_ARGUMENT, false,
          "this host range is already registered (page-locked): register it once"),
    CM__E(cudaErrorHostMemoryNotRegistered, CM_ERROR_INVALID_ARGUMENT, false,
          "this host range was never registered: cudaHostUnregister only what cudaHostRegister "
          "registered"),
    CM__E(cudaErrorHardwareStackError, CM_ERROR_CONTEXT_LOST, true,
          "a kernel overflowed its stack (deep recursion or large local arrays): raise "
          "cudaLimitStackSize or reduce local memory. " H_RESTART),
    CM__E(cudaErrorIllegalInstruction, CM_ERROR_CONTEXT_LOST, true,
          "a kernel executed an illegal instruction. " H_RESTART),
    CM__E(cudaErrorMisalignedAddress, CM_ERROR_CONTEXT_LOST, true,
          "a kernel accessed memory at an address not aligned to the access size (e.g. a float4 "
          "load from an offset pointer). " H_RESTART),
    CM__E(cudaErrorInvalidAddressSpace, CM_ERROR_CONTEXT_LOST, true,
          "a kernel used an instruction on the wrong address space (e.g. a shared-memory atomic "
          "on a global address). " H_RESTART),
    CM__E(cudaErrorInvalidPc, CM_ERROR_CONTEXT_LOST, true,
          "a kernel jumped to an invalid program counter. " H_RESTART),
    CM__E(cudaErrorLaunchFailure, CM_ERROR_CONTEXT_LOST, true,
          "an unspecified failure while a kernel ran (often an invalid pointer dereference). "
          H_RESTART),
    CM__E(cudaErrorCooperativeLaunchTooLarge, CM_ERROR_INVALID_LAUNCH, false,
          "a cooperative launch has more blocks than can be resident at once: use at most "
          "SMs x cudaOccupancyMaxActiveBlocksPerMultiprocessor blocks"),
    CM__E(cudaErrorTensorMemoryLeak, CM_ERROR_CONTEXT_LOST, true,
          "a kernel exited without deallocating its tensor memory. " H_RESTART),
    CM__E(cudaErrorNotPermitted, CM_ERROR_NOT_SUPPORTED, false,
          "the operation is not permitted (e.g. on this platform or for this process)"),
    CM__E(cudaErrorNotSupported, CM_ERROR_NOT_SUPPORTED, false,
          "the operation is not supported on this device, driver or platform: check the "
          "device's compute capability and attributes"),
    CM__E(cudaErrorSystemNotReady, CM_ERROR_CUDA, false,
          "the system is not ready: on NVSwitch systems start nvidia-fabricmanager; otherwise "
          "check nvidia-smi"),
    CM__E(cudaErrorSystemDriverMismatch, CM_ERROR_CUDA, false,
          "the kernel module and the user-space driver (libcuda) have different versions: reboot "
          "after a driver update, or reinstall the driver"),
    CM__E(cudaErrorCompatNotSupportedOnDevice, CM_ERROR_NOT_SUPPORTED, false,
          "the CUDA forward-compatibility package does not support this GPU: remove it from "
          "LD_LIBRARY_PATH and update the driver instead"),
    CM__E(cudaErrorMpsConnectionFailed, CM_ERROR_CUDA, false, H_MPS),
    CM__E(cudaErrorMpsRpcFailure, CM_ERROR_CUDA, false, H_MPS),
    CM__E(cudaErrorMpsServerNotReady, CM_ERROR_BUSY, false,
          "the MPS server is not ready yet: retry, or check nvidia-cuda-mps-control"),
    CM__E(cudaErrorMpsMaxClientsReached, CM_ERROR_BUSY, false,
          "the MPS server has its maximum number of clients: end other clients or raise the limit"),
    CM__E(cudaErrorMpsMaxConnectionsReached, CM_ERROR_BUSY, false,
          "the MPS server has its maximum number of connections: end other clients"),
    CM__E(cudaErrorMpsClientTerminated, CM_ERROR_CONTEXT_LOST, true,
          "the MPS server terminated this client (often after a fault in another client): "
          "restart the process"),
    CM__E(cudaErrorCdpNotSupported, CM_ERROR_NOT_SUPPORTED, false,
          "dynamic parallelism is not supported here: launch the child work from the host"),
    CM__E(cudaErrorCdpVersionMismatch, CM_ERROR_NOT_SUPPORTED, false,
          "device-side launch code of two CDP versions is mixed: rebuild all code with one "
          "toolkit"),
    CM__E(cudaErrorStreamCaptureUnsupported, CM_ERROR_NOT_SUPPORTED, false, H_CAPTURE),
    CM__E(cudaErrorStreamCaptureInvalidated, CM_ERROR_CUDA, false,
          "the capture was invalidated by an earlier error on the capturing stream: end the "
          "capture, fix the first error, capture again"),
    CM__E(cudaErrorStreamCaptureMerge, CM_ERROR_CUDA, false,
          "two independent captures were merged: capture each graph on its own streams"),
    CM__E(cudaErrorStreamCaptureUnmatched, CM_ERROR_CUDA, false,
          "cudaStreamEndCapture was called on a stream that did not begin the capture"),
    CM__E(cudaErrorStreamCaptureUnjoined, CM_ERROR_CUDA, false,
          "a stream forked from the capture was not joined back before the capture ended: make "
          "the origin stream wait on an event recorded at the end of each forked stream"),
    CM__E(cudaErrorStreamCaptureIsolation, CM_ERROR_CUDA, false,
          "the capture would depend on work outside it: record and wait only on events inside "
          "the capture"),
    CM__E(cudaErrorStreamCaptureImplicit, CM_ERROR_CUDA, false, H_CAPTURE),
    CM__E(cudaErrorCapturedEvent, CM_ERROR_CUDA, false,
          "an event recorded inside a capture cannot be queried or synchronized: wait on it from "
          "a stream instead"),
    CM__E(cudaErrorStreamCaptureWrongThread, CM_ERROR_CUDA, false,
          "a capture begun in cudaStreamCaptureModeThreadLocal mode was touched from another "
          "thread: use cudaStreamCaptureModeRelaxed or keep the capture on one thread"),
    CM__E(cudaErrorTimeout, CM_ERROR_BUSY, false,
          "the wait timed out before the work finished: wait longer or check for a hung kernel"),
    CM__E(cudaErrorGraphExecUpdateFailure, CM_ERROR_CUDA, false,
          "the graph changed in ways an in-place update cannot apply: instantiate the graph again"),
    CM__E(cudaErrorExternalDevice, CM_ERROR_CONTEXT_LOST, true,
          "an external device (e.g. through an imported semaphore) signalled an error. " H_RESTART),
    CM__E(cudaErrorInvalidClusterSize, CM_ERROR_INVALID_LAUNCH, false,
          "the cluster shape is invalid: at most 8 blocks per cluster portably (16 with "
          "cudaFuncAttributeNonPortableClusterSizeAllowed) and the grid a multiple of it"),
    CM__E(cudaErrorFunctionNotLoaded, CM_ERROR_CUDA, false,
          "the function is not loaded yet (lazy loading): call cudaFuncGetAttributes or launch it "
          "once before taking its address, or set CUDA_MODULE_LOADING=EAGER"),
    CM__E(cudaErrorInvalidResourceType, CM_ERROR_INVALID_ARGUMENT, false,
          "the resource type is invalid for this call: check the green-context resource kind"),
    CM__E(cudaErrorInvalidResourceConfiguration, CM_ERROR_INVALID_ARGUMENT, false,
          "the resource configuration is invalid (e.g. an SM count the device cannot split into): "
          "check the green-context partition sizes"),
    CM__E(cudaErrorUnknown, CM_ERROR_CUDA, false,
          "CUDA reports an unknown error: run nvidia-smi and check the kernel log (dmesg) for Xid "
          "messages; update the driver if it repeats"),
    CM__E(cudaErrorApiFailureBase, CM_ERROR_CUDA, false,
          H_DEPRECATED "values from 10000 up carry an unhandled driver error: subtract 10000 and "
          "look the rest up as a CUresult"),
};

static const cm__cuda_error_entry_t cm__cuda_error_unlisted = {
    -1, "", CM_ERROR_CUDA, false,
    "this error code is not known to libcudamodel (newer CUDA?): look it up with "
    "cudaGetErrorName and check that the driver and runtime versions match the build"};

const cm__cuda_error_entry_t *cm__cuda_error_lookup(int code) {
    size_t n = sizeof cm__cuda_error_table / sizeof cm__cuda_error_table[0];
    for (size_t i = 0; i < n; ++i) {
        if (cm__cuda_error_table[i].code == code) return &cm__cuda_error_table[i];
    }
    return NULL;
}

const cm__cuda_error_entry_t *cm__cuda_error_entry(int code) {
    const cm__cuda_error_entry_t *e = cm__cuda_error_lookup(code);
    return e != NULL ? e : &cm__cuda_error_unlisted;
}

size_t cm__cuda_error_table_size(void) {
    return sizeof cm__cuda_error_table / sizeof cm__cuda_error_table[0];
}

const cm__cuda_error_entry_t *cm__cuda_error_at(size_t i) {
    return i < cm__cuda_error_table_size() ? &cm__cuda_error_table[i] : NULL;
}
