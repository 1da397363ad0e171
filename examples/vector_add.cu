// vector_add: the CUDA programming model's five steps, every step checked by libcudamodel.
//
//   1. find the device and its limits       cm_device_count, cm_device_get_limits
//   2. allocate on the device               cudaMalloc under CM_CUDA_TRY
//   3. copy host -> device                  cudaMemcpy under CM_CUDA_TRY
//   4. launch                               cm_launch_config_1d, <<<grid, block>>>, CM_LAUNCH_CHECK
//   5. copy device -> host, verify, free    against a float64 reference on the CPU
//
// Any failure prints the library's report (what failed, the numbers, and how to fix it) and
// exits 1; on a machine without a GPU that report says "no NVIDIA driver".
// Usage: vector_add [n]   (default 1<<24 elements)
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

__global__ void vector_add(const float *a, const float *b, float *c, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

static cm_status_t run(size_t n) {
    cm_status_t status = CM_OK;
    float *h_a = NULL, *h_b = NULL, *h_c = NULL, *d_a = NULL, *d_b = NULL, *d_c = NULL;
    const size_t bytes = n * sizeof(float);

    // 1. the device
    int count = 0;
    CM_TRY(cm_device_count(&count));
    cm_device_limits_t dev;
    CM_TRY(cm_device_get_limits(0, &dev));
    printf("device 0: %s (sm_%d%d, %d SMs)\n", dev.name, dev.cc_major, dev.cc_minor,
           dev.multiprocessor_count);

    h_a = (float *)malloc(bytes);
    h_b = (float *)malloc(bytes);
    h_c = (float *)malloc(bytes);
    if (h_a == NULL || h_b == NULL || h_c == NULL) {
        fprintf(stderr, "host allocation of 3 x %zu bytes failed\n", bytes);
        status = CM_ERROR_HOST_OUT_OF_MEMORY;
        goto done;
    }
    srand(12345);
    for (size_t i = 0; i < n; ++i) {
        h_a[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        h_b[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
        h_c[i] = NAN;
    }

    // 2. allocate on the device
    CM_CUDA_TRY_GOTO(cudaMalloc((void **)&d_a, bytes), status, done);
    CM_CUDA_TRY_GOTO(cudaMalloc((void **)&d_b, bytes), status, done);
    CM_CUDA_TRY_GOTO(cudaMalloc((void **)&d_c, bytes), status, done);
    CM_CUDA_TRY_GOTO(cudaMemset(d_c, 0xff, bytes), status, done);  // poison the output (NaN)

    // 3. host -> device
    CM_CUDA_TRY_GOTO(cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice), status, done);

    // 4. launch: one thread per element, the grid computed without overflow
    {
        cm_launch_config_t cfg;
        CM_TRY_GOTO(cm_launch_config_1d(n, 256, &cfg), status, done);
        printf("launch: grid %u x block %u = %llu threads for %zu elements\n", cfg.grid.x,
               cfg.block.x, (unsigned long long)cm_launch_config_threads(&cfg), n);
        if (cfg.grid.x > 0) {
            vector_add<<<cfg.grid.x, cfg.block.x>>>(d_a, d_b, d_c, (unsigned long long)n);
            status = cm_check_launch("vector_add", __FILE__, __LINE__);
            if (status != CM_OK) goto done;
        }
    }

    // 5. device -> host, verify against float64
    CM_CUDA_TRY_GOTO(cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost), status, done);
    {
        size_t bad = 0;
        double max_err = 0.0;
        for (size_t i = 0; i < n; ++i) {
            double ref = (double)h_a[i] + (double)h_b[i];
            double err = fabs((double)h_c[i] - ref);
            if (!(err <= 1e-6 * fabs(ref) + 1e-7)) ++bad;  // one float rounding; NaN fails
            if (err > max_err) max_err = err;
        }
        printf("verify: %zu of %zu elements wrong, max |error| %.3g (tolerance 1e-6 relative)\n",
               bad, n, max_err);
        if (bad != 0) status = CM_ERROR_CUDA;
    }
    if (status == CM_OK) printf("vector_add: PASSED\n");

done:
    if (d_a) cudaFree(d_a);
    if (d_b) cudaFree(d_b);
    if (d_c) cudaFree(d_c);
    free(h_a);
    free(h_b);
    free(h_c);
    return status;
}

int main(int argc, char **argv) {
    size_t n = (size_t)1 << 24;
    if (argc > 1) {
        char *end = NULL;
        unsigned long long v = strtoull(argv[1], &end, 10);
        if (end == argv[1] || *end != '\0') {
            fprintf(stderr, "usage: %s [n]   (n: number of elements, default 16777216)\n", argv[0]);
            return 64;
        }
        n = (size_t)v;
    }
    cm_status_t s = run(n);
    if (s != CM_OK) {
        char report[2048];
        cm_error_format(NULL, report, sizeof report);
        fprintf(stderr, "vector_add failed:\n%s\n", report);
        return 1;
    }
    return 0;
}
