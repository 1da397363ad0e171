/*
 * The checked-error layer: status names and texts, the thread-local detail of the last
 * failure, CUDA error recording, sticky-error (lost context) tracking and the synchronous
 * debug mode.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "cuda_errors.h"
#include "internal.h"
#include "kernels.h"

/* ------------------------------------------------------------------ status names */

static const struct {
    const char *name;
    const char *text;
} cm__status_info[CM_STATUS_COUNT] = {
    [CM_OK] = {"CM_OK", "success"},
    [CM_ERROR_INVALID_ARGUMENT] = {"CM_ERROR_INVALID_ARGUMENT",
                                   "invalid argument: a bad value, handle or range"},
    [CM_ERROR_DEVICE_OUT_OF_MEMORY] = {"CM_ERROR_DEVICE_OUT_OF_MEMORY",
                                       "the GPU is out of memory"},
    [CM_ERROR_HOST_OUT_OF_MEMORY] = {"CM_ERROR_HOST_OUT_OF_MEMORY",
                                     "host memory allocation failed"},
    [CM_ERROR_NO_DRIVER] = {"CM_ERROR_NO_DRIVER", "no NVIDIA driver is installed"},
    [CM_ERROR_DRIVER_TOO_OLD] = {"CM_ERROR_DRIVER_TOO_OLD",
                                 "the NVIDIA driver is older than the CUDA runtime needs"},
    [CM_ERROR_NO_DEVICE] = {"CM_ERROR_NO_DEVICE", "no CUDA device is visible"},
    [CM_ERROR_NO_KERNEL_IMAGE] = {"CM_ERROR_NO_KERNEL_IMAGE",
                                  "no kernel image in the binary runs on this GPU"},
    [CM_ERROR_INVALID_LAUNCH] = {"CM_ERROR_INVALID_LAUNCH",
                                 "the launch configuration breaks a device limit"},
    [CM_ERROR_LAUNCH_OUT_OF_RESOURCES] = {"CM_ERROR_LAUNCH_OUT_OF_RESOURCES",
                                          "the launch needs more registers or shared memory than "
                                          "the GPU provides"},
    [CM_ERROR_CONTEXT_LOST] = {"CM_ERROR_CONTEXT_LOST",
                               "a kernel faulted and the CUDA context is lost: restart the process"},
    [CM_ERROR_BUSY] = {"CM_ERROR_BUSY", "busy: work pending, device in exclusive use or handles live"},
    [CM_ERROR_NOT_SUPPORTED] = {"CM_ERROR_NOT_SUPPORTED",
                                "not supported by this device, driver or build"},
    [CM_ERROR_CUDA] = {"CM_ERROR_CUDA", "CUDA error (see the detail)"},
};

const char *cm_status_name(cm_status_t s) {
    if ((int)s < 0 || (int)s >= CM_STATUS_COUNT) return "CM_STATUS_UNKNOWN";
    return cm__status_info[s].name;
}

const char *cm_status_string(cm_status_t s) {
    if ((int)s < 0 || (int)s >= CM_STATUS_COUNT) return "unknown status";
    return cm__status_info[s].text;
}

/* ------------------------------------------------------------------ the thread-local detail */

static _Thread_local cm_error_t cm__tls_error = {.status = CM_OK, .cuda_error_name = "", .device = -1};

const cm_error_t *cm_last_error(void) {
    if (cm__tls_error.cuda_error_name == NULL) cm__tls_error.cuda_error_name = "";
    return &cm__tls_error;
}

void cm_last_error_clear(void) {
    memset(&cm__tls_error, 0, sizeof cm__tls_error);
    cm__tls_error.status = CM_OK;
    cm__tls_error.cuda_error_name = "";
    cm__tls_error.device = -1;
}

void cm__strlcpy(char *dst, const char *src, size_t size) {
    if (dst == NULL || size == 0) return;
    if (src == NULL) src = "";
    size_t n = strlen(src);
    if (n >= size) n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void cm__set_detail(cm_status_t status, int cuda_error, const char *cuda_name,
                           const char *call, const char *file, int line, int device,
                           const char *hint) {
    cm_error_t *e = &cm__tls_error;
    e->status = status;
    e->cuda_error = cuda_error;
    e->cuda_error_name = cuda_name != NULL ? cuda_name : "";
    cm__strlcpy(e->call, call, sizeof e->call);
    cm__strlcpy(e->file, file, sizeof e->file);
    e->line = line;
    e->device = device;
    e->context_lost = false;
    cm__strlcpy(e->hint, hint, sizeof e->hint);
    e->message[0] = '\0';
}

cm_status_t cm__fail(cm_status_t status, int device, const char *file, int line, const char *call,
                     const char *hint, const char *fmt, ...) {
    if (device < 0) device = cm__scope_device();
    cm__set_detail(status, 0, "", call, file, line, device, hint);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cm__tls_error.message, sizeof cm__tls_error.message, fmt, ap);
    va_end(ap);
    return status;
}

void cm__error_set_location(const char *file, int line) {
    cm__strlcpy(cm__tls_error.file, file, sizeof cm__tls_error.file);
    cm__tls_error.line = line;
}

size_t cm_error_format(const cm_error_t *e, char *buf, size_t size) {
    if (e == NULL) e = cm_last_error();
    if (buf == NULL) size = 0;
    char where[CM_ERROR_CALL_MAX + CM_ERROR_FILE_MAX + 64] = "";
    if (e->call[0] != '\0' || e->file[0] != '\0') {
        snprintf(where, sizeof where, "\n  at %s (%s:%d)", e->call[0] ? e->call : "?",
                 e->file[0] ? e->file : "?", e->line);
    }
    char device[32] = "";
    if (e->device >= 0) snprintf(device, sizeof device, ", device %d", e->device);
    char cuda[96] = "";
    if (e->cuda_error != 0) {
        snprintf(cuda, sizeof cuda, "%s%s (%d)", where[0] || device[0] ? ", " : "\n  ",
                 e->cuda_error_name && e->cuda_error_name[0] ? e->cuda_error_name : "cudaError",
                 e->cuda_error);
    }
    int n = snprintf(buf, size, "%s: %s%s%s%s%s%s%s", cm_status_name(e->status),
                     e->message[0] ? e->message : cm_status_string(e->status), where, device, cuda,
                     e->context_lost ? "\n  the CUDA context is lost: restart the process to use "
                                       "the GPU again"
                                     : "",
                     e->hint[0] ? "\n  hint: " : "", e->hint);
    return n < 0 ? 0 : (size_t)n;
}

/* ------------------------------------------------------------------ fault-injection hooks */


char *cm__format_bytes(size_t bytes, char *buf, size_t size) {
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (buf == NULL || size == 0) return buf;
    if (bytes < 1024) {
        snprintf(buf, size, "%zu B", bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        ++u;
    }
    snprintf(buf, size, "%.2f %s", v, units[u]);
    return buf;
}

cm_error_t *cm__detail(void) {
    /* cm_last_error() returns a pointer to the (non-const) thread-local detail */
    return (cm_error_t *)cm_last_error();
}

void cm__text_printf(cm__text_t *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *dst = NULL;
    size_t room = 0;
    if (t->buf != NULL && t->len < t->size) {
        dst = t->buf + t->len;
        room = t->size - t->len;
    }
    int n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n;
}

cm_status_t cm__cuda_fail(cudaError_t err, const char *file, int line, const char *fmt, ...) {
    char call[CM_ERROR_CALL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    return cm_record_cuda_error(err, call, file, line);
}

/* ------------------------------------------------------------------ explicit device: the scope's device */

CM__TLS_SMALL int cm__thread_device = -1;
CM__TLS_SMALL int cm__thread_captures;

/* ------------------------------------------------------------------ kernel names */

/* The C++ ABI's demangler, in libstdc++ (linked for the CUDA objects). Weak: a program linked
 * without it gets the mangled names. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *length, int *status)
    __attribute__((weak));

const char *cm__kernel_name(const char *name, char *buf, size_t size) {
    if (name == NULL || buf == NULL || size == 0) return name;
    if (__cxa_demangle == NULL || strncmp(name, "_Z", 2) != 0) return name;
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (d == NULL || status != 0) {
        free(d);
        return name;
    }
    cm__strlcpy(buf, d, size);
    free(d);
    return buf;
}

/* ------------------------------------------------------------------ lost contexts */

/* lost[d] != 0 once a sticky error was seen on device d; lost_any for "any device". The first
 * cause per device is kept so that later calls can repeat it. */
static atomic_int cm__lost[CM__MAX_DEVICES + 1];
/* Whether any slot of cm__lost is set: the inline fast path of cm__context_guard reads it. */
atomic_int cm__lost_any;
static pthread_mutex_t cm__lost_lock = PTHREAD_MUTEX_INITIALIZER;
static cm_error_t cm__lost_cause[CM__MAX_DEVICES + 1];

static int cm__lost_slot(int device) {
    return (device >= 0 && device < CM__MAX_DEVICES) ? device : CM__MAX_DEVICES;
}

static void cm__mark_lost(const cm_error_t *cause) {
    int slot = cm__lost_slot(cause->device);
    pthread_mutex_lock(&cm__lost_lock);
    if (atomic_load(&cm__lost[slot]) == 0) {
        cm__lost_cause[slot] = *cause;
        atomic_store(&cm__lost[slot], 1);
        atomic_store(&cm__lost_any, 1);
    }
    pthread_mutex_unlock(&cm__lost_lock);
}

/* Replace the stored cause with a better-worded copy of the same failure (same error, place). */
static void cm__refine_lost_cause(const cm_error_t *cause) {
    int slot = cm__lost_slot(cause->device);
    pthread_mutex_lock(&cm__lost_lock);
    cm_error_t *stored = &cm__lost_cause[slot];
    if (stored->cuda_error == cause->cuda_error && stored->line == cause->line &&
        strcmp(stored->file, cause->file) == 0)
        *stored = *cause;
    pthread_mutex_unlock(&cm__lost_lock);
}

cm_status_t cm__context_guard_slow(int device) {
    int slot = -1;
    if (device >= 0) {
        int s = cm__lost_slot(device);
        if (atomic_load(&cm__lost[s])) slot = s;
        /* a sticky error of unknown device poisons every device */
        else if (atomic_load(&cm__lost[CM__MAX_DEVICES])) slot = CM__MAX_DEVICES;
    } else {
        for (int s = 0; s <= CM__MAX_DEVICES && slot < 0; ++s)
            if (atomic_load(&cm__lost[s])) slot = s;
    }
    if (slot < 0) return CM_OK;
    cm_error_t cause;
    pthread_mutex_lock(&cm__lost_lock);
    cause = cm__lost_cause[slot];
    pthread_mutex_unlock(&cm__lost_lock);
    cm__tls_error = cause;
    cm__tls_error.status = CM_ERROR_CONTEXT_LOST;
    cm__tls_error.context_lost = true;
    char msg[CM_ERROR_MESSAGE_MAX * 2];
    snprintf(msg, sizeof msg, "the CUDA context%s was lost earlier and cannot be used again; the "
             "first fault: %s", slot < CM__MAX_DEVICES ? " of this device" : "", cause.message);
    cm__strlcpy(cm__tls_error.message, msg, sizeof cm__tls_error.message);
    return CM_ERROR_CONTEXT_LOST;
}

cm_status_t cm_check_context(int device) {
    if (device < -1) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "pass a device ordinal (0, 1, ...) or -1 for any device",
                        "device %d is not an ordinal", device);
    }
    return cm__context_guard(device);
}

void cm__context_reset_for_tests(void) {
    pthread_mutex_lock(&cm__lost_lock);
    for (int s = 0; s <= CM__MAX_DEVICES; ++s) atomic_store(&cm__lost[s], 0);
    atomic_store(&cm__lost_any, 0);
    memset(cm__lost_cause, 0, sizeof cm__lost_cause);
    pthread_mutex_unlock(&cm__lost_lock);
}

/* ------------------------------------------------------------------ CUDA errors */

cm_status_t cm_status_from_cuda(cudaError_t err) {
    return cm__cuda_error_entry((int)err)->status;
}

const char *cm_cuda_error_hint(cudaError_t err) {
    return cm__cuda_error_entry((int)err)->hint;
}

bool cm_cuda_error_is_sticky(cudaError_t err) {
    return cm__cuda_error_entry((int)err)->sticky;
}

static void cm__version_text(int v, char *buf, size_t size) {
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

cm_status_t cm_record_cuda_error(cudaError_t err, const char *call, const char *file, int line) {
    if (err == cudaSuccess) return CM_OK;
    const cm__cuda_error_entry_t *entry = cm__cuda_error_entry((int)err);
    cm_status_t status = entry->status;
    /* the device of the library call in progress (cm__enter), else the thread's current one:
     * a sticky error is charged to the device whose work raised it */
    int device = cm__scope_device();
    /* cudaGetDevice does not touch the GPU; it fails only when no driver is present */
    if (device < 0 && cm__cuda.get_device(&device) != cudaSuccess) device = -1;
    const char *name = entry->name[0] ? entry->name : cm__cuda.get_error_name(err);
    cm__set_detail(status, (int)err, name, call, file, line, device, entry->hint);
    cm_error_t *e = &cm__tls_error;
    const char *cuda_text = cm__cuda.get_error_string(err);

    if (err == cudaErrorInsufficientDriver) {
        int driver = 0, runtime = 0;
        if (cm__cuda.driver_get_version(&driver) != cudaSuccess) driver = 0;
        if (cm__cuda.runtime_get_version(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
        char rt[16];
        cm__version_text(runtime, rt, sizeof rt);
        if (driver == 0) {
            status = CM_ERROR_NO_DRIVER;
            e->status = status;
            snprintf(e->message, sizeof e->message,
                     "no NVIDIA driver is installed (libcuda.so.1 cannot be loaded), so CUDA "
                     "runtime %s cannot reach a GPU; CUDA reports this as \"%s\"", rt, cuda_text);
            cm__strlcpy(e->hint,
                        "install the NVIDIA driver (580 or newer for CUDA 13.0) and check it "
                        "with nvidia-smi; in a container run it with --gpus all (NVIDIA Container "
                        "Toolkit); on WSL2 install the driver on Windows, not inside Linux",
                        sizeof e->hint);
        } else {
            char dr[16];
            cm__version_text(driver, dr, sizeof dr);
            snprintf(e->message, sizeof e->message,
                     "the installed NVIDIA driver supports CUDA %s but this program uses CUDA "
                     "runtime %s (\"%s\")", dr, rt, cuda_text);
        }
    } else if (err == cudaErrorNoDevice) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        if (cvd != NULL) {
            snprintf(e->message, sizeof e->message,
                     "no CUDA device is visible: CUDA_VISIBLE_DEVICES='%s' hides them (\"%s\")",
                     cvd, cuda_text);
            cm__strlcpy(e->hint,
                        "unset CUDA_VISIBLE_DEVICES, or set it to ordinals or UUIDs that "
                        "nvidia-smi -L lists",
                        sizeof e->hint);
        } else {
            snprintf(e->message, sizeof e->message,
                     "the NVIDIA driver is loaded but sees no CUDA device (\"%s\")", cuda_text);
        }
    } else {
        snprintf(e->message, sizeof e->message, "%s failed: %s", call ? call : "a CUDA call",
                 cuda_text);
    }

    if (entry->sticky) {
        e->context_lost = true;
        cm__mark_lost(e);
    } else if (err == cudaErrorCudartUnloading) {
        /* the runtime was torn down (process exit: a call from an atexit handler or a static
         * destructor after cudart's own): no device can be used again, and the driver frees
         * every context's memory itself. Every device is marked lost, so that destroys and
         * closes release their objects on the host side instead of failing to enter a scope
         * for ever (README "Troubleshooting") */
        e->context_lost = true;
        cm_error_t all = *e;
        all.device = -1;
        cm__mark_lost(&all);
    }
    /* clear CUDA's own last error (the thread's record, also of a sticky error: the library
     * keeps the loss in its own state and refuses the lost device's work) so the next call, maybe
     * on another device, is not blamed for this one */
    (void)cm__cuda.get_last_error();
    return status;
}

/* ------------------------------------------------------------------ synchronous debug mode */

/* -1: not read yet; 0 off; 1 on */
static atomic_int cm__sync_state = -1;

static int cm__sync_from_env(void) {
    const char *v = getenv("CUDAMODEL_SYNC");
    return (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0) ? 1 : 0;
}

void cm_sync_mode_set(bool on) {
    atomic_store(&cm__sync_state, on ? 1 : 0);
}

bool cm_sync_mode(void) {
    int s = atomic_load(&cm__sync_state);
    if (s < 0) {
        int expected = -1;
        s = cm__sync_from_env();
        if (!atomic_compare_exchange_strong(&cm__sync_state, &expected, s)) s = expected;
    }
    return s == 1;
}

void cm__sync_mode_reload_for_tests(void) {
    atomic_store(&cm__sync_state, -1);
}

cm_status_t cm_check_launch(const char *kernel_name, const char *file, int line) {
    if (kernel_name == NULL) kernel_name = "kernel";
    int device = -1;
    if (cm__cuda.get_device(&device) != cudaSuccess) device = -1;
    CM_TRY(cm__context_guard(device));
    char call[CM_ERROR_CALL_MAX];
    cudaError_t err = cm__cuda.get_last_error();
    if (err != cudaSuccess) {
        snprintf(call, sizeof call, "launch of %s", kernel_name);
        return cm_record_cuda_error(err, call, file, line);
    }
    if (cm_sync_mode()) {
        err = cm__cuda.device_synchronize();
        if (err != cudaSuccess) {
            snprintf(call, sizeof call, "%s (CUDAMODEL_SYNC: synchronized after the launch)",
                     kernel_name);
            cm_status_t s = cm_record_cuda_error(err, call, file, line);
            char msg[CM_ERROR_MESSAGE_MAX * 2];
            snprintf(msg, sizeof msg, "kernel %s launched at %s:%d failed while running: %s",
                     kernel_name, file ? file : "?", line, cm__cuda.get_error_string(err));
            cm__strlcpy(cm__tls_error.message, msg, sizeof cm__tls_error.message);
            if (cm__tls_error.context_lost) {
                /* keep the lost-context record naming this launch */
                cm__refine_lost_cause(&cm__tls_error);
            }
            return s;
        }
    }
    return CM_OK;
}
