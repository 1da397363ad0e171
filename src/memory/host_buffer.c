/*
 * Pinned host buffers (buffer.h): page-locked memory allocated by the library (cudaHostAlloc
 * with the portable / mapped / write-combined options) or registered from the caller's memory
 * (cudaHostRegister), counted in the device object like device buffers.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory_internal.h"

#define CM__HOST_FLAGS_ALL                                                                   \
    (CM_HOST_BUFFER_PORTABLE | CM_HOST_BUFFER_MAPPED | CM_HOST_BUFFER_WRITE_COMBINED)

static cm_status_t cm__check_flags(unsigned flags, bool registering, const char *func) {
    if ((flags & ~(unsigned)CM__HOST_FLAGS_ALL) != 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "combine CM_HOST_BUFFER_PORTABLE, CM_HOST_BUFFER_MAPPED and (create only) "
                        "CM_HOST_BUFFER_WRITE_COMBINED",
                        "flags 0x%x has unknown bits 0x%x", flags,
                        flags & ~(unsigned)CM__HOST_FLAGS_ALL);
    }
    if (registering && (flags & CM_HOST_BUFFER_WRITE_COMBINED)) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "allocate write-combined memory with cm_host_buffer_create(), or register "
                        "without CM_HOST_BUFFER_WRITE_COMBINED",
                        "CM_HOST_BUFFER_WRITE_COMBINED cannot be applied to memory that is already "
                        "allocated (flags 0x%x)", flags);
    }
    return CM_OK;
}

/* Turn a failed pinning call into the statuses of buffer.h: out of memory is host memory here. */
static cm_status_t cm__pin_fail(cudaError_t err, const char *call, size_t bytes, int ordinal,
                                const char *func) {
    char text[CM_ERROR_CALL_MAX];
    snprintf(text, sizeof text, "%s(%zu bytes) in %s", call, bytes, func);
    cm_status_t s = cm_record_cuda_error(err, text, __FILE__, __LINE__);
    if (err == cudaErrorMemoryAllocation) {
        char size[32];
        cm__format_bytes(bytes, size, sizeof size);
        s = CM_ERROR_HOST_OUT_OF_MEMORY;
        cm_error_t *e = cm__detail();
        e->status = s;
        e->device = ordinal;
        snprintf(e->message, sizeof e->message,
                 "cannot pin %s (%zu bytes) of host memory for device %d: %s failed (%s)", size,
                 bytes, ordinal, call, cudaGetErrorName(err));
        cm__strlcpy(e->hint,
                    "pinned memory stays in RAM and cannot be swapped: pin less (reuse one staging "
                    "buffer), destroy pinned buffers you no longer need, and check the locked-memory "
                    "limit (ulimit -l) and the container's memory limit",
                    sizeof e->hint);
    }
    return s;
}

static cm_status_t cm__host_buffer_make(cm_device_t *dev, void *user_ptr, size_t bytes,
                                        unsigned flags, bool registering, cm_host_buffer_t **out,
                                        const char *label, const char *file, int line,
                                        const char *func) {
    if (out == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of a cm_host_buffer_t * to receive the buffer",
                        "out is NULL");
    }
    CM_TRY(cm__check_handle(dev, CM__KIND_DEVICE, "dev", func));
    CM_TRY(cm__check_flags(flags, registering, func));
    if (registering && user_ptr == NULL && bytes > 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the memory to register (from malloc, mmap...)",
                        "ptr is NULL but bytes is %zu", bytes);
    }
    CM_TRY(cm__context_guard(dev->ordinal));
    cm_host_buffer_t *h = calloc(1, sizeof *h);
    if (h == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, dev->ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the host buffer handle (%zu bytes)",
                        sizeof *h);
    }
    h->flags = flags;
    h->registered = registering;
    cm_status_t status = CM_OK;
    int saved = -1;
    if (bytes > 0) {
        CM_TRY_GOTO(cm__mem_device_enter(dev->ordinal, &saved), status, fail);
        cudaError_t err;
        if (registering) {
            unsigned cf = cudaHostRegisterDefault;
            if (flags & CM_HOST_BUFFER_PORTABLE) cf |= cudaHostRegisterPortable;
            if (flags & CM_HOST_BUFFER_MAPPED) cf |= cudaHostRegisterMapped;
            err = cm__cuda.host_register(user_ptr, bytes, cf);
            if (err != cudaSuccess) {
                status = cm__pin_fail(err, "cudaHostRegister", bytes, dev->ordinal, func);
                goto fail;
            }
            h->ptr = user_ptr;
        } else {
            unsigned cf = cudaHostAllocDefault;
            if (flags & CM_HOST_BUFFER_PORTABLE) cf |= cudaHostAllocPortable;
            if (flags & CM_HOST_BUFFER_MAPPED) cf |= cudaHostAllocMapped;
            if (flags & CM_HOST_BUFFER_WRITE_COMBINED) cf |= cudaHostAllocWriteCombined;
            err = cm__cuda.host_alloc(&h->ptr, bytes, cf);
            if (err != cudaSuccess) {
                h->ptr = NULL;
                status = cm__pin_fail(err, "cudaHostAlloc", bytes, dev->ordinal, func);
                goto fail;
            }
        }
        if (flags & CM_HOST_BUFFER_MAPPED) {
            err = cm__cuda.host_get_device_pointer(&h->device_ptr, h->ptr, 0);
            if (err != cudaSuccess) {
                status = cm__cuda_fail(err, __FILE__, __LINE__,
                                       "cudaHostGetDevicePointer(mapped host buffer) in %s", func);
                goto fail;
            }
        }
        cm__mem_device_leave(saved);
        saved = -1;
    }
    CM_TRY_GOTO(cm__alloc_track(dev, &h->a, CM__KIND_HOST_BUFFER, bytes, label, file, line, func),
                status, fail);
    *out = h;
    return CM_OK;
fail:
    if (h->ptr != NULL) {
        if (registering) (void)cm__cuda.host_unregister(h->ptr);
        else (void)cm__cuda.free_host(h->ptr);
    }
    cm__mem_device_leave(saved);
    free(h);
    return status;
}

cm_status_t cm_host_buffer_create_at(cm_device_t *dev, size_t bytes, unsigned flags,
                                     cm_host_buffer_t **out, const char *label, const char *file,
                                     int line) {
    return cm__host_buffer_make(dev, NULL, bytes, flags, false, out, label, file, line, __func__);
}

cm_status_t cm_host_buffer_register_at(cm_device_t *dev, void *ptr, size_t bytes, unsigned flags,
                                       cm_host_buffer_t **out, const char *label, const char *file,
                                       int line) {
    return cm__host_buffer_make(dev, ptr, bytes, flags, true, out, label, file, line, __func__);
}

cm_status_t cm_host_buffer_destroy(cm_host_buffer_t *buf) {
    if (buf == NULL) return CM_OK;
    cm__mem_lock();
    if (!cm__handle_live_locked(buf, CM__KIND_HOST_BUFFER)) {
        cm_status_t s = cm__handle_fail_locked(buf, CM__KIND_HOST_BUFFER, "buf", __func__);
        cm__mem_unlock();
        return s;
    }
    void *ptr = buf->ptr;
    bool registered = buf->registered;
    int ordinal = buf->a.dev->ordinal;
    cm__alloc_untrack_locked(&buf->a);
    cm__mem_unlock();
    if (ptr == NULL) return CM_OK;
    CM_TRY(cm__context_guard(ordinal));
    cudaError_t err = registered ? cm__cuda.host_unregister(ptr) : cm__cuda.free_host(ptr);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__, "%s(host buffer) in %s",
                             registered ? "cudaHostUnregister" : "cudaFreeHost", __func__);
    }
    return CM_OK;
}

void cm_host_buffer_scope_exit(cm_host_buffer_t **buf) {
    if (buf == NULL || *buf == NULL) return;
    (void)cm_host_buffer_destroy(*buf);
    *buf = NULL;
}

cm_status_t cm_host_buffer_data(const cm_host_buffer_t *buf, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    CM_TRY(cm__check_handle(buf, CM__KIND_HOST_BUFFER, "buf", __func__));
    *ptr = buf->ptr;
    return CM_OK;
}

cm_status_t cm_host_buffer_size(const cm_host_buffer_t *buf, size_t *bytes) {
    CM__REQUIRE(bytes != NULL, "pass the address of a size_t", "bytes is NULL");
    CM_TRY(cm__check_handle(buf, CM__KIND_HOST_BUFFER, "buf", __func__));
    *bytes = buf->a.bytes;
    return CM_OK;
}

cm_status_t cm_host_buffer_flags(const cm_host_buffer_t *buf, unsigned *flags) {
    CM__REQUIRE(flags != NULL, "pass the address of an unsigned", "flags is NULL");
    CM_TRY(cm__check_handle(buf, CM__KIND_HOST_BUFFER, "buf", __func__));
    *flags = buf->flags;
    return CM_OK;
}

cm_status_t cm_host_buffer_device_ptr(const cm_host_buffer_t *buf, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    CM_TRY(cm__check_handle(buf, CM__KIND_HOST_BUFFER, "buf", __func__));
    if (!(buf->flags & CM_HOST_BUFFER_MAPPED)) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, buf->a.dev->ordinal,
                        "create or register the buffer with CM_HOST_BUFFER_MAPPED to use it from "
                        "kernels",
                        "the host buffer (flags 0x%x) is not mapped into device memory",
                        buf->flags);
    }
    *ptr = buf->device_ptr;
    return CM_OK;
}
