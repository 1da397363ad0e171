/*
 * NVML in the core (core/nvml_query.h): the processes holding a GPU and its health
 * (cm_device_processes(), cm_device_health() of device.h).
 *
 * NVML is initialised once and kept: nvmlInit_v2 counts its callers, so an application's own
 * init/shutdown pairs are unaffected, and initialising per query would add NVML's start-up to
 * every out-of-memory report. NVML and CUDA number GPUs differently (CUDA_VISIBLE_DEVICES
 * renumbers CUDA's), so a CUDA ordinal is matched to NVML's device by PCI bus id.
 *
 * Process ids: a process whose id has no /proc entry here (another container's PID namespace)
 * is listed as not visible, without a name. Depending on the driver, ids inside a container are
 * those of the container's namespace or the host's; with host ids, a process of this container
 * shows as not visible too, or, when its host id happens to exist here, under the name of the
 * process that owns that id here (the listing cannot tell).
 */
#define _POSIX_C_SOURCE 200809L /* pthread, open flags */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cudamodel/device.h>

#include "internal.h"
#include "nvml_query.h"

/* ------------------------------------------------------------------ return codes */

const char *cm__nvml_error_name(cm__nvml_return_t r) {
    switch (r) {
    case CM__NVML_SUCCESS: return "NVML_SUCCESS";
    case CM__NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case CM__NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case CM__NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case CM__NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case CM__NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case CM__NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case CM__NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case CM__NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case CM__NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case CM__NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case CM__NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case CM__NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case CM__NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case CM__NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case CM__NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case CM__NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case CM__NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case CM__NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case CM__NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case CM__NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case CM__NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case CM__NVML_ERROR_UNKNOWN: return "NVML_ERROR_UNKNOWN";
    default: return "NVML_ERROR_?";
    }
}

/* Why a call failed, for people: "<call> failed: <what> (NVML_ERROR_X)". */
static void cm__nvml_why(cm__nvml_return_t r, const char *call, char *reason, size_t size) {
    const char *what;
    switch (r) {
    case CM__NVML_ERROR_LIBRARY_NOT_FOUND: what = "libnvidia-ml.so.1 cannot be loaded"; break;
    case CM__NVML_ERROR_FUNCTION_NOT_FOUND:
        what = "this driver's libnvidia-ml.so.1 does not have it (an older driver)";
        break;
    case CM__NVML_ERROR_DRIVER_NOT_LOADED: what = "the NVIDIA kernel driver is not loaded"; break;
    case CM__NVML_ERROR_NO_PERMISSION: what = "no permission"; break;
    case CM__NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        what = "libnvidia-ml.so.1 and the loaded kernel driver differ in version (a driver "
               "update without a reboot)";
        break;
    case CM__NVML_ERROR_GPU_IS_LOST: what = "the GPU has fallen off the bus"; break;
    case CM__NVML_ERROR_NOT_SUPPORTED: what = "not supported on this GPU"; break;
    case CM__NVML_ERROR_NOT_FOUND: what = "not found"; break;
    default: what = "failed"; break;
    }
    if (r == CM__NVML_ERROR_LIBRARY_NOT_FOUND) {
        const char *dl = cm__nvml_load_error();
        snprintf(reason, size, "%s%s%s%s", what, dl[0] ? " (" : "", dl, dl[0] ? ")" : "");
        return;
    }
    snprintf(reason, size, "%s: %s (%s)", call, what, cm__nvml_error_name(r));
}

/* ------------------------------------------------------------------ initialisation */

static pthread_mutex_t cm__nvml_lock = PTHREAD_MUTEX_INITIALIZER;
static int cm__nvml_state;                         /* 0 not tried, 1 ready, -1 unusable */
static char cm__nvml_state_reason[CM__NVML_REASON_MAX];

bool cm__nvml_ready(char *reason, size_t size) {
    pthread_mutex_lock(&cm__nvml_lock);
    if (cm__nvml_state == 0) {
        cm__nvml_return_t r = cm__nvml.init();
        if (r == CM__NVML_SUCCESS) {
            cm__nvml_state = 1;
            cm__nvml_state_reason[0] = '\0';
        } else {
            cm__nvml_state = -1;
            cm__nvml_why(r, "nvmlInit_v2", cm__nvml_state_reason, sizeof cm__nvml_state_reason);
        }
    }
    bool ok = cm__nvml_state == 1;
    if (reason != NULL && size > 0) cm__strlcpy(reason, cm__nvml_state_reason, size);
    pthread_mutex_unlock(&cm__nvml_lock);
    return ok;
}

void cm__nvml_reset_for_tests(void) {
    pthread_mutex_lock(&cm__nvml_lock);
    if (cm__nvml_state == 1) (void)cm__nvml.shutdown();
    cm__nvml_state = 0;
    cm__nvml_state_reason[0] = '\0';
    pthread_mutex_unlock(&cm__nvml_lock);
}

/* ------------------------------------------------------------------ matching devices */

bool cm__nvml_pci_bus_id(int ordinal, char *bus_id, size_t size, char *reason, size_t rsize) {
    static const enum cudaDeviceAttr attrs[3] = {cudaDevAttrPciDomainId, cudaDevAttrPciBusId,
                                                 cudaDevAttrPciDeviceId};
    int v[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        cudaError_t err = cm__cuda.device_get_attribute(&v[i], attrs[i], ordinal);
        if (err != cudaSuccess) {
            (void)cm__cuda.get_last_error();
            snprintf(reason, rsize, "the PCI bus id of CUDA device %d cannot be read (%s)",
                     ordinal, cm__cuda.get_error_name(err));
            return false;
        }
    }
    /* NVML's own form (8 hex digits of domain); it parses any "domain:bus:device.function" */
    snprintf(bus_id, size, "%08x:%02x:%02x.0", (unsigned)v[0], (unsigned)v[1] & 0xffu,
             (unsigned)v[2] & 0xffu);
    return true;
}

bool cm__nvml_device(int ordinal, cm__nvml_device_t *device, char *bus_id, size_t bus_size,
                     char *reason, size_t rsize) {
    char id[32];
    if (!cm__nvml_ready(reason, rsize)) return false;
    if (!cm__nvml_pci_bus_id(ordinal, id, sizeof id, reason, rsize)) return false;
    if (bus_id != NULL && bus_size > 0) cm__strlcpy(bus_id, id, bus_size);
    cm__nvml_device_t d = NULL;
    cm__nvml_return_t r = cm__nvml.handle_by_pci_bus_id(id, &d);
    if (r != CM__NVML_SUCCESS || d == NULL) {
        if (r == CM__NVML_ERROR_NOT_FOUND || r == CM__NVML_SUCCESS)
            snprintf(reason, rsize, "NVML has no GPU at PCI %s (CUDA device %d)", id, ordinal);
        else {
            char call[80];
            snprintf(call, sizeof call, "nvmlDeviceGetHandleByPciBusId_v2(\"%s\")", id);
            cm__nvml_why(r, call, reason, rsize);
        }
        return false;
    }
    *device = d;
    return true;
}

/* ------------------------------------------------------------------ processes */

static const char *_Atomic cm__proc_root;

void cm__nvml_set_proc_root_for_tests(const char *root) {
    atomic_store(&cm__proc_root, root);
}

/* The command name of pid (at most size-1 bytes of <root>/<pid>/comm, without its newline,
 * control and non-ASCII bytes as '?'); whether the process is visible from here. */
static void cm__process_lookup(unsigned int pid, cm_process_info_t *p) {
    const char *root = atomic_load(&cm__proc_root);
    if (root == NULL) root = "/proc";
    char path[512];
    struct stat st;
    p->name[0] = '\0';
    snprintf(path, sizeof path, "%s/%u", root, pid);
    p->visible = pid != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    if (!p->visible) return;
    snprintf(path, sizeof path, "%s/%u/comm", root, pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return; /* e.g. hidepid: there, but not ours to read */
    char buf[sizeof p->name];
    ssize_t n;
    do {
        n = read(fd, buf, sizeof buf - 1);
    } while (n < 0 && errno == EINTR);
    (void)close(fd);
    if (n <= 0) return;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0')) --n;
    for (ssize_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)buf[i];
        p->name[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    p->name[n] = '\0';
}

/* Largest first; an unknown amount after every known one; then by pid. */
static int cm__process_order(const void *a, const void *b) {
    const cm_process_info_t *x = a, *y = b;
    if (x->used_bytes != y->used_bytes) {
        if (x->used_bytes == CM_PROCESS_BYTES_UNKNOWN) return 1;
        if (y->used_bytes == CM_PROCESS_BYTES_UNKNOWN) return -1;
        return x->used_bytes > y->used_bytes ? -1 : 1;
    }
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

#define CM__NVML_STACK_PROCESSES 64

/* The processes of an NVML device: the list in *infos (a stack array, or a malloc'd one that
 * the caller frees when *infos != stack), their number in *n. */
static cm__nvml_return_t cm__nvml_list(cm__nvml_device_t d, cm__nvml_process_info_t *stack,
                                       cm__nvml_process_info_t **infos, unsigned int *n) {
    *infos = stack;
    unsigned int cap = CM__NVML_STACK_PROCESSES;
    cm__nvml_return_t r = CM__NVML_ERROR_UNKNOWN;
    /* the list can grow between two calls: try a few times with the size NVML asks for */
    for (int attempt = 0; attempt < 4; ++attempt) {
        unsigned int count = cap;
        r = cm__nvml.compute_processes(d, &count, *infos);
        if (r == CM__NVML_SUCCESS) {
            *n = count <= cap ? count : cap;
            return r;
        }
        if (r != CM__NVML_ERROR_INSUFFICIENT_SIZE) break;
        if (*infos != stack) free(*infos);
        *infos = stack;
        cap = count + 8;
        cm__nvml_process_info_t *more = calloc(cap, sizeof *more);
        if (more == NULL) return CM__NVML_ERROR_MEMORY;
        *infos = more;
    }
    if (*infos != stack) free(*infos);
    *infos = stack;
    return r;
}

/* Processes of an NVML device into out (see cm__nvml_processes). */
static bool cm__nvml_device_processes(cm__nvml_device_t d, cm_process_info_t *out, size_t cap,
                                      size_t *count, char *reason, size_t rsize) {
    cm__nvml_process_info_t stack[CM__NVML_STACK_PROCESSES];
    cm__nvml_process_info_t *infos = NULL;
    unsigned int n = 0;
    cm__nvml_return_t r = cm__nvml_list(d, stack, &infos, &n);
    if (r != CM__NVML_SUCCESS) {
        cm__nvml_why(r, "nvmlDeviceGetComputeRunningProcesses_v3", reason, rsize);
        size_t len = strlen(reason);
        if (r == CM__NVML_ERROR_NO_PERMISSION && len + 1 < rsize)
            snprintf(reason + len, rsize - len, "; in MIG mode only an administrator sees the "
                                                "processes of the whole GPU");
        return false;
    }
    cm_process_info_t *all = calloc(n > 0 ? n : 1, sizeof *all);
    if (all == NULL) {
        if (infos != stack) free(infos);
        snprintf(reason, rsize, "out of host memory for a list of %u processes", n);
        return false;
    }
    unsigned int self = (unsigned int)getpid();
    for (unsigned int i = 0; i < n; ++i) {
        all[i].pid = infos[i].pid;
        all[i].used_bytes = infos[i].usedGpuMemory == CM__NVML_VALUE_NOT_AVAILABLE
                                ? CM_PROCESS_BYTES_UNKNOWN
                                : infos[i].usedGpuMemory;
        all[i].self = infos[i].pid == self;
        cm__process_lookup(infos[i].pid, &all[i]);
    }
    if (infos != stack) free(infos);
    qsort(all, n, sizeof *all, cm__process_order);
    size_t k = cap < n ? cap : n;
    if (k > 0) memcpy(out, all, k * sizeof *all);
    free(all);
    *count = n;
    return true;
}

bool cm__nvml_processes(int ordinal, cm_process_info_t *out, size_t cap, size_t *count,
                        char *reason, size_t rsize) {
    *count = 0;
    cm__nvml_device_t d = NULL;
    if (!cm__nvml_device(ordinal, &d, NULL, 0, reason, rsize)) return false;
    return cm__nvml_device_processes(d, out, cap, count, reason, rsize);
}

cm_status_t cm_device_processes(int ordinal, cm_process_info_t *out, size_t cap, size_t *count) {
    CM__REQUIRE(count != NULL, "pass the address of a size_t", "count is NULL");
    *count = 0;
    CM__REQUIRE(out != NULL || cap == 0,
                "pass an array of cap cm_process_info_t, or cap 0 to count only",
                "out is NULL but cap is %zu", cap);
    CM_TRY(cm__check_ordinal(ordinal));
    char reason[CM__NVML_REASON_MAX];
    size_t n = 0;
    if (!cm__nvml_processes(ordinal, out, cap, &n, reason, sizeof reason)) {
        return CM__FAIL(CM_ERROR_NOT_SUPPORTED, ordinal,
                        "NVML comes with the NVIDIA driver (libnvidia-ml.so.1; in a container "
                        "the NVIDIA Container Toolkit mounts it); without it, nvidia-smi "
                        "--query-compute-apps=pid,process_name,used_memory --format=csv lists "
                        "the processes",
                        "cannot list the processes on device %d: NVML is not available: %s",
                        ordinal, reason);
    }
    *count = n;
    return CM_OK;
}

/* ------------------------------------------------------------------ health */

static int cm__nvml_int(cm__nvml_return_t r, unsigned int v) {
    return r == CM__NVML_SUCCESS ? (int)v : CM_HEALTH_UNKNOWN;
}

static int cm__nvml_flag(cm__nvml_return_t r, unsigned int v) {
    return r == CM__NVML_SUCCESS ? (v != 0) : CM_HEALTH_UNKNOWN;
}

/* Pages retired for one cause: NVML answers the count with INSUFFICIENT_SIZE when it is not
 * zero and no buffer was given. */
static int cm__nvml_retired(cm__nvml_device_t d, unsigned int cause) {
    unsigned int count = 0;
    cm__nvml_return_t r = cm__nvml.retired_pages(d, cause, &count, NULL);
    if (r != CM__NVML_SUCCESS && r != CM__NVML_ERROR_INSUFFICIENT_SIZE) return CM_HEALTH_UNKNOWN;
    return (int)count;
}

static void cm__health_unknown(cm_device_health_t *h) {
    h->persistence_mode = h->compute_mode = CM_HEALTH_UNKNOWN;
    h->mig_mode = h->mig_mode_pending = h->ecc_mode = h->ecc_mode_pending = CM_HEALTH_UNKNOWN;
    h->ecc_volatile_uncorrected = h->ecc_aggregate_uncorrected = CM_HEALTH_UNKNOWN;
    h->retired_pages = h->retired_pages_pending = CM_HEALTH_UNKNOWN;
    h->remapped_rows_correctable = h->remapped_rows_uncorrectable = CM_HEALTH_UNKNOWN;
    h->row_remap_pending = h->row_remap_failed = CM_HEALTH_UNKNOWN;
    h->clock_event_reasons = CM_HEALTH_UNKNOWN;
    h->temperature_c = h->power_mw = h->power_limit_mw = CM_HEALTH_UNKNOWN;
    h->pcie_gen = h->pcie_gen_max = h->pcie_width = h->pcie_width_max = CM_HEALTH_UNKNOWN;
}

cm_status_t cm_device_health(int ordinal, cm_device_health_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_device_health_t", "out is NULL");
    CM_TRY(cm__check_ordinal(ordinal));
    cm_device_health_t *h = out;
    memset(h, 0, sizeof *h);
    cm__health_unknown(h);
    cm__nvml_device_t d = NULL;
    if (!cm__nvml_device(ordinal, &d, h->pci_bus_id, sizeof h->pci_bus_id, h->nvml_reason,
                         sizeof h->nvml_reason))
        return CM_OK;
    h->nvml_available = 1;

    char version[CM__NVML_DRIVER_VERSION_BUFFER_SIZE] = "";
    if (cm__nvml.driver_version(version, sizeof version) == CM__NVML_SUCCESS) {
        version[sizeof version - 1] = '\0';
        cm__strlcpy(h->driver_version, version, sizeof h->driver_version);
    }
    unsigned int a = 0, b = 0, c = 0, e = 0;
    cm__nvml_return_t r = cm__nvml.persistence_mode(d, &a);
    h->persistence_mode = cm__nvml_flag(r, a);
    r = cm__nvml.compute_mode(d, &a);
    h->compute_mode = cm__nvml_int(r, a);
    r = cm__nvml.mig_mode(d, &a, &b);
    h->mig_mode = cm__nvml_flag(r, a);
    h->mig_mode_pending = cm__nvml_flag(r, b);
    r = cm__nvml.ecc_mode(d, &a, &b);
    h->ecc_mode = cm__nvml_flag(r, a);
    h->ecc_mode_pending = cm__nvml_flag(r, b);
    if (h->ecc_mode == 1) {
        unsigned long long n = 0;
        r = cm__nvml.total_ecc_errors(d, CM__NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                           CM__NVML_VOLATILE_ECC, &n);
        if (r == CM__NVML_SUCCESS) h->ecc_volatile_uncorrected = (long long)n;
        r = cm__nvml.total_ecc_errors(d, CM__NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                                           CM__NVML_AGGREGATE_ECC, &n);
        if (r == CM__NVML_SUCCESS) h->ecc_aggregate_uncorrected = (long long)n;
    }
    int sbe = cm__nvml_retired(d, CM__NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
    int dbe = cm__nvml_retired(d, CM__NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
    if (sbe >= 0 || dbe >= 0) h->retired_pages = (sbe > 0 ? sbe : 0) + (dbe > 0 ? dbe : 0);
    r = cm__nvml.retired_pages_pending(d, &a);
    h->retired_pages_pending = cm__nvml_flag(r, a);
    r = cm__nvml.remapped_rows(d, &a, &b, &c, &e);
    h->remapped_rows_correctable = cm__nvml_int(r, a);
    h->remapped_rows_uncorrectable = cm__nvml_int(r, b);
    h->row_remap_pending = cm__nvml_flag(r, c);
    h->row_remap_failed = cm__nvml_flag(r, e);
    unsigned long long reasons = 0;
    if (cm__nvml.clocks_event_reasons(d, &reasons) == CM__NVML_SUCCESS)
        h->clock_event_reasons = (long long)(reasons & 0x7fffffffffffffffull);
    r = cm__nvml.temperature(d, CM__NVML_TEMPERATURE_GPU, &a);
    h->temperature_c = cm__nvml_int(r, a);
    r = cm__nvml.power_usage(d, &a);
    h->power_mw = cm__nvml_int(r, a);
    r = cm__nvml.power_limit(d, &a);
    h->power_limit_mw = cm__nvml_int(r, a);
    r = cm__nvml.pcie_link_generation(d, &a);
    h->pcie_gen = cm__nvml_int(r, a);
    r = cm__nvml.pcie_max_link_generation(d, &a);
    h->pcie_gen_max = cm__nvml_int(r, a);
    r = cm__nvml.pcie_link_width(d, &a);
    h->pcie_width = cm__nvml_int(r, a);
    r = cm__nvml.pcie_max_link_width(d, &a);
    h->pcie_width_max = cm__nvml_int(r, a);

    size_t n = 0;
    if (cm__nvml_device_processes(d, h->processes, CM_HEALTH_MAX_PROCESSES, &n,
                                  h->processes_reason, sizeof h->processes_reason)) {
        h->processes_known = 1;
        h->process_count = n;
    }
    return CM_OK;
}
