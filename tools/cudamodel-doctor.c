/*
 * cudamodel-doctor: is this machine ready to run libcudamodel's kernels, and if not, why not?
 *
 * Usage: cudamodel-doctor [--json] [--watch SECONDS] [--help] [--version]
 *
 * Reads the driver, the runtime, every device and its health (NVML), this library's
 * architectures and the CUDA environment (cm_diag_collect()), judges them (cm_diag_evaluate())
 * and prints one line per check with its fix, or the same as JSON. The exit status is the
 * documented code of the root cause (diag.h): 0 ok, 2 no NVIDIA driver, 3 driver older than the
 * runtime, 4 no device visible, 5 no kernel image for a device, 6 another error, 64 bad command
 * line. --watch SECONDS collects once, then re-reads only each GPU's health (cm_device_health(),
 * a few NVML queries) and prints one line per device every second, for SECONDS seconds (0: until
 * interrupted); it exits with the code of its last judgement.
 * The report goes to stdout; only the tool's own errors go to stderr.
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, localtime_r, sigaction */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/device.h>
#include <cudamodel/diag.h>
#include <cudamodel/status.h>
#include <cudamodel/version.h>

static void usage(FILE *out) {
    fputs("usage: cudamodel-doctor [--json] [--watch SECONDS] [--help] [--version]\n"
          "\n"
          "Checks that this machine can run libcudamodel's CUDA kernels: the NVIDIA driver\n"
          "against the CUDA runtime, each device and its limits, whether the library carries\n"
          "code for it (native or PTX JIT), each GPU's health as NVML reports it (persistence,\n"
          "compute and MIG modes, ECC errors and row remapping, clock slowdowns, the PCIe link,\n"
          "the processes using it), peer access between the GPUs, the NCCL version (or \"not\n"
          "built\"), and the CUDA environment (CUDA_HOME, nvcc on PATH, LD_LIBRARY_PATH,\n"
          "CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, CUDAMODEL_SYNC, WSL2).\n"
          "\n"
          "  --json             print the report as one JSON object\n"
          "  --watch SECONDS    print each GPU's health line every second, for SECONDS seconds\n"
          "                     (0: until interrupted); not with --json\n"
          "  --help             print this help and exit\n"
          "  --version          print the library version and architectures and exit\n"
          "\n"
          "exit status: 0 ok (warnings may be present), 2 no NVIDIA driver, 3 driver older than\n"
          "the CUDA runtime, 4 no CUDA device visible, 5 no kernel image for a device,\n"
          "6 another error, 64 bad command line\n",
          out);
}

/* ------------------------------------------------------------------ --watch */

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

/* The health checks of device i, by id suffix (the checks cm_diag_evaluate() makes from
 * cm_device_health_t). */
static int is_health_check(const char *id, int i) {
    static const char *const names[] = {"persistence", "compute_mode", "mig", "ecc",
                                        "clocks",      "pcie",         "processes"};
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "device%d.", i);
    if (n <= 0 || strncmp(id, prefix, (size_t)n) != 0) return 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
        if (strcmp(id + n, names[k]) == 0) return 1;
    return 0;
}

static void print_size(unsigned long long bytes) {
    if (bytes >= (1ull << 30)) printf("%.1f GiB", (double)bytes / 1073741824.0);
    else printf("%.0f MiB", (double)bytes / 1048576.0);
}

/* "12:00:01 device 0 NVIDIA H200: ok | 45 C, 120 W of 700 W | PCIe gen5 x16 of gen5 x16 |
 *  ECC 0 uncorrectable | 2 processes, 52.1 GiB", then the checks that are not ok. */
static void print_health_line(const cm_diag_report_t *report, int i, const char *stamp) {
    const cm_diag_device_t *d = &report->inputs.devices[i];
    const cm_device_health_t *h = &d->health;
    printf("%s device %d %s: ", stamp, i, d->limits.name[0] ? d->limits.name : "GPU");
    if (!h->nvml_available) {
        printf("NVML not available: %s\n", h->nvml_reason);
        return;
    }
    cm_diag_verdict_t worst = CM_DIAG_OK;
    for (int c = 0; c < report->n_checks && c < CM_DIAG_MAX_CHECKS; ++c)
        if (is_health_check(report->checks[c].id, i) && report->checks[c].verdict > worst)
            worst = report->checks[c].verdict;
    printf("%s", cm_diag_verdict_name(worst));
    if (h->temperature_c != CM_HEALTH_UNKNOWN) printf(" | %d C", h->temperature_c);
    if (h->power_mw != CM_HEALTH_UNKNOWN) {
        printf(", %.0f W", h->power_mw / 1000.0);
        if (h->power_limit_mw > 0) printf(" of %.0f W", h->power_limit_mw / 1000.0);
    }
    if (h->pcie_gen > 0 && h->pcie_width > 0)
        printf(" | PCIe gen%d x%d of gen%d x%d", h->pcie_gen, h->pcie_width, h->pcie_gen_max,
               h->pcie_width_max);
    if (h->ecc_volatile_uncorrected != CM_HEALTH_UNKNOWN)
        printf(" | ECC %lld uncorrectable", h->ecc_volatile_uncorrected);
    if (h->processes_known) {
        unsigned long long bytes = 0;
        size_t n = h->process_count < CM_HEALTH_MAX_PROCESSES ? h->process_count
                                                              : CM_HEALTH_MAX_PROCESSES;
        for (size_t k = 0; k < n; ++k)
            if (h->processes[k].used_bytes != CM_PROCESS_BYTES_UNKNOWN)
                bytes += h->processes[k].used_bytes;
        printf(" | %zu process%s, ", h->process_count, h->process_count == 1 ? "" : "es");
        print_size(bytes);
    }
    for (int c = 0; c < report->n_checks && c < CM_DIAG_MAX_CHECKS; ++c) {
        const cm_diag_check_t *k = &report->checks[c];
        if (!is_health_check(k->id, i) || k->verdict == CM_DIAG_OK) continue;
        printf(" | %s %s: %s", k->verdict == CM_DIAG_ERROR ? "ERROR" : "warn",
               strchr(k->id, '.') + 1, k->message);
    }
    putchar('\n');
}

/* --watch: collect once, then re-read the health of each device every second. */
static int watch(cm_diag_report_t *report, long seconds) {
    const cm_diag_inputs_t *in = &report->inputs;
    int nd = in->device_count_error == 0 ? in->device_count : 0;
    if (nd > CM_DIAG_MAX_DEVICES) nd = CM_DIAG_MAX_DEVICES;
    if (nd == 0) { /* nothing to watch: the report says why */
        if (cm_diag_write_text(report, stdout) != CM_OK) return CM_DIAG_EXIT_OTHER;
        return cm_diag_exit_code(report);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    (void)sigaction(SIGINT, &sa, NULL);
    (void)sigaction(SIGTERM, &sa, NULL);
    printf("cudamodel-doctor --watch: %d device%s, a line each every second", nd,
           nd == 1 ? "" : "s");
    if (seconds > 0) printf(" for %ld s\n", seconds);
    else printf(" until interrupted\n");
    for (long tick = 0; !g_stop && (seconds == 0 || tick < seconds); ++tick) {
        if (tick > 0) {
            struct timespec ts = {1, 0};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
            }
            if (g_stop) break;
            for (int i = 0; i < nd; ++i)
                (void)cm_device_health(i, &report->inputs.devices[i].health);
            if (cm_diag_evaluate(&report->inputs, report) != CM_OK) return CM_DIAG_EXIT_OTHER;
        }
        char stamp[16] = "";
        time_t now = time(NULL);
        struct tm tm;
        if (localtime_r(&now, &tm) != NULL) strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
        for (int i = 0; i < nd; ++i) print_health_line(report, i, stamp);
        if (fflush(stdout) != 0) return CM_DIAG_EXIT_OTHER;
    }
    cm_last_error_clear();
    return cm_diag_exit_code(report);
}

/* SECONDS of --watch: a whole number from 0 to a day. */
static int parse_seconds(const char *text, long *out) {
    if (text == NULL || *text == '\0') return 0;
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > 86400) return 0;
    *out = v;
    return 1;
}

int main(int argc, char **argv) {
    int json = 0, watching = 0;
    long watch_seconds = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--watch") == 0) {
            if (i + 1 >= argc || !parse_seconds(argv[i + 1], &watch_seconds)) {
                fprintf(stderr, "cudamodel-doctor: --watch needs a number of seconds from 0 to "
                                "86400, got '%s'\n", i + 1 < argc ? argv[i + 1] : "");
                usage(stderr);
                return CM_DIAG_EXIT_USAGE;
            }
            watching = 1;
            ++i;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return fflush(stdout) == 0 ? CM_DIAG_EXIT_OK : CM_DIAG_EXIT_OTHER;
        } else if (strcmp(argv[i], "--version") == 0) {
            cm_version_info_t vi;
            if (cm_version_info(&vi) != CM_OK) return CM_DIAG_EXIT_OTHER;
            printf("cudamodel-doctor (libcudamodel %s), built against CUDA %d.%d, "
                   "architectures \"%s\"\n",
                   vi.library_string, vi.runtime_built / 1000, (vi.runtime_built % 1000) / 10,
                   vi.cuda_architectures);
            return fflush(stdout) == 0 ? CM_DIAG_EXIT_OK : CM_DIAG_EXIT_OTHER;
        } else {
            fprintf(stderr, "cudamodel-doctor: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return CM_DIAG_EXIT_USAGE;
        }
    }

    if (json && watching) {
        fputs("cudamodel-doctor: --watch prints text lines; it does not combine with --json\n",
              stderr);
        usage(stderr);
        return CM_DIAG_EXIT_USAGE;
    }

    /* about 300 KiB: on the heap rather than the stack */
    cm_diag_report_t *report = calloc(1, sizeof *report);
    if (report == NULL) {
        fputs("cudamodel-doctor: out of host memory\n", stderr);
        return CM_DIAG_EXIT_OTHER;
    }
    cm_status_t st = cm_diag_collect(&report->inputs);
    if (st == CM_OK) st = cm_diag_evaluate(&report->inputs, report);
    if (st != CM_OK) {
        char detail[2048];
        cm_error_format(NULL, detail, sizeof detail);
        fprintf(stderr, "cudamodel-doctor: %s\n", detail);
        free(report);
        return CM_DIAG_EXIT_OTHER;
    }
    if (watching) {
        int wcode = watch(report, watch_seconds);
        free(report);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fputs("cudamodel-doctor: cannot write to stdout\n", stderr);
            return CM_DIAG_EXIT_OTHER;
        }
        return wcode;
    }
    if (json) st = cm_diag_write_json(report, stdout);
    else st = cm_diag_write_text(report, stdout);
    int code = cm_diag_exit_code(report);
    free(report);
    if (st != CM_OK || fflush(stdout) != 0 || ferror(stdout)) {
        fputs("cudamodel-doctor: cannot write the report to stdout\n", stderr);
        return CM_DIAG_EXIT_OTHER;
    }
    return code;
}
