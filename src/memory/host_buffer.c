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
                 bytes, ordinal, call, cm__cuda.get_error_name(err));
        cm__strlcpy(e->hint,
                    "pinned memory stays in RAM and cannot be swapped: pin less (reuse one staging "
                    "buffer), destroy pinned buffers you no longer need, and check the locked-memory "
                    "limit (ulimit -l) and the container's memory limit",
                    sizeof e->hint);
    }
    return s;
}

static cm_status_t cm__host_buffer_make(cm_device_t *dev_h, void *user_ptr, size_t bytes,
                                        unsigned flags, bool registering, cm_host_buffer_t **out,
                                        const char *label, const char *file, int line,
                                        const char *func) {
    if (out == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the address of a cm_host_buffer_t * to receive the buffer",
                        "out is NULL");
    }
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    CM_TRY(cm__check_flags(flags, registering, func));
    if (registering && user_ptr == NULL && bytes > 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, func,
                        "pass the memory to register (from malloc, mmap...)",
                        "ptr is NULL but bytes is %zu", bytes);
    }
    CM_TRY(cm__context_guard(dev->ordinal));
    struct cm__host_buffer *h = calloc(1, sizeof *h);
    if (h == NULL) {
        return cm__fail(CM_ERROR_HOST_OUT_OF_MEMORY, dev->ordinal, __FILE__, __LINE__, func,
                        "free host memory", "cannot allocate the host buffer object (%zu bytes)",
                        sizeof *h);
    }
    h->flags = flags;
    h->registered = registering;
    h->a.dev = dev;
    h->a.kind = CM__KIND_HOST_BUFFER;
    h->a.bytes = bytes;
    h->a.file = file;
    h->a.line = line;
    cm__alloc_set_label(&h->a, label);
    cm_status_t status = CM_OK;
    if (bytes > 0) {
        /* pinned memory belongs to the context current at the call: the device's */
        cm__scope_t sc;
        CM_TRY_GOTO(cm__enter(dev->ordinal, 1, &sc), status, fail);
        cudaError_t err;
        if (registering) {
            unsigned cf = cudaHostRegisterDefault;
            if (flags & CM_HOST_BUFFER_PORTABLE) cf |= cudaHostRegisterPortable;
            if (flags & CM_HOST_BUFFER_MAPPED) cf |= cudaHostRegisterMapped;
            err = cm__cuda.host_register(user_ptr, bytes, cf);
            if (err != cudaSuccess) status = cm__pin_fail(err, "cudaHostRegister", bytes, dev->ordinal, func);
            else h->ptr = user_ptr;
        } else {
            unsigned cf = cudaHostAllocDefault;
            if (flags & CM_HOST_BUFFER_PORTABLE) cf |= cudaHostAllocPortable;
            if (flags & CM_HOST_BUFFER_MAPPED) cf |= cudaHostAllocMapped;
            if (flags & CM_HOST_BUFFER_WRITE_COMBINED) cf |= cudaHostAllocWriteCombined;
            err = cm__cuda.host_alloc(&h->ptr, bytes, cf);
            if (err != cudaSuccess) {
                h->ptr = NULL;
                status = cm__pin_fail(err, "cudaHostAlloc", bytes, dev->ordinal, func);
            }
        }
        if (status == CM_OK && (flags & CM_HOST_BUFFER_MAPPED)) {
            err = cm__cuda.host_get_device_pointer(&h->device_ptr, h->ptr, 0);
            if (err != cudaSuccess) {
                status = cm__cuda_fail(err, __FILE__, __LINE__,
                                       "cudaHostGetDevicePointer(mapped host buffer) in %s", func);
            }
        }
        if (status != CM_OK && h->ptr != NULL) {
            if (registering) (void)cm__cuda.host_unregister(h->ptr);
            else (void)cm__cuda.free_host(h->ptr);
            h->ptr = NULL;
        }
        cm__leave(&sc);
        if (status != CM_OK) goto fail;
    }
    status = cm__alloc_track(&h->a, dev_h, dev->ordinal, func);
    if (status != CM_OK) {
        if (h->ptr != NULL) {
            cm__scope_t sc;
            if (cm__enter(dev->ordinal, 1, &sc) == CM_OK) {
                if (registering) (void)cm__cuda.host_unregister(h->ptr);
                else (void)cm__cuda.free_host(h->ptr);
                cm__leave(&sc);
            }
        }
        goto fail;
    }
    *out = (cm_host_buffer_t *)h->a.handle;
    return CM_OK;
fail:
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
    struct cm__host_buffer *h;
    CM_TRY(cm__host_buffer_get(buf, "buf", __func__, &h));
    /* the device scope first: a context that cannot be made current leaves the buffer alive
     * (the destroy may be repeated) instead of its pinned memory unreachable; a lost context
     * skips it (the release reports the loss) */
    const int scope_ordinal = h->a.dev->ordinal;
    cm__scope_t sc;
    bool entered = false;
    if (h->ptr != NULL && cm__context_guard(scope_ordinal) == CM_OK) {
        CM_TRY(cm__enter(scope_ordinal, 1, &sc));
        entered = true;
    }
    /* one locked step: end the handle, leave the device's list */
    int ordinal = -1;
    cm__core_lock();
    h = cm__handle_end_locked(buf, CM__KIND_HOST_BUFFER);
    if (h != NULL) {
        ordinal = h->a.dev->ordinal; /* read while the device object is surely alive */
        cm__alloc_untrack_locked(&h->a);
    }
    cm__core_unlock();
    if (h == NULL) {
        if (entered) cm__leave(&sc);
        return cm__handle_fail(buf, CM__KIND_HOST_BUFFER, "buf", __func__);
    }
    void *ptr = h->ptr;
    bool registered = h->registered;
    free(h);
    if (ptr == NULL) return CM_OK;
    if (!entered) {
        CM_TRY(cm__context_guard(ordinal));
        CM_TRY(cm__enter(ordinal, 1, &sc));
    }
    cudaError_t err = registered ? cm__cuda.host_unregister(ptr) : cm__cuda.free_host(ptr);
    cm_status_t st = CM_OK; /* recorded inside the scope: charged to the buffer's device */
    if (err != cudaSuccess) {
        st = cm__cuda_fail(err, __FILE__, __LINE__, "%s(host buffer) in %s",
                           registered ? "cudaHostUnregister" : "cudaFreeHost", __func__);
    }
    cm__leave(&sc);
    return st;
}

cm_status_t cm_host_buffer_data(const cm_host_buffer_t *buf, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    struct cm__host_buffer *h;
    CM_TRY(cm__host_buffer_get(buf, "buf", __func__, &h));
    *ptr = h->ptr;
    return CM_OK;
}

cm_status_t cm_host_buffer_info(const cm_host_buffer_t *buf, cm_host_buffer_info_t *info) {
    CM__REQUIRE(info != NULL, "pass the address of a cm_host_buffer_info_t", "info is NULL");
    struct cm__host_buffer *h;
    CM_TRY(cm__host_buffer_get(buf, "buf", __func__, &h));
    cm_host_buffer_info_t r;
    memset(&r, 0, sizeof r);
    r.bytes = h->a.bytes;
    r.flags = h->flags;
    r.registered = h->registered;
    r.data = h->ptr;
    r.device_ptr = h->device_ptr;
    r.device = (cm_device_t *)h->a.dev->handle;
    if (h->a.has_label) cm__strlcpy(r.label, h->a.label, sizeof r.label);
    *info = r;
    return CM_OK;
}

cm_status_t cm_host_buffer_device_ptr(const cm_host_buffer_t *buf, void **ptr) {
    CM__REQUIRE(ptr != NULL, "pass the address of a void *", "ptr is NULL");
    struct cm__host_buffer *h;
    CM_TRY(cm__host_buffer_get(buf, "buf", __func__, &h));
    if (!(h->flags & CM_HOST_BUFFER_MAPPED)) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, h->a.dev->ordinal,
                        "create or register the buffer with CM_HOST_BUFFER_MAPPED to use it from "
                        "kernels",
                        "the host buffer (flags 0x%x) is not mapped into device memory",
                        h->flags);
    }
    *ptr = h->device_ptr;
    return CM_OK;
}
