/*
 * Devices, versions and architectures (device.h), and the device-limits conversion of
 * interop.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "build_info.h"
#include "internal.h"
#include "kernels.h"

/* ------------------------------------------------------------------ versions and counts */

int cm__driver_version(void) {
    int v = 0;
    if (cm__cuda.driver_get_version(&v) != cudaSuccess) v = 0;
    return v;
}

int cm__runtime_version(void) {
    int v = 0;
    if (cm__cuda.runtime_get_version(&v) != cudaSuccess) v = 0;
    return v;
}

int cm__runtime_version_built(void) {
    return CUDART_VERSION;
}

cm_status_t cm_device_count(int *count) {
    CM__REQUIRE(count != NULL, "pass the address of an int", "count is NULL");
    *count = 0;
    int n = 0;
    cudaError_t err = cm__cuda.get_device_count(&n);
    if (err != cudaSuccess) return cm_record_cuda_error(err, "cudaGetDeviceCount", __FILE__, __LINE__);
    if (n <= 0) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        return CM__FAIL(CM_ERROR_NO_DEVICE, -1,
                        cvd ? "unset CUDA_VISIBLE_DEVICES or list ordinals that nvidia-smi -L shows"
                            : "run nvidia-smi; in a container start it with --gpus all",
                        "the NVIDIA driver reports 0 CUDA devices%s%s%s", cvd ? " (CUDA_VISIBLE_DEVICES='" : "",
                        cvd ? cvd : "", cvd ? "')" : "");
    }
    *count = n;
    return CM_OK;
}

cm_status_t cm__check_ordinal(int ordinal) {
    int n = 0;
    CM_TRY(cm_device_count(&n));
    if (ordinal < 0 || ordinal >= n) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                        "device ordinals run from 0 to the device count - 1; CUDA_VISIBLE_DEVICES "
                        "renumbers them",
                        "device %d does not exist: %d device%s visible", ordinal, n,
                        n == 1 ? " is" : "s are");
    }
    return cm__context_guard(ordinal);
}

/* ------------------------------------------------------------------ limits */

cm_status_t cm_device_limits_from_props(const struct cudaDeviceProp *p, int ordinal,
                                        cm_device_limits_t *out) {
    CM__REQUIRE(p != NULL && out != NULL, "pass a filled cudaDeviceProp and an output struct",
                "props or out is NULL");
    CM__REQUIRE(p->major > 0, "fill the properties with cudaGetDeviceProperties first",
                "props has compute capability %d.%d: it was never filled", p->major, p->minor);
    cm_device_limits_t l;
    memset(&l, 0, sizeof l);
    cm__strlcpy(l.name, p->name, sizeof l.name);
    l.ordinal = ordinal;
    l.cc_major = p->major;
    l.cc_minor = p->minor;
    l.multiprocessor_count = p->multiProcessorCount;
    l.warp_size = p->warpSize;
    l.max_threads_per_block = p->maxThreadsPerBlock;
    for (int i = 0; i < 3; ++i) {
        l.max_block_dim[i] = p->maxThreadsDim[i];
        l.max_grid_dim[i] = p->maxGridSize[i];
    }
    l.shared_mem_per_block = p->sharedMemPerBlock;
    l.shared_mem_per_block_optin = p->sharedMemPerBlockOptin;
    l.shared_mem_per_multiprocessor = p->sharedMemPerMultiprocessor;
    l.reserved_shared_mem_per_block = p->reservedSharedMemPerBlock;
    l.regs_per_block = p->regsPerBlock;
    l.regs_per_multiprocessor = p->regsPerMultiprocessor;
    l.max_threads_per_multiprocessor = p->maxThreadsPerMultiProcessor;
    l.max_blocks_per_multiprocessor = p->maxBlocksPerMultiProcessor;
    l.l2_cache_bytes = p->l2CacheSize > 0 ? (size_t)p->l2CacheSize : 0;
    l.total_global_mem = p->totalGlobalMem;
    l.cluster_launch = p->clusterLaunch;
    if (ordinal >= 0) {
        snprintf(l.pci_bus_id, sizeof l.pci_bus_id, "%04x:%02x:%02x.0",
                 (unsigned)p->pciDomainID & 0xffffu, (unsigned)p->pciBusID & 0xffu,
                 (unsigned)p->pciDeviceID & 0xffu);
    }
    *out = l;
    return CM_OK;
}

cm_status_t cm_device_get_limits(int ordinal, cm_device_limits_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_device_limits_t", "out is NULL");
    CM_TRY(cm__check_ordinal(ordinal));
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    char call[64];
    snprintf(call, sizeof call, "cudaGetDeviceProperties(%d)", ordinal);
    cudaError_t err = cm__cuda.get_device_properties(&p, ordinal);
    if (err != cudaSuccess) return cm_record_cuda_error(err, call, __FILE__, __LINE__);
    return cm_device_limits_from_props(&p, ordinal, out);
}

cm_status_t cm_device_memory_info(int ordinal, size_t *free_bytes, size_t *total_bytes) {
    CM__REQUIRE(free_bytes != NULL && total_bytes != NULL, "pass the addresses of two size_t",
                "free_bytes or total_bytes is NULL");
    CM_TRY(cm__check_ordinal(ordinal));
    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    size_t f = 0, t = 0;
    cudaError_t err = cm__cuda.mem_get_info(&f, &t);
    /* recorded inside the scope: the failure (a sticky one above all) is charged to ordinal */
    cm_status_t st = cm_record_cuda_error(err, "cudaMemGetInfo", __FILE__, __LINE__);
    cm__leave(&sc);
    CM_TRY(st);
    *free_bytes = f;
    *total_bytes = t;
    return CM_OK;
}

/* ------------------------------------------------------------------ architectures */

char *cm_arch_name(int cc, char *buf, size_t size) {
    if (buf == NULL || size == 0) return buf;
    if (cc <= 0) snprintf(buf, size, "sm_?");
    else snprintf(buf, size, "sm_%d", cc);
    return buf;
}

const char *cm__build_cuda_architectures(void) {
    return CM_BUILD_CUDA_ARCHITECTURES;
}

const char *cm_image_kind_name(cm_image_kind_t kind) {
    switch (kind) {
    case CM_IMAGE_NATIVE: return "native";
    case CM_IMAGE_PTX_JIT: return "PTX JIT";
    case CM_IMAGE_NONE: return "none";
    }
    return "unknown";
}

cm_status_t cm_arch_list_parse(const char *list, cm_arch_list_t *out) {
    CM__REQUIRE(list != NULL && out != NULL, "pass a CMake architecture list and an output",
                "list or out is NULL");
    cm_arch_list_t r;
    memset(&r, 0, sizeof r);
    const char *p = list;
    int entries = 0;
    while (*p != '\0') {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char tok[64];
        if (len == 0 || len >= sizeof tok) {
            return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                            "write entries like 90, 90-real, 120-virtual or 90a-real, separated by ';'",
                            "architecture list \"%s\" has an empty or overlong entry", list);
        }
        memcpy(tok, p, len);
        tok[len] = '\0';
        char *q = tok;
        int value = 0, digits = 0;
        while (isdigit((unsigned char)*q) && digits < 4) value = value * 10 + (*q++ - '0'), ++digits;
        int specific = 0;
        if (*q == 'a' || *q == 'f') specific = (*q == 'a'), ++q;
        int want_sass = 1, want_ptx = 1;
        if (strcmp(q, "-real") == 0) want_ptx = 0;
        else if (strcmp(q, "-virtual") == 0) want_sass = 0;
        else if (*q != '\0') digits = 0;
        if (digits < 2 || value < 10) {
            return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1,
                            "write entries like 90, 90-real, 120-virtual or 90a-real, separated by ';'",
                            "\"%s\" in architecture list \"%s\" is not an architecture", tok, list);
        }
        if (++entries > CM_ARCH_LIST_MAX || r.n_sass >= CM_ARCH_LIST_MAX || r.n_ptx >= CM_ARCH_LIST_MAX) {
            return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "list fewer architectures",
                            "architecture list \"%s\" has more than %d entries", list,
                            CM_ARCH_LIST_MAX);
        }
        if (want_sass) {
            r.sass[r.n_sass] = value;
            r.sass_specific[r.n_sass] = specific;
            ++r.n_sass;
        }
        if (want_ptx) r.ptx[r.n_ptx++] = value;
        p += len;
        if (*p == ';') ++p;
    }
    if (entries == 0) {
        return CM__FAIL(CM_ERROR_INVALID_ARGUMENT, -1, "name at least one architecture, e.g. \"90\"",
                        "architecture list is empty");
    }
    *out = r;
    return CM_OK;
}

cm_image_kind_t cm_arch_image_for(const cm_arch_list_t *archs, int cc, int *used_arch) {
    if (used_arch != NULL) *used_arch = 0;
    if (archs == NULL || cc <= 0) return CM_IMAGE_NONE;
    int best = 0;
    for (int i = 0; i < archs->n_sass && i < CM_ARCH_LIST_MAX; ++i) {
        int s = archs->sass[i];
        int ok = archs->sass_specific[i] ? (s == cc) : (s / 10 == cc / 10 && s % 10 <= cc % 10);
        if (ok && s > best) best = s;
    }
    if (best > 0) {
        if (used_arch != NULL) *used_arch = best;
        return CM_IMAGE_NATIVE;
    }
    for (int i = 0; i < archs->n_ptx && i < CM_ARCH_LIST_MAX; ++i) {
        int v = archs->ptx[i];
        if (v <= cc && v > best) best = v;
    }
    if (best > 0) {
        if (used_arch != NULL) *used_arch = best;
        return CM_IMAGE_PTX_JIT;
    }
    return CM_IMAGE_NONE;
}

cm_status_t cm_device_check_kernel_image(int ordinal, cm_kernel_image_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_kernel_image_t", "out is NULL");
    memset(out, 0, sizeof *out);
    cm_device_limits_t lim;
    CM_TRY(cm_device_get_limits(ordinal, &lim));
    int cc = lim.cc_major * 10 + lim.cc_minor;
    cm_arch_list_t archs;
    CM_TRY(cm_arch_list_parse(cm__build_cuda_architectures(), &archs));
    out->predicted = cm_arch_image_for(&archs, cc, &out->predicted_arch);

    cm__scope_t sc;
    CM_TRY(cm__enter(ordinal, 1, &sc));
    cm_status_t status = CM_OK;
    int *d_value = NULL;
    struct cudaFuncAttributes attr;
    memset(&attr, 0, sizeof attr);
    cudaError_t err = cm__kernel_probe_attributes(&attr);
    out->cuda_error = (int)err;
    char arch[16];
    cm_arch_name(cc, arch, sizeof arch);
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidKernelImage) {
        (void)cm__cuda.get_last_error();
        char hint[CM_ERROR_HINT_MAX];
        snprintf(hint, sizeof hint,
                 "rebuild libcudamodel with -DCMAKE_CUDA_ARCHITECTURES=%d (or add %d to the list) "
                 "so it carries code for %s", cc, cc, arch);
        status = cm__fail(CM_ERROR_NO_KERNEL_IMAGE, ordinal, __FILE__, __LINE__,
                          "cudaFuncGetAttributes(library probe kernel)", hint,
                          "the library's kernels have no image for %s (%s): this build carries "
                          "\"%s\" (%s)", lim.name, arch, cm__build_cuda_architectures(),
                          cm__cuda.get_error_name(err));
        goto done;
    }
    if (err != cudaSuccess) {
        status = cm_record_cuda_error(err, "cudaFuncGetAttributes(library probe kernel)", __FILE__,
                                      __LINE__);
        goto done;
    }
    out->binary_version = attr.binaryVersion;
    out->ptx_version = attr.ptxVersion;

    int value = 0;
    err = cm__cuda.device_malloc((void **)&d_value, sizeof(int));
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMalloc(%zu bytes for the probe "
                               "kernel's result)", sizeof(int));
        goto done;
    }
    err = cm__kernel_probe_launch(d_value, 41, 0);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "library probe kernel launch");
        goto done;
    }
    err = cm__cuda.memcpy_sync(&value, d_value, sizeof value, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        status = cm__cuda_fail(err, __FILE__, __LINE__, "cudaMemcpy(probe kernel's result to "
                               "host)");
        goto done;
    }
    out->launch_ok = (value == 42);
    if (!out->launch_ok) {
        status = cm__fail(CM_ERROR_CUDA, ordinal, __FILE__, __LINE__, "library probe kernel",
                          "run cudamodel-doctor and compute-sanitizer; report the output",
                          "the probe kernel ran but wrote %d instead of 42", value);
    }
done:
    if (d_value != NULL) (void)cm__cuda.device_free(d_value);
    cm__leave(&sc);
    return status;
}
