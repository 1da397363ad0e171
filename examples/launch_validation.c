/*
 * launch_validation: a launch configuration the GPU cannot run, caught and explained before
 * the launch, then fixed.
 *
 * CUDA itself answers a block of 2048 threads with "invalid configuration argument"
 * (cudaErrorInvalidConfiguration) and names no limit.
 * libcudamodel checks the configuration against the device's limits and the kernel's own
 * attributes (registers, __launch_bounds__, shared memory) and says which rule is broken, with
 * the numbers. The program:
 *   1. validates a 2048-thread block for saxpy on device 0 and prints the library's report;
 *   2. tries to launch it anyway with cm_launch(): refused, nothing runs (y is unchanged);
 *   3. fixes it with cm_launch_config_1d() at 256 threads, launches it synchronously (a NULL
 *      stream: the kernel has finished when cm_launch returns), and checks every element of
 *      y = a * x + y against a float64 reference on the host.
 * Plain C: the kernel comes from kernels/example_kernels.cu as a pointer.
 * Exits 0 when all of that went as described, 1 otherwise (without a GPU: the library's
 * report of why).  Usage: launch_validation [n]   (default 1000000 elements)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

/* from kernels/example_kernels.cu: y[i] = a * x[i] + y[i] */
const void *example_saxpy_kernel(void);

static void print_report(const char *title) {
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    printf("%s\n%s\n", title, report);
}

static cm_status_t run(unsigned long long n) {
    cm_status_t status = CM_OK;
    float *h_x = NULL, *h_y = NULL, *h_out = NULL, *d_x = NULL, *d_y = NULL;
    const size_t bytes = (size_t)n * sizeof(float);
    float a = 2.5f;
    void *args[] = {&a, &d_x, &d_y, &n};

    int count = 0;
    CM_TRY(cm_device_count(&count));
    cm_device_limits_t dev;
    CM_TRY(cm_device_get_limits(0, &dev));
    cm_kernel_attrs_t saxpy;
    CM_TRY(cm_kernel_attrs_get(example_saxpy_kernel(), 0, &saxpy));
    printf("device 0: %s (sm_%d%d): at most %d threads per block\n", dev.name, dev.cc_major,
           dev.cc_minor, dev.max_threads_per_block);
    printf("kernel %s: %d registers per thread, at most %d threads per block\n\n", saxpy.name,
           saxpy.num_regs, saxpy.max_threads_per_block);

    h_x = malloc(bytes);
    h_y = malloc(bytes);
    h_out = malloc(bytes);
    if (n > 0 && (h_x == NULL || h_y == NULL || h_out == NULL)) {
        fprintf(stderr, "host allocation of 3 x %zu bytes failed\n", bytes);
        status = CM_ERROR_HOST_OUT_OF_MEMORY;
        goto done;
    }
    srand(2026);
    for (unsigned long long i = 0; i < n; ++i) {
        h_x[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        h_y[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
    }
    CM_CUDA_TRY_GOTO(cudaMalloc((void **)&d_x, bytes + 1), status, done);
    CM_CUDA_TRY_GOTO(cudaMalloc((void **)&d_y, bytes + 1), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(d_y, h_y, bytes, cudaMemcpyHostToDevice), status, done);

    /* 1. a block of 2048 threads: what the library says about it */
    cm_launch_config_t bad = CM_LAUNCH_CONFIG_INIT;
    bad.block.x = 2048;
    bad.grid.x = (unsigned)((n + 2047) / 2048);
    if (bad.grid.x == 0) bad.grid.x = 1;
    printf("1. grid %u x block %u:\n", bad.grid.x, bad.block.x);
    if (cm_launch_config_validate(&bad, &dev, &saxpy) != CM_ERROR_INVALID_LAUNCH) {
        fprintf(stderr, "expected the library to reject a block of 2048 threads\n");
        status = CM_ERROR_CUDA;
        goto done;
    }
    print_report("   cm_launch_config_validate says:");

    /* 2. launching it anyway: refused before the launch, y untouched */
    if (cm_launch(NULL, example_saxpy_kernel(), &bad, args) != CM_ERROR_INVALID_LAUNCH) {
        fprintf(stderr, "expected cm_launch to refuse a block of 2048 threads\n");
        status = CM_ERROR_CUDA;
        goto done;
    }
    CM_CUDA_TRY_GOTO(cudaDeviceSynchronize(), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(h_out, d_y, bytes, cudaMemcpyDeviceToHost), status, done);
    for (unsigned long long i = 0; i < n; ++i) {
        if (h_out[i] != h_y[i]) {
            fprintf(stderr, "y[%llu] changed although the launch was refused\n", i);
            status = CM_ERROR_CUDA;
            goto done;
        }
    }
    printf("2. cm_launch refused it too (%s); y is unchanged: nothing ran\n\n",
           cm_status_name(CM_ERROR_INVALID_LAUNCH));
    cm_last_error_clear(); /* the refusal was expected: do not report it later */

    /* 3. fixed: 256 threads per block, grid computed to cover n */
    cm_launch_config_t good;
    CM_TRY_GOTO(cm_launch_config_1d(n, 256, &good), status, done);
    CM_TRY_GOTO(cm_launch_config_validate(&good, &dev, &saxpy), status, done);
    printf("3. grid %u x block %u = %llu threads for %llu elements: valid\n", good.grid.x,
           good.block.x, (unsigned long long)cm_launch_config_threads(&good), n);
    /* NULL stream: synchronous, a fault of the kernel would be this call's status */
    CM_TRY_GOTO(CM_LAUNCH(NULL, example_saxpy_kernel(), &good, args), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(h_out, d_y, bytes, cudaMemcpyDeviceToHost), status, done);
    {
        unsigned long long bad_count = 0;
        double max_err = 0.0;
        for (unsigned long long i = 0; i < n; ++i) {
            double ref = (double)a * (double)h_x[i] + (double)h_y[i];
            double err = fabs((double)h_out[i] - ref);
            if (!(err <= 1e-6 * fabs(ref) + 1e-6)) ++bad_count; /* NaN fails */
            if (err > max_err) max_err = err;
        }
        printf("   verify: %llu of %llu elements wrong, max |error| %.3g\n", bad_count, n, max_err);
        if (bad_count != 0) status = CM_ERROR_CUDA;
    }
    if (status == CM_OK) printf("launch_validation: PASSED\n");

done:
    if (d_x) cudaFree(d_x);
    if (d_y) cudaFree(d_y);
    free(h_x);
    free(h_y);
    free(h_out);
    return status;
}

int main(int argc, char **argv) {
    unsigned long long n = 1000000;
    if (argc > 1) {
        char *end = NULL;
        n = strtoull(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0') {
            fprintf(stderr, "usage: %s [n]   (n: number of elements, default 1000000)\n", argv[0]);
            return 64;
        }
    }
    cm_status_t s = run(n);
    if (s != CM_OK) {
        if (cm_last_error()->status == s) { /* a library or CUDA failure: its report */
            char report[2048];
            cm_error_format(NULL, report, sizeof report);
            fprintf(stderr, "launch_validation failed:\n%s\n", report);
        } else {
            fprintf(stderr, "launch_validation: FAILED (see above)\n");
        }
        return 1;
    }
    return 0;
}
