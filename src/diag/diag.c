/*
 * Environment diagnostics (diag.h): cm_diag_collect() reads the machine into plain data,
 * cm_diag_evaluate() judges that data, and the writers print the judgement for people or as
 * JSON. The judging is pure so that host tests reach every verdict with injected inputs.
 */
#define _GNU_SOURCE /* dlinfo, popen, strcasestr; the rest of the library is plain C11 */

#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/diag.h>
#include <cudamodel/multi.h>
#include <cudamodel/status.h>
#include <cudamodel/version.h>

#include "../core/internal.h"

/* ================================================================ small text helpers */

/* Append printf-formatted text to dst (capacity cap), always NUL-terminated, cut when full. */
static void cm__diag_appendf(char *dst, size_t cap, const char *fmt, ...) CM__PRINTF(3, 4);
static void cm__diag_appendf(char *dst, size_t cap, const char *fmt, ...) {
    size_t len = strnlen(dst, cap);
    if (len + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(dst + len, cap - len, fmt, ap);
    va_end(ap);
}

/* "13.0" for 13000; "unknown" for 0 or less. */
static const char *cm__diag_version_text(int v, char *buf, size_t size) {
    if (v <= 0) snprintf(buf, size, "unknown");
    else snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
    return buf;
}

static int cm__diag_major(int v) { return v / 1000; }

/* Oldest Linux driver branch that runs a CUDA major release (minor-version compatibility). */
static const char *cm__diag_min_driver(int runtime_version) {
    switch (cm__diag_major(runtime_version)) {
    case 13: return "580";
    case 12: return "525";
    case 11: return "450";
    default: return NULL;
    }
}

static const char *cm__diag_cuda_error_name(int err) {
    return cm__cuda.get_error_name((cudaError_t)err);
}

static const char *cm__diag_cuda_error_string(int err) {
    return cm__cuda.get_error_string((cudaError_t)err);
}

/* Copy an environment variable into an env var record. */
static void cm__diag_read_env(const char *name, cm_diag_env_var_t *var) {
    const char *v = getenv(name);
    var->set = (v != NULL);
    cm__strlcpy(var->value, v, sizeof var->value);
}

static bool cm__diag_is_dir(const char *path) {
    struct stat st;
    return path != NULL && path[0] != '\0' && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* ================================================================ collecting */

/* dlopen libcuda.so.1 the way cudart does; record where it lives or why it cannot load. */
static void cm__diag_probe_libcuda(cm_diag_inputs_t *in) {
    (void)dlerror();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();
        in->libcuda_loadable = false;
        cm__strlcpy(in->libcuda_path, why != NULL ? why : "dlopen(\"libcuda.so.1\") failed",
                    sizeof in->libcuda_path);
        return;
    }
    in->libcuda_loadable = true;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL && lm->l_name != NULL &&
        lm->l_name[0] != '\0') {
        cm__strlcpy(in->libcuda_path, lm->l_name, sizeof in->libcuda_path);
    } else {
        cm__strlcpy(in->libcuda_path, "libcuda.so.1", sizeof in->libcuda_path);
    }
    (void)dlclose(h);
}

/* Parse "release X.Y" out of `nvcc --version` output; 0 when absent. */
static int cm__diag_parse_nvcc_release(const char *text) {
    const char *p = strstr(text, "release ");
    while (p != NULL) {
        int major = 0, minor = 0;
        if (sscanf(p + 8, "%d.%d", &major, &minor) == 2 && major > 0 && minor >= 0 && minor < 100)
            return major * 1000 + minor * 10;
        p = strstr(p + 8, "release ");
    }
    return 0;
}

/* The first executable regular file named nvcc in PATH (an empty entry means "."). */
static void cm__diag_find_nvcc(char *out, size_t size) {
    out[0] = '\0';
    const char *path = getenv("PATH");
    if (path == NULL) return;
    const char *p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char candidate[CM_DIAG_PATH_MAX];
        int n;
        if (len == 0) n = snprintf(candidate, sizeof candidate, "./nvcc");
        else n = snprintf(candidate, sizeof candidate, "%.*s/nvcc", (int)len, p);
        if (n > 0 && (size_t)n < sizeof candidate) {
            struct stat st;
            if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0) {
                cm__strlcpy(out, candidate, size);
                return;
            }
        }
        if (end == NULL) return;
        p = end + 1;
    }
}

/* Run "<nvcc> --version" (path quoted for the shell) and parse its release. */
static int cm__diag_nvcc_version(const char *nvcc) {
    char cmd[2 * CM_DIAG_PATH_MAX + 64];
    size_t k = 0;
    cmd[k++] = '\'';
    for (const char *s = nvcc; *s != '\0' && k + 8 < sizeof cmd; ++s) {
        if (*s == '\'') {
            memcpy(cmd + k, "'\\''", 4); /* close, escaped quote, reopen */
            k += 4;
        } else {
            cmd[k++] = *s;
        }
    }
    cmd[k] = '\0';
    cm__diag_appendf(cmd, sizeof cmd, "' --version 2>/dev/null");
    fflush(NULL); /* popen's child must not inherit unwritten buffers */
    FILE *f = popen(cmd, "r");
    if (f == NULL) return 0;
    char text[4096];
    size_t used = 0, got;
    while (used + 1 < sizeof text && (got = fread(text + used, 1, sizeof text - 1 - used, f)) > 0)
        used += got;
    text[used] = '\0';
    /* drain the rest so nvcc never blocks on a full pipe */
    char sink[512];
    while (fread(sink, 1, sizeof sink, f) > 0) {
    }
    (void)pclose(f);
    return cm__diag_parse_nvcc_release(text);
}

static bool cm__diag_detect_wsl(void) {
    if (access("/dev/dxg", F_OK) == 0) return true;
    FILE *f = fopen("/proc/version", "r");
    if (f == NULL) return false;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcasestr(buf, "microsoft") != NULL || strstr(buf, "WSL") != NULL;
}

/* The cudaError_t behind the last library failure, cudaErrorUnknown when there was none. */
static int cm__diag_last_cuda_error(void) {
    int e = cm_last_error()->cuda_error;
    return e != 0 ? e : (int)cudaErrorUnknown;
}

static void cm__diag_note_detail(cm_diag_device_t *d) {
    if (d->detail[0] == '\0') cm__strlcpy(d->detail, cm_last_error()->message, sizeof d->detail);
}

static void cm__diag_collect_device(int ordinal, cm_diag_device_t *d) {
    cm_status_t st = cm_device_get_limits(ordinal, &d->limits);
    if (st != CM_OK) {
        d->limits_error = cm__diag_last_cuda_error();
        cm__diag_note_detail(d);
        d->limits.ordinal = ordinal;
        return;
    }
    st = cm_device_memory_info(ordinal, &d->free_bytes, &d->total_bytes);
    if (st != CM_OK) {
        d->memory_error = cm__diag_last_cuda_error();
        d->free_bytes = 0;
        d->total_bytes = 0;
        cm__diag_note_detail(d);
    }
    d->image_status = cm_device_check_kernel_image(ordinal, &d->image);
    d->image_checked = true;
    if (d->image_status != CM_OK) cm__diag_note_detail(d);
    /* managed memory (memspace.h): two attribute reads, no context needed */
    int cma = 0, pma = 0;
    if (cm__cuda.device_get_attribute(&cma, cudaDevAttrConcurrentManagedAccess, ordinal) ==
            cudaSuccess &&
        cm__cuda.device_get_attribute(&pma, cudaDevAttrPageableMemoryAccess, ordinal) ==
            cudaSuccess) {
        d->managed_read = true;
        d->concurrent_managed_access = cma;
        d->pageable_memory_access = pma;
    } else {
        (void)cm__cuda.get_last_error();
    }
}

/* NVML's view of the device (never fails for lack of NVML: the reason is kept as data). */
static void cm__diag_collect_health(int ordinal, cm_diag_device_t *d) {
    if (cm_device_health(ordinal, &d->health) != CM_OK) {
        memset(&d->health, 0, sizeof d->health);
        cm__strlcpy(d->health.nvml_reason, cm_last_error()->message,
                    sizeof d->health.nvml_reason);
    }
}

cm_status_t cm_diag_collect(cm_diag_inputs_t *inputs) {
    CM__REQUIRE(inputs != NULL, "pass the address of a cm_diag_inputs_t", "inputs is NULL");
    memset(inputs, 0, sizeof *inputs);

    /* the library, driver and runtime (0 for a version that cannot be read) */
    cm_version_info_t vi;
    CM_TRY(cm_version_info(&vi));
    cm__strlcpy(inputs->library_version, vi.library_string, sizeof inputs->library_version);
    cm__strlcpy(inputs->library_archs, vi.cuda_architectures, sizeof inputs->library_archs);
    inputs->driver_version = vi.driver;
    inputs->runtime_version = vi.runtime;
    inputs->runtime_version_built = vi.runtime_built;
    cm__diag_probe_libcuda(inputs);

    /* devices: the raw runtime answer, so the verdict can tell the causes apart itself. Each
     * probe names its device explicitly (cm__enter inside the device calls): the caller's
     * current device and context are left as they were. */
    int count = 0;
    cudaError_t err = cm__cuda.get_device_count(&count);
    inputs->device_count_error = (int)err;
    if (err != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        count = 0;
    }
    inputs->device_count = count;
    if (count > 0) {
        int n = count < CM_DIAG_MAX_DEVICES ? count : CM_DIAG_MAX_DEVICES;
        for (int i = 0; i < n; ++i) cm__diag_collect_device(i, &inputs->devices[i]);
        /* after the probes: the processes list then shows this process's contexts too */
        for (int i = 0; i < n; ++i) cm__diag_collect_health(i, &inputs->devices[i]);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                int can = 0;
                if (i == j) {
                    inputs->peer_access[i][j] = CM_DIAG_PEER_YES;
                } else if (cm__cuda.device_can_access_peer(&can, i, j) == cudaSuccess) {
                    inputs->peer_access[i][j] = can ? CM_DIAG_PEER_YES : CM_DIAG_PEER_NO;
                } else {
                    (void)cm__cuda.get_last_error();
                    inputs->peer_access[i][j] = CM_DIAG_PEER_UNKNOWN;
                }
            }
        }
    }

    /* environment */
    cm__diag_read_env("CUDA_HOME", &inputs->cuda_home);
    cm__diag_read_env("CUDA_PATH", &inputs->cuda_path);
    cm__diag_read_env("LD_LIBRARY_PATH", &inputs->ld_library_path);
    cm__diag_read_env("CUDA_VISIBLE_DEVICES", &inputs->cuda_visible_devices);
    cm__diag_read_env("CUDA_LAUNCH_BLOCKING", &inputs->cuda_launch_blocking);
    cm__diag_read_env("CUDAMODEL_SYNC", &inputs->cudamodel_sync);
    inputs->cuda_home_exists = inputs->cuda_home.set && cm__diag_is_dir(inputs->cuda_home.value);
    inputs->cuda_path_exists = inputs->cuda_path.set && cm__diag_is_dir(inputs->cuda_path.value);
    cm__diag_find_nvcc(inputs->nvcc_path, sizeof inputs->nvcc_path);
    if (inputs->nvcc_path[0] != '\0')
        inputs->nvcc_version = cm__diag_nvcc_version(inputs->nvcc_path);
    inputs->wsl = cm__diag_detect_wsl();

    /* NCCL (the collectives of multi.h) */
    inputs->nccl_version_built = vi.nccl_built_version;
    inputs->nccl_version = vi.nccl;

    /* every failure above is expected and kept as data: the caller starts clean */
    cm_last_error_clear();
    return CM_OK;
}

/* ================================================================ judging */

static void cm__diag_add(cm_diag_report_t *r, const char *id, cm_diag_verdict_t verdict,
                         int exit_code, const char *message, const char *fix) {
    if (verdict > r->overall) r->overall = verdict;
    if (verdict == CM_DIAG_ERROR) {
        if (exit_code <= 0) exit_code = CM_DIAG_EXIT_OTHER;
        if (r->exit_code == 0 || exit_code < r->exit_code) r->exit_code = exit_code;
    } else {
        exit_code = 0;
    }
    if (r->n_checks >= CM_DIAG_MAX_CHECKS) return; /* verdict and exit code still count */
    cm_diag_check_t *c = &r->checks[r->n_checks++];
    cm__strlcpy(c->id, id, sizeof c->id);
    c->verdict = verdict;
    c->exit_code = exit_code;
    cm__strlcpy(c->message, message, sizeof c->message);
    cm__strlcpy(c->fix, fix, sizeof c->fix);
}

/* How CUDA_VISIBLE_DEVICES hides devices: 0 when unset or it lists a plausible device,
 * 1 when empty, 2 when its first entry is not an ordinal or a UUID (e.g. "-1"). */
static int cm__diag_visible_devices_hide_all(const cm_diag_env_var_t *v) {
    if (!v->set) return 0;
    const char *p = v->value;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '\0') return 1;
    if (strncmp(p, "GPU-", 4) == 0 || strncmp(p, "MIG-", 4) == 0) return 0;
    if (!isdigit((unsigned char)*p)) return 2;
    while (isdigit((unsigned char)*p)) ++p;
    while (*p == ' ' || *p == '\t') ++p;
    return (*p == '\0' || *p == ',') ? 0 : 2;
}

/* Whether an environment switch is on: CUDA and libcudamodel both mean "1". */
static bool cm__diag_switch_on(const cm_diag_env_var_t *v) {
    return v->set && strcmp(v->value, "1") == 0;
}

/* The arch list of the library; false when it does not parse. */
static bool cm__diag_archs(const cm_diag_inputs_t *in, cm_arch_list_t *archs) {
    memset(archs, 0, sizeof *archs);
    if (in->library_archs[0] == '\0') return false;
    return cm_arch_list_parse(in->library_archs, archs) == CM_OK;
}

/* What the runtime said about a device's image, judged. */
typedef struct cm__diag_image_judgement {
    cm_image_kind_t predicted;
    int predicted_arch;
    bool observed_known;       /* the runtime answered the image question */
    cm_image_kind_t observed;  /* meaningful when observed_known */
    int observed_error;        /* cudaError_t that made it NONE, or 0 */
    bool probe_failed;         /* the probe failed for another reason */
} cm__diag_image_judgement_t;

static bool cm__diag_in_list(const int *list, int n, int value) {
    for (int i = 0; i < n; ++i)
        if (list[i] == value) return true;
    return false;
}

static void cm__diag_judge_image(const cm_arch_list_t *archs, bool archs_ok,
                                 const cm_diag_device_t *d, cm__diag_image_judgement_t *j) {
    memset(j, 0, sizeof *j);
    int cc = d->limits.cc_major * 10 + d->limits.cc_minor;
    j->predicted = archs_ok ? cm_arch_image_for(archs, cc, &j->predicted_arch) : CM_IMAGE_NONE;
    if (!archs_ok) j->predicted_arch = 0;
    if (!d->image_checked) return;
    const cm_kernel_image_t *im = &d->image;
    switch (im->cuda_error) {
    case cudaSuccess:
        if (d->image_status == CM_ERROR_NO_KERNEL_IMAGE) {
            j->observed_known = true;
            j->observed = CM_IMAGE_NONE;
            j->observed_error = (int)cudaErrorNoKernelImageForDevice;
        } else if (im->binary_version > 0) {
            j->observed_known = true;
            j->observed = cm__diag_in_list(archs->sass, archs->n_sass, im->binary_version)
                              ? CM_IMAGE_NATIVE
                              : CM_IMAGE_PTX_JIT;
            if (d->image_status != CM_OK || !im->launch_ok) j->probe_failed = true;
        } else {
            j->probe_failed = (d->image_status != CM_OK || !im->launch_ok);
        }
        break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidKernelImage:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInvalidPtx:
    case cudaErrorJitCompilerNotFound:
    case cudaErrorJitCompilationDisabled:
        j->observed_known = true;
        j->observed = CM_IMAGE_NONE;
        j->observed_error = im->cuda_error;
        break;
    default:
        j->probe_failed = true;
        break;
    }
}

static void cm__diag_arch_summary(const cm_arch_list_t *a, char *buf, size_t size) {
    buf[0] = '\0';
    if (a->n_sass > 0) {
        cm__diag_appendf(buf, size, "native code (SASS) for");
        for (int i = 0; i < a->n_sass; ++i)
            cm__diag_appendf(buf, size, "%s sm_%d%s", i ? "," : "", a->sass[i],
                             a->sass_specific[i] ? "a" : "");
    }
    if (a->n_ptx > 0) {
        cm__diag_appendf(buf, size, "%sPTX for", a->n_sass > 0 ? "; " : "");
        for (int i = 0; i < a->n_ptx; ++i)
            cm__diag_appendf(buf, size, "%s compute_%d", i ? "," : "", a->ptx[i]);
    } else {
        cm__diag_appendf(buf, size, "; no PTX (GPUs newer than these cannot run it)");
    }
}

static void cm__diag_check_library(const cm_diag_inputs_t *in, cm_diag_report_t *r,
                                   const cm_arch_list_t *archs, bool archs_ok) {
    char msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", list[CM_DIAG_TEXT_MAX];
    if (!archs_ok) {
        cm__diag_appendf(msg, sizeof msg,
                         "libcudamodel %s reports CUDA architectures \"%s\", which do not parse "
                         "as a CMake CUDA_ARCHITECTURES list",
                         in->library_version[0] ? in->library_version : "(unknown version)",
                         in->library_archs);
        cm__diag_appendf(fix, sizeof fix,
                         "rebuild libcudamodel with a valid list, e.g. "
                         "-DCMAKE_CUDA_ARCHITECTURES=90 for an H200");
        cm__diag_add(r, "library", CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg, fix);
        return;
    }
    cm__diag_arch_summary(archs, list, sizeof list);
    cm__diag_appendf(msg, sizeof msg, "libcudamodel %s carries %s (\"%s\")",
                     in->library_version[0] ? in->library_version : "(unknown version)", list,
                     in->library_archs);
    cm__diag_add(r, "library", CM_DIAG_OK, 0, msg, "");
}

/* Returns the exit code of a driver error, 0 when the driver can be used. */
static int cm__diag_check_driver(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    char msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    char drv[16], rt[16], built[16];
    cm__diag_version_text(in->driver_version, drv, sizeof drv);
    cm__diag_version_text(in->runtime_version, rt, sizeof rt);
    cm__diag_version_text(in->runtime_version_built, built, sizeof built);
    const char *min_driver = cm__diag_min_driver(in->runtime_version);
    int rt_major = cm__diag_major(in->runtime_version);

    if (in->driver_version <= 0) {
        if (!in->libcuda_loadable) {
            cm__diag_appendf(msg, sizeof msg,
                             "no NVIDIA driver is installed: libcuda.so.1 cannot be loaded (%s)",
                             in->libcuda_path[0] ? in->libcuda_path : "dlopen failed");
        } else {
            cm__diag_appendf(msg, sizeof msg,
                             "no NVIDIA driver is installed: libcuda.so.1 loads from %s but "
                             "reports no driver version",
                             in->libcuda_path[0] ? in->libcuda_path : "(unknown path)");
            if (strstr(in->libcuda_path, "stubs") != NULL)
                cm__diag_appendf(msg, sizeof msg,
                                 "; it is the toolkit's link-time stub, not a driver");
        }
        if (in->device_count_error == (int)cudaErrorInsufficientDriver)
            cm__diag_appendf(msg, sizeof msg,
                             "; what the CUDA runtime calls \"%s\" (cudaErrorInsufficientDriver)",
                             cm__diag_cuda_error_string(in->device_count_error));
        if (in->wsl) {
            cm__diag_appendf(fix, sizeof fix,
                             "WSL2: install the NVIDIA driver on Windows, not inside WSL "
                             "(%s%s%sfor CUDA %s); WSL2 then provides libcuda in "
                             "/usr/lib/wsl/lib, which must be on the loader path",
                             min_driver ? ">= " : "", min_driver ? min_driver : "",
                             min_driver ? " " : "", rt);
        } else {
            cm__diag_appendf(fix, sizeof fix, "install the NVIDIA driver");
            if (min_driver != NULL)
                cm__diag_appendf(fix, sizeof fix, " >= %s for CUDA %d.x", min_driver, rt_major);
            cm__diag_appendf(fix, sizeof fix,
                             " (this runtime is CUDA %s); in a container, run with --gpus all "
                             "and the NVIDIA Container Toolkit on the host",
                             rt);
            if (in->libcuda_loadable && strstr(in->libcuda_path, "stubs") != NULL)
                cm__diag_appendf(fix, sizeof fix, "; remove the stubs directory from "
                                                  "LD_LIBRARY_PATH");
        }
        cm__diag_add(r, "driver", CM_DIAG_ERROR, CM_DIAG_EXIT_NO_DRIVER, msg, fix);
        return CM_DIAG_EXIT_NO_DRIVER;
    }

    if (in->runtime_version <= 0) {
        cm__diag_appendf(msg, sizeof msg,
                         "driver supports CUDA %s (%d); the runtime's version is unknown", drv,
                         in->driver_version);
        cm__diag_add(r, "driver", CM_DIAG_WARNING, 0, msg,
                     "check that libcudart.so from the CUDA toolkit is the one loaded");
        return 0;
    }
    if (cm__diag_major(in->driver_version) < rt_major) {
        cm__diag_appendf(msg, sizeof msg,
                         "the driver is too old for this runtime: it supports CUDA %s (%d), the "
                         "runtime is CUDA %s (%d); the runtime must not be newer than the driver",
                         drv, in->driver_version, rt, in->runtime_version);
        if (in->wsl) cm__diag_appendf(fix, sizeof fix, "WSL2: update the NVIDIA driver on Windows");
        else cm__diag_appendf(fix, sizeof fix, "update the NVIDIA driver");
        if (min_driver != NULL)
            cm__diag_appendf(fix, sizeof fix, " to >= %s (CUDA %d.x)", min_driver, rt_major);
        cm__diag_appendf(fix, sizeof fix,
                         ", or build with a CUDA toolkit no newer than %s; in a container the "
                         "driver comes from the host",
                         drv);
        cm__diag_add(r, "driver", CM_DIAG_ERROR, CM_DIAG_EXIT_DRIVER_OLD, msg, fix);
        return CM_DIAG_EXIT_DRIVER_OLD;
    }
    if (in->driver_version < in->runtime_version) {
        cm__diag_appendf(msg, sizeof msg,
                         "driver supports CUDA %s (%d), older than the runtime's CUDA %s (%d): "
                         "runs under CUDA minor-version compatibility, but PTX built by a newer "
                         "toolkit cannot JIT on it (cudaErrorUnsupportedPtxVersion)",
                         drv, in->driver_version, rt, in->runtime_version);
        cm__diag_appendf(fix, sizeof fix,
                         "update the NVIDIA driver%s to one for CUDA %s or newer, or make sure "
                         "every GPU has native code (SASS) in the binaries you run",
                         in->wsl ? " on Windows" : "", rt);
        cm__diag_add(r, "driver", CM_DIAG_WARNING, 0, msg, fix);
        return 0;
    }
    cm__diag_appendf(msg, sizeof msg,
                     "driver supports CUDA %s (%d), runtime is CUDA %s (%d): the runtime is not "
                     "newer than the driver; libcuda: %s",
                     drv, in->driver_version, rt, in->runtime_version,
                     in->libcuda_loadable ? in->libcuda_path : "(dlopen failed)");
    cm__diag_add(r, "driver", CM_DIAG_OK, 0, msg, "");
    return 0;
}

static void cm__diag_check_runtime(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    char msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    char rt[16], built[16];
    cm__diag_version_text(in->runtime_version, rt, sizeof rt);
    cm__diag_version_text(in->runtime_version_built, built, sizeof built);
    if (in->runtime_version > 0 && in->runtime_version_built > 0 &&
        in->runtime_version != in->runtime_version_built) {
        cm__diag_appendf(msg, sizeof msg,
                         "the loaded CUDA runtime is %s (%d) but libcudamodel was built against "
                         "%s (%d)",
                         rt, in->runtime_version, built, in->runtime_version_built);
        cm__diag_appendf(fix, sizeof fix,
                         "load the libcudart of CUDA %s (put its lib64 first on LD_LIBRARY_PATH) "
                         "or rebuild libcudamodel with the CUDA %s toolkit",
                         built, rt);
        cm__diag_add(r, "runtime", CM_DIAG_WARNING, 0, msg, fix);
        return;
    }
    cm__diag_appendf(msg, sizeof msg, "CUDA runtime %s (%d) loaded; libcudamodel built against %s",
                     rt, in->runtime_version, built);
    cm__diag_add(r, "runtime", CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_devices(const cm_diag_inputs_t *in, cm_diag_report_t *r,
                                   int driver_exit) {
    char msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    const cm_diag_env_var_t *cvd = &in->cuda_visible_devices;
    int err = in->device_count_error;

    if (err == (int)cudaSuccess && in->device_count > 0) {
        cm__diag_appendf(msg, sizeof msg, "%d CUDA device%s visible", in->device_count,
                         in->device_count == 1 ? "" : "s");
        if (in->device_count > CM_DIAG_MAX_DEVICES)
            cm__diag_appendf(msg, sizeof msg, " (the first %d are described)",
                             CM_DIAG_MAX_DEVICES);
        if (cvd->set)
            cm__diag_appendf(msg, sizeof msg, " (selected by CUDA_VISIBLE_DEVICES=\"%s\")",
                             cvd->value);
        cm__diag_add(r, "devices", CM_DIAG_OK, 0, msg, "");
        return;
    }
    if (driver_exit != 0) {
        cm__diag_appendf(msg, sizeof msg, "no device can be used: cudaGetDeviceCount returned %s "
                                          "(%d) because of the driver problem above",
                         cm__diag_cuda_error_name(err), err);
        cm__diag_add(r, "devices", CM_DIAG_ERROR, driver_exit, msg, "fix the driver first (above)");
        return;
    }
    if (err == (int)cudaErrorNoDevice || err == (int)cudaSuccess) {
        int hide = cm__diag_visible_devices_hide_all(cvd);
        if (cvd->set) {
            if (hide == 1)
                cm__diag_appendf(msg, sizeof msg,
                                 "CUDA_VISIBLE_DEVICES is set but empty: it hides every device "
                                 "from CUDA");
            else if (hide == 2)
                cm__diag_appendf(msg, sizeof msg,
                                 "CUDA_VISIBLE_DEVICES=\"%s\" hides every device (its first entry "
                                 "is not a device ordinal or UUID)",
                                 cvd->value);
            else
                cm__diag_appendf(msg, sizeof msg,
                                 "CUDA_VISIBLE_DEVICES=\"%s\" leaves no device visible: none of "
                                 "the devices it lists exists",
                                 cvd->value);
            cm__diag_appendf(msg, sizeof msg, " (cudaGetDeviceCount: %s, count 0)",
                             cm__diag_cuda_error_name(err));
            cm__diag_appendf(fix, sizeof fix,
                             "unset CUDA_VISIBLE_DEVICES or list ordinals shown by nvidia-smi "
                             "(e.g. CUDA_VISIBLE_DEVICES=0)");
        } else {
            char drv[16];
            cm__diag_appendf(msg, sizeof msg,
                             "the NVIDIA driver (CUDA %s) is installed but no CUDA device is "
                             "visible (cudaGetDeviceCount: %s, count 0)",
                             cm__diag_version_text(in->driver_version, drv, sizeof drv),
                             cm__diag_cuda_error_name(err));
            cm__diag_appendf(fix, sizeof fix,
                             "check that nvidia-smi lists a GPU; in a container, run with --gpus "
                             "all (NVIDIA Container Toolkit); check access to /dev/nvidia*%s",
                             in->wsl ? "; WSL2: check the GPU is enabled for WSL on Windows" : "");
        }
        cm__diag_add(r, "devices", CM_DIAG_ERROR, CM_DIAG_EXIT_NO_DEVICE, msg, fix);
        return;
    }
    cm__diag_appendf(msg, sizeof msg, "cudaGetDeviceCount failed with %s (%d): %s",
                     cm__diag_cuda_error_name(err), err, cm__diag_cuda_error_string(err));
    switch (err) {
    case cudaErrorInsufficientDriver:
        cm__diag_appendf(fix, sizeof fix, "update the NVIDIA driver (it reports CUDA %d.%d)",
                         in->driver_version / 1000, (in->driver_version % 1000) / 10);
        break;
    case cudaErrorSystemDriverMismatch:
        cm__diag_appendf(fix, sizeof fix,
                         "the kernel module and the user-space driver differ in version: reboot, "
                         "or reinstall the driver so both match");
        break;
    case cudaErrorCompatNotSupportedOnDevice:
        cm__diag_appendf(fix, sizeof fix,
                         "the CUDA forward-compatibility package does not support this GPU: remove "
                         "cuda-compat from the loader path or update the driver");
        break;
    case cudaErrorDevicesUnavailable:
        cm__diag_appendf(fix, sizeof fix,
                         "the GPUs are busy or in exclusive-process mode (nvidia-smi -q | grep "
                         "'Compute Mode'); wait for the other process or change the mode");
        break;
    default:
        cm__diag_appendf(fix, sizeof fix,
                         "check nvidia-smi and dmesg; a missing nvidia_uvm module (modprobe "
                         "nvidia_uvm) or a resume from suspend are common causes");
        break;
    }
    cm__diag_add(r, "devices", CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg, fix);
}

static void cm__diag_check_device(const cm_diag_inputs_t *in, cm_diag_report_t *r, int i,
                                  const cm_arch_list_t *archs, bool archs_ok) {
    const cm_diag_device_t *d = &in->devices[i];
    const cm_device_limits_t *l = &d->limits;
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    snprintf(id, sizeof id, "device%d", i);

    if (d->limits_error != 0) {
        cm__diag_appendf(msg, sizeof msg, "cannot read device %d's properties: %s (%d)%s%s", i,
                         cm__diag_cuda_error_name(d->limits_error), d->limits_error,
                         d->detail[0] ? ": " : "", d->detail);
        cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg,
                     "check nvidia-smi for this GPU (Xid errors in dmesg, a fallen-off-the-bus "
                     "GPU needs a reset or reboot)");
        return;
    }
    int cc = l->cc_major * 10 + l->cc_minor;
    char arch[16];
    cm_arch_name(cc, arch, sizeof arch);
    cm__diag_appendf(msg, sizeof msg, "%s (%s, compute capability %d.%d), %d SMs", l->name, arch,
                     l->cc_major, l->cc_minor, l->multiprocessor_count);
    if (d->memory_error == 0 && d->total_bytes > 0)
        cm__diag_appendf(msg, sizeof msg, ", memory %.1f GiB free of %.1f GiB",
                         (double)d->free_bytes / 1073741824.0,
                         (double)d->total_bytes / 1073741824.0);
    else if (l->total_global_mem > 0)
        cm__diag_appendf(msg, sizeof msg, ", memory %.1f GiB",
                         (double)l->total_global_mem / 1073741824.0);
    if (l->pci_bus_id[0] != '\0') cm__diag_appendf(msg, sizeof msg, ", PCI %s", l->pci_bus_id);
    if (d->managed_read)
        cm__diag_appendf(msg, sizeof msg, "; managed memory: %s%s",
                         d->concurrent_managed_access
                             ? "concurrent access (may exceed device memory)"
                             : in->wsl ? "no concurrent access (WSL2: cannot exceed device memory, "
                                         "no prefetch)"
                                       : "no concurrent access (cannot exceed device memory, no "
                                         "prefetch)",
                         d->pageable_memory_access ? ", pageable host memory access" : "");
    if (d->memory_error != 0) {
        cm__diag_appendf(msg, sizeof msg, "; cudaMemGetInfo failed: %s (%d)",
                         cm__diag_cuda_error_name(d->memory_error), d->memory_error);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg,
                     "another process may hold the GPU (nvidia-smi shows which); check the "
                     "compute mode and free memory");
    } else {
        cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
    }

    /* the image: predicted from the architectures, confirmed by the runtime when probed */
    cm__diag_image_judgement_t j;
    cm__diag_judge_image(archs, archs_ok, d, &j);
    snprintf(id, sizeof id, "device%d.image", i);
    msg[0] = '\0';
    fix[0] = '\0';
    cm_image_kind_t kind = j.observed_known ? j.observed : j.predicted;
    const char *source = j.observed_known ? "the runtime confirms" : "predicted, not probed";
    char drv[16], built[16];
    cm__diag_version_text(in->driver_version, drv, sizeof drv);
    cm__diag_version_text(in->runtime_version_built, built, sizeof built);

    if (j.probe_failed && !j.observed_known) {
        cm__diag_appendf(msg, sizeof msg,
                         "%s: the probe of a library kernel failed (%s (%d)%s%s); predicted: %s",
                         arch, cm__diag_cuda_error_name(d->image.cuda_error), d->image.cuda_error,
                         d->detail[0] ? ": " : "", d->detail, cm_image_kind_name(j.predicted));
        cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg,
                     "run compute-sanitizer on a small CUDA program; check nvidia-smi and dmesg");
    } else if (kind == CM_IMAGE_NATIVE) {
        cm__diag_appendf(msg, sizeof msg,
                         "%s: the library's kernels run as native code (SASS sm_%d; %s", arch,
                         j.observed_known ? d->image.binary_version : j.predicted_arch, source);
        if (j.observed_known)
            cm__diag_appendf(msg, sizeof msg, ": binaryVersion %d, ptxVersion %d",
                             d->image.binary_version, d->image.ptx_version);
        cm__diag_appendf(msg, sizeof msg, ")");
        if (j.probe_failed) {
            cm__diag_appendf(msg, sizeof msg, " but the probe launch failed%s%s",
                             d->detail[0] ? ": " : "", d->detail);
            cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg,
                         "run compute-sanitizer on a small CUDA program; check nvidia-smi");
        } else {
            cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
        }
    } else if (kind == CM_IMAGE_PTX_JIT) {
        int ptx = j.observed_known ? d->image.ptx_version : j.predicted_arch;
        bool jit_fails = !j.observed_known && in->driver_version > 0 &&
                         in->runtime_version_built > 0 &&
                         in->driver_version < in->runtime_version_built;
        if (jit_fails) {
            cm__diag_appendf(msg, sizeof msg,
                             "%s: no native code; the library's PTX (compute_%d) was built by "
                             "CUDA %s, newer than the driver (CUDA %s), so it cannot JIT "
                             "(cudaErrorUnsupportedPtxVersion): no kernel image (%s)",
                             arch, ptx, built, drv, source);
            cm__diag_appendf(fix, sizeof fix,
                             "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d (native code for %s), or "
                             "update the driver",
                             cc, arch);
            cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_NO_IMAGE, msg, fix);
        } else {
            cm__diag_appendf(msg, sizeof msg,
                             "%s: the library's kernels run only through PTX JIT (from compute_%d; "
                             "%s): the first launch compiles them (slow start, JIT cache)",
                             arch, ptx, source);
            cm__diag_appendf(fix, sizeof fix,
                             "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d (or add %d-real to the "
                             "list) for native code",
                             cc, cc);
            if (j.probe_failed)
                cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg, fix);
            else
                cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
        }
    } else {
        cm__diag_appendf(msg, sizeof msg,
                         "%s: no kernel image: the library carries \"%s\", nothing runs on "
                         "compute capability %d.%d; every launch would fail with \"no kernel "
                         "image is available for execution on the device\" (%s",
                         arch, in->library_archs, l->cc_major, l->cc_minor, source);
        if (j.observed_known && j.observed_error != 0)
            cm__diag_appendf(msg, sizeof msg, ": %s", cm__diag_cuda_error_name(j.observed_error));
        cm__diag_appendf(msg, sizeof msg, ")");
        cm__diag_appendf(fix, sizeof fix, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=%d", cc);
        if (j.observed_error == (int)cudaErrorUnsupportedPtxVersion)
            cm__diag_appendf(fix, sizeof fix, " (native code), or update the driver");
        cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_NO_IMAGE, msg, fix);
    }

    if (j.observed_known && j.observed != j.predicted) {
        snprintf(id, sizeof id, "device%d.prediction", i);
        msg[0] = '\0';
        cm__diag_appendf(msg, sizeof msg,
                         "%s: predicted %s from \"%s\" but the runtime reports %s (binaryVersion "
                         "%d, ptxVersion %d, %s)",
                         arch, cm_image_kind_name(j.predicted), in->library_archs,
                         cm_image_kind_name(j.observed), d->image.binary_version,
                         d->image.ptx_version, cm__diag_cuda_error_name(d->image.cuda_error));
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg,
                     "the build's architecture list and its binary disagree: rebuild "
                     "libcudamodel cleanly and report it if it persists");
    }
}

static void cm__diag_check_nvcc(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    char msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    char nv[16], drv[16], rt[16];
    cm__diag_version_text(in->nvcc_version, nv, sizeof nv);
    cm__diag_version_text(in->driver_version, drv, sizeof drv);
    cm__diag_version_text(in->runtime_version, rt, sizeof rt);
    if (in->nvcc_path[0] == '\0') {
        cm__diag_add(r, "nvcc", CM_DIAG_OK, 0,
                     "none on PATH (not needed to run; needed only to compile CUDA code)", "");
        return;
    }
    if (in->nvcc_version <= 0) {
        cm__diag_appendf(msg, sizeof msg,
                         "%s: version unknown (`nvcc --version` printed no \"release X.Y\")",
                         in->nvcc_path);
        cm__diag_add(r, "nvcc", CM_DIAG_WARNING, 0, msg,
                     "check that this nvcc runs; put the toolkit's bin directory first on PATH");
        return;
    }
    cm__diag_appendf(msg, sizeof msg, "%s: CUDA %s", in->nvcc_path, nv);
    cm__diag_add(r, "nvcc", CM_DIAG_OK, 0, msg, "");

    if (in->driver_version > 0 && in->nvcc_version > in->driver_version) {
        msg[0] = '\0';
        cm__diag_appendf(msg, sizeof msg,
                         "nvcc is CUDA %s, newer than the driver (CUDA %s): PTX it generates "
                         "cannot JIT on this driver (cudaErrorUnsupportedPtxVersion)",
                         nv, drv);
        cm__diag_appendf(fix, sizeof fix,
                         "compile native code for your GPU (-arch=sm_XY / "
                         "CMAKE_CUDA_ARCHITECTURES=XY-real), or update the driver");
        cm__diag_add(r, "nvcc.driver", CM_DIAG_WARNING, 0, msg, fix);
    }
    if (in->runtime_version > 0 &&
        cm__diag_major(in->nvcc_version) != cm__diag_major(in->runtime_version)) {
        msg[0] = '\0';
        fix[0] = '\0';
        cm__diag_appendf(msg, sizeof msg,
                         "nvcc is CUDA %s but the loaded runtime is CUDA %s: code you build with "
                         "this nvcc needs a different libcudart major version",
                         nv, rt);
        cm__diag_appendf(fix, sizeof fix,
                         "put the bin directory of the CUDA %d toolkit first on PATH (e.g. "
                         "$CUDA_HOME/bin)",
                         cm__diag_major(in->runtime_version));
        cm__diag_add(r, "nvcc.runtime", CM_DIAG_WARNING, 0, msg, fix);
    }
}

/* "2.28.9" from an NCCL_VERSION_CODE (X*10000 + Y*100 + Z; before 2.9: X*1000 + Y*100 + Z). */
static const char *cm__diag_nccl_text(int v, char *buf, size_t size) {
    if (v <= 0) snprintf(buf, size, "unknown");
    else if (v < 10000) snprintf(buf, size, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
    else snprintf(buf, size, "%d.%d.%d", v / 10000, (v % 10000) / 100, v % 100);
    return buf;
}

static void cm__diag_check_peers(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    if (in->device_count_error != 0 || in->device_count < 2) return;
    int n = in->device_count < CM_DIAG_MAX_DEVICES ? in->device_count : CM_DIAG_MAX_DEVICES;
    int yes = 0, no = 0, unknown = 0, first_i = -1, first_j = -1;
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            int a = in->peer_access[i][j], b = in->peer_access[j][i];
            if (a == CM_DIAG_PEER_NO || b == CM_DIAG_PEER_NO) {
                if (no++ == 0) {
                    first_i = i;
                    first_j = j;
                }
            } else if (a == CM_DIAG_PEER_YES && b == CM_DIAG_PEER_YES) {
                ++yes;
            } else {
                ++unknown;
            }
        }
    }
    char msg[CM_DIAG_TEXT_MAX] = "";
    if (no > 0) {
        cm__diag_appendf(msg, sizeof msg,
                         "devices %d and %d cannot access each other's memory directly", first_i,
                         first_j);
        if (no > 1) cm__diag_appendf(msg, sizeof msg, " (and %d more pair%s)", no - 1,
                                     no == 2 ? "" : "s");
        cm__diag_appendf(msg, sizeof msg, "; %d of %d pairs can: copies between the others are "
                         "staged through host memory and NCCL takes slower paths", yes,
                         yes + no + unknown);
        cm__diag_add(r, "peers", CM_DIAG_WARNING, 0, msg,
                     "fine if those GPUs are not used together; otherwise check the topology "
                     "(nvidia-smi topo -m: GPUs under different CPU sockets or PCIe switches "
                     "without P2P), and in VMs or containers whether P2P is disabled (IOMMU, "
                     "PCIe ACS)");
    } else if (yes == 0) {
        cm__diag_appendf(msg, sizeof msg, "peer access between the %d devices was not read", n);
        cm__diag_add(r, "peers", CM_DIAG_OK, 0, msg, "");
    } else {
        cm__diag_appendf(msg, sizeof msg, "every pair of the %d%s devices can access each "
                         "other's memory (peer copies over NVLink or PCIe)%s", n,
                         in->device_count > n ? " first" : "",
                         unknown > 0 ? "; some pairs were not read" : "");
        cm__diag_add(r, "peers", CM_DIAG_OK, 0, msg, "");
    }
}

static void cm__diag_check_nccl(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    char msg[CM_DIAG_TEXT_MAX] = "", built[24], loaded[24];
    if (in->nccl_version_built <= 0) {
        cm__diag_add(r, "nccl", CM_DIAG_OK, 0,
                     "not built: this libcudamodel has no NCCL, so the collectives of multi.h "
                     "report CM_ERROR_NOT_SUPPORTED (everything else works; to use them install "
                     "NCCL and rebuild with -DCUDAMODEL_WITH_NCCL=ON)",
                     "");
        return;
    }
    cm__diag_nccl_text(in->nccl_version_built, built, sizeof built);
    cm__diag_nccl_text(in->nccl_version, loaded, sizeof loaded);
    int major_built = in->nccl_version_built >= 10000 ? in->nccl_version_built / 10000
                                                      : in->nccl_version_built / 1000;
    int major_loaded = in->nccl_version >= 10000 ? in->nccl_version / 10000
                                                 : in->nccl_version / 1000;
    if (in->nccl_version <= 0 || major_loaded != major_built) {
        cm__diag_appendf(msg, sizeof msg, "NCCL %s is loaded, but the library was built against "
                         "NCCL %s", loaded, built);
        cm__diag_add(r, "nccl", CM_DIAG_WARNING, 0, msg,
                     "put the NCCL the library was built with first on the loader path "
                     "(LD_LIBRARY_PATH), or rebuild against the installed one");
        return;
    }
    cm__diag_appendf(msg, sizeof msg, "NCCL %s (built against %s): collectives available",
                     loaded, built);
    cm__diag_add(r, "nccl", CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_dir_var(cm_diag_report_t *r, const char *name,
                                   const cm_diag_env_var_t *v, bool exists) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    snprintf(id, sizeof id, "env.%s", name);
    if (!v->set) {
        cm__diag_appendf(msg, sizeof msg, "%s is not set (not needed at run time)", name);
        cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
    } else if (!exists) {
        cm__diag_appendf(msg, sizeof msg, "%s=\"%s\" is not an existing directory", name, v->value);
        cm__diag_appendf(fix, sizeof fix,
                         "point %s at the CUDA toolkit (e.g. /usr/local/cuda) or unset it; build "
                         "tools that read it will not find CUDA",
                         name);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
    } else {
        cm__diag_appendf(msg, sizeof msg, "%s=\"%s\"", name, v->value);
        cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
    }
}

/* ================================================================ GPU health (NVML) */

static bool cm__diag_known(long long v) { return v != CM_HEALTH_UNKNOWN; }

/* "Default", "Exclusive_Process"...: nvidia-smi's names of the compute modes. */
static const char *cm__diag_compute_mode_name(int mode) {
    switch (mode) {
    case CM_COMPUTE_MODE_DEFAULT: return "Default";
    case CM_COMPUTE_MODE_EXCLUSIVE_THREAD: return "Exclusive_Thread";
    case CM_COMPUTE_MODE_PROHIBITED: return "Prohibited";
    case CM_COMPUTE_MODE_EXCLUSIVE_PROCESS: return "Exclusive_Process";
    default: return "unknown";
    }
}

/* ", 87 C, 690 W of 700 W" (what is known). */
static void cm__diag_thermals(const cm_device_health_t *h, char *buf, size_t size) {
    if (h->temperature_c != CM_HEALTH_UNKNOWN)
        cm__diag_appendf(buf, size, "%s%d C", buf[0] ? ", " : "", h->temperature_c);
    if (h->power_mw != CM_HEALTH_UNKNOWN) {
        cm__diag_appendf(buf, size, "%s%.0f W", buf[0] ? ", " : "", h->power_mw / 1000.0);
        if (h->power_limit_mw > 0)
            cm__diag_appendf(buf, size, " of %.0f W", h->power_limit_mw / 1000.0);
    }
}

/* The nvidia-smi device selector of a health record: "-i <PCI bus id>". */
static const char *cm__diag_smi_target(const cm_device_health_t *h, int i, char *buf,
                                       size_t size) {
    if (h->pci_bus_id[0] != '\0') snprintf(buf, size, "-i %s", h->pci_bus_id);
    else snprintf(buf, size, "-i %d", i);
    return buf;
}

static void cm__diag_check_nvml(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    if (in->device_count_error != 0 || in->device_count <= 0) return;
    int n = in->device_count < CM_DIAG_MAX_DEVICES ? in->device_count : CM_DIAG_MAX_DEVICES;
    char msg[CM_DIAG_TEXT_MAX] = "";
    int available = 0, first = -1, missing = -1;
    for (int i = 0; i < n; ++i) {
        if (in->devices[i].health.nvml_available) {
            ++available;
            if (first < 0) first = i;
        } else if (missing < 0) {
            missing = i;
        }
    }
    if (available == 0) {
        const char *why = in->devices[0].health.nvml_reason;
        cm__diag_appendf(msg, sizeof msg,
                         "NVML is not available: %s; the GPU health checks (ECC, clocks, PCIe "
                         "link, persistence, compute and MIG modes, processes) are skipped "
                         "(NVML, libnvidia-ml.so.1, comes with the NVIDIA driver; in a container "
                         "the NVIDIA Container Toolkit mounts it)",
                         why[0] ? why : "not read");
        cm__diag_add(r, "nvml", CM_DIAG_OK, 0, msg, "");
        return;
    }
    const cm_device_health_t *h = &in->devices[first].health;
    cm__diag_appendf(msg, sizeof msg, "NVML answers (driver %s) for %d of %d device%s",
                     h->driver_version[0] ? h->driver_version : "version unknown", available, n,
                     n == 1 ? "" : "s");
    if (missing >= 0)
        cm__diag_appendf(msg, sizeof msg, "; device %d: %s", missing,
                         in->devices[missing].health.nvml_reason[0]
                             ? in->devices[missing].health.nvml_reason
                             : "not read");
    cm__diag_add(r, "nvml", CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_persistence(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], fix[CM_DIAG_TEXT_MAX] = "", smi[64];
    snprintf(id, sizeof id, "device%d.persistence", i);
    if (h->persistence_mode == CM_HEALTH_UNKNOWN) {
        cm__diag_add(r, id, CM_DIAG_OK, 0, "persistence mode: not reported for this GPU", "");
    } else if (h->persistence_mode) {
        cm__diag_add(r, id, CM_DIAG_OK, 0,
                     "persistence mode on: the driver keeps the GPU initialised between "
                     "programs", "");
    } else {
        cm__diag_appendf(fix, sizeof fix,
                         "sudo nvidia-smi %s -pm 1, or run the nvidia-persistenced daemon (as a "
                         "service, it survives reboots)",
                         cm__diag_smi_target(h, i, smi, sizeof smi));
        cm__diag_add(r, id, CM_DIAG_WARNING, 0,
                     "persistence mode off: the driver tears the GPU's state down whenever no "
                     "program uses it, so each program's first CUDA call waits for it to start "
                     "again (up to seconds)",
                     fix);
    }
}

/* "python3 (pid 4541)" for the first other process (not this one), or "" when none. */
static void cm__diag_first_other(const cm_device_health_t *h, char *buf, size_t size) {
    buf[0] = '\0';
    if (!h->processes_known) return;
    size_t n = h->process_count < CM_HEALTH_MAX_PROCESSES ? h->process_count
                                                          : CM_HEALTH_MAX_PROCESSES;
    for (size_t k = 0; k < n; ++k) {
        const cm_process_info_t *p = &h->processes[k];
        if (p->self) continue;
        if (p->name[0] != '\0') snprintf(buf, size, "%s (pid %u)", p->name, p->pid);
        else snprintf(buf, size, "pid %u%s", p->pid, p->visible ? "" : ", not visible from here");
        return;
    }
}

static void cm__diag_check_compute_mode(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", smi[64], other[96];
    snprintf(id, sizeof id, "device%d.compute_mode", i);
    cm__diag_smi_target(h, i, smi, sizeof smi);
    switch (h->compute_mode) {
    case CM_COMPUTE_MODE_DEFAULT:
        cm__diag_add(r, id, CM_DIAG_OK, 0,
                     "compute mode Default: any number of processes may use the GPU", "");
        return;
    case CM_COMPUTE_MODE_EXCLUSIVE_THREAD:
    case CM_COMPUTE_MODE_EXCLUSIVE_PROCESS:
        cm__diag_first_other(h, other, sizeof other);
        cm__diag_appendf(msg, sizeof msg,
                         "compute mode %s: one process at a time may use this GPU; any other "
                         "gets \"all CUDA-capable devices are busy or unavailable\" "
                         "(cudaErrorDevicesUnavailable)",
                         cm__diag_compute_mode_name(h->compute_mode));
        if (other[0] != '\0') cm__diag_appendf(msg, sizeof msg, "; %s holds it now", other);
        cm__diag_appendf(fix, sizeof fix,
                         "run one process per GPU (CUDA_VISIBLE_DEVICES), share the GPU through "
                         "MPS, or allow several processes: sudo nvidia-smi %s -c DEFAULT",
                         smi);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
        return;
    case CM_COMPUTE_MODE_PROHIBITED:
        cm__diag_appendf(fix, sizeof fix, "sudo nvidia-smi %s -c DEFAULT, or use another GPU",
                         smi);
        cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER,
                     "compute mode Prohibited: no process may create a CUDA context on this GPU",
                     fix);
        return;
    default:
        cm__diag_add(r, id, CM_DIAG_OK, 0, "compute mode: not reported for this GPU", "");
        return;
    }
}

static void cm__diag_check_mig(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", smi[64];
    snprintf(id, sizeof id, "device%d.mig", i);
    cm__diag_smi_target(h, i, smi, sizeof smi);
    if (h->mig_mode == CM_HEALTH_UNKNOWN) {
        cm__diag_add(r, id, CM_DIAG_OK, 0, "MIG: not supported by this GPU", "");
        return;
    }
    bool change = h->mig_mode_pending != CM_HEALTH_UNKNOWN && h->mig_mode_pending != h->mig_mode;
    if (h->mig_mode) {
        cm__diag_appendf(msg, sizeof msg,
                         "MIG enabled: CUDA sees GPU instances (slices with part of the SMs and "
                         "memory), not the whole GPU");
        cm__diag_appendf(fix, sizeof fix,
                         "select an instance with CUDA_VISIBLE_DEVICES=MIG-<uuid> (nvidia-smi -L "
                         "lists them); to use the whole GPU: sudo nvidia-smi %s -mig 0, then "
                         "reset the GPU",
                         smi);
    } else {
        cm__diag_appendf(msg, sizeof msg, "MIG disabled: CUDA sees the whole GPU");
    }
    if (change) {
        cm__diag_appendf(msg, sizeof msg, "; MIG will be %s after the next GPU reset",
                         h->mig_mode_pending ? "enabled" : "disabled");
        if (fix[0] == '\0')
            cm__diag_appendf(fix, sizeof fix,
                             "reset the GPU when no process uses it (sudo nvidia-smi %s -r) or "
                             "reboot, or undo the change",
                             smi);
    }
    cm__diag_add(r, id, h->mig_mode || change ? CM_DIAG_WARNING : CM_DIAG_OK, 0, msg, fix);
}

static void cm__diag_check_ecc(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", smi[64];
    snprintf(id, sizeof id, "device%d.ecc", i);
    cm__diag_smi_target(h, i, smi, sizeof smi);
    bool vol = h->ecc_volatile_uncorrected > 0;
    bool agg = h->ecc_aggregate_uncorrected > 0;
    bool remap_pending = h->row_remap_pending == 1, remap_failed = h->row_remap_failed == 1;
    bool retire_pending = h->retired_pages_pending == 1;

    if (vol || remap_pending || remap_failed || retire_pending) {
        cm__diag_appendf(msg, sizeof msg, "the GPU reports uncorrectable memory errors");
        if (cm__diag_known(h->ecc_volatile_uncorrected))
            cm__diag_appendf(msg, sizeof msg, ": %lld since the driver loaded",
                             h->ecc_volatile_uncorrected);
        if (cm__diag_known(h->ecc_aggregate_uncorrected))
            cm__diag_appendf(msg, sizeof msg, ", %lld over its life", h->ecc_aggregate_uncorrected);
        if (remap_pending)
            cm__diag_appendf(msg, sizeof msg, "; a row remapping is pending (until a GPU reset "
                                              "the bad memory stays in use)");
        if (retire_pending)
            cm__diag_appendf(msg, sizeof msg, "; a page retirement is pending");
        if (remap_failed)
            cm__diag_appendf(msg, sizeof msg, "; a row could not be remapped (no spare rows "
                                              "left)");
        if (remap_failed)
            cm__diag_appendf(fix, sizeof fix,
                             "contact the administrator: the GPU needs service (RMA); until then "
                             "do not trust results computed on it");
        else
            cm__diag_appendf(fix, sizeof fix,
                             "reset it (sudo nvidia-smi %s -r, with no process using it, or "
                             "reboot) or contact the administrator; results computed since the "
                             "error may be wrong",
                             smi);
        cm__diag_add(r, id, CM_DIAG_ERROR, CM_DIAG_EXIT_OTHER, msg, fix);
        return;
    }
    if (h->ecc_mode == CM_HEALTH_UNKNOWN) {
        cm__diag_add(r, id, CM_DIAG_OK, 0, "ECC: not supported by this GPU", "");
        return;
    }
    bool change = h->ecc_mode_pending != CM_HEALTH_UNKNOWN && h->ecc_mode_pending != h->ecc_mode;
    cm_diag_verdict_t v = CM_DIAG_OK;
    if (h->ecc_mode) {
        cm__diag_appendf(msg, sizeof msg, "ECC on");
        if (agg) {
            cm__diag_appendf(msg, sizeof msg,
                             "; %lld uncorrectable memory error%s over the GPU's life, none since "
                             "the driver loaded",
                             h->ecc_aggregate_uncorrected,
                             h->ecc_aggregate_uncorrected == 1 ? "" : "s");
            cm__diag_appendf(fix, sizeof fix,
                             "past errors the GPU has handled (remapped or retired); if new ones "
                             "appear (nvidia-smi %s -q -d ECC,ROW_REMAPPER), contact the "
                             "administrator",
                             smi);
            v = CM_DIAG_WARNING;
        } else {
            cm__diag_appendf(msg, sizeof msg, ", no uncorrectable memory errors");
        }
    } else {
        cm__diag_appendf(msg, sizeof msg, "ECC off: memory errors are neither detected nor "
                                          "corrected");
        cm__diag_appendf(fix, sizeof fix, "turn it on: sudo nvidia-smi %s -e 1, then reboot", smi);
        v = CM_DIAG_WARNING;
    }
    if (h->remapped_rows_correctable > 0 || h->remapped_rows_uncorrectable > 0)
        cm__diag_appendf(msg, sizeof msg, "; remapped rows: %d for correctable, %d for "
                                          "uncorrectable errors",
                         h->remapped_rows_correctable, h->remapped_rows_uncorrectable);
    else if (cm__diag_known(h->remapped_rows_correctable))
        cm__diag_appendf(msg, sizeof msg, "; no remapped rows");
    if (h->retired_pages > 0)
        cm__diag_appendf(msg, sizeof msg, "; %d retired page%s", h->retired_pages,
                         h->retired_pages == 1 ? "" : "s");
    if (change) {
        cm__diag_appendf(msg, sizeof msg, "; ECC will be %s after the next reboot",
                         h->ecc_mode_pending ? "on" : "off");
        if (v == CM_DIAG_OK) {
            cm__diag_appendf(fix, sizeof fix, "reboot to apply it, or undo the change");
            v = CM_DIAG_WARNING;
        }
    }
    cm__diag_add(r, id, v, 0, msg, fix);
}

/* Names of the active clock event reasons, ", "-separated. */
static void cm__diag_clock_reasons(long long bits, char *buf, size_t size) {
    static const struct {
        long long bit;
        const char *name;
    } names[] = {
        {CM_CLOCKS_HW_THERMAL, "hardware thermal slowdown"},
        {CM_CLOCKS_SW_THERMAL, "software thermal slowdown"},
        {CM_CLOCKS_HW_POWER_BRAKE, "hardware power brake"},
        {CM_CLOCKS_HW_SLOWDOWN, "hardware slowdown"},
        {CM_CLOCKS_SW_POWER_CAP, "held under the power limit"},
        {CM_CLOCKS_IDLE, "idle"},
        {CM_CLOCKS_APPLICATIONS_SETTING, "application clocks setting"},
        {CM_CLOCKS_SYNC_BOOST, "sync boost"},
        {CM_CLOCKS_DISPLAY_SETTING, "display clocks setting"},
    };
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
        if (bits & names[k].bit)
            cm__diag_appendf(buf, size, "%s%s", buf[0] ? ", " : "", names[k].name);
}

static void cm__diag_check_clocks(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", smi[64], th[96] = "",
         names[256];
    snprintf(id, sizeof id, "device%d.clocks", i);
    cm__diag_smi_target(h, i, smi, sizeof smi);
    cm__diag_thermals(h, th, sizeof th);
    long long bits = h->clock_event_reasons;
    if (!cm__diag_known(bits)) {
        cm__diag_appendf(msg, sizeof msg, "clock event reasons: not reported%s%s%s",
                         th[0] ? " (" : "", th, th[0] ? ")" : "");
        cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
        return;
    }
    const long long thermal = CM_CLOCKS_HW_THERMAL | CM_CLOCKS_SW_THERMAL;
    const long long slow = thermal | CM_CLOCKS_HW_POWER_BRAKE | CM_CLOCKS_HW_SLOWDOWN;
    cm__diag_clock_reasons(bits, names, sizeof names);
    if (bits & slow) {
        cm__diag_clock_reasons(bits & slow, names, sizeof names);
        cm__diag_appendf(msg, sizeof msg, "the clocks are slowed down: %s%s%s%s", names,
                         th[0] ? " (" : "", th, th[0] ? ")" : "");
        if (bits & (thermal | CM_CLOCKS_HW_SLOWDOWN))
            cm__diag_appendf(fix, sizeof fix,
                             "the GPU is too hot: check its cooling (airflow, fans, inlet "
                             "temperature, dust)");
        if (bits & (CM_CLOCKS_HW_POWER_BRAKE | CM_CLOCKS_HW_SLOWDOWN))
            cm__diag_appendf(fix, sizeof fix, "%sthe power supply %s: check it and the GPU's "
                             "power cables",
                             fix[0] ? "; " : "", bits & CM_CLOCKS_HW_POWER_BRAKE
                                                     ? "asserted the power brake"
                                                     : "may be short");
        cm__diag_appendf(fix, sizeof fix, " (nvidia-smi %s -q -d PERFORMANCE,TEMPERATURE,POWER "
                                          "shows the details)", smi);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
        return;
    }
    if (bits == 0)
        cm__diag_appendf(msg, sizeof msg, "full clocks");
    else if (bits & CM_CLOCKS_SW_POWER_CAP)
        cm__diag_appendf(msg, sizeof msg, "clocks %s (normal at full load)", names);
    else
        cm__diag_appendf(msg, sizeof msg, "clocks: %s", names);
    if (th[0]) cm__diag_appendf(msg, sizeof msg, "; %s", th);
    cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_pcie(cm_diag_report_t *r, int i, const cm_device_health_t *h) {
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "";
    snprintf(id, sizeof id, "device%d.pcie", i);
    bool gen_known = h->pcie_gen > 0 && h->pcie_gen_max > 0;
    bool width_known = h->pcie_width > 0 && h->pcie_width_max > 0;
    if (!gen_known && !width_known) {
        cm__diag_add(r, id, CM_DIAG_OK, 0, "PCIe link: not reported for this GPU", "");
        return;
    }
    bool narrow = width_known && h->pcie_width < h->pcie_width_max;
    bool slow = gen_known && h->pcie_gen < h->pcie_gen_max;
    /* GPUs lower the link's generation to save power while nothing runs */
    bool idle = cm__diag_known(h->clock_event_reasons) && (h->clock_event_reasons & CM_CLOCKS_IDLE);
    if (narrow) {
        cm__diag_appendf(msg, sizeof msg, "link runs at x%d of x%d: check the slot",
                         h->pcie_width, h->pcie_width_max);
        if (gen_known) cm__diag_appendf(msg, sizeof msg, " (generation %d of %d)", h->pcie_gen,
                                        h->pcie_gen_max);
        cm__diag_appendf(fix, sizeof fix,
                         "reseat the GPU or move it to a slot wired for x%d (a riser, or a slot "
                         "that shares its lanes, gives fewer); check the BIOS PCIe settings; "
                         "host-device copies run at most at %d/%d of their speed meanwhile",
                         h->pcie_width_max, h->pcie_width, h->pcie_width_max);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
        return;
    }
    if (slow && !idle) {
        cm__diag_appendf(msg, sizeof msg,
                         "link runs at generation %d of %d while the GPU is busy: check the slot",
                         h->pcie_gen, h->pcie_gen_max);
        if (width_known) cm__diag_appendf(msg, sizeof msg, " (x%d)", h->pcie_width);
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg,
                     "check the slot, riser and the BIOS setting of the PCIe generation; "
                     "host-device copies are slower meanwhile");
        return;
    }
    cm__diag_appendf(msg, sizeof msg, "PCIe");
    if (gen_known) cm__diag_appendf(msg, sizeof msg, " gen%d", h->pcie_gen);
    if (width_known) cm__diag_appendf(msg, sizeof msg, " x%d", h->pcie_width);
    if (slow)
        cm__diag_appendf(msg, sizeof msg, ", up to gen%d: the link slows down while the GPU is "
                                          "idle", h->pcie_gen_max);
    else
        cm__diag_appendf(msg, sizeof msg, " (the maximum)");
    cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_processes(const cm_diag_device_t *d, cm_diag_report_t *r, int i) {
    const cm_device_health_t *h = &d->health;
    char id[48], msg[CM_DIAG_TEXT_MAX] = "", fix[CM_DIAG_TEXT_MAX] = "", b[32];
    snprintf(id, sizeof id, "device%d.processes", i);
    if (!h->processes_known) {
        cm__diag_appendf(msg, sizeof msg, "the processes using this GPU cannot be listed: %s",
                         h->processes_reason[0] ? h->processes_reason : "not read");
        cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
        return;
    }
    if (h->process_count == 0) {
        cm__diag_add(r, id, CM_DIAG_OK, 0, "no process uses this GPU", "");
        return;
    }
    size_t listed = h->process_count < CM_HEALTH_MAX_PROCESSES ? h->process_count
                                                               : CM_HEALTH_MAX_PROCESSES;
    size_t others = 0, invisible = 0, invisible_bytes = 0, other_bytes = 0;
    cm__diag_appendf(msg, sizeof msg, "%zu process%s on this GPU:", h->process_count,
                     h->process_count == 1 ? "" : "es");
    int shown = 0;
    for (size_t k = 0; k < listed; ++k) {
        const cm_process_info_t *p = &h->processes[k];
        size_t bytes = p->used_bytes == CM_PROCESS_BYTES_UNKNOWN ? 0 : (size_t)p->used_bytes;
        if (!p->self) {
            ++others;
            other_bytes += bytes;
        }
        if (!p->visible) {
            ++invisible;
            invisible_bytes += bytes;
            continue;
        }
        if (shown++ >= 6) continue;
        cm__diag_appendf(msg, sizeof msg, "%s %s%s%u%s %s%s", shown > 1 ? "," : "", p->name,
                         p->name[0] ? " (pid " : "pid ", p->pid, p->name[0] ? ")" : "",
                         p->used_bytes == CM_PROCESS_BYTES_UNKNOWN
                             ? "memory not reported"
                             : cm__format_bytes(bytes, b, sizeof b),
                         p->self ? " (this process)" : "");
    }
    if (shown > 6) cm__diag_appendf(msg, sizeof msg, ", %d more", shown - 6);
    if (invisible > 0)
        cm__diag_appendf(msg, sizeof msg, "%s %zu not visible from here (another PID namespace) "
                         "hold%s %s", shown > 0 ? "; and" : "", invisible,
                         invisible == 1 ? "s" : "",
                         cm__format_bytes(invisible_bytes, b, sizeof b));
    if (h->process_count > listed)
        cm__diag_appendf(msg, sizeof msg, "; %zu more not listed", h->process_count - listed);
    size_t total = d->total_bytes > 0 ? d->total_bytes : d->limits.total_global_mem;
    if (others > 0 && total > 0 && other_bytes > total / 2) {
        char t[32];
        char *ob = cm__format_bytes(other_bytes, b, sizeof b);
        cm__diag_appendf(msg, sizeof msg, "; other processes hold %s of %s", ob,
                         cm__format_bytes(total, t, sizeof t));
        cm__diag_appendf(fix, sizeof fix,
                         "programs here get only what is left: stop those processes or wait for "
                         "them, or run on another GPU (CUDA_VISIBLE_DEVICES)");
        cm__diag_add(r, id, CM_DIAG_WARNING, 0, msg, fix);
        return;
    }
    cm__diag_add(r, id, CM_DIAG_OK, 0, msg, "");
}

static void cm__diag_check_health(const cm_diag_inputs_t *in, cm_diag_report_t *r, int i) {
    const cm_device_health_t *h = &in->devices[i].health;
    cm__diag_check_persistence(r, i, h);
    cm__diag_check_compute_mode(r, i, h);
    cm__diag_check_mig(r, i, h);
    cm__diag_check_ecc(r, i, h);
    cm__diag_check_clocks(r, i, h);
    cm__diag_check_pcie(r, i, h);
    cm__diag_check_processes(&in->devices[i], r, i);
}

static void cm__diag_check_env(const cm_diag_inputs_t *in, cm_diag_report_t *r) {
    char msg[CM_DIAG_TEXT_MAX] = "";
    cm__diag_check_dir_var(r, "CUDA_HOME", &in->cuda_home, in->cuda_home_exists);
    cm__diag_check_dir_var(r, "CUDA_PATH", &in->cuda_path, in->cuda_path_exists);

    if (in->ld_library_path.set)
        cm__diag_appendf(msg, sizeof msg, "LD_LIBRARY_PATH=\"%s\"", in->ld_library_path.value);
    else
        cm__diag_appendf(msg, sizeof msg, "LD_LIBRARY_PATH is not set");
    cm__diag_add(r, "env.LD_LIBRARY_PATH", CM_DIAG_OK, 0, msg, "");

    msg[0] = '\0';
    if (in->cuda_visible_devices.set)
        cm__diag_appendf(msg, sizeof msg,
                         "CUDA_VISIBLE_DEVICES=\"%s\" (CUDA sees only the devices it lists, "
                         "renumbered from 0)",
                         in->cuda_visible_devices.value);
    else
        cm__diag_appendf(msg, sizeof msg, "CUDA_VISIBLE_DEVICES is not set (all devices visible)");
    cm__diag_add(r, "env.CUDA_VISIBLE_DEVICES", CM_DIAG_OK, 0, msg, "");

    msg[0] = '\0';
    if (cm__diag_switch_on(&in->cuda_launch_blocking)) {
        cm__diag_add(r, "env.CUDA_LAUNCH_BLOCKING", CM_DIAG_WARNING, 0,
                     "CUDA_LAUNCH_BLOCKING=1 serialises every kernel launch with the host: "
                     "for debugging only, much slower",
                     "unset CUDA_LAUNCH_BLOCKING outside debugging sessions");
    } else {
        if (in->cuda_launch_blocking.set)
            cm__diag_appendf(msg, sizeof msg,
                             "CUDA_LAUNCH_BLOCKING=\"%s\" (off; only 1 turns it on)",
                             in->cuda_launch_blocking.value);
        else
            cm__diag_appendf(msg, sizeof msg, "CUDA_LAUNCH_BLOCKING is not set (launches are "
                                              "asynchronous)");
        cm__diag_add(r, "env.CUDA_LAUNCH_BLOCKING", CM_DIAG_OK, 0, msg, "");
    }

    msg[0] = '\0';
    if (cm__diag_switch_on(&in->cudamodel_sync)) {
        cm__diag_add(r, "env.CUDAMODEL_SYNC", CM_DIAG_WARNING, 0,
                     "CUDAMODEL_SYNC=1 synchronises the device after every libcudamodel launch: "
                     "for debugging only, much slower",
                     "unset CUDAMODEL_SYNC outside debugging sessions");
    } else {
        if (in->cudamodel_sync.set)
            cm__diag_appendf(msg, sizeof msg, "CUDAMODEL_SYNC=\"%s\" (off; only 1 turns it on)",
                             in->cudamodel_sync.value);
        else
            cm__diag_appendf(msg, sizeof msg, "CUDAMODEL_SYNC is not set (synchronous debug mode "
                                              "off)");
        cm__diag_add(r, "env.CUDAMODEL_SYNC", CM_DIAG_OK, 0, msg, "");
    }

    if (in->wsl)
        cm__diag_add(r, "platform", CM_DIAG_OK, 0,
                     "WSL2: the GPU driver is the Windows one; libcuda comes from /usr/lib/wsl/lib",
                     "");
    else
        cm__diag_add(r, "platform", CM_DIAG_OK, 0, "Linux (not WSL2)", "");
}

cm_status_t cm_diag_evaluate(const cm_diag_inputs_t *inputs, cm_diag_report_t *report) {
    CM__REQUIRE(inputs != NULL && report != NULL,
                "pass inputs from cm_diag_collect() and a report to fill",
                "inputs or report is NULL");
    if (inputs != &report->inputs) memmove(&report->inputs, inputs, sizeof *inputs);
    const cm_diag_inputs_t *in = &report->inputs;
    report->n_checks = 0;
    memset(report->checks, 0, sizeof report->checks);
    report->overall = CM_DIAG_OK;
    report->exit_code = 0;

    cm_arch_list_t archs;
    bool archs_ok = cm__diag_archs(in, &archs);
    cm__diag_check_library(in, report, &archs, archs_ok);
    int driver_exit = cm__diag_check_driver(in, report);
    cm__diag_check_runtime(in, report);
    cm__diag_check_devices(in, report, driver_exit);
    if (in->device_count_error == 0) {
        int n = in->device_count < CM_DIAG_MAX_DEVICES ? in->device_count : CM_DIAG_MAX_DEVICES;
        for (int i = 0; i < n; ++i) cm__diag_check_device(in, report, i, &archs, archs_ok);
    }
    cm__diag_check_nvml(in, report);
    if (in->device_count_error == 0) {
        int n = in->device_count < CM_DIAG_MAX_DEVICES ? in->device_count : CM_DIAG_MAX_DEVICES;
        for (int i = 0; i < n; ++i)
            if (in->devices[i].health.nvml_available) cm__diag_check_health(in, report, i);
    }
    cm__diag_check_peers(in, report);
    cm__diag_check_nccl(in, report);
    cm__diag_check_nvcc(in, report);
    cm__diag_check_env(in, report);
    return CM_OK;
}

int cm_diag_exit_code(const cm_diag_report_t *report) {
    if (report == NULL) return CM_DIAG_EXIT_OTHER;
    int code = 0;
    int n = report->n_checks < CM_DIAG_MAX_CHECKS ? report->n_checks : CM_DIAG_MAX_CHECKS;
    for (int i = 0; i < n; ++i) {
        const cm_diag_check_t *c = &report->checks[i];
        if (c->verdict != CM_DIAG_ERROR) continue;
        int e = c->exit_code > 0 ? c->exit_code : CM_DIAG_EXIT_OTHER;
        if (code == 0 || e < code) code = e;
    }
    /* checks beyond the capacity still count through report->exit_code */
    if (report->exit_code > 0 && (code == 0 || report->exit_code < code)) code = report->exit_code;
    return code;
}

const char *cm_diag_exit_code_meaning(int exit_code) {
    switch (exit_code) {
    case CM_DIAG_EXIT_OK: return "ok";
    case CM_DIAG_EXIT_NO_DRIVER: return "no NVIDIA driver";
    case CM_DIAG_EXIT_DRIVER_OLD: return "driver older than the CUDA runtime";
    case CM_DIAG_EXIT_NO_DEVICE: return "no CUDA device visible";
    case CM_DIAG_EXIT_NO_IMAGE: return "no kernel image for a device";
    case CM_DIAG_EXIT_OTHER: return "other error";
    case CM_DIAG_EXIT_USAGE: return "bad command line";
    default: return "unknown exit code";
    }
}

const char *cm_diag_verdict_name(cm_diag_verdict_t v) {
    switch (v) {
    case CM_DIAG_OK: return "ok";
    case CM_DIAG_WARNING: return "warning";
    case CM_DIAG_ERROR: return "error";
    }
    return "unknown";
}

/* ================================================================ text output */

/* Write s, escaping control characters so a value cannot break the line structure. */
static void cm__diag_text_put(FILE *out, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; ++p) {
        if (*p == '\n') fputs("\\n", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p == '\r') fputs("\\r", out);
        else if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\x%02x", *p);
        else fputc(*p, out);
    }
}

static void cm__diag_text_size(FILE *out, size_t bytes) {
    if (bytes >= ((size_t)1 << 30)) fprintf(out, "%.1f GiB", (double)bytes / 1073741824.0);
    else if (bytes >= ((size_t)1 << 20)) fprintf(out, "%.1f MiB", (double)bytes / 1048576.0);
    else if (bytes >= 1024 && bytes % 1024 == 0) fprintf(out, "%zu KiB", bytes / 1024);
    else fprintf(out, "%zu B", bytes);
}

static const char *cm__diag_onoff(int v) {
    return v == CM_HEALTH_UNKNOWN ? "n/a" : v ? "on" : "off";
}

/* The health lines of a device block (NVML). */
static void cm__diag_text_health(FILE *out, const cm_device_health_t *h) {
    if (!h->nvml_available) {
        fputs("  NVML                not available: ", out);
        cm__diag_text_put(out, h->nvml_reason[0] ? h->nvml_reason : "not read");
        fputc('\n', out);
        return;
    }
    fputs("  driver (NVML)       ", out);
    cm__diag_text_put(out, h->driver_version[0] ? h->driver_version : "unknown");
    fputs(", PCI ", out);
    cm__diag_text_put(out, h->pci_bus_id);
    fprintf(out, "\n  modes               persistence %s, compute %s, MIG %s, ECC %s\n",
            cm__diag_onoff(h->persistence_mode), cm__diag_compute_mode_name(h->compute_mode),
            cm__diag_onoff(h->mig_mode), cm__diag_onoff(h->ecc_mode));
    char errs[256] = "";
    if (cm__diag_known(h->ecc_volatile_uncorrected))
        cm__diag_appendf(errs, sizeof errs, "%lld uncorrectable since the driver loaded",
                         h->ecc_volatile_uncorrected);
    if (cm__diag_known(h->ecc_aggregate_uncorrected))
        cm__diag_appendf(errs, sizeof errs, "%s%lld over its life", errs[0] ? ", " : "",
                         h->ecc_aggregate_uncorrected);
    if (cm__diag_known(h->remapped_rows_correctable))
        cm__diag_appendf(errs, sizeof errs, "%sremapped rows %d correctable, %d uncorrectable%s%s",
                         errs[0] ? "; " : "", h->remapped_rows_correctable,
                         h->remapped_rows_uncorrectable,
                         h->row_remap_pending == 1 ? ", remapping pending" : "",
                         h->row_remap_failed == 1 ? ", remapping FAILED" : "");
    if (cm__diag_known(h->retired_pages))
        cm__diag_appendf(errs, sizeof errs, "%sretired pages %d%s", errs[0] ? "; " : "",
                         h->retired_pages, h->retired_pages_pending == 1 ? " (pending)" : "");
    fputs("  memory errors       ", out);
    fputs(errs[0] ? errs : "not reported", out);
    fputc('\n', out);
    char th[96] = "", names[256] = "";
    cm__diag_thermals(h, th, sizeof th);
    if (cm__diag_known(h->clock_event_reasons))
        cm__diag_clock_reasons(h->clock_event_reasons, names, sizeof names);
    fprintf(out, "  clocks              %s%s%s\n",
            !cm__diag_known(h->clock_event_reasons) ? "reasons not reported"
            : names[0]                              ? names
                                                    : "full clocks",
            th[0] ? "; " : "", th);
    fputs("  PCIe link           ", out);
    if (h->pcie_gen > 0 || h->pcie_width > 0)
        fprintf(out, "gen%d x%d (max gen%d x%d)\n", h->pcie_gen, h->pcie_width, h->pcie_gen_max,
                h->pcie_width_max);
    else
        fputs("not reported\n", out);
    fputs("  processes           ", out);
    if (!h->processes_known) {
        fputs("not listed: ", out);
        cm__diag_text_put(out, h->processes_reason);
        fputc('\n', out);
        return;
    }
    if (h->process_count == 0) fputs("none", out);
    size_t n = h->process_count < CM_HEALTH_MAX_PROCESSES ? h->process_count
                                                          : CM_HEALTH_MAX_PROCESSES;
    for (size_t k = 0; k < n; ++k) {
        const cm_process_info_t *p = &h->processes[k];
        fprintf(out, "%s%u ", k ? ", " : "", p->pid);
        cm__diag_text_put(out, p->name[0] ? p->name : p->visible ? "?" : "(not visible)");
        fputc(' ', out);
        if (p->used_bytes == CM_PROCESS_BYTES_UNKNOWN) fputs("?", out);
        else cm__diag_text_size(out, (size_t)p->used_bytes);
        if (p->self) fputs(" (this process)", out);
    }
    if (h->process_count > n) fprintf(out, ", %zu more", h->process_count - n);
    fputc('\n', out);
}

cm_status_t cm_diag_write_text(const cm_diag_report_t *report, FILE *out) {
    CM__REQUIRE(report != NULL && out != NULL, "pass a report and an open stream",
                "report or out is NULL");
    const cm_diag_inputs_t *in = &report->inputs;
    char rt[16], drv[16];
    fputs("cudamodel-doctor: libcudamodel ", out);
    cm__diag_text_put(out, in->library_version[0] ? in->library_version : "(unknown)");
    fputs(", architectures \"", out);
    cm__diag_text_put(out, in->library_archs);
    fprintf(out, "\", CUDA runtime %s, driver %s\n",
            cm__diag_version_text(in->runtime_version, rt, sizeof rt),
            in->driver_version > 0 ? cm__diag_version_text(in->driver_version, drv, sizeof drv)
                                   : "none");

    int n = report->n_checks < CM_DIAG_MAX_CHECKS ? report->n_checks : CM_DIAG_MAX_CHECKS;
    int warnings = 0;
    for (int i = 0; i < n; ++i) {
        const cm_diag_check_t *c = &report->checks[i];
        const char *tag = c->verdict == CM_DIAG_ERROR     ? "[ERROR]"
                          : c->verdict == CM_DIAG_WARNING ? "[warn ]"
                                                          : "[ ok  ]";
        if (c->verdict == CM_DIAG_WARNING) ++warnings;
        fprintf(out, "%s ", tag);
        cm__diag_text_put(out, c->id);
        fputs(": ", out);
        cm__diag_text_put(out, c->message);
        fputc('\n', out);
        if (c->fix[0] != '\0') {
            fputs("        fix: ", out);
            cm__diag_text_put(out, c->fix);
            fputc('\n', out);
        }
    }

    int nd = in->device_count_error == 0 ? in->device_count : 0;
    if (nd > CM_DIAG_MAX_DEVICES) nd = CM_DIAG_MAX_DEVICES;
    for (int i = 0; i < nd; ++i) {
        const cm_diag_device_t *d = &in->devices[i];
        const cm_device_limits_t *l = &d->limits;
        if (d->limits_error != 0) continue;
        char arch[16];
        cm_arch_name(l->cc_major * 10 + l->cc_minor, arch, sizeof arch);
        fprintf(out, "\ndevice %d: ", i);
        cm__diag_text_put(out, l->name);
        fprintf(out, " (%s), PCI ", arch);
        cm__diag_text_put(out, l->pci_bus_id[0] ? l->pci_bus_id : "unknown");
        fprintf(out,
                "\n  multiprocessors     %d, warp size %d, max %d threads and %d blocks per SM\n",
                l->multiprocessor_count, l->warp_size, l->max_threads_per_multiprocessor,
                l->max_blocks_per_multiprocessor);
        fputs("  memory              ", out);
        if (d->memory_error == 0 && d->total_bytes > 0) {
            cm__diag_text_size(out, d->free_bytes);
            fputs(" free of ", out);
            cm__diag_text_size(out, d->total_bytes);
        } else {
            cm__diag_text_size(out, l->total_global_mem);
            fputs(" total (free unknown)", out);
        }
        fputs(", L2 ", out);
        cm__diag_text_size(out, l->l2_cache_bytes);
        if (d->managed_read)
            fprintf(out, "\n  managed memory      concurrent access %s, pageable memory access %s",
                    d->concurrent_managed_access ? "yes" : "no",
                    d->pageable_memory_access ? "yes" : "no");
        fprintf(out, "\n  threads per block   %d\n", l->max_threads_per_block);
        fprintf(out, "  block dims          %d x %d x %d\n", l->max_block_dim[0],
                l->max_block_dim[1], l->max_block_dim[2]);
        fprintf(out, "  grid dims           %d x %d x %d\n", l->max_grid_dim[0], l->max_grid_dim[1],
                l->max_grid_dim[2]);
        fputs("  shared mem / block  ", out);
        cm__diag_text_size(out, l->shared_mem_per_block);
        fputs(" (opt-in ", out);
        cm__diag_text_size(out, l->shared_mem_per_block_optin);
        fputs("), per SM ", out);
        cm__diag_text_size(out, l->shared_mem_per_multiprocessor);
        fprintf(out, "\n  registers           %d per block, %d per SM\n", l->regs_per_block,
                l->regs_per_multiprocessor);
        fprintf(out, "  clusters            %s\n", l->cluster_launch ? "yes" : "no");
        cm__diag_text_health(out, &d->health);
    }

    if (nd >= 2) {
        fputs("\npeer access (row device reads and writes column device's memory; y yes, - no, "
              "? not read):\n      ", out);
        for (int j = 0; j < nd; ++j) fprintf(out, "%4d", j);
        fputc('\n', out);
        for (int i = 0; i < nd; ++i) {
            fprintf(out, "  %3d ", i);
            for (int j = 0; j < nd; ++j) {
                int p = in->peer_access[i][j];
                fprintf(out, "%4s", i == j ? "=" : p == CM_DIAG_PEER_YES ? "y"
                                                 : p == CM_DIAG_PEER_NO  ? "-"
                                                                         : "?");
            }
            fputc('\n', out);
        }
    }

    int code = cm_diag_exit_code(report);
    if (code != 0)
        fprintf(out, "\nverdict: error (exit %d: %s)\n", code, cm_diag_exit_code_meaning(code));
    else if (warnings > 0)
        fprintf(out, "\nverdict: ok with %d warning%s (exit 0)\n", warnings,
                warnings == 1 ? "" : "s");
    else
        fputs("\nverdict: ok\n", out);
    return CM_OK;
}

/* ================================================================ JSON output */

/* Length of a valid UTF-8 sequence at p (1..4), 0 when the bytes are not valid UTF-8. */
static int cm__diag_utf8_len(const unsigned char *p) {
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80) return 0;
        if (p[0] == 0xe0 && p[1] < 0xa0) return 0;  /* overlong */
        if (p[0] == 0xed && p[1] >= 0xa0) return 0; /* surrogates */
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80) return 0;
        if (p[0] == 0xf0 && p[1] < 0x90) return 0; /* overlong */
        if (p[0] == 0xf4 && p[1] >= 0x90) return 0; /* above U+10FFFF */
        return 4;
    }
    return 0;
}

static void cm__diag_json_string(FILE *out, const char *s) {
    fputc('"', out);
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        unsigned char c = *p;
        switch (c) {
        case '"': fputs("\\\"", out); ++p; continue;
        case '\\': fputs("\\\\", out); ++p; continue;
        case '\n': fputs("\\n", out); ++p; continue;
        case '\r': fputs("\\r", out); ++p; continue;
        case '\t': fputs("\\t", out); ++p; continue;
        case '\b': fputs("\\b", out); ++p; continue;
        case '\f': fputs("\\f", out); ++p; continue;
        default: break;
        }
        if (c < 0x20 || c == 0x7f) {
            fprintf(out, "\\u%04x", c);
            ++p;
            continue;
        }
        int len = cm__diag_utf8_len(p);
        if (len == 0) {
            fputs("\\ufffd", out); /* not UTF-8: keep the output valid JSON */
            ++p;
            continue;
        }
        fwrite(p, 1, (size_t)len, out);
        p += len;
    }
    fputc('"', out);
}

static void cm__diag_json_key(FILE *out, const char *indent, const char *key) {
    fputs(indent, out);
    cm__diag_json_string(out, key);
    fputs(": ", out);
}

static void cm__diag_json_env(FILE *out, const char *key, const cm_diag_env_var_t *v, bool last) {
    cm__diag_json_key(out, "    ", key);
    if (v->set) cm__diag_json_string(out, v->value);
    else fputs("null", out);
    fputs(last ? "\n" : ",\n", out);
}

static void cm__diag_json_version(FILE *out, const char *indent, const char *key, int v,
                                  bool last) {
    char text[16];
    cm__diag_json_key(out, indent, key);
    fprintf(out, "%d,\n", v);
    char k2[64];
    snprintf(k2, sizeof k2, "%s_text", key);
    cm__diag_json_key(out, indent, k2);
    cm__diag_json_string(out, v > 0 ? cm__diag_version_text(v, text, sizeof text) : "");
    fputs(last ? "\n" : ",\n", out);
}

/* A number NVML may not report: null when unknown. */
static void cm__diag_json_num(FILE *out, const char *key, long long v) {
    fprintf(out, ", \"%s\": ", key);
    if (v == CM_HEALTH_UNKNOWN) fputs("null", out);
    else fprintf(out, "%lld", v);
}

static void cm__diag_json_flag(FILE *out, const char *key, int v) {
    fprintf(out, ", \"%s\": %s", key, v == CM_HEALTH_UNKNOWN ? "null" : v ? "true" : "false");
}

/* One device's health object (on one line). */
static void cm__diag_json_health(FILE *out, const cm_device_health_t *h) {
    fprintf(out, "{\"nvml_available\": %s, \"nvml_reason\": ", h->nvml_available ? "true" : "false");
    cm__diag_json_string(out, h->nvml_reason);
    if (!h->nvml_available) {
        fputc('}', out);
        return;
    }
    fputs(", \"driver_version\": ", out);
    cm__diag_json_string(out, h->driver_version);
    fputs(", \"pci_bus_id\": ", out);
    cm__diag_json_string(out, h->pci_bus_id);
    cm__diag_json_flag(out, "persistence_mode", h->persistence_mode);
    fputs(", \"compute_mode\": ", out);
    if (h->compute_mode == CM_HEALTH_UNKNOWN) fputs("null", out);
    else cm__diag_json_string(out, cm__diag_compute_mode_name(h->compute_mode));
    cm__diag_json_flag(out, "mig_mode", h->mig_mode);
    cm__diag_json_flag(out, "mig_mode_pending", h->mig_mode_pending);
    cm__diag_json_flag(out, "ecc_mode", h->ecc_mode);
    cm__diag_json_flag(out, "ecc_mode_pending", h->ecc_mode_pending);
    cm__diag_json_num(out, "ecc_volatile_uncorrected", h->ecc_volatile_uncorrected);
    cm__diag_json_num(out, "ecc_aggregate_uncorrected", h->ecc_aggregate_uncorrected);
    cm__diag_json_num(out, "retired_pages", h->retired_pages);
    cm__diag_json_flag(out, "retired_pages_pending", h->retired_pages_pending);
    cm__diag_json_num(out, "remapped_rows_correctable", h->remapped_rows_correctable);
    cm__diag_json_num(out, "remapped_rows_uncorrectable", h->remapped_rows_uncorrectable);
    cm__diag_json_flag(out, "row_remap_pending", h->row_remap_pending);
    cm__diag_json_flag(out, "row_remap_failed", h->row_remap_failed);
    cm__diag_json_num(out, "clock_event_reasons", h->clock_event_reasons);
    fputs(", \"clock_event_reasons_text\": ", out);
    if (h->clock_event_reasons == CM_HEALTH_UNKNOWN) {
        fputs("null", out);
    } else {
        char names[256];
        cm__diag_clock_reasons(h->clock_event_reasons, names, sizeof names);
        cm__diag_json_string(out, names);
    }
    cm__diag_json_num(out, "temperature_c", h->temperature_c);
    cm__diag_json_num(out, "power_mw", h->power_mw);
    cm__diag_json_num(out, "power_limit_mw", h->power_limit_mw);
    cm__diag_json_num(out, "pcie_gen", h->pcie_gen);
    cm__diag_json_num(out, "pcie_gen_max", h->pcie_gen_max);
    cm__diag_json_num(out, "pcie_width", h->pcie_width);
    cm__diag_json_num(out, "pcie_width_max", h->pcie_width_max);
    fprintf(out, ", \"processes_known\": %s, \"processes_reason\": ",
            h->processes_known ? "true" : "false");
    cm__diag_json_string(out, h->processes_reason);
    fprintf(out, ", \"process_count\": %zu, \"processes\": [", h->processes_known ? h->process_count : 0);
    size_t n = !h->processes_known                       ? 0
               : h->process_count < CM_HEALTH_MAX_PROCESSES ? h->process_count
                                                          : CM_HEALTH_MAX_PROCESSES;
    for (size_t k = 0; k < n; ++k) {
        const cm_process_info_t *p = &h->processes[k];
        fprintf(out, "%s{\"pid\": %u, \"name\": ", k ? ", " : "", p->pid);
        cm__diag_json_string(out, p->name);
        fputs(", \"used_bytes\": ", out);
        if (p->used_bytes == CM_PROCESS_BYTES_UNKNOWN) fputs("null", out);
        else fprintf(out, "%llu", p->used_bytes);
        fprintf(out, ", \"visible\": %s, \"self\": %s}", p->visible ? "true" : "false",
                p->self ? "true" : "false");
    }
    fputs("]}", out);
}

cm_status_t cm_diag_write_json(const cm_diag_report_t *report, FILE *out) {
    CM__REQUIRE(report != NULL && out != NULL, "pass a report and an open stream",
                "report or out is NULL");
    const cm_diag_inputs_t *in = &report->inputs;
    cm_arch_list_t archs;
    bool archs_ok = cm__diag_archs(in, &archs);

    fputs("{\n  \"library\": {\n", out);
    cm__diag_json_key(out, "    ", "version");
    cm__diag_json_string(out, in->library_version);
    fputs(",\n", out);
    cm__diag_json_key(out, "    ", "architectures");
    cm__diag_json_string(out, in->library_archs);
    fputs(",\n", out);
    cm__diag_json_key(out, "    ", "sass");
    fputc('[', out);
    for (int i = 0; archs_ok && i < archs.n_sass; ++i)
        fprintf(out, "%s%d", i ? ", " : "", archs.sass[i]);
    fputs("],\n", out);
    cm__diag_json_key(out, "    ", "ptx");
    fputc('[', out);
    for (int i = 0; archs_ok && i < archs.n_ptx; ++i)
        fprintf(out, "%s%d", i ? ", " : "", archs.ptx[i]);
    fputs("]\n  },\n", out);

    fputs("  \"driver\": {\n", out);
    cm__diag_json_key(out, "    ", "libcuda_loadable");
    fputs(in->libcuda_loadable ? "true,\n" : "false,\n", out);
    cm__diag_json_key(out, "    ", in->libcuda_loadable ? "libcuda_path" : "libcuda_error");
    cm__diag_json_string(out, in->libcuda_path);
    fputs(",\n", out);
    cm__diag_json_version(out, "    ", "driver_version", in->driver_version, false);
    cm__diag_json_version(out, "    ", "runtime_version", in->runtime_version, false);
    cm__diag_json_version(out, "    ", "runtime_version_built", in->runtime_version_built, true);
    fputs("  },\n", out);

    cm__diag_json_key(out, "  ", "device_count_error");
    fprintf(out, "%d,\n", in->device_count_error);
    cm__diag_json_key(out, "  ", "device_count_error_name");
    cm__diag_json_string(out, cm__diag_cuda_error_name(in->device_count_error));
    fputs(",\n", out);
    cm__diag_json_key(out, "  ", "device_count");
    fprintf(out, "%d,\n", in->device_count);
    fputs("  \"devices\": [", out);
    int nd = in->device_count_error == 0 ? in->device_count : 0;
    if (nd > CM_DIAG_MAX_DEVICES) nd = CM_DIAG_MAX_DEVICES;
    for (int i = 0; i < nd; ++i) {
        const cm_diag_device_t *d = &in->devices[i];
        const cm_device_limits_t *l = &d->limits;
        int cc = l->cc_major * 10 + l->cc_minor;
        char arch[16];
        cm_arch_name(cc, arch, sizeof arch);
        cm__diag_image_judgement_t j;
        cm__diag_judge_image(&archs, archs_ok, d, &j);
        fputs(i ? ",\n    {\n" : "\n    {\n", out);
        const char *ind = "      ";
        cm__diag_json_key(out, ind, "ordinal");
        fprintf(out, "%d,\n", i);
        cm__diag_json_key(out, ind, "name");
        cm__diag_json_string(out, l->name);
        fputs(",\n", out);
        cm__diag_json_key(out, ind, "arch");
        cm__diag_json_string(out, arch);
        fputs(",\n", out);
        cm__diag_json_key(out, ind, "compute_capability");
        fprintf(out, "[%d, %d],\n", l->cc_major, l->cc_minor);
        cm__diag_json_key(out, ind, "pci_bus_id");
        cm__diag_json_string(out, l->pci_bus_id);
        fputs(",\n", out);
        cm__diag_json_key(out, ind, "limits_error");
        fprintf(out, "%d,\n", d->limits_error);
        cm__diag_json_key(out, ind, "memory_error");
        fprintf(out, "%d,\n", d->memory_error);
        cm__diag_json_key(out, ind, "memory_free");
        fprintf(out, "%zu,\n", d->free_bytes);
        cm__diag_json_key(out, ind, "memory_total");
        fprintf(out, "%zu,\n", d->total_bytes);
        cm__diag_json_key(out, ind, "managed");
        if (d->managed_read)
            fprintf(out, "{\"concurrent_managed_access\": %s, \"pageable_memory_access\": %s},\n",
                    d->concurrent_managed_access ? "true" : "false",
                    d->pageable_memory_access ? "true" : "false");
        else
            fputs("null,\n", out);
        fprintf(out,
                "%s\"limits\": {\"multiprocessor_count\": %d, \"warp_size\": %d, "
                "\"max_threads_per_block\": %d, \"max_block_dim\": [%d, %d, %d], "
                "\"max_grid_dim\": [%d, %d, %d], \"shared_mem_per_block\": %zu, "
                "\"shared_mem_per_block_optin\": %zu, \"shared_mem_per_multiprocessor\": %zu, "
                "\"regs_per_block\": %d, \"regs_per_multiprocessor\": %d, "
                "\"max_threads_per_multiprocessor\": %d, \"max_blocks_per_multiprocessor\": %d, "
                "\"l2_cache_bytes\": %zu, \"total_global_mem\": %zu, \"cluster_launch\": %s},\n",
                ind, l->multiprocessor_count, l->warp_size, l->max_threads_per_block,
                l->max_block_dim[0], l->max_block_dim[1], l->max_block_dim[2], l->max_grid_dim[0],
                l->max_grid_dim[1], l->max_grid_dim[2], l->shared_mem_per_block,
                l->shared_mem_per_block_optin, l->shared_mem_per_multiprocessor,
                l->regs_per_block, l->regs_per_multiprocessor, l->max_threads_per_multiprocessor,
                l->max_blocks_per_multiprocessor, l->l2_cache_bytes, l->total_global_mem,
                l->cluster_launch ? "true" : "false");
        fprintf(out, "%s\"image\": {\"predicted\": ", ind);
        cm__diag_json_string(out, cm_image_kind_name(j.predicted));
        fprintf(out, ", \"predicted_arch\": %d, \"checked\": %s, \"observed\": ", j.predicted_arch,
                d->image_checked ? "true" : "false");
        if (j.observed_known) cm__diag_json_string(out, cm_image_kind_name(j.observed));
        else fputs("null", out);
        fprintf(out, ", \"cuda_error\": %d, \"binary_version\": %d, \"ptx_version\": %d, "
                     "\"launch_ok\": %s, \"status\": ",
                d->image.cuda_error, d->image.binary_version, d->image.ptx_version,
                d->image.launch_ok ? "true" : "false");
        cm__diag_json_string(out, cm_status_name(d->image_status));
        fputs("},\n", out);
        cm__diag_json_key(out, ind, "detail");
        cm__diag_json_string(out, d->detail);
        fputs(",\n", out);
        cm__diag_json_key(out, ind, "health");
        cm__diag_json_health(out, &d->health);
        fputs("\n    }", out);
    }
    fputs(nd ? "\n  ],\n" : "],\n", out);

    fputs("  \"peer_access\": [", out);
    for (int i = 0; i < nd; ++i) {
        fputs(i ? ", [" : "[", out);
        for (int j = 0; j < nd; ++j) {
            int p = in->peer_access[i][j];
            fputs(j ? ", " : "", out);
            fputs(p == CM_DIAG_PEER_YES ? "true" : p == CM_DIAG_PEER_NO ? "false" : "null", out);
        }
        fputc(']', out);
    }
    fputs("],\n", out);
    {
        char text[24];
        fprintf(out, "  \"nccl\": {\"built\": %s, \"version_built\": %d, \"version\": %d, "
                     "\"version_text\": ",
                in->nccl_version_built > 0 ? "true" : "false", in->nccl_version_built,
                in->nccl_version);
        cm__diag_json_string(out, in->nccl_version > 0
                                      ? cm__diag_nccl_text(in->nccl_version, text, sizeof text)
                                      : "");
        fputs("},\n", out);
    }

    fputs("  \"environment\": {\n", out);
    cm__diag_json_env(out, "CUDA_HOME", &in->cuda_home, false);
    cm__diag_json_env(out, "CUDA_PATH", &in->cuda_path, false);
    cm__diag_json_env(out, "LD_LIBRARY_PATH", &in->ld_library_path, false);
    cm__diag_json_env(out, "CUDA_VISIBLE_DEVICES", &in->cuda_visible_devices, false);
    cm__diag_json_env(out, "CUDA_LAUNCH_BLOCKING", &in->cuda_launch_blocking, false);
    cm__diag_json_env(out, "CUDAMODEL_SYNC", &in->cudamodel_sync, false);
    cm__diag_json_key(out, "    ", "cuda_home_exists");
    fputs(in->cuda_home_exists ? "true,\n" : "false,\n", out);
    cm__diag_json_key(out, "    ", "cuda_path_exists");
    fputs(in->cuda_path_exists ? "true,\n" : "false,\n", out);
    cm__diag_json_key(out, "    ", "nvcc_path");
    if (in->nvcc_path[0] != '\0') cm__diag_json_string(out, in->nvcc_path);
    else fputs("null", out);
    fputs(",\n", out);
    cm__diag_json_version(out, "    ", "nvcc_version", in->nvcc_version, false);
    cm__diag_json_key(out, "    ", "wsl");
    fputs(in->wsl ? "true\n" : "false\n", out);
    fputs("  },\n", out);

    fputs("  \"checks\": [", out);
    int n = report->n_checks < CM_DIAG_MAX_CHECKS ? report->n_checks : CM_DIAG_MAX_CHECKS;
    for (int i = 0; i < n; ++i) {
        const cm_diag_check_t *c = &report->checks[i];
        fputs(i ? ",\n    {\"id\": " : "\n    {\"id\": ", out);
        cm__diag_json_string(out, c->id);
        fputs(", \"verdict\": ", out);
        cm__diag_json_string(out, cm_diag_verdict_name(c->verdict));
        fprintf(out, ", \"exit_code\": %d, \"message\": ", c->exit_code);
        cm__diag_json_string(out, c->message);
        fputs(", \"fix\": ", out);
        cm__diag_json_string(out, c->fix);
        fputc('}', out);
    }
    fputs(n ? "\n  ],\n" : "],\n", out);
    int code = cm_diag_exit_code(report);
    cm__diag_json_key(out, "  ", "overall");
    cm__diag_json_string(out, cm_diag_verdict_name(report->overall));
    fputs(",\n", out);
    cm__diag_json_key(out, "  ", "exit_code");
    fprintf(out, "%d,\n", code);
    cm__diag_json_key(out, "  ", "exit_meaning");
    cm__diag_json_string(out, cm_diag_exit_code_meaning(code));
    fputs("\n}\n", out);
    return CM_OK;
}
