/*
 * The device object (core/device.h): open and close, and the list of open device objects.
 *
 * A device object is one handle of the core's table (core/handle.h). Open creates the whole
 * object (facts, memory pool, staging lock) and gives it a handle; close enters the device's
 * scope, checks under the core lock that no part is busy (the memory part: live buffers; the exec
 * part: lent streams and events), ends the handle and unlinks the object in that same section,
 * then releases the parts through the functions they registered, destroys the pool and frees the
 * object, reporting whatever it could not release. The core never calls a module above it.
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

/* device objects a close parked (below, with the close) */
static bool cm__parked_any(int ordinal);
static void cm__parked_finish(int ordinal, bool alive);

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
    if (atomic_load_explicit(&cm__h_forked, memory_order_relaxed)) {
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, ordinal,
                        "start the child with exec (posix_spawn), or fork before any CUDA call",
                        "CUDA cannot be used in this process: it was forked (fork()) after its "
                        "parent opened a device");
    }
    cm__handle_watch_fork();
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
    /* device objects of this ordinal that an earlier close had to park: released now, with
     * the device current (a scope that cannot be entered leaves them for a later open or
     * close; the open itself succeeded) */
    if (cm__thread_captures == 0 && cm__parked_any(ordinal)) {
        const cm_error_t kept = *cm_last_error();
        cm__scope_t sc;
        if (cm__enter(ordinal, 1, &sc) == CM_OK) {
            cm__parked_finish(ordinal, true);
            cm__leave(&sc);
        }
        *cm__detail() = kept;
    }
    *out = (cm_device_t *)dev->handle;
    return CM_OK;

fail:
    if (dev->pool != NULL) (void)cm__cuda.mem_pool_destroy(dev->pool);
    pthread_mutex_destroy(&dev->staging.lock);
    free(dev);
    return status;
}

/* What a close could not release: the first failure's detail and the list of every part's. */
typedef struct cm__close_report {
    cm_status_t status;
    cm_error_t first;
    char list[CM_ERROR_MESSAGE_MAX];
    cm__text_t t;
    int n;
} cm__close_report_t;

static void cm__close_note(cm__close_report_t *r, cm_status_t s) {
    if (s == CM_OK) return;
    const cm_error_t *e = cm_last_error();
    if (r->status == CM_OK) {
        r->status = s;
        r->first = *e;
    }
    cm__text_printf(&r->t, "%s%s", r->n++ ? "; " : "", e->message);
}

/* The busy checks of the parts (core lock held): CM_OK when nothing keeps dev open. */
static cm_status_t cm__parts_busy_locked(struct cm__device *dev) {
    /* the memory part exists once a buffer was created, the exec part once a stream or event
     * was used: a device without them has nothing that keeps it open */
    cm_status_t busy = CM_OK;
    if (dev->mem.busy_locked != NULL) busy = dev->mem.busy_locked(dev);
    if (busy == CM_OK && dev->exec.busy_locked != NULL) busy = dev->exec.busy_locked(dev);
    return busy;
}

/* Device objects that were closed while their context lived but could not be made current (the
 * library's own device objects close all the same: a device set's members, a failed set open):
 * ended and unlinked, their streams, events, scratch and memory pool not released yet. The next
 * open or close of a device object of that ordinal that enters its scope releases them, instead
 * of leaving them with the driver until the process exits. Under cm__core_lock(), linked
 * through next_open. */
static struct cm__device *cm__parked_devices;

/* Release what dev holds and free it: its parts (each in a scope of its own, nested in the
 * caller's), its staging lock and its pool (in a scope of its own, when the context is alive);
 * r collects what could not be released. */
static void cm__device_finish(struct cm__device *dev, bool alive, cm__close_report_t *r) {
    const int ordinal = dev->ordinal;
    /* unreachable now but for the pins of a trim or report running on another thread */
    for (;;) {
        cm__core_lock();
        unsigned pins = dev->pins;
        cm__core_unlock();
        if (pins == 0) break;
        sched_yield();
    }
    if (dev->exec.release != NULL) cm__close_note(r, dev->exec.release(dev));
    if (dev->mem.release != NULL) cm__close_note(r, dev->mem.release(dev));
    pthread_mutex_destroy(&dev->staging.lock);
    if (dev->pool != NULL && alive) {
        cm__scope_t ps;
        cm_status_t st = cm__enter(ordinal, 0, &ps);
        if (st == CM_OK) {
            cudaError_t err = cm__cuda.mem_pool_destroy(dev->pool);
            if (err != cudaSuccess)
                st = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemPoolDestroy(device %d)",
                                   ordinal);
            cm__leave(&ps);
            if (st != CM_OK) {
                cm_error_t *e = cm__detail();
                cm__text_t t = {e->message, sizeof e->message, strlen(e->message)};
                cm__text_printf(&t, " (the memory pool stays with the driver)");
            }
        } else {
            cm_error_t *e = cm__detail();
            char call[CM_ERROR_CALL_MAX];
            cm__strlcpy(call, e->call, sizeof call);
            cm__text_t t = {e->message, sizeof e->message, 0};
            cm__text_printf(&t, "the memory pool was not destroyed (no scope of device %d: %s "
                            "failed)", ordinal, call);
        }
        cm__close_note(r, st);
    }
    free(dev);
}

/* The status of a close that went ahead: never one that says that nothing was closed. */
static cm_status_t cm__closed_status(cm_status_t s) {
    return s == CM_ERROR_BUSY || s == CM_ERROR_INVALID_ARGUMENT ? CM_ERROR_CUDA : s;
}

static void cm__report_init(cm__close_report_t *r) {
    memset(r, 0, sizeof *r);
    r->t = (cm__text_t){r->list, sizeof r->list, 0};
}

/* Release the parked device objects of ordinal, in the caller's scope of that device (alive) or
 * after its context was lost (alive false: their CUDA objects went with it). Nobody waits for
 * what these releases report: the caller's error detail is kept. */
static void cm__parked_finish(int ordinal, bool alive) {
    for (;;) {
        cm__core_lock();
        struct cm__device *dev = NULL;
        for (struct cm__device **p = &cm__parked_devices; *p != NULL; p = &(*p)->next_open) {
            if ((*p)->ordinal == ordinal) {
                dev = *p;
                *p = dev->next_open;
                dev->next_open = NULL;
                break;
            }
        }
        cm__core_unlock();
        if (dev == NULL) return;
        const cm_error_t kept = *cm_last_error();
        cm__close_report_t r;
        cm__report_init(&r);
        cm__device_finish(dev, alive, &r);
        *cm__detail() = kept;
    }
}

static bool cm__parked_any(int ordinal) {
    cm__core_lock();
    bool any = false;
    for (const struct cm__device *d = cm__parked_devices; d != NULL && !any; d = d->next_open)
        any = d->ordinal == ordinal;
    cm__core_unlock();
    return any;
}

void cm__parked_devices_forget_for_tests(void) {
    cm__core_lock();
    while (cm__parked_devices != NULL) { /* their simulated CUDA objects are gone already */
        struct cm__device *d = cm__parked_devices;
        cm__parked_devices = d->next_open;
        pthread_mutex_destroy(&d->staging.lock);
        free(d);
    }
    cm__core_unlock();
}

/*
 * Close h. The device's scope is entered before anything is released, so that every CUDA
 * destroy of the parts and of the pool runs with the device's context current. keep: a scope
 * that cannot be entered refuses the close (nothing changed, the device stays open and the close
 * may be repeated); without it (the library's own device objects) the object is closed all the
 * same: its handle ends, and what it holds is parked until the next open or close of the device
 * that enters the scope (cm__parked_finish). A lost context releases everything on the host
 * side at once (its CUDA objects went with it).
 */
static cm_status_t cm__device_close_q(cm_device_t *h, bool keep, const char *func) {
    if (h == NULL) return CM_OK;
    cm__core_lock();
    struct cm__device *dev = cm__handle_obj(h, CM__KIND_DEVICE);
    cm_status_t busy = dev != NULL ? cm__parts_busy_locked(dev) : CM_OK;
    const int ordinal = dev != NULL ? dev->ordinal : -1;
    cm__core_unlock();
    if (dev == NULL) return cm__handle_fail(h, CM__KIND_DEVICE, "dev", func);
    if (busy != CM_OK) return busy;
    /* while this thread captures a graph, CUDA refuses (and the capture would not survive) the
     * cudaFree of deferred frees and the pool's destroy: the caller's close is refused, the
     * library's own objects are parked as below */
    const bool capturing = cm__thread_captures > 0;
    if (capturing && keep) {
        return CM__FAIL(CM_ERROR_BUSY, ordinal,
                        "end the graph capture of this thread first, then close the device",
                        "device %d cannot be closed while this thread captures a graph (CUDA "
                        "refuses the frees and the memory pool's destroy of a close during a "
                        "capture); nothing was closed", ordinal);
    }
    /* a lost context is no failure of the close: its objects went with it */
    const bool alive = cm__context_guard(ordinal) == CM_OK;
    if (!alive) cm_last_error_clear();
    cm__scope_t sc;
    cm_status_t entered_st = CM_OK;
    if (alive && !capturing) {
        entered_st = cm__enter(ordinal, 1, &sc);
        if (entered_st != CM_OK && keep) return entered_st; /* still open: nothing released */
    }
    const bool entered = alive && !capturing && entered_st == CM_OK;
    /* one locked step: check again that no part is busy (another thread may have used the
     * device meanwhile), end the handle, leave the open list; parked when the scope could not
     * be entered */
    cm__core_lock();
    if (cm__handle_obj(h, CM__KIND_DEVICE) != dev) {
        dev = NULL; /* closed by another thread meanwhile */
    } else {
        busy = cm__parts_busy_locked(dev);
        if (busy == CM_OK) {
            (void)cm__handle_end_locked(h, CM__KIND_DEVICE);
            for (struct cm__device **p = &cm__open_devices; *p != NULL; p = &(*p)->next_open) {
                if (*p == dev) {
                    *p = dev->next_open;
                    break;
                }
            }
            dev->next_open = NULL;
            if (alive && !entered) {
                dev->next_open = cm__parked_devices;
                cm__parked_devices = dev;
            }
        }
    }
    cm__core_unlock();
    if (dev == NULL || busy != CM_OK) {
        if (entered) cm__leave(&sc);
        return dev == NULL ? cm__handle_fail(h, CM__KIND_DEVICE, "dev", func) : busy;
    }
    if (alive && !entered) { /* parked: nothing is lost, only later */
        char why[CM_ERROR_MESSAGE_MAX];
        if (capturing) {
            (void)CM__FAIL(CM_ERROR_CUDA, ordinal, "", "a graph capture");
            cm__strlcpy(why, "this thread captures a graph (CUDA refuses frees during a capture)",
                        sizeof why);
        } else { /* the enter's failure (its call and place kept), said of the close */
            cm__text_t w = {why, sizeof why, 0};
            cm__text_printf(&w, "its context could not be made current now (%s)",
                            cm_last_error()->message);
        }
        cm_error_t *e = cm__detail();
        cm__text_t t = {e->message, sizeof e->message, 0};
        cm__text_printf(&t, "device %d is closed, but its streams, events and memory pool are "
                        "released only at the next open or close of device %d: %s", ordinal,
                        ordinal, why);
        cm__strlcpy(e->hint,
                    "nothing to repeat: the device object is gone (do not close it again); the "
                    "next cm_device_open() or cm_device_close() of this device releases what it "
                    "held",
                    sizeof e->hint);
        e->status = capturing ? CM_ERROR_CUDA : cm__closed_status(entered_st);
        return e->status;
    }

    cm__close_report_t r;
    cm__report_init(&r);
    char name[sizeof dev->name];
    cm__strlcpy(name, dev->name, sizeof name);
    cm__device_finish(dev, alive, &r);
    /* device objects of this ordinal that an earlier close had to park */
    cm__parked_finish(ordinal, alive);
    if (entered) cm__leave(&sc);
    if (r.status == CM_OK) return CM_OK;
    cm_error_t *e = cm__detail();
    *e = r.first;
    /* CM_ERROR_BUSY and CM_ERROR_INVALID_ARGUMENT say that nothing was closed (device.h): a
     * failed destroy that maps to one of them (cudaErrorNotReady is CM_ERROR_BUSY) is
     * CM_ERROR_CUDA here, the device being closed */
    e->status = cm__closed_status(r.status);
    cm__text_t t = {e->message, sizeof e->message, 0};
    cm__text_printf(&t, "device %d (%s) is closed, but not everything it held was released: %s",
                    ordinal, name, r.list);
    cm__strlcpy(e->hint,
                "what is listed stays with the driver until the process exits; the device "
                "object itself is gone (do not close it again)",
                sizeof e->hint);
    return e->status;
}

cm_status_t cm_device_close(cm_device_t *h) {
    return cm__device_close_q(h, true, __func__);
}

cm_status_t cm__device_release(cm_device_t *h) {
    return cm__device_close_q(h, false, __func__);
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
