/*
 * doctor_report: what an application does at start-up to explain a broken CUDA setup instead
 * of failing later with "invalid argument" or "no kernel image is available".
 *
 * It runs the same checks as cudamodel-doctor through the library (cm_diag_collect +
 * cm_diag_evaluate), prints only what needs attention with its fix, and exits with the
 * doctor's documented code (0 ok, 2 no driver, 3 driver too old, 4 no device, 5 no kernel
 * image, 6 other). Usage: doctor_report [--json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/diag.h>

int main(int argc, char **argv) {
    int json = argc > 1 && strcmp(argv[1], "--json") == 0;
    cm_diag_report_t *report = malloc(sizeof *report);
    cm_diag_inputs_t *inputs = malloc(sizeof *inputs);
    if (report == NULL || inputs == NULL) {
        fprintf(stderr, "doctor_report: out of host memory\n");
        free(report);
        free(inputs);
        return CM_DIAG_EXIT_OTHER;
    }
    if (cm_diag_collect(inputs) != CM_OK || cm_diag_evaluate(inputs, report) != CM_OK) {
        char text[2048];
        cm_error_format(NULL, text, sizeof text);
        fprintf(stderr, "doctor_report: %s\n", text);
        free(report);
        free(inputs);
        return CM_DIAG_EXIT_OTHER;
    }
    if (json) {
        cm_diag_write_json(report, stdout);
    } else {
        int shown = 0;
        for (int i = 0; i < report->n_checks; ++i) {
            const cm_diag_check_t *c = &report->checks[i];
            if (c->verdict == CM_DIAG_OK) continue;
            printf("%-7s %s: %s\n", cm_diag_verdict_name(c->verdict), c->id, c->message);
            if (c->fix[0] != '\0') printf("        fix: %s\n", c->fix);
            ++shown;
        }
        if (shown == 0) printf("CUDA environment ok: %d checks passed\n", report->n_checks);
        for (int d = 0; d < report->inputs.device_count && d < CM_DIAG_MAX_DEVICES; ++d) {
            const cm_diag_device_t *dev = &report->inputs.devices[d];
            printf("device %d: %s sm_%d%d, library kernels: %s\n", d, dev->limits.name,
                   dev->limits.cc_major, dev->limits.cc_minor,
                   cm_image_kind_name(dev->image.predicted));
        }
    }
    int code = cm_diag_exit_code(report);
    if (!json) printf("exit code %d\n", code);
    free(report);
    free(inputs);
    return code;
}
