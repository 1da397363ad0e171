/*
 * The device object (core/device.h): open and close, and the list of open device objects.
 *
 * A device object is one handle of the core's table (core/handle.h). Open creates the whole
 * object (facts, memory pool, staging lock) and gives it a handle; close checks, under the core
 * lock, that no part is busy (the memory part: live buffers; the exec part: lent streams and
 * events), ends the handle and unlinks the object in that same section, then releases the parts
 * through the functions they registered, destroys the pool and frees the object. The core never
 * calls a module above it.
 */
#define _POSIX_C_SOURCE 200809L

#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "lock.h"

/* ------------------------------------------------------------------ text, detail */

/* ------------------------------------------------------------------ the list of open objects */

/* Open device objects, newest first (under cm__core_lock()): holdings and trims across the
 * device objects of one ordinal (memory/device_memory.c). */
static struct cm__device *cm__open_devices;

struct cm__device *cm__device_first_open_locked(void) {
    return cm__open_devices;
}

cm_status_t cm__device_get(const cm_device_t *h, const char *arg, const char *func,
                           struct cm__device **out) {
    void *o;
    cm_status_t s = cm__handle_get(h, CM__KIND_DEVICE, arg, func, &o);
    *out = o;
    return s;
}

/* ------------------------------------------------------------------ open, close */

/* Create the device's memory pool (cudaMemPoolCreate needs no current device, but setting its
 * attribute may: both run with the device current). */
static cm_status_t cm__pool_create(struct cm__device *dev) {
    cm__scope_t sc;
    CM_TRY(cm__enter(dev->ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    struct cudaMemPoolProps pp;
    memset(&pp, 0, sizeof pp);
    pp.allocType = cudaMemAllocationTypePinned;
    pp.handleTypes = cudaMemHandleTypeNone;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = dev->ordinal;
    cudaError_t err = cm__cuda.mem_pool_create(&dev->pool, &pp);
    if (err != cudaSuccess) {
        dev->pool = NULL;
        status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolCreate(device %d)",
                               dev->ordinal);
    } else {
        unsigned long long keep = dev->release_threshold;
        err = cm__cuda.mem_pool_set_attribute(dev->pool, cudaMemPoolAttrReleaseThreshold, &keep);
        if (err != cudaSuccess) {
            status = cm__cuda_fail(err, __FILE__, __LINE__,
                                   "cudaMemPoolSetAttribute(cudaMemPoolAttrReleaseThreshold)");
            (void)cm__cuda.mem_pool_destroy(dev->pool);
            dev->pool = NULL;
        }
    }
    cm__leave(&sc);
    return status;
}

cm_status_t cm_device_open(int ordinal, cm_device_t **out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_device_t * to receive the device",
                "out is NULL");
    CM_TRY(cm__check_ordinal(ordinal));

    struct cudaDeviceProp props;
    memset(&props, 0, sizeof props);
    cudaError_t err = cm__cuda.get_device_properties(&props, ordinal);
    if (err != cudaSuccess)
        return cm__cuda_fail(err, __FILE__, __LINE__, "cudaGetDeviceProperties(%d)", ordinal);
    int pools = 0;
    err = cm__cuda.device_get_attribute(&pools, cudaDevAttrMemoryPoolsSupported, ordinal);
    if (err != cudaSuccess) {
        return cm__cuda_fail(err, __FILE__, __LINE__,
                             "cudaDeviceGetAttribute(cudaDevAttrMemoryPoolsSupported, %d)", ordinal);
    }

    struct cm__device *dev = calloc(1, sizeof *dev);
    if (dev == NULL) {
        return CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                        "cannot allocate the device object (%zu bytes)", sizeof *dev);
    }
    dev->ordinal = ordinal;
    cm__strlcpy(dev->name, props.name, sizeof dev->name);
    dev->total_bytes = props.totalGlobalMem;
    dev->live.prev = dev->live.next = &dev->live;
    dev->release_threshold = ~0ull;
    pthread_mutex_init(&dev->staging.lock, NULL); /* the rest of staging: 0, the defaults */

    cm_status_t status = CM_OK;
    if (pools) CM_TRY_GOTO(cm__pool_create(dev), status, fail);

    cm__epitaph_t ep = {.device = ordinal};
    cm__core_lock();
    dev->handle = cm__handle_new_locked(CM__KIND_DEVICE, dev, &ep);
    if (dev->handle != NULL) {
        dev->next_open = cm__open_devices;
        cm__open_devices = dev;
    }
    cm__core_unlock();
    if (dev->handle == NULL) {
        status = CM__FAIL(CM_ERROR_HOST_OUT_OF_MEMORY, ordinal, "free host memory",
                          "cannot grow the handle table: host malloc failed");
        goto fail;
    }
    *out = (cm_device_t *)dev->handle;
    return CM_OK;

fail:
    if (dev->pool != NULL) (void)cm__cuda.mem_pool_destroy(dev->pool);
    pthread_mutex_destroy(&dev->staging.lock);
    free(dev);
    return status;
}

cm_status_t cm_device_close(cm_device_t *h) {
    if (h == NULL) return CM_OK;
    /* one locked step: check that no part is busy, end the handle, leave the open list */
    cm__core_lock();
    struct cm__device *dev = cm__handle_obj(h, CM__KIND_DEVICE);
    cm_status_t busy = CM_OK;
    if (dev != NULL) {
        /* the memory part exists once a buffer was created, the exec part once a stream or
         * event was used: a device without them has nothing that keeps it open */
        if (dev->mem.busy_locked != NULL) busy = dev->mem.busy_locked(dev);
        if (busy == CM_OK && dev->exec.busy_locked != NULL) busy = dev->exec.busy_locked(dev);
        if (busy == CM_OK) {
            (void)cm__handle_end_locked(h, CM__KIND_DEVICE);
            for (struct cm__device **p = &cm__open_devices; *p != NULL; p = &(*p)->next_open) {
                if (*p == dev) {
                    *p = dev->next_open;
                    break;
                }
            }
            dev->next_open = NULL;
        }
    }
    cm__core_unlock();
    if (dev == NULL) return cm__handle_fail(h, CM__KIND_DEVICE, "dev", __func__);
    if (busy != CM_OK) return busy;

    /* unreachable now but for the pins of a trim or report running on another thread */
    for (;;) {
        cm__core_lock();
        unsigned pins = dev->pins;
        cm__core_unlock();
        if (pins == 0) break;
        sched_yield();
    }
    if (dev->exec.release != NULL) dev->exec.release(dev);
    if (dev->mem.release != NULL) dev->mem.release(dev);
    pthread_mutex_destroy(&dev->staging.lock);
    cm_status_t status = CM_OK;
    if (dev->pool != NULL && cm__context_guard(dev->ordinal) == CM_OK) {
        cm__scope_t sc;
        if (cm__enter(dev->ordinal, 0, &sc) == CM_OK) {
            cudaError_t err = cm__cuda.mem_pool_destroy(dev->pool);
            if (err != cudaSuccess)
                status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolDestroy(device %d)",
                                       dev->ordinal);
            cm__leave(&sc);
        }
    }
    free(dev);
    return status;
}

cm_status_t cm_device_ordinal(const cm_device_t *h, int *ordinal) {
    CM__REQUIRE(ordinal != NULL, "pass the address of an int", "ordinal is NULL");
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    *ordinal = dev->ordinal;
    return CM_OK;
}

cm_status_t cm_device_memory_pool(const cm_device_t *h, cudaMemPool_t *pool) {
    CM__REQUIRE(pool != NULL, "pass the address of a cudaMemPool_t", "pool is NULL");
    struct cm__device *dev;
    CM__GET(dev, h, CM__KIND_DEVICE, "dev");
    *pool = dev->pool;
    return CM_OK;
}
