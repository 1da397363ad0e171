/*
 * Constant and __device__ symbols (memspace.h): checked copies to and from a symbol of a
 * device, and its device address. The size comes from cudaGetSymbolSize before anything is
 * written, so that a copy past the end of a __constant__ array is refused with both numbers
 * instead of failing with "invalid argument" (or not at all, inside the array's padding).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "memspace_internal.h"

/* The size of a symbol on the device current in the caller's scope; an address that is not a
 * symbol gets the causes that make it so. */
static cm_status_t cm__symbol_size(const void *symbol, int ordinal, size_t *size, const char *func) {
    size_t n = 0;
    cudaError_t err = cm__cuda.get_symbol_size(&n, symbol);
    if (err == cudaSuccess) {
        *size = n;
        return CM_OK;
    }
    cm_status_t st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaGetSymbolSize(symbol %p) in %s",
                                   symbol, func);
    if (err == cudaErrorInvalidSymbol) {
        cm_error_t *e = cm__detail();
        snprintf(e->message, sizeof e->message,
                 "%p is not a __constant__ or __device__ variable that the CUDA runtime knows on "
                 "device %d (cudaErrorInvalidSymbol); nothing was copied", symbol, ordinal);
        cm__strlcpy(e->hint,
                    "pass the variable's own address as the .cu file that defines it takes it "
                    "(export it with extern \"C\" const void *name_symbol(void) { return &var; }), "
                    "not a string, a copy or cudaGetSymbolAddress's result; and build that .cu "
                    "with -cudart shared, so that it registers with the same CUDA runtime as "
                    "libcudamodel (a static cudart keeps its symbols to itself)",
                    sizeof e->hint);
    }
    return st;
}

cm_status_t cm__symbol_copy_q(const cm__queue_t *q, cm_device_t *dev_h, const void *symbol,
                              size_t offset, void *host, size_t bytes, bool to_symbol,
                              const char *func) {
    const bool sync = q->handle == NULL;
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", func, &dev));
    const int ordinal = dev->ordinal;
    if (symbol == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "pass the address of the __constant__ or __device__ variable (see "
                        "\"Symbols from plain C\" in memspace.h)", "symbol is NULL");
    }
    const char *side = to_symbol ? "src" : "dst";
    if (host == NULL && bytes > 0) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func,
                        "pass memory of at least that many bytes", "%s is NULL but bytes is %zu",
                        side, bytes);
    }
    if (!sync) CM_TRY(cm__ms_check_queue(q, ordinal, "symbol's device", func));
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    size_t size = 0;
    cm_status_t status = cm__symbol_size(symbol, ordinal, &size, func);
    if (status != CM_OK) goto out;
    if (offset > size || bytes > size - offset) {
        char hint[CM_ERROR_HINT_MAX];
        if (offset > size)
            snprintf(hint, sizeof hint, "offsets into the symbol run from 0 to its size, %zu", size);
        else
            snprintf(hint, sizeof hint, "from offset %zu at most %zu bytes fit in the symbol; "
                     "copy fewer bytes, or declare the variable larger in its .cu file", offset,
                     size - offset);
        if (bytes > SIZE_MAX - offset) {
            status = cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                              "a copy of %zu bytes at offset %zu overflows size_t; the symbol %p "
                              "on device %d has %zu bytes; nothing was copied", bytes, offset,
                              symbol, ordinal, size);
        } else {
            status = cm__fail(CM_ERROR_INVALID_ARGUMENT, ordinal, __FILE__, __LINE__, func, hint,
                              "a copy of %zu bytes at offset %zu (ending at byte %zu) does not "
                              "fit the %zu-byte symbol %p on device %d; nothing was copied",
                              bytes, offset, offset + bytes, size, symbol, ordinal);
        }
        goto out;
    }
    if (bytes == 0) goto out;
    cudaStream_t s = sync ? 0 : q->cs;
    cudaError_t err;
    const char *call;
    if (to_symbol) {
        call = "cudaMemcpyToSymbolAsync";
        err = cm__cuda.memcpy_to_symbol_async(symbol, host, bytes, offset, cudaMemcpyDefault, s);
    } else {
        call = "cudaMemcpyFromSymbolAsync";
        err = cm__cuda.memcpy_from_symbol_async(host, symbol, bytes, offset, cudaMemcpyDefault, s);
    }
    if (err == cudaSuccess && sync) {
        call = "cudaStreamSynchronize(0) after the symbol copy";
        err = cm__cuda.stream_synchronize(0);
    }
    if (err != cudaSuccess)
        status = cm__cuda_fail(err, __FILE__, __LINE__, "%s(%zu bytes at offset %zu) in %s", call,
                               bytes, offset, func);
out:
    cm__leave(&sc);
    return status;
}

cm_status_t cm_symbol_address(cm_device_t *dev_h, const void *symbol, void **ptr, size_t *bytes) {
    struct cm__device *dev;
    CM_TRY(cm__device_get(dev_h, "dev", __func__, &dev));
    const int ordinal = dev->ordinal;
    if (symbol == NULL) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, ordinal,
                        "pass the address of the __constant__ or __device__ variable (see "
                        "\"Symbols from plain C\" in memspace.h)", "symbol is NULL");
    }
    CM_TRY(cm__context_guard(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    size_t size = 0;
    void *address = NULL;
    cm_status_t status = cm__symbol_size(symbol, ordinal, &size, __func__);
    if (status == CM_OK) {
        cudaError_t err = cm__cuda.get_symbol_address(&address, symbol);
        if (err != cudaSuccess)
            status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaGetSymbolAddress(symbol %p) on "
                                   "device %d", symbol, ordinal);
    }
    cm__leave(&sc);
    CM_TRY(status);
    if (ptr != NULL) *ptr = address;
    if (bytes != NULL) *bytes = size;
    return CM_OK;
}
