/*
 * NVML (device.h: cm_device_processes(), cm_device_health(); the out-of-memory report; the
 * doctor's health checks) through a fake NVML: the call table's nvml_* members replaced by a
 * simulation of NVIDIA's functions, beside the simulated CUDA device of test_buffer_fake.h.
 *
 * Covered: NVML absent, failing to initialise (each reason), present; the process list (sorted,
 * cut to the caller's capacity, more than fits on the stack, unknown amounts, visible and
 * invisible processes from a fake /proc, names read safely); CUDA ordinals matched to NVML
 * devices by PCI bus id with a renumbering CUDA_VISIBLE_DEVICES (CUDA 0 = NVML 1); every health
 * verdict of the doctor; the out-of-memory report naming the holders (pure and on the simulated
 * device); initialisation once under threads; argument checks.
 *
 * FAULT INJECTION: replaces the call table's NVML and CUDA members; every NVML member is failed
 * in turn by test_every_nvml_entry_fails (the NVML table's walk; the CUDA table's is
 * test_call_table_faults).
 */
#define _GNU_SOURCE /* mkdtemp, nftw, open_memstream */

#include "cm_test.h"

#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/diag.h>

#include "memory_internal.h"
#include "nvml_query.h"
#include "test_buffer_fake.h"

#if defined(__has_include)
#  if __has_include(<nvml.h>)
#    include <nvml.h>
#    define CM_TEST_HAVE_NVML_H 1
#  endif
#endif

#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

/* ------------------------------------------------------------------ our NVML declarations */

/* nvmlProcessInfo_t as documented: pid, 4 bytes of padding, usedGpuMemory, two instance ids. */
_Static_assert(sizeof(cm__nvml_process_info_t) == 24, "nvmlProcessInfo_t is 24 bytes");
_Static_assert(offsetof(cm__nvml_process_info_t, usedGpuMemory) == 8, "usedGpuMemory at 8");
_Static_assert(offsetof(cm__nvml_process_info_t, gpuInstanceId) == 16, "gpuInstanceId at 16");
_Static_assert(offsetof(cm__nvml_process_info_t, computeInstanceId) == 20, "computeInstanceId");
_Static_assert(CM_CLOCKS_HW_THERMAL == CM__NVML_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN &&
                   CM_CLOCKS_SW_POWER_CAP == CM__NVML_CLOCKS_EVENT_SW_POWER_CAP &&
                   CM_CLOCKS_IDLE == CM__NVML_CLOCKS_EVENT_GPU_IDLE &&
                   CM_CLOCKS_HW_POWER_BRAKE == CM__NVML_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN,
               "the public clock bits are NVML's");
_Static_assert(CM_COMPUTE_MODE_EXCLUSIVE_PROCESS == CM__NVML_COMPUTEMODE_EXCLUSIVE_PROCESS &&
                   CM_COMPUTE_MODE_PROHIBITED == CM__NVML_COMPUTEMODE_PROHIBITED,
               "the public compute modes are NVML's");
#ifdef CM_TEST_HAVE_NVML_H
/* where NVIDIA's header is installed, the private declarations must agree with it */
_Static_assert(sizeof(nvmlProcessInfo_t) == sizeof(cm__nvml_process_info_t), "layout");
_Static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) ==
                   offsetof(cm__nvml_process_info_t, usedGpuMemory), "layout");
_Static_assert(NVML_ERROR_LIBRARY_NOT_FOUND == CM__NVML_ERROR_LIBRARY_NOT_FOUND &&
                   NVML_ERROR_INSUFFICIENT_SIZE == CM__NVML_ERROR_INSUFFICIENT_SIZE &&
                   NVML_ERROR_LIB_RM_VERSION_MISMATCH == CM__NVML_ERROR_LIB_RM_VERSION_MISMATCH &&
                   NVML_COMPUTEMODE_EXCLUSIVE_PROCESS == CM__NVML_COMPUTEMODE_EXCLUSIVE_PROCESS &&
                   NVML_AGGREGATE_ECC == CM__NVML_AGGREGATE_ECC,
               "codes");
_Static_assert(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE == CM__NVML_DRIVER_VERSION_BUFFER_SIZE,
               "buffer");
#endif

/* ------------------------------------------------------------------ the fake NVML */

#define FN_GPUS 16
#define FN_PROCS 100

typedef struct fgpu {
    unsigned bus;                    /* PCI bus (domain 0, device 0) */
    cm__nvml_return_t fail;          /* every query of this GPU answers it (0: none) */
    unsigned persistence, compute_mode, mig, mig_pending, ecc, ecc_pending;
    cm__nvml_return_t mig_r, ecc_r, remap_r, retired_r, clocks_r, pcie_r, procs_r, power_r;
    unsigned long long ecc_volatile, ecc_aggregate;
    unsigned retired_sbe, retired_dbe, retired_pending;
    unsigned remap_corr, remap_unc, remap_pending, remap_failed;
    unsigned long long reasons;
    unsigned temp, power_mw, limit_mw, gen, gen_max, width, width_max;
    unsigned nprocs;
    cm__nvml_process_info_t procs[FN_PROCS];
} fgpu_t;

static struct fnvml {
    cm__nvml_return_t init_r;
    atomic_int inits, ok_inits, shutdowns, proc_queries;
    int ngpus;
    fgpu_t gpu[FN_GPUS];
    unsigned cuda_bus[FN_GPUS]; /* PCI bus of each CUDA ordinal */
    int attr_fail;
    char driver[80];
    char last_bus_id[64];
    const char *fault;   /* the member (cm__nvml's name) that fails with fault_r, or NULL */
    cm__nvml_return_t fault_r;
    atomic_int fault_hits; /* calls of that member that failed */
} fn;

/* First statement of each fake NVML function: the walk (test_every_nvml_entry_fails) makes the
 * member named fn.fault fail. */
#define FN_FAULT(member)                                                                     \
    do {                                                                                     \
        if (fn.fault != NULL && strcmp(fn.fault, member) == 0) {                             \
            atomic_fetch_add(&fn.fault_hits, 1);                                             \
            return fn.fault_r;                                                               \
        }                                                                                    \
    } while (0)

static fgpu_t *fgpu(cm__nvml_device_t d) {
    return (fgpu_t *)(void *)d;
}

static cm__nvml_return_t fn_init(void) {
    FN_FAULT("init");
    atomic_fetch_add(&fn.inits, 1);
    if (fn.init_r == CM__NVML_SUCCESS) atomic_fetch_add(&fn.ok_inits, 1);
    return fn.init_r;
}
static cm__nvml_return_t fn_shutdown(void) {
    atomic_fetch_add(&fn.shutdowns, 1); /* called is what the balance counts, failed or not */
    FN_FAULT("shutdown");
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_driver(char *v, unsigned len) {
    FN_FAULT("driver_version");
    snprintf(v, len, "%s", fn.driver);
    return CM__NVML_SUCCESS;
}
static pthread_mutex_t fn_bus_lock = PTHREAD_MUTEX_INITIALIZER;
static cm__nvml_return_t fn_by_bus(const char *id, cm__nvml_device_t *d) {
    FN_FAULT("handle_by_pci_bus_id");
    unsigned dom = 0, bus = 0, dev = 0, func = 0;
    /* NVML may be called from several threads at once (test_threads_initialise_once): the
     * record of the last id asked for is the fake's only shared write here, so it is locked */
    pthread_mutex_lock(&fn_bus_lock);
    snprintf(fn.last_bus_id, sizeof fn.last_bus_id, "%s", id);
    pthread_mutex_unlock(&fn_bus_lock);
    if (sscanf(id, "%x:%x:%x.%x", &dom, &bus, &dev, &func) != 4)
        return CM__NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < fn.ngpus; ++i) {
        if (dom == 0 && dev == 0 && func == 0 && bus == fn.gpu[i].bus) {
            *d = (cm__nvml_device_t)(void *)&fn.gpu[i];
            return CM__NVML_SUCCESS;
        }
    }
    return CM__NVML_ERROR_NOT_FOUND;
}
#define FN_DEV(d)                                                                            \
    fgpu_t *g = fgpu(d);                                                                     \
    if (g->fail) return g->fail
static cm__nvml_return_t fn_processes(cm__nvml_device_t d, unsigned *count,
                                      cm__nvml_process_info_t *infos) {
    FN_FAULT("compute_processes");
    FN_DEV(d);
    atomic_fetch_add(&fn.proc_queries, 1);
    if (g->procs_r) return g->procs_r;
    if (*count < g->nprocs) {
        *count = g->nprocs;
        return CM__NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(infos, g->procs, g->nprocs * sizeof *infos);
    *count = g->nprocs;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_persistence(cm__nvml_device_t d, unsigned *m) {
    FN_FAULT("persistence_mode");
    FN_DEV(d);
    *m = g->persistence;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_compute_mode(cm__nvml_device_t d, unsigned *m) {
    FN_FAULT("compute_mode");
    FN_DEV(d);
    *m = g->compute_mode;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_mig(cm__nvml_device_t d, unsigned *cur, unsigned *pend) {
    FN_FAULT("mig_mode");
    FN_DEV(d);
    if (g->mig_r) return g->mig_r;
    *cur = g->mig;
    *pend = g->mig_pending;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_ecc(cm__nvml_device_t d, unsigned *cur, unsigned *pend) {
    FN_FAULT("ecc_mode");
    FN_DEV(d);
    if (g->ecc_r) return g->ecc_r;
    *cur = g->ecc;
    *pend = g->ecc_pending;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_ecc_errors(cm__nvml_device_t d, unsigned type, unsigned counter,
                                       unsigned long long *n) {
    FN_FAULT("total_ecc_errors");
    FN_DEV(d);
    if (g->ecc_r) return g->ecc_r;
    if (type != CM__NVML_MEMORY_ERROR_TYPE_UNCORRECTED) return CM__NVML_ERROR_INVALID_ARGUMENT;
    *n = counter == CM__NVML_VOLATILE_ECC ? g->ecc_volatile : g->ecc_aggregate;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_retired(cm__nvml_device_t d, unsigned cause, unsigned *count,
                                    unsigned long long *addresses) {
    FN_FAULT("retired_pages");
    FN_DEV(d);
    if (g->retired_r) return g->retired_r;
    unsigned n = cause == CM__NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? g->retired_dbe
                                                                             : g->retired_sbe;
    if (*count < n || (n > 0 && addresses == NULL)) {
        *count = n;
        return CM__NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_retired_pending(cm__nvml_device_t d, unsigned *p) {
    FN_FAULT("retired_pages_pending");
    FN_DEV(d);
    if (g->retired_r) return g->retired_r;
    *p = g->retired_pending;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_remap(cm__nvml_device_t d, unsigned *c, unsigned *u, unsigned *p,
                                  unsigned *f) {
    FN_FAULT("remapped_rows");
    FN_DEV(d);
    if (g->remap_r) return g->remap_r;
    *c = g->remap_corr;
    *u = g->remap_unc;
    *p = g->remap_pending;
    *f = g->remap_failed;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_clocks(cm__nvml_device_t d, unsigned long long *r) {
    FN_FAULT("clocks_event_reasons");
    FN_DEV(d);
    if (g->clocks_r) return g->clocks_r;
    *r = g->reasons;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_temp(cm__nvml_device_t d, unsigned sensor, unsigned *t) {
    FN_FAULT("temperature");
    FN_DEV(d);
    if (sensor != CM__NVML_TEMPERATURE_GPU) return CM__NVML_ERROR_INVALID_ARGUMENT;
    *t = g->temp;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_power(cm__nvml_device_t d, unsigned *p) {
    FN_FAULT("power_usage");
    FN_DEV(d);
    if (g->power_r) return g->power_r;
    *p = g->power_mw;
    return CM__NVML_SUCCESS;
}
static cm__nvml_return_t fn_limit(cm__nvml_device_t d, unsigned *p) {
    FN_FAULT("power_limit");
    FN_DEV(d);
    if (g->power_r) return g->power_r;
    *p = g->limit_mw;
    return CM__NVML_SUCCESS;
}
#define FN_PCIE(name, member, field)                                                         \
    static cm__nvml_return_t name(cm__nvml_device_t d, unsigned *v) {                        \
        FN_FAULT(member);                                                                    \
        FN_DEV(d);                                                                           \
        if (g->pcie_r) return g->pcie_r;                                                     \
        *v = g->field;                                                                       \
        return CM__NVML_SUCCESS;                                                             \
    }
FN_PCIE(fn_gen, "pcie_link_generation", gen)
FN_PCIE(fn_gen_max, "pcie_max_link_generation", gen_max)
FN_PCIE(fn_width, "pcie_link_width", width)
FN_PCIE(fn_width_max, "pcie_max_link_width", width_max)

/* The PCI attributes of the simulated CUDA devices; the rest from test_buffer_fake.h. */
static cudaError_t fn_attr(int *v, enum cudaDeviceAttr a, int d) {
    if (a == cudaDevAttrPciDomainId || a == cudaDevAttrPciBusId || a == cudaDevAttrPciDeviceId) {
        if (fn.attr_fail) return cudaErrorInvalidDevice;
        *v = a == cudaDevAttrPciBusId ? (int)fn.cuda_bus[d] : 0;
        return cudaSuccess;
    }
    return fake_attr(v, a, d);
}

/* A healthy H200 at PCI bus `bus`: persistence on, default compute mode, no MIG, ECC on
 * without errors, full clocks, PCIe gen5 x16, nothing running. */
static void healthy(fgpu_t *g, unsigned bus) {
    memset(g, 0, sizeof *g);
    g->bus = bus;
    g->persistence = 1;
    g->compute_mode = CM__NVML_COMPUTEMODE_DEFAULT;
    g->ecc = g->ecc_pending = 1;
    g->temp = 41;
    g->power_mw = 120000;
    g->limit_mw = 700000;
    g->gen = g->gen_max = 5;
    g->width = g->width_max = 16;
}

static void add_process(fgpu_t *g, unsigned pid, unsigned long long bytes) {
    cm__nvml_process_info_t *p = &g->procs[g->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->usedGpuMemory = bytes;
    p->gpuInstanceId = p->computeInstanceId = 0xFFFFFFFFu;
}

/* ------------------------------------------------------------------ a fake /proc */

static char g_proc[256];
static unsigned g_self;

static void proc_entry(unsigned pid, const char *comm, size_t comm_len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%u", g_proc, pid);
    assert_int_equal(mkdir(path, 0755), 0);
    if (comm == NULL) return;
    snprintf(path, sizeof path, "%s/%u/comm", g_proc, pid);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(comm, 1, comm_len, f), comm_len);
    fclose(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int group_setup(void **state) {
    (void)state;
    snprintf(g_proc, sizeof g_proc, "/tmp/cm_nvml_proc_XXXXXX");
    if (mkdtemp(g_proc) == NULL) return -1;
    g_self = (unsigned)getpid();
    proc_entry(4541, "python3\n", 8);
    proc_entry(77, "bad\x01name\x7f\n", 10);           /* control bytes: shown as '?' */
    proc_entry(99, NULL, 0);                             /* there, but its name unreadable */
    static const char long_name[] =
        "a-very-long-command-name-that-goes-on-and-on-and-on-and-on-and-on-and-on\n";
    proc_entry(1234, long_name, sizeof long_name - 1); /* longer than the name field */
    proc_entry(g_self, "test_nvml\n", 10);
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    return nftw(g_proc, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------------ install */

/* `cuda` simulated CUDA devices; NVML with `ngpus` healthy GPUs at buses 0x3b, 0x5e, ...;
 * CUDA ordinal i at NVML GPU i's bus unless a test renumbers them. */
static void fn_install(int cuda, int ngpus) {
    fake_install(cuda, 64 * MiB);
    memset(&fn, 0, sizeof fn);
    fn.ngpus = ngpus;
    for (int i = 0; i < ngpus; ++i) healthy(&fn.gpu[i], 0x3bu + 0x23u * (unsigned)i);
    for (int i = 0; i < cuda && i < FN_GPUS; ++i) fn.cuda_bus[i] = 0x3bu + 0x23u * (unsigned)i;
    snprintf(fn.driver, sizeof fn.driver, "580.65.06");
    cm__cuda.device_get_attribute = fn_attr;
    cm__nvml.init = fn_init;
    cm__nvml.shutdown = fn_shutdown;
    cm__nvml.driver_version = fn_driver;
    cm__nvml.handle_by_pci_bus_id = fn_by_bus;
    cm__nvml.compute_processes = fn_processes;
    cm__nvml.persistence_mode = fn_persistence;
    cm__nvml.compute_mode = fn_compute_mode;
    cm__nvml.mig_mode = fn_mig;
    cm__nvml.ecc_mode = fn_ecc;
    cm__nvml.total_ecc_errors = fn_ecc_errors;
    cm__nvml.retired_pages = fn_retired;
    cm__nvml.retired_pages_pending = fn_retired_pending;
    cm__nvml.remapped_rows = fn_remap;
    cm__nvml.clocks_event_reasons = fn_clocks;
    cm__nvml.temperature = fn_temp;
    cm__nvml.power_usage = fn_power;
    cm__nvml.power_limit = fn_limit;
    cm__nvml.pcie_link_generation = fn_gen;
    cm__nvml.pcie_max_link_generation = fn_gen_max;
    cm__nvml.pcie_link_width = fn_width;
    cm__nvml.pcie_max_link_width = fn_width_max;
    cm__nvml_set_proc_root_for_tests(g_proc);
}

static int setup1(void **state) {
    (void)state;
    fn_install(1, 1);
    return 0;
}

static int setup2(void **state) {
    (void)state;
    fn_install(2, 2);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall(); /* shuts the fake NVML down, then restores the table */
    cm__nvml_set_proc_root_for_tests(NULL);
    /* every successful nvmlInit_v2 was matched by one nvmlShutdown */
    int balanced = atomic_load(&fn.ok_inits) == atomic_load(&fn.shutdowns);
    return (left || violations || !balanced) ? -1 : 0;
}

#define assert_contains(hay, needle)                                                         \
    do {                                                                                     \
        if (strstr((hay), (needle)) == NULL)                                                 \
            fail_msg("expected \"%s\" in:\n%s", (needle), (hay));                            \
    } while (0)

#define assert_not_contains(hay, needle)                                                     \
    do {                                                                                     \
        if (strstr((hay), (needle)) != NULL)                                                 \
            fail_msg("did not expect \"%s\" in:\n%s", (needle), (hay));                      \
    } while (0)

/* ------------------------------------------------------------------ the call table */

static void test_table_has_nvml(void **state) {
    (void)state;
    static const char *const members[] = {
        "init", "shutdown", "driver_version", "handle_by_pci_bus_id", "compute_processes",
        "persistence_mode", "compute_mode", "mig_mode", "ecc_mode", "total_ecc_errors",
        "retired_pages", "retired_pages_pending", "remapped_rows", "clocks_event_reasons",
        "temperature", "power_usage", "power_limit", "pcie_link_generation", "pcie_link_width",
        "pcie_max_link_generation", "pcie_max_link_width"};
    assert_int_equal(cm__nvml_count(), sizeof members / sizeof members[0]);
    for (size_t m = 0; m < sizeof members / sizeof members[0]; ++m) {
        assert_string_equal(cm__nvml_member_name(m), members[m]);
        assert_true(strncmp(cm__nvml_function_name(m), "cm__nvml_", 9) == 0);
        assert_non_null(*cm__nvml_member_slot(m));
    }
    assert_null(cm__nvml_member_name(cm__nvml_count()));
    assert_null(cm__nvml_member_slot(cm__nvml_count()));
    /* the CUDA table has none of them; cm__cuda_restore() puts both back */
    for (size_t i = 0; i < cm__cuda_count(); ++i)
        assert_null(strstr(cm__cuda_function_name(i), "nvml"));
    cm__nvml.init = NULL;
    cm__cuda_restore();
    assert_ptr_equal(cm__nvml.init, cm__nvml_real.init);
}

/* The real loader: on a machine without the driver it reports why; with one it initialises. */
static void test_real_loader(void **state) {
    (void)state;
    cm__nvml_return_t r = cm__nvml_real.init();
    if (r == CM__NVML_ERROR_LIBRARY_NOT_FOUND) {
        assert_contains(cm__nvml_load_error(), "libnvidia-ml.so.1");
        /* every wrapper answers the same without the library */
        unsigned v = 0;
        assert_int_equal(cm__nvml_real.persistence_mode(NULL, &v),
                         CM__NVML_ERROR_LIBRARY_NOT_FOUND);
        unsigned long long reasons = 0;
        assert_int_equal(cm__nvml_real.clocks_event_reasons(NULL, &reasons),
                         CM__NVML_ERROR_LIBRARY_NOT_FOUND);
    } else {
        print_message("libnvidia-ml.so.1 loads here: nvmlInit_v2 returned %d\n", r);
        assert_string_equal(cm__nvml_load_error(), "");
        if (r == CM__NVML_SUCCESS) assert_int_equal(cm__nvml_real.shutdown(), 0);
    }
    assert_string_equal(cm__nvml_error_name(CM__NVML_ERROR_NO_PERMISSION),
                        "NVML_ERROR_NO_PERMISSION");
    assert_string_equal(cm__nvml_error_name(12345), "NVML_ERROR_?");
}

/* ------------------------------------------------------------------ every entry fails */

/* FAULT INJECTION over the NVML table (the CUDA table's walk is test_call_table_faults): each
 * member in turn fails (NVML_ERROR_UNKNOWN, every call) while a process lists the GPU's
 * processes, reads its health, runs out of memory and shuts NVML down. Each member is reached
 * and failed; every call returns a documented status (the process list CM_OK or
 * CM_ERROR_NOT_SUPPORTED with a message and a hint, the health CM_OK, the out-of-memory report
 * CM_ERROR_DEVICE_OUT_OF_MEMORY naming nvidia-smi when NVML could not name the holders); the
 * health reports an unknown value for what failed, never a made-up one; and with the member
 * restored the process list works again. The teardown checks that every successful
 * nvmlInit_v2 had its nvmlShutdown and that the simulated device holds nothing. */
static void test_every_nvml_entry_fails(void **state) {
    (void)state;
    fake.external = 10 * MiB; /* memory held outside: the report looks for its holders */
    fn.gpu[0].nprocs = 1;
    fn.gpu[0].procs[0] = (cm__nvml_process_info_t){4541, 8 * MiB, 0xFFFFFFFFu, 0xFFFFFFFFu};
    const size_t n = cm__nvml_count();
    size_t failed_entries = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *member = cm__nvml_member_name(i);
        cm__nvml_reset_for_tests(); /* NVML not initialised: the walk starts from nothing */
        fn.fault = member;
        fn.fault_r = CM__NVML_ERROR_UNKNOWN;
        atomic_store(&fn.fault_hits, 0);

        cm_process_info_t list[8];
        size_t cnt = 99;
        cm_status_t st = cm_device_processes(0, list, 8, &cnt);
        if (st != CM_OK) {
            if (st != CM_ERROR_NOT_SUPPORTED)
                fail_msg("%s failing: cm_device_processes returned %d", member, (int)st);
            assert_int_equal(cm_last_error()->status, st);
            assert_true(cm_last_error()->message[0] != '\0' && cm_last_error()->hint[0] != '\0');
            assert_int_equal(cnt, 0);
        } else {
            assert_int_equal(cnt, 1);
            assert_int_equal(list[0].pid, 4541);
        }
        cm_device_health_t h;
        memset(&h, 0x5a, sizeof h);
        CM_ASSERT_OK(cm_device_health(0, &h));
        if (strcmp(member, "persistence_mode") == 0)
            assert_int_equal(h.persistence_mode, CM_HEALTH_UNKNOWN);
        if (strcmp(member, "temperature") == 0)
            assert_int_equal(h.temperature_c, CM_HEALTH_UNKNOWN);
        if (strcmp(member, "pcie_link_width") == 0)
            assert_int_equal(h.pcie_width, CM_HEALTH_UNKNOWN);
        if (strcmp(member, "compute_processes") == 0) assert_int_equal(h.processes_known, 0);

        cm_device_t *dev = NULL;
        CM_ASSERT_OK(cm_device_open(0, &dev));
        cm_buffer_t *held = NULL, *b = NULL;
        CM_ASSERT_OK(cm_buffer_create(dev, 16 * MiB, &held));
        assert_int_equal(cm_buffer_create(dev, 60 * MiB, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY);
        assert_null(b);
        const cm_error_t *e = cm_last_error();
        assert_int_equal(e->status, CM_ERROR_DEVICE_OUT_OF_MEMORY);
        if (st != CM_OK) assert_contains(e->hint, "nvidia-smi");
        else assert_not_contains(e->hint, "nvidia-smi");
        CM_ASSERT_OK(cm_buffer_destroy(held));
        CM_ASSERT_OK(cm_device_close(dev));

        cm__nvml_reset_for_tests(); /* nvmlShutdown (failing or not) */
        const int hits = atomic_load(&fn.fault_hits);
        fn.fault = NULL;
        if (hits == 0) fail_msg("NVML member %s was never called", member);
        ++failed_entries;
        /* restored: NVML works again */
        cnt = 0;
        CM_ASSERT_OK(cm_device_processes(0, list, 8, &cnt));
        assert_int_equal(cnt, 1);
    }
    print_message("NVML table: %zu entries, %zu failed by this walk\n", n, failed_entries);
    assert_int_equal(failed_entries, n);
}

/* ------------------------------------------------------------------ absent, failing */

static void test_absent(void **state) {
    (void)state;
    fn.init_r = CM__NVML_ERROR_LIBRARY_NOT_FOUND;
    cm_process_info_t out[4];
    size_t n = 99;
    assert_int_equal(cm_device_processes(0, out, 4, &n), CM_ERROR_NOT_SUPPORTED);
    assert_int_equal(n, 0);
    const cm_error_t *e = cm_last_error();
    assert_contains(e->message,
                    "cannot list the processes on device 0: NVML is not available: "
                    "libnvidia-ml.so.1 cannot be loaded");
    assert_contains(e->hint, "nvidia-smi --query-compute-apps");
    assert_int_equal(e->device, 0);
    /* the health call succeeds and says why */
    cm_device_health_t h;
    memset(&h, 0x5a, sizeof h);
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_int_equal(h.nvml_available, 0);
    assert_contains(h.nvml_reason, "libnvidia-ml.so.1 cannot be loaded");
    assert_int_equal(h.persistence_mode, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.pcie_width, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.processes_known, 0);
    assert_int_equal(h.process_count, 0);
    /* tried once: the answer is kept */
    assert_int_equal(atomic_load(&fn.inits), 1);
    assert_int_equal(atomic_load(&fn.proc_queries), 0);
}

static void test_init_failures(void **state) {
    (void)state;
    static const struct {
        cm__nvml_return_t r;
        const char *expect;
    } cases[] = {
        {CM__NVML_ERROR_DRIVER_NOT_LOADED,
         "nvmlInit_v2: the NVIDIA kernel driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED)"},
        {CM__NVML_ERROR_NO_PERMISSION, "nvmlInit_v2: no permission (NVML_ERROR_NO_PERMISSION)"},
        {CM__NVML_ERROR_LIB_RM_VERSION_MISMATCH,
         "differ in version (a driver update without a reboot) "
         "(NVML_ERROR_LIB_RM_VERSION_MISMATCH)"},
        {CM__NVML_ERROR_FUNCTION_NOT_FOUND, "does not have it (an older driver)"},
        {CM__NVML_ERROR_UNKNOWN, "nvmlInit_v2: failed (NVML_ERROR_UNKNOWN)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cm__nvml_reset_for_tests();
        atomic_store(&fn.inits, 0);
        fn.init_r = cases[i].r;
        size_t n = 0;
        assert_int_equal(cm_device_processes(0, NULL, 0, &n), CM_ERROR_NOT_SUPPORTED);
        assert_contains(cm_last_error()->message, cases[i].expect);
        cm_device_health_t h;
        CM_ASSERT_OK(cm_device_health(0, &h));
        assert_false(h.nvml_available);
        assert_contains(h.nvml_reason, cases[i].expect);
        assert_int_equal(atomic_load(&fn.inits), 1);
    }
    fn.init_r = 0;
    cm__nvml_reset_for_tests(); /* a failed init is not shut down */
    assert_int_equal(atomic_load(&fn.shutdowns), 0);
}

static void test_device_not_matched(void **state) {
    (void)state;
    /* CUDA device 1 sits at a bus NVML does not know */
    fn.cuda_bus[1] = 0x99;
    size_t n = 0;
    assert_int_equal(cm_device_processes(1, NULL, 0, &n), CM_ERROR_NOT_SUPPORTED);
    assert_contains(cm_last_error()->message, "NVML has no GPU at PCI 00000000:99:00.0 (CUDA device 1)");
    assert_string_equal(fn.last_bus_id, "00000000:99:00.0");
    /* the PCI attributes cannot be read */
    fn.attr_fail = 1;
    cm_device_health_t h;
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_false(h.nvml_available);
    assert_contains(h.nvml_reason, "the PCI bus id of CUDA device 0 cannot be read "
                                   "(cudaErrorInvalidDevice)");
    fn.attr_fail = 0;
    /* a GPU that fell off the bus */
    fn.gpu[0].fail = CM__NVML_ERROR_GPU_IS_LOST;
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_true(h.nvml_available); /* the handle is there; its queries fail */
    assert_int_equal(h.temperature_c, CM_HEALTH_UNKNOWN);
    assert_false(h.processes_known);
    assert_contains(h.processes_reason, "the GPU has fallen off the bus (NVML_ERROR_GPU_IS_LOST)");
}

/* ------------------------------------------------------------------ processes */

static void test_processes_sorted_and_named(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    add_process(g, 77, 1 * GiB);
    add_process(g, 4000000, 3 * GiB);                     /* another PID namespace */
    add_process(g, 4541, 8 * GiB + 512 * MiB);
    add_process(g, 99, CM__NVML_VALUE_NOT_AVAILABLE);     /* amount unknown: last */
    add_process(g, g_self, 2 * GiB);
    add_process(g, 1234, 1 * GiB);                        /* same amount as 77: by pid */
    cm_process_info_t out[8];
    memset(out, 0x5a, sizeof out);
    size_t n = 0;
    CM_ASSERT_OK(cm_device_processes(0, out, 8, &n));
    assert_int_equal(n, 6);
    assert_int_equal(out[0].pid, 4541);
    assert_string_equal(out[0].name, "python3");
    assert_true(out[0].visible);
    assert_false(out[0].self);
    assert_int_equal(out[0].used_bytes, 8 * GiB + 512 * MiB);
    assert_int_equal(out[1].pid, 4000000);
    assert_false(out[1].visible);
    assert_string_equal(out[1].name, "");
    assert_int_equal(out[2].pid, g_self);
    assert_true(out[2].self);
    assert_string_equal(out[2].name, "test_nvml");
    assert_int_equal(out[3].pid, 77);
    assert_string_equal(out[3].name, "bad?name?");
    assert_int_equal(out[4].pid, 1234);
    assert_int_equal(strlen(out[4].name), sizeof out[4].name - 1); /* cut, terminated */
    assert_true(strncmp(out[4].name, "a-very-long-command", 19) == 0);
    assert_int_equal(out[5].pid, 99);
    assert_true(out[5].visible);
    assert_string_equal(out[5].name, "");
    assert_int_equal(out[5].used_bytes, CM_PROCESS_BYTES_UNKNOWN);
    /* fewer slots than processes: the largest, and the full count */
    memset(out, 0, sizeof out);
    CM_ASSERT_OK(cm_device_processes(0, out, 2, &n));
    assert_int_equal(n, 6);
    assert_int_equal(out[0].pid, 4541);
    assert_int_equal(out[1].pid, 4000000);
    assert_int_equal(out[2].pid, 0); /* untouched */
    /* count only */
    CM_ASSERT_OK(cm_device_processes(0, NULL, 0, &n));
    assert_int_equal(n, 6);
    assert_int_equal(atomic_load(&fn.inits), 1); /* NVML initialised once and kept */
}

static void test_processes_many_and_failing(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    for (unsigned i = 0; i < 90; ++i) add_process(g, 5000 + i, (unsigned long long)(i + 1) * MiB);
    cm_process_info_t out[100];
    size_t n = 0;
    CM_ASSERT_OK(cm_device_processes(0, out, 100, &n)); /* more than the stack list: heap */
    assert_int_equal(n, 90);
    assert_int_equal(out[0].pid, 5089);
    assert_int_equal(out[89].pid, 5000);
    assert_false(out[0].visible);
    /* nothing running */
    g->nprocs = 0;
    CM_ASSERT_OK(cm_device_processes(0, out, 100, &n));
    assert_int_equal(n, 0);
    /* MIG without administrator rights */
    g->procs_r = CM__NVML_ERROR_NO_PERMISSION;
    assert_int_equal(cm_device_processes(0, out, 100, &n), CM_ERROR_NOT_SUPPORTED);
    assert_contains(cm_last_error()->message,
                    "nvmlDeviceGetComputeRunningProcesses_v3: no permission "
                    "(NVML_ERROR_NO_PERMISSION); in MIG mode only an administrator");
    assert_int_equal(n, 0);
}

static void test_processes_arguments(void **state) {
    (void)state;
    cm_process_info_t out[2];
    size_t n = 7;
    assert_int_equal(cm_device_processes(0, out, 2, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_contains(cm_last_error()->message, "count is NULL");
    assert_int_equal(cm_device_processes(0, NULL, 2, &n), CM_ERROR_INVALID_ARGUMENT);
    assert_contains(cm_last_error()->message, "out is NULL but cap is 2");
    assert_int_equal(n, 0);
    assert_int_equal(cm_device_processes(1, out, 2, &n), CM_ERROR_INVALID_ARGUMENT);
    assert_contains(cm_last_error()->message, "device 1 does not exist: 1 device is visible");
    assert_int_equal(cm_device_processes(-1, out, 2, &n), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_device_health(0, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_contains(cm_last_error()->hint, "cm_device_health_t");
    cm_device_health_t h;
    assert_int_equal(cm_device_health(3, &h), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(atomic_load(&fn.inits), 0); /* nothing reached NVML */
}

/* CUDA_VISIBLE_DEVICES=1,0: CUDA's ordinal 0 is NVML's GPU 1 and the other way round. */
static void test_renumbered_devices(void **state) {
    (void)state;
    fn.cuda_bus[0] = fn.gpu[1].bus;
    fn.cuda_bus[1] = fn.gpu[0].bus;
    fn.gpu[0].temp = 30;
    fn.gpu[1].temp = 70;
    add_process(&fn.gpu[1], 4541, 5 * GiB);
    cm_device_health_t h;
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_true(h.nvml_available);
    assert_string_equal(h.pci_bus_id, "00000000:5e:00.0");
    assert_int_equal(h.temperature_c, 70);
    assert_int_equal(h.process_count, 1);
    assert_int_equal(h.processes[0].pid, 4541);
    CM_ASSERT_OK(cm_device_health(1, &h));
    assert_string_equal(h.pci_bus_id, "00000000:3b:00.0");
    assert_int_equal(h.temperature_c, 30);
    assert_int_equal(h.process_count, 0);
    size_t n = 0;
    cm_process_info_t p[1];
    CM_ASSERT_OK(cm_device_processes(0, p, 1, &n));
    assert_int_equal(n, 1);
    CM_ASSERT_OK(cm_device_processes(1, p, 1, &n));
    assert_int_equal(n, 0);
}

typedef struct thread_arg {
    int failures;
} thread_arg_t;

static void *thread_body(void *arg) {
    thread_arg_t *a = arg;
    for (int i = 0; i < 50; ++i) {
        cm_process_info_t out[4];
        size_t n = 0;
        if (cm_device_processes(i % 2, out, 4, &n) != CM_OK || n != (size_t)(i % 2 ? 0 : 2))
            ++a->failures;
    }
    return NULL;
}

static void test_threads_initialise_once(void **state) {
    (void)state;
    add_process(&fn.gpu[0], 4541, 1 * GiB);
    add_process(&fn.gpu[0], 77, 2 * GiB);
    pthread_t t[8];
    thread_arg_t args[8];
    memset(args, 0, sizeof args);
    for (int i = 0; i < 8; ++i) assert_int_equal(pthread_create(&t[i], NULL, thread_body, &args[i]), 0);
    for (int i = 0; i < 8; ++i) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        assert_int_equal(args[i].failures, 0);
    }
    assert_int_equal(atomic_load(&fn.inits), 1);
    cm__nvml_reset_for_tests();
    assert_int_equal(atomic_load(&fn.shutdowns), 1);
}

/* ------------------------------------------------------------------ health */

static void test_health_healthy(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    g->remap_corr = 2;
    g->retired_r = CM__NVML_ERROR_NOT_SUPPORTED; /* Hopper remaps rows instead */
    add_process(g, 4541, 8 * GiB);
    cm_device_health_t h;
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_true(h.nvml_available);
    assert_string_equal(h.nvml_reason, "");
    assert_string_equal(h.driver_version, "580.65.06");
    assert_string_equal(h.pci_bus_id, "00000000:3b:00.0");
    assert_int_equal(h.persistence_mode, 1);
    assert_int_equal(h.compute_mode, CM_COMPUTE_MODE_DEFAULT);
    assert_int_equal(h.mig_mode, 0);
    assert_int_equal(h.mig_mode_pending, 0);
    assert_int_equal(h.ecc_mode, 1);
    assert_int_equal(h.ecc_volatile_uncorrected, 0);
    assert_int_equal(h.ecc_aggregate_uncorrected, 0);
    assert_int_equal(h.retired_pages, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.retired_pages_pending, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.remapped_rows_correctable, 2);
    assert_int_equal(h.remapped_rows_uncorrectable, 0);
    assert_int_equal(h.row_remap_pending, 0);
    assert_int_equal(h.row_remap_failed, 0);
    assert_int_equal(h.clock_event_reasons, 0);
    assert_int_equal(h.temperature_c, 41);
    assert_int_equal(h.power_mw, 120000);
    assert_int_equal(h.power_limit_mw, 700000);
    assert_int_equal(h.pcie_gen, 5);
    assert_int_equal(h.pcie_gen_max, 5);
    assert_int_equal(h.pcie_width, 16);
    assert_int_equal(h.pcie_width_max, 16);
    assert_true(h.processes_known);
    assert_int_equal(h.process_count, 1);
    assert_string_equal(h.processes[0].name, "python3");
    /* GPUs before Ampere: retired pages (the count NVML answers with INSUFFICIENT_SIZE) */
    g->retired_r = 0;
    g->retired_sbe = 2;
    g->retired_dbe = 1;
    g->retired_pending = 1;
    g->remap_r = CM__NVML_ERROR_NOT_SUPPORTED;
    g->mig_r = CM__NVML_ERROR_NOT_SUPPORTED;
    g->ecc_r = CM__NVML_ERROR_NOT_SUPPORTED;
    g->clocks_r = CM__NVML_ERROR_NOT_SUPPORTED;
    g->pcie_r = CM__NVML_ERROR_NOT_SUPPORTED;
    g->power_r = CM__NVML_ERROR_NOT_SUPPORTED;
    CM_ASSERT_OK(cm_device_health(0, &h));
    assert_int_equal(h.retired_pages, 3);
    assert_int_equal(h.retired_pages_pending, 1);
    assert_int_equal(h.remapped_rows_correctable, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.row_remap_pending, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.mig_mode, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.ecc_mode, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.ecc_volatile_uncorrected, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.clock_event_reasons, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.pcie_gen, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.power_mw, CM_HEALTH_UNKNOWN);
    assert_int_equal(h.temperature_c, 41);
}

/* ------------------------------------------------------------------ the doctor's verdicts */

static cm_diag_inputs_t g_in;
static cm_diag_report_t g_report;

/* n H200s, driver and runtime 13.0, the library's native code for sm_90, nothing else wrong. */
static cm_diag_inputs_t *h200_inputs(int n) {
    cm_diag_inputs_t *in = &g_in;
    memset(in, 0, sizeof *in);
    in->libcuda_loadable = true;
    snprintf(in->libcuda_path, sizeof in->libcuda_path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    in->driver_version = in->runtime_version = in->runtime_version_built = 13000;
    in->device_count = n;
    for (int i = 0; i < n && i < CM_DIAG_MAX_DEVICES; ++i) {
        cm_diag_device_t *d = &in->devices[i];
        cm_device_limits_t *l = &d->limits;
        snprintf(l->name, sizeof l->name, "NVIDIA H200");
        l->ordinal = i;
        l->cc_major = 9;
        l->multiprocessor_count = 132;
        l->warp_size = 32;
        l->total_global_mem = 150754820096ull;
        snprintf(l->pci_bus_id, sizeof l->pci_bus_id, "0000:%02x:00.0", 0x3b + 0x23 * i);
        d->total_bytes = 150754820096ull;
        d->free_bytes = 149000000000ull;
        d->image_checked = true;
        d->image.binary_version = d->image.ptx_version = 90;
        d->image.launch_ok = 1;
        for (int j = 0; j < n && j < CM_DIAG_MAX_DEVICES; ++j)
            in->peer_access[i][j] = CM_DIAG_PEER_YES;
    }
    snprintf(in->library_version, sizeof in->library_version, "0.1.0");
    snprintf(in->library_archs, sizeof in->library_archs, "90-real");
    return in;
}

/* Device 0's health from the fake NVML, judged. */
static cm_diag_report_t *judge(void) {
    cm_diag_inputs_t *in = h200_inputs(1);
    CM_ASSERT_OK(cm_device_health(0, &in->devices[0].health));
    memset(&g_report, 0xab, sizeof g_report);
    CM_ASSERT_OK(cm_diag_evaluate(in, &g_report));
    assert_int_equal(g_report.exit_code, cm_diag_exit_code(&g_report));
    return &g_report;
}

static const cm_diag_check_t *check(const cm_diag_report_t *r, const char *id) {
    for (int i = 0; i < r->n_checks; ++i)
        if (strcmp(r->checks[i].id, id) == 0) return &r->checks[i];
    fail_msg("no check \"%s\" in the report (%d checks)", id, r->n_checks);
    static const cm_diag_check_t missing; /* not reached */
    return &missing;
}

static int count_verdict(const cm_diag_report_t *r, cm_diag_verdict_t v) {
    int n = 0;
    for (int i = 0; i < r->n_checks; ++i) n += r->checks[i].verdict == v;
    return n;
}

/* The check `id` has verdict v, its message contains msg and its fix contains fix (NULL: any;
 * "" for an ok check: no fix). */
static void expect(const char *id, cm_diag_verdict_t v, const char *msg, const char *fix) {
    cm_diag_report_t *r = judge();
    const cm_diag_check_t *c = check(r, id);
    if (c->verdict != v)
        fail_msg("%s: verdict %s, expected %s (%s)", id, cm_diag_verdict_name(c->verdict),
                 cm_diag_verdict_name(v), c->message);
    if (msg != NULL) assert_contains(c->message, msg);
    if (fix != NULL && fix[0] == '\0') assert_string_equal(c->fix, "");
    else if (fix != NULL) assert_contains(c->fix, fix);
    if (v == CM_DIAG_ERROR) {
        assert_int_equal(c->exit_code, CM_DIAG_EXIT_OTHER);
        assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OTHER);
    } else {
        assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OK); /* warnings keep exit 0 */
    }
}

static void test_verdict_nvml_absent(void **state) {
    (void)state;
    fn.init_r = CM__NVML_ERROR_LIBRARY_NOT_FOUND;
    cm_diag_report_t *r = judge();
    const cm_diag_check_t *c = check(r, "nvml");
    assert_int_equal(c->verdict, CM_DIAG_OK);
    assert_contains(c->message, "NVML is not available: libnvidia-ml.so.1 cannot be loaded");
    assert_contains(c->message, "the GPU health checks (ECC, clocks, PCIe link");
    for (int i = 0; i < r->n_checks; ++i)
        assert_null(strstr(r->checks[i].id, ".persistence"));
    assert_int_equal(count_verdict(r, CM_DIAG_WARNING), 0);
    assert_int_equal(cm_diag_exit_code(r), 0);
}

static void test_verdicts_healthy(void **state) {
    (void)state;
    add_process(&fn.gpu[0], 4541, 8 * GiB + 512 * MiB);
    add_process(&fn.gpu[0], g_self, 1 * GiB);
    add_process(&fn.gpu[0], 4000000, 2 * GiB);
    cm_diag_report_t *r = judge();
    assert_int_equal(count_verdict(r, CM_DIAG_WARNING), 0);
    assert_int_equal(count_verdict(r, CM_DIAG_ERROR), 0);
    assert_contains(check(r, "nvml")->message, "NVML answers (driver 580.65.06) for 1 of 1 device");
    assert_contains(check(r, "device0.persistence")->message, "persistence mode on");
    assert_contains(check(r, "device0.compute_mode")->message, "compute mode Default");
    assert_contains(check(r, "device0.mig")->message, "MIG disabled");
    assert_contains(check(r, "device0.ecc")->message, "ECC on, no uncorrectable memory errors; no remapped rows");
    assert_contains(check(r, "device0.clocks")->message, "full clocks; 41 C, 120 W of 700 W");
    assert_contains(check(r, "device0.pcie")->message, "PCIe gen5 x16 (the maximum)");
    const char *p = check(r, "device0.processes")->message;
    assert_contains(p, "3 processes on this GPU: python3 (pid 4541) 8.50 GiB, test_nvml (pid ");
    assert_contains(p, ") 1.00 GiB (this process); and 1 not visible from here (another PID "
                       "namespace) holds 2.00 GiB");
    /* text and JSON carry the health */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CM_ASSERT_OK(cm_diag_write_text(r, f));
    fclose(f);
    assert_contains(text, "\n  driver (NVML)       580.65.06, PCI 00000000:3b:00.0\n");
    assert_contains(text, "\n  modes               persistence on, compute Default, MIG off, ECC on\n");
    assert_contains(text, "\n  PCIe link           gen5 x16 (max gen5 x16)\n");
    assert_contains(text, "\n  memory errors       0 uncorrectable since the driver loaded, 0 over "
                          "its life; remapped rows 0 correctable, 0 uncorrectable; retired pages "
                          "0\n");
    assert_contains(text, "\n  clocks              full clocks; 41 C, 120 W of 700 W\n");
    assert_contains(text, "\n  processes           4541 python3 8.5 GiB, ");
    assert_contains(text, "4000000 (not visible) 2.0 GiB");
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    CM_ASSERT_OK(cm_diag_write_json(r, f));
    fclose(f);
    assert_contains(text, "\"health\": {\"nvml_available\": true, \"nvml_reason\": \"\", "
                          "\"driver_version\": \"580.65.06\", \"pci_bus_id\": \"00000000:3b:00.0\", "
                          "\"persistence_mode\": true, \"compute_mode\": \"Default\", \"mig_mode\": false");
    assert_contains(text, "\"retired_pages\": 0, \"retired_pages_pending\": false");
    assert_contains(text, "\"pcie_gen\": 5, \"pcie_gen_max\": 5, \"pcie_width\": 16");
    assert_contains(text, "{\"pid\": 4541, \"name\": \"python3\", \"used_bytes\": 9126805504, "
                          "\"visible\": true, \"self\": false}");
    assert_contains(text, "{\"pid\": 4000000, \"name\": \"\", \"used_bytes\": 2147483648, "
                          "\"visible\": false, \"self\": false}");
    free(text);
}

static void test_verdict_persistence(void **state) {
    (void)state;
    fn.gpu[0].persistence = 0;
    expect("device0.persistence", CM_DIAG_WARNING, "persistence mode off",
           "sudo nvidia-smi -i 00000000:3b:00.0 -pm 1");
    fn.gpu[0].fail = CM__NVML_ERROR_NOT_SUPPORTED; /* nothing reported (e.g. WSL2) */
    expect("device0.persistence", CM_DIAG_OK, "not reported", "");
    expect("device0.ecc", CM_DIAG_OK, "ECC: not supported", "");
    expect("device0.mig", CM_DIAG_OK, "MIG: not supported", "");
    expect("device0.clocks", CM_DIAG_OK, "clock event reasons: not reported", "");
    expect("device0.pcie", CM_DIAG_OK, "PCIe link: not reported", "");
    expect("device0.compute_mode", CM_DIAG_OK, "compute mode: not reported", "");
    expect("device0.processes", CM_DIAG_OK, "cannot be listed: "
           "nvmlDeviceGetComputeRunningProcesses_v3: not supported on this GPU", "");
}

static void test_verdict_compute_mode(void **state) {
    (void)state;
    fn.gpu[0].compute_mode = CM__NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
    add_process(&fn.gpu[0], 4541, 1 * GiB);
    expect("device0.compute_mode", CM_DIAG_WARNING,
           "compute mode Exclusive_Process: one process at a time may use this GPU; any other "
           "gets \"all CUDA-capable devices are busy or unavailable\" "
           "(cudaErrorDevicesUnavailable); python3 (pid 4541) holds it now",
           "-c DEFAULT");
    fn.gpu[0].compute_mode = CM__NVML_COMPUTEMODE_EXCLUSIVE_THREAD;
    expect("device0.compute_mode", CM_DIAG_WARNING, "compute mode Exclusive_Thread", "MPS");
    fn.gpu[0].compute_mode = CM__NVML_COMPUTEMODE_PROHIBITED;
    expect("device0.compute_mode", CM_DIAG_ERROR, "compute mode Prohibited",
           "sudo nvidia-smi -i 00000000:3b:00.0 -c DEFAULT");
}

static void test_verdict_mig(void **state) {
    (void)state;
    fn.gpu[0].mig = fn.gpu[0].mig_pending = 1;
    expect("device0.mig", CM_DIAG_WARNING, "MIG enabled: CUDA sees GPU instances",
           "CUDA_VISIBLE_DEVICES=MIG-<uuid>");
    fn.gpu[0].mig = 0;
    expect("device0.mig", CM_DIAG_WARNING, "MIG disabled: CUDA sees the whole GPU; MIG will be "
                                           "enabled after the next GPU reset",
           "reset the GPU");
}

static void test_verdict_ecc(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    const char *spec = "the GPU reports uncorrectable memory errors";
    g->ecc_volatile = 2;
    g->ecc_aggregate = 5;
    expect("device0.ecc", CM_DIAG_ERROR,
           "the GPU reports uncorrectable memory errors: 2 since the driver loaded, 5 over its life",
           "reset it (sudo nvidia-smi -i 00000000:3b:00.0 -r, with no process using it, or "
           "reboot) or contact the administrator");
    g->ecc_volatile = 0;
    g->remap_pending = 1;
    expect("device0.ecc", CM_DIAG_ERROR, "a row remapping is pending", "contact the administrator");
    g->remap_pending = 0;
    g->remap_failed = 1;
    expect("device0.ecc", CM_DIAG_ERROR, "a row could not be remapped", "needs service");
    g->remap_failed = 0;
    g->retired_pending = 1;
    expect("device0.ecc", CM_DIAG_ERROR, spec, "reset it");
    g->retired_pending = 0;
    /* only in the GPU's lifetime: handled errors, a warning */
    g->remap_unc = 1;
    expect("device0.ecc", CM_DIAG_WARNING,
           "ECC on; 5 uncorrectable memory errors over the GPU's life, none since the driver "
           "loaded; remapped rows: 0 for correctable, 1 for uncorrectable errors",
           "contact the administrator");
    g->ecc_aggregate = 0;
    g->remap_unc = 0;
    g->ecc = g->ecc_pending = 0;
    expect("device0.ecc", CM_DIAG_WARNING, "ECC off", "-e 1, then reboot");
    g->ecc_pending = 1;
    expect("device0.ecc", CM_DIAG_WARNING, "ECC will be on after the next reboot", "-e 1");
    g->ecc = 1;
    g->ecc_pending = 0;
    expect("device0.ecc", CM_DIAG_WARNING, "ECC will be off after the next reboot", "reboot");
    g->ecc_r = CM__NVML_ERROR_NOT_SUPPORTED;
    expect("device0.ecc", CM_DIAG_OK, "ECC: not supported by this GPU", "");
}

static void test_verdict_clocks(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    g->temp = 87;
    g->power_mw = 690000;
    g->reasons = CM__NVML_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN | CM__NVML_CLOCKS_EVENT_SW_POWER_CAP;
    expect("device0.clocks", CM_DIAG_WARNING,
           "the clocks are slowed down: hardware thermal slowdown (87 C, 690 W of 700 W)",
           "the GPU is too hot: check its cooling");
    g->reasons = CM__NVML_CLOCKS_EVENT_SW_THERMAL_SLOWDOWN;
    expect("device0.clocks", CM_DIAG_WARNING, "software thermal slowdown (87 C", "cooling");
    g->reasons = CM__NVML_CLOCKS_EVENT_HW_POWER_BRAKE_SLOWDOWN;
    expect("device0.clocks", CM_DIAG_WARNING, "hardware power brake (87 C, 690 W of 700 W)",
           "the power supply asserted the power brake");
    g->reasons = CM__NVML_CLOCKS_EVENT_HW_SLOWDOWN;
    expect("device0.clocks", CM_DIAG_WARNING, "hardware slowdown", "power supply may be short");
    g->reasons = CM__NVML_CLOCKS_EVENT_SW_POWER_CAP;
    expect("device0.clocks", CM_DIAG_OK,
           "clocks held under the power limit (normal at full load); 87 C, 690 W of 700 W", "");
    g->reasons = CM__NVML_CLOCKS_EVENT_GPU_IDLE;
    expect("device0.clocks", CM_DIAG_OK, "clocks: idle", "");
}

static void test_verdict_pcie(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    g->gen = g->gen_max = 4;
    g->width = 8;
    expect("device0.pcie", CM_DIAG_WARNING, "link runs at x8 of x16: check the slot (generation 4 of 4)",
           "reseat the GPU or move it to a slot wired for x16");
    g->width = 16;
    g->gen = 1;
    g->reasons = CM__NVML_CLOCKS_EVENT_GPU_IDLE; /* links slow down while idle: fine */
    expect("device0.pcie", CM_DIAG_OK, "PCIe gen1 x16, up to gen4: the link slows down while "
                                       "the GPU is idle", "");
    g->gen = 3;
    g->reasons = 0;
    expect("device0.pcie", CM_DIAG_WARNING, "link runs at generation 3 of 4 while the GPU is busy",
           "BIOS");
    /* the text block shows the link too */
    g->gen = 4;
    g->width = 8;
    cm_diag_report_t *r = judge();
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CM_ASSERT_OK(cm_diag_write_text(r, f));
    fclose(f);
    assert_contains(text, "\n[warn ] device0.pcie: link runs at x8 of x16: check the slot");
    assert_contains(text, "\n  PCIe link           gen4 x8 (max gen4 x16)\n");
    assert_contains(text, "verdict: ok with 1 warning (exit 0)");
    free(text);
}

static void test_verdict_processes(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    add_process(g, 4541, 100 * GiB);
    add_process(g, g_self, 1 * GiB);
    expect("device0.processes", CM_DIAG_WARNING, "; other processes hold 100.00 GiB of 140.40 GiB",
           "stop those processes or wait for them");
    g->nprocs = 0;
    add_process(g, g_self, 100 * GiB); /* only this process: fine */
    expect("device0.processes", CM_DIAG_OK, "1 process on this GPU: test_nvml (pid", "");
    g->nprocs = 0;
    expect("device0.processes", CM_DIAG_OK, "no process uses this GPU", "");
    for (unsigned i = 0; i < 20; ++i) add_process(g, 5000 + i, MiB);
    expect("device0.processes", CM_DIAG_OK, "20 processes on this GPU:", "");
    expect("device0.processes", CM_DIAG_OK, "16 not visible from here (another PID namespace) "
                                            "hold 16.00 MiB; 4 more not listed", "");
}

/* Every device with every health check warning still fits in a report. */
static void test_many_devices_fit(void **state) {
    (void)state;
    fgpu_t *g = &fn.gpu[0];
    g->persistence = 0;
    g->compute_mode = CM__NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
    g->mig = g->mig_pending = 1;
    g->ecc = g->ecc_pending = 0;
    g->reasons = CM__NVML_CLOCKS_EVENT_HW_THERMAL_SLOWDOWN;
    g->width = 8;
    add_process(g, 4541, 100 * GiB);
    cm_device_health_t h;
    CM_ASSERT_OK(cm_device_health(0, &h));
    cm_diag_inputs_t *in = h200_inputs(20);
    for (int i = 0; i < CM_DIAG_MAX_DEVICES; ++i) {
        in->devices[i].health = h;
        in->devices[i].image.binary_version = 91; /* and the two image warnings each */
    }
    CM_ASSERT_OK(cm_diag_evaluate(in, &g_report));
    /* library, driver, runtime, devices; 3 per device; nvml; 7 health checks per device;
     * peers, nccl, nvcc, 6 env, platform */
    assert_int_equal(g_report.n_checks, 4 + 3 * CM_DIAG_MAX_DEVICES + 1 + 7 * CM_DIAG_MAX_DEVICES +
                                            2 + 1 + 7);
    assert_true(g_report.n_checks <= CM_DIAG_MAX_CHECKS);
    assert_int_equal(check(&g_report, "device15.processes")->verdict, CM_DIAG_WARNING);
    assert_int_equal(check(&g_report, "device15.pcie")->verdict, CM_DIAG_WARNING);
    assert_non_null(check(&g_report, "platform"));
    assert_int_equal(cm_diag_exit_code(&g_report), 0);
}

/* ------------------------------------------------------------------ the out-of-memory report */

static cm__oom_numbers_t h200_oom(void) {
    cm__oom_numbers_t n;
    memset(&n, 0, sizeof n);
    n.device_name = "NVIDIA H200";
    n.requested = 40 * GiB;
    n.total_bytes = 140 * GiB;
    n.free_bytes = 10 * GiB;
    n.live_bytes = 80 * GiB;
    n.live_buffers = 12;
    n.cached_bytes = 2 * GiB;
    n.largest_ok = 9 * GiB + 512 * MiB;
    n.largest_known = true;
    return n;
}

static cm_process_info_t proc(unsigned pid, const char *name, unsigned long long bytes,
                              int visible, int self) {
    cm_process_info_t p;
    memset(&p, 0, sizeof p);
    p.pid = pid;
    snprintf(p.name, sizeof p.name, "%s", name);
    p.used_bytes = bytes;
    p.visible = visible;
    p.self = self;
    return p;
}

static void test_oom_text_with_holders(void **state) {
    (void)state;
    char msg[CM_ERROR_MESSAGE_MAX], hint[CM_ERROR_HINT_MAX];
    cm_process_info_t procs[8];
    procs[0] = proc(4541, "python3", 8 * GiB + 512 * MiB, 1, 0);
    procs[1] = proc(12, "", 6 * GiB, 0, 0);
    procs[2] = proc(100, "self", 4 * GiB, 1, 1);
    procs[3] = proc(200, "trainer", 3 * GiB, 1, 0);
    procs[4] = proc(13, "", 1 * GiB, 0, 0);
    cm__oom_numbers_t n = h200_oom();
    n.processes_known = true;
    n.processes = procs;
    n.n_processes = n.process_count = 5;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "; 48.00 GiB is held outside the library (other processes, CUDA contexts, "
                         "direct CUDA allocations); other processes on this GPU: python3 (pid 4541) "
                         "holds 8.50 GiB, trainer (pid 200) holds 3.00 GiB, and 2 processes not "
                         "visible from here hold 7.00 GiB; the largest allocation");
    assert_not_contains(msg, "pid 100");
    assert_not_contains(hint, "nvidia-smi");
    assert_contains(hint, "stop the other processes holding this GPU's memory or wait for them "
                          "(the largest: python3, pid 4541, 8.50 GiB), or run on another GPU "
                          "(CUDA_VISIBLE_DEVICES)");

    /* more than three visible ones: the rest summed; one invisible; an unknown amount */
    procs[0] = proc(1, "a", 5 * GiB, 1, 0);
    procs[1] = proc(2, "b", 4 * GiB, 1, 0);
    procs[2] = proc(3, "", 3 * GiB, 1, 0);
    procs[3] = proc(4, "d", 2 * GiB, 1, 0);
    procs[4] = proc(5, "e", 1 * GiB, 1, 0);
    procs[5] = proc(6, "", 512 * MiB, 0, 0);
    procs[6] = proc(7, "g", CM_PROCESS_BYTES_UNKNOWN, 1, 0);
    n.n_processes = n.process_count = 7;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "other processes on this GPU: a (pid 1) holds 5.00 GiB, b (pid 2) holds "
                         "4.00 GiB, pid 3 holds 3.00 GiB, 3 more hold 3.00 GiB, and 1 process not "
                         "visible from here holds 512.00 MiB");
    /* the list NVML gave was longer than what the report asked for */
    n.process_count = 40;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, ", 1 process not visible from here holds 512.00 MiB, and 33 more that are "
                         "not listed here");
    /* one holder whose amount NVML does not report */
    procs[0] = proc(9, "x", CM_PROCESS_BYTES_UNKNOWN, 1, 0);
    n.n_processes = n.process_count = 1;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "other processes on this GPU: x (pid 9) holds an amount NVML does not "
                         "report; the largest");
    assert_contains(hint, "(the largest: x, pid 9, amount not reported)");

    /* only processes of other containers */
    procs[0] = proc(12, "", 3 * GiB, 0, 0);
    n.n_processes = n.process_count = 1;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "other processes on this GPU: 1 process not visible from here holds "
                         "3.00 GiB;");
    assert_contains(hint, "processes of another container hold 3.00 GiB of this GPU: ask their "
                          "owner, or run on another GPU");

    /* nobody else: the memory outside the library is this process's */
    procs[0] = proc(100, "self", 48 * GiB, 1, 1);
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "direct CUDA allocations); NVML lists no other process on this GPU; the "
                         "largest");
    assert_contains(hint, "NVML lists no other process on this GPU: the 48.00 GiB outside the "
                          "library is this process's own");
    n.n_processes = n.process_count = 0;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_contains(msg, "NVML lists no other process on this GPU");

    /* without NVML: the report as before, with the nvidia-smi hint */
    n.processes_known = false;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_not_contains(msg, "NVML");
    assert_contains(hint, "nvidia-smi --query-compute-apps=pid,process_name,used_memory");

    /* long names and many holders stay within the buffers */
    cm_process_info_t many[8];
    for (int i = 0; i < 8; ++i) {
        many[i] = proc((unsigned)(4000000 + i), "", (unsigned long long)(8 - i) * GiB, i % 2, 0);
        memset(many[i].name, 'n', sizeof many[i].name - 1);
        many[i].name[sizeof many[i].name - 1] = '\0';
    }
    n = h200_oom();
    n.processes_known = true;
    n.processes = many;
    n.n_processes = 8;
    n.process_count = 1000;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_true(strlen(msg) < sizeof msg);
    assert_true(strlen(hint) < sizeof hint);
}

/* The whole path on the simulated device: the report names the holders NVML lists. */
static void test_oom_report_names_holders(void **state) {
    (void)state;
    fake.external = 10 * MiB;
    add_process(&fn.gpu[0], 4541, 8 * MiB);
    add_process(&fn.gpu[0], 4000000, 2 * MiB);
    add_process(&fn.gpu[0], g_self, 16 * MiB);
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_buffer_t *a = NULL, *big = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 16 * MiB, &a));
    EXPECT_FAIL(cm_buffer_create(dev, 60 * MiB, &big), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "; 10.00 MiB is held outside the library (other processes, CUDA contexts, "
                "direct CUDA allocations); other processes on this GPU: python3 (pid 4541) holds "
                "8.00 MiB and 1 process not visible from here holds 2.00 MiB");
    assert_not_contains(cm_last_error()->message, "the largest allocation"); /* 60 > 38 free */
    const cm_error_t *e = cm_last_error();
    assert_contains(e->hint, "(the largest: python3, pid 4541, 8.00 MiB)");
    assert_not_contains(e->hint, "nvidia-smi");
    assert_null(big);
    /* NVML fails for this GPU: the report falls back to nvidia-smi */
    fn.gpu[0].procs_r = CM__NVML_ERROR_NO_PERMISSION;
    EXPECT_FAIL(cm_buffer_create(dev, 60 * MiB, &big), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "direct CUDA allocations)");
    assert_contains(cm_last_error()->hint, "nvidia-smi");
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_has_nvml),
        cmocka_unit_test(test_real_loader),
        cmocka_unit_test_setup_teardown(test_every_nvml_entry_fails, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_absent, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_init_failures, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_device_not_matched, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_processes_sorted_and_named, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_processes_many_and_failing, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_processes_arguments, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_renumbered_devices, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_threads_initialise_once, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_health_healthy, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_nvml_absent, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdicts_healthy, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_persistence, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_compute_mode, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_mig, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_ecc, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_clocks, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_pcie, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_verdict_processes, setup1, teardown),
        cmocka_unit_test_setup_teardown(test_many_devices_fit, setup1, teardown),
        cmocka_unit_test(test_oom_text_with_holders),
        cmocka_unit_test_setup_teardown(test_oom_report_names_holders, setup1, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
