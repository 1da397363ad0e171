/*
 * The device object (private): one struct per cm_device_open(), holding everything the library
 * keeps per device in three parts, created by cm_device_open() and destroyed by
 * cm_device_close() (core/device.c):
 *   facts      ordinal, name, properties read at open;
 *   memory     the memory pool, the live list and counters of buffers, host buffers and the
 *              objects of memspace.h, the staging buffers (memory/, which registers its busy
 *              check and release in mem);
 *   execution  the stream and event pools and per-stream scratch (exec/), created on first use.
 * Every module reaches its part through this struct, never through a side list keyed by the
 * device. A part that a module above core creates registers its busy check and its release
 * with the part (function pointers), so that the core can close the device without calling up.
 *
 * The public handle cm_device_t * is a handle value (core/handle.h) that names a struct
 * cm__device; struct cm_device itself is never defined, so the compiler rejects code that
 * dereferences a handle instead of looking it up.
 */
#ifndef CUDAMODEL_SRC_CORE_DEVICE_H
#define CUDAMODEL_SRC_CORE_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>

#include "handle.h"
#include "internal.h"

/** Node of a device's doubly-linked list of live allocations (creation order). */
typedef struct cm__link {
    struct cm__link *prev, *next;
} cm__link_t;

/** Worker threads of a device that copy host memory in parallel (staging.c). */
typedef struct cm__copy_workers cm__copy_workers_t;

typedef struct cm__staging {
    pthread_mutex_t lock;         /* one staged copy at a time per device */
    cm_staging_config_t cfg;      /* 0 fields: the defaults (resolved by memory/staging.c) */
    unsigned n_slots;             /* allocated staging buffers (0: none yet) */
    size_t slot_bytes;
    void *slot[CM_STAGING_MAX_BUFFERS];
    cudaEvent_t event[CM_STAGING_MAX_BUFFERS];
    bool event_pending[CM_STAGING_MAX_BUFFERS]; /* recorded, not yet waited for */
    cm__copy_workers_t *workers;
} cm__staging_t;

struct cm__device;

/** A part of the device object owned by a module above the core. */
typedef struct cm__device_part {
    void *state;                                      /* the module's, NULL until created */
    /* CM_OK when the part lets the device close, else a recorded failure (CM_ERROR_BUSY with
     * what is still in use). Called under cm__core_lock(): no CUDA call, no other lock. */
    cm_status_t (*busy_locked)(struct cm__device *dev);
    /* Free the part (CUDA calls allowed, each in a scope of the device; no lock held; no other
     * thread reaches dev). The part is gone either way: CM_OK when everything was released, else
     * a recorded failure whose message says what could not be (a CUDA destroy that failed, or
     * objects left with the driver because no scope of the device could be entered). A lost
     * context is not a failure here: its objects went with it. */
    cm_status_t (*release)(struct cm__device *dev);
} cm__device_part_t;

struct cm__device {
    void *handle;                       /* this object's handle value (cm_device_t *) */

    /* facts */
    int ordinal;
    char name[256];
    size_t total_bytes;

    /* memory */
    cudaMemPool_t pool;                 /* NULL: the device has no memory pools */
    unsigned long long release_threshold;
    /* under cm__core_lock() */
    cm__link_t live;                    /* sentinel of the live list */
    size_t n_buffers, buffer_bytes, peak_buffer_bytes;
    size_t n_host_buffers, host_bytes;
    /* the objects of memspace.h (memory/memspace_internal.h): pitched buffers, arrays, managed
     * buffers, textures and surfaces, and their bytes; n_views counts the textures and surfaces
     * among them (a destroy of memory looks for its views only while it is not 0) */
    size_t n_spaces, space_bytes, n_views;
    uint64_t serial;
    uint64_t peer_ready;                /* bit d: peer access with ordinal d was set up */
    struct cm__device *next_open;       /* the list of open device objects */
    unsigned pins;                      /* users of pool outside the lock (trim, reports):
                                           close waits for 0 before destroying the pool */
    cm__staging_t staging;              /* lock initialised by open; the rest memory's */
    /* memory part (memory/): busy_locked refuses the close while buffers live, release frees
     * the staging buffers and threads and the deferred frees; both set by the memory module when
     * it first uses the device object; state: the deferred-free list (memory/device_memory.c,
     * under cm__core_lock()) */
    cm__device_part_t mem;

    /* execution (exec/stream.c): state is its struct cm__exec */
    cm__device_part_t exec;
};

/** The object of a device handle, or NULL (no failure recorded). */
static inline struct cm__device *cm__device_obj(const cm_device_t *h) {
    return (struct cm__device *)cm__handle_obj(h, CM__KIND_DEVICE);
}

/** The object of a device handle, checked: records the failure naming arg and func. */
cm_status_t cm__device_get(const cm_device_t *h, const char *arg, const char *func,
                           struct cm__device **out);

/** Close a device object the library opened for itself (a device set's members): like
 *  cm_device_close(), but when the device's scope cannot be entered the object is closed all
 *  the same (nobody could close it again), what it could not release listed in the failure. */
cm_status_t cm__device_release(cm_device_t *h);

/** The first of the open device objects (cm__core_lock() held); the next is dev->next_open.
 *  A caller that uses an object after dropping the lock pins it first (++dev->pins under the
 *  lock, --dev->pins under the lock when done): close waits for its pool's pins. */
struct cm__device *cm__device_first_open_locked(void);

#endif /* CUDAMODEL_SRC_CORE_DEVICE_H */
