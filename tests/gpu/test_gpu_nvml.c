/*
 * NVML on a real GPU: a child process (this program run again with --hold) allocates a known
 * amount of device memory and waits; cm_device_processes() must list it by pid and command
 * name with at least that much memory, an induced out-of-memory report must name it, and the
 * NVML queries must be cheap once NVML is initialised. cm_device_health() must report the real
 * PCIe link, ECC and persistence state, matched to the CUDA device by PCI bus id, and the
 * doctor's checks must carry them. The child is killed and reaped at the end (and dies with
 * this process if it fails: PR_SET_PDEATHSIG).
 */
#define _GNU_SOURCE /* prctl, clock_gettime, kill */

#include "cm_test.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/diag.h>

#define GiB ((size_t)1 << 30)
#define HOLD_BYTES (8 * GiB)      /* what the child holds, besides its CUDA context */
#define CONTEXT_SLACK (2 * GiB)   /* a CUDA context and allocation rounding stay below this */
#define COMMAND "test_gpu_nvml"   /* /proc/<pid>/comm of this program and of the child */

static pid_t g_child = -1;

/* ------------------------------------------------------------------ the child */

/* Hold `bytes` of device memory on `device` until killed. Exit codes: 2 a CUDA call failed,
 * 3 the parent is gone. */
static int hold(int device, unsigned long long bytes) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) return 3;
    void *p = NULL;
    if (cudaSetDevice(device) != cudaSuccess || cudaMalloc(&p, (size_t)bytes) != cudaSuccess ||
        cudaMemset(p, 0, (size_t)bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
        return 2;
    if (write(STDOUT_FILENO, "ready\n", 6) != 6) return 2;
    for (;;) pause();
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Start the child on device 0 and wait until it holds its memory. */
static pid_t start_holder(void) {
    int pfd[2];
    /* exec this program by its own path: the kernel names the process after the file it runs
     * (/proc/self/exe would name it "exe") */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = '\0';
    assert_int_equal(pipe(pfd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void)dup2(pfd[1], STDOUT_FILENO);
        (void)close(pfd[0]);
        (void)close(pfd[1]);
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)HOLD_BYTES);
        execl(self, COMMAND, "--hold", "0", bytes, (char *)NULL);
        _exit(127);
    }
    g_child = pid;
    (void)close(pfd[1]);
    char buf[16] = "";
    struct pollfd p = {pfd[0], POLLIN, 0};
    int ready = poll(&p, 1, 120000); /* creating a context under a sanitizer takes long */
    ssize_t got = ready > 0 ? read(pfd[0], buf, sizeof buf - 1) : -1;
    (void)close(pfd[0]);
    if (got < 6 || strncmp(buf, "ready", 5) != 0) {
        int status = 0;
        (void)kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        g_child = -1;
        fail_msg("the child holding %zu GiB did not get ready (poll %d, read %zd, exit status %d)",
                 HOLD_BYTES / GiB, ready, got, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return pid;
}

static void stop_holder(void) {
    if (g_child <= 0) return;
    int status = 0;
    (void)kill(g_child, SIGKILL);
    while (waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
    }
    g_child = -1;
}

static int teardown(void **state) {
    (void)state;
    stop_holder(); /* also when an assertion left the test early */
    return 0;
}

/* ------------------------------------------------------------------ tests */

static void test_processes_and_oom_name_the_holder(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    cm_process_info_t list[64];
    size_t n = 0;
    /* NVML's first use in this process (nvmlInit_v2) */
    double t0 = now_ms();
    cm_status_t st = cm_device_processes(0, list, 64, &n);
    double cold = now_ms() - t0;
    if (st != CM_OK) {
        char report[2048];
        cm_error_format(NULL, report, sizeof report);
        fail_msg("NVML must be available on the GPU machine:\n%s", report);
    }
    pid_t child = start_holder();

    /* the best of three: on the check's machine a dozen test processes share the GPU, and one
     * health query among them took 57 ms (the bound is about the calls, not the neighbours) */
    double warm_processes = 1e30, warm_health = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
        t0 = now_ms();
        CM_ASSERT_OK(cm_device_processes(0, list, 64, &n));
        const double tp = now_ms() - t0;
        cm_device_health_t h;
        t0 = now_ms();
        CM_ASSERT_OK(cm_device_health(0, &h));
        const double th = now_ms() - t0;
        if (tp + th < warm_processes + warm_health) {
            warm_processes = tp;
            warm_health = th;
        }
    }
    print_message("NVML: first cm_device_processes %.2f ms (nvmlInit_v2 included); then "
                  "cm_device_processes %.2f ms, cm_device_health %.2f ms; %zu process(es)\n",
                  cold, warm_processes, warm_health, n);

    const cm_process_info_t *c = NULL;
    for (size_t i = 0; i < n && i < 64; ++i) {
        print_message("  pid %u %s %llu bytes%s%s\n", list[i].pid, list[i].name,
                      list[i].used_bytes, list[i].visible ? "" : " (not visible)",
                      list[i].self ? " (this process)" : "");
        if (list[i].pid == (unsigned)child) c = &list[i];
    }
    if (c == NULL) fail_msg("the child (pid %d) is not among the %zu processes NVML lists", child, n);
    assert_true(c->visible);
    assert_false(c->self);
    assert_string_equal(c->name, COMMAND);
    assert_true(c->used_bytes != CM_PROCESS_BYTES_UNKNOWN);
    assert_true(c->used_bytes >= HOLD_BYTES);
    assert_true(c->used_bytes < HOLD_BYTES + CONTEXT_SLACK);
    if (!cm_test_under_sanitizer()) assert_true(warm_processes + warm_health < 50.0);

    /* ask for more than is free: the report names the child with its memory */
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    size_t free_b = 0, total_b = 0;
    CM_ASSERT_OK(cm_device_memory_info(0, &free_b, &total_b));
    cm_buffer_t *buf = NULL;
    t0 = now_ms();
    assert_int_equal(cm_buffer_create(dev, free_b + GiB, &buf), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    double oom_ms = now_ms() - t0;
    const cm_error_t *e = cm_last_error();
    print_message("out-of-memory report (%.1f ms with the probes):\n  %s\n  hint: %s\n", oom_ms,
                  e->message, e->hint);
    char needle[96];
    snprintf(needle, sizeof needle, COMMAND " (pid %d) holds ", (int)child);
    const char *at = strstr(e->message, needle);
    if (at == NULL) fail_msg("the report does not name the child (\"%s\"):\n%s", needle, e->message);
    double gib = 0.0;
    assert_int_equal(sscanf(at + strlen(needle), "%lf GiB", &gib), 1);
    double listed = (double)c->used_bytes / (double)GiB;
    if (gib < listed * 0.95 || gib > listed * 1.05)
        fail_msg("the report says %.2f GiB, NVML lists %.2f GiB for the child", gib, listed);
    assert_null(strstr(e->hint, "nvidia-smi")); /* NVML named the holders */
    CM_ASSERT_OK(cm_device_close(dev));

    /* once reaped, the child leaves the list (the driver may take a moment to tear it down) */
    stop_holder();
    bool listed_still = true;
    for (int tries = 0; tries < 50 && listed_still; ++tries) {
        CM_ASSERT_OK(cm_device_processes(0, list, 64, &n));
        listed_still = false;
        for (size_t i = 0; i < n && i < 64; ++i) listed_still |= list[i].pid == (unsigned)child;
        if (listed_still) usleep(100000);
    }
    assert_false(listed_still);
}

/* Real health numbers, matched to the right CUDA device. */
static void test_health_is_real(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int count = 0;
    CM_ASSERT_OK(cm_device_count(&count));
    for (int d = 0; d < count; ++d) {
        cm_device_health_t h;
        CM_ASSERT_OK(cm_device_health(d, &h));
        if (!h.nvml_available) fail_msg("device %d: NVML not available: %s", d, h.nvml_reason);
        print_message("device %d: driver %s, PCI %s, persistence %d, compute mode %d, MIG %d, "
                      "ECC %d (uncorrectable %lld / %lld), remapped rows %d + %d (pending %d), "
                      "clocks 0x%llx, %d C, %d mW of %d mW, PCIe gen%d x%d (max gen%d x%d), "
                      "%zu processes\n",
                      d, h.driver_version, h.pci_bus_id, h.persistence_mode, h.compute_mode,
                      h.mig_mode, h.ecc_mode, h.ecc_volatile_uncorrected,
                      h.ecc_aggregate_uncorrected, h.remapped_rows_correctable,
                      h.remapped_rows_uncorrectable, h.row_remap_pending,
                      (unsigned long long)h.clock_event_reasons, h.temperature_c, h.power_mw,
                      h.power_limit_mw, h.pcie_gen, h.pcie_width, h.pcie_gen_max, h.pcie_width_max,
                      h.process_count);
        assert_true(h.driver_version[0] != '\0');
        /* the same PCI device as CUDA's */
        cm_device_limits_t l;
        CM_ASSERT_OK(cm_device_get_limits(d, &l));
        unsigned a[3], b[3];
        assert_int_equal(sscanf(l.pci_bus_id, "%x:%x:%x", &a[0], &a[1], &a[2]), 3);
        assert_int_equal(sscanf(h.pci_bus_id, "%x:%x:%x", &b[0], &b[1], &b[2]), 3);
        assert_memory_equal(a, b, sizeof a);
        /* what an H200 reports */
        assert_true(h.persistence_mode == 0 || h.persistence_mode == 1);
        assert_true(h.compute_mode >= 0);
        assert_true(h.ecc_mode == 0 || h.ecc_mode == 1);
        assert_true(h.pcie_gen >= 1 && h.pcie_gen <= h.pcie_gen_max);
        assert_true(h.pcie_width >= 1 && h.pcie_width <= h.pcie_width_max);
        assert_true(h.temperature_c > 0 && h.temperature_c < 120);
        assert_true(h.power_mw > 0);
        assert_true(h.clock_event_reasons != CM_HEALTH_UNKNOWN);
        assert_true(h.processes_known);
    }
}

/* The doctor judges the real numbers: every health check of every device is there. */
static void test_doctor_shows_health(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    static cm_diag_report_t report;
    CM_ASSERT_OK(cm_diag_collect(&report.inputs));
    CM_ASSERT_OK(cm_diag_evaluate(&report.inputs, &report));
    int n = report.inputs.device_count < CM_DIAG_MAX_DEVICES ? report.inputs.device_count
                                                            : CM_DIAG_MAX_DEVICES;
    static const char *const checks[] = {"persistence", "compute_mode", "mig", "ecc",
                                         "clocks", "pcie", "processes"};
    for (int d = 0; d < n; ++d) {
        assert_true(report.inputs.devices[d].health.nvml_available);
        for (size_t k = 0; k < sizeof checks / sizeof checks[0]; ++k) {
            char id[48];
            snprintf(id, sizeof id, "device%d.%s", d, checks[k]);
            const cm_diag_check_t *c = NULL;
            for (int i = 0; i < report.n_checks; ++i)
                if (strcmp(report.checks[i].id, id) == 0) c = &report.checks[i];
            if (c == NULL) fail_msg("no check %s", id);
            print_message("[%s] %s: %s\n", cm_diag_verdict_name(c->verdict), c->id, c->message);
        }
    }
    /* this process probed every device: it is listed as itself */
    const cm_device_health_t *h = &report.inputs.devices[0].health;
    int self = 0;
    for (size_t i = 0; i < h->process_count && i < CM_HEALTH_MAX_PROCESSES; ++i)
        self += h->processes[i].self;
    assert_int_equal(self, 1);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--hold") == 0)
        return hold(atoi(argv[2]), strtoull(argv[3], NULL, 10));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_processes_and_oom_name_the_holder, teardown),
        cmocka_unit_test(test_health_is_real),
        cmocka_unit_test(test_doctor_shows_health),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
