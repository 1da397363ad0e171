/*
 * cudamodel-doctor: is this machine ready to run libcudamodel's kernels, and if not, why not?
 *
 * Usage: cudamodel-doctor [--json] [--help] [--version]
 *
 * Reads the driver, the runtime, every device, this library's architectures and the CUDA
 * environment (cm_diag_collect()), judges them (cm_diag_evaluate()) and prints one line per
 * check with its fix, or the same as JSON. The exit status is the documented code of the root
 * cause (diag.h): 0 ok, 2 no NVIDIA driver, 3 driver older than the runtime, 4 no device
 * visible, 5 no kernel image for a device, 6 another error, 64 bad command line.
 * The report goes to stdout; only the tool's own errors go to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/device.h>
#include <cudamodel/diag.h>
#include <cudamodel/status.h>
#include <cudamodel/version.h>

static void usage(FILE *out) {
    fputs("usage: cudamodel-doctor [--json] [--help] [--version]\n"
          "\n"
          "Checks that this machine can run libcudamodel's CUDA kernels: the NVIDIA driver\n"
          "against the CUDA runtime, each device and its limits, whether the library carries\n"
          "code for it (native or PTX JIT), peer access between the GPUs, the NCCL version\n"
          "(or \"not built\"), and the CUDA environment (CUDA_HOME, nvcc on PATH,\n"
          "LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, CUDAMODEL_SYNC, WSL2).\n"
          "\n"
          "  --json     print the report as one JSON object\n"
          "  --help     print this help and exit\n"
          "  --version  print the library version and architectures and exit\n"
          "\n"
          "exit status: 0 ok (warnings may be present), 2 no NVIDIA driver, 3 driver older than\n"
          "the CUDA runtime, 4 no CUDA device visible, 5 no kernel image for a device,\n"
          "6 another error, 64 bad command line\n",
          out);
}

int main(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
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

    /* about 100 KiB: on the heap rather than the stack */
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
