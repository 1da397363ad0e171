/*
 * oom_report: what libcudamodel says when the GPU is out of memory.
 *
 * Holds a little memory through the library, then asks for more than the whole card. Where
 * cudaMalloc alone says "out of memory", the library's report names the request, the device's
 * free and total memory, what this process holds through the library (live and cached), what is
 * held outside it, and what to do (a request that should have fit the free memory also gets the
 * largest allocation that succeeds now). Then it shows that the process goes on normally.
 *
 * Exit status: 0 when the report was produced; 1 without a usable GPU (the library's own report
 * of why is printed) or on any other failure.
 */
#include <stdio.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/status.h>

static int report_failure(const char *what) {
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    fprintf(stderr, "oom_report: %s failed:\n%s\n", what, text);
    return 1;
}

int main(void) {
    cm_device_t *dev = NULL;
    if (cm_device_open(0, &dev) != CM_OK) return report_failure("opening device 0");
    int rc = 1;
    cm_buffer_t *held = NULL, *huge = NULL, *after = NULL;
    cm_device_limits_t lim;
    if (cm_device_get_limits(0, &lim) != CM_OK) {
        rc = report_failure("reading the device's limits");
        goto done;
    }
    if (cm_buffer_create_labeled(dev, (size_t)256 << 20, "activations", &held) != CM_OK) {
        rc = report_failure("allocating 256 MiB");
        goto done;
    }

    size_t ask = lim.total_global_mem + ((size_t)1 << 30);
    printf("asking %s for %zu bytes (the card has %zu):\n\n", lim.name, ask, lim.total_global_mem);
    cm_status_t s = cm_buffer_create_labeled(dev, ask, "too big", &huge);
    if (s == CM_OK) {
        fprintf(stderr, "oom_report: the allocation succeeded; no report to show\n");
        goto done;
    }
    char text[2048];
    cm_error_format(NULL, text, sizeof text);
    printf("%s\n\n", text);
    if (s != CM_ERROR_DEVICE_OUT_OF_MEMORY) {
        fprintf(stderr, "oom_report: expected CM_ERROR_DEVICE_OUT_OF_MEMORY, got %s\n",
                cm_status_name(s));
        goto done;
    }

    /* the process is fully usable afterwards (a NULL stream: the set is done on return) */
    if (cm_buffer_create(dev, (size_t)64 << 20, &after) != CM_OK ||
        cm_buffer_set(NULL, after, 0, (size_t)64 << 20, 0) != CM_OK) {
        rc = report_failure("allocating 64 MiB after the out-of-memory");
        goto done;
    }
    cm_memory_report_t r;
    if (cm_device_memory_report(dev, &r) != CM_OK ||
        cm_memory_report_format(&r, text, sizeof text, NULL) != CM_OK) {
        rc = report_failure("the memory report");
        goto done;
    }
    printf("afterwards, 64 MiB more were allocated normally:\n%s", text);
    rc = 0;

done:
    if (cm_buffer_destroy(after) != CM_OK || cm_buffer_destroy(held) != CM_OK ||
        cm_device_close(dev) != CM_OK)
        rc = report_failure("releasing");
    return rc;
}
