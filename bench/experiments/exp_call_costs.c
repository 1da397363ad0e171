/*
 * What a CUDA query costs on the host (ns per call, median of 9 runs of 200000 calls): the calls
 * the core makes on its hot paths (stream-device check, enter/leave), to decide what a buffer
 * create may ask CUDA each time. Build and run on the GPU machine:
 *   gcc -O2 -I/usr/local/cuda/include exp_call_costs.c -L/usr/local/cuda/lib64 -lcudart -lcuda
 */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define N 200000
#define TIME(label, stmt)                                                                    \
    do {                                                                                     \
        double r[9];                                                                         \
        for (int k = 0; k < 9; ++k) {                                                        \
            double t0 = now_ns();                                                            \
            for (int i = 0; i < N; ++i) { stmt; }                                            \
            r[k] = (now_ns() - t0) / N;                                                      \
        }                                                                                    \
        qsort(r, 9, sizeof r[0], cmp);                                                       \
        printf("%-40s %8.1f ns\n", label, r[4]);                                             \
    } while (0)

int main(void) {
    cudaStream_t s;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
        return 1;
    int dev = -1;
    enum cudaStreamCaptureStatus cs;
    unsigned long long id;
    CUcontext ctx, primary;
    cuDevicePrimaryCtxRetain(&primary, 0);
    volatile int sink = 0;
    TIME("cudaGetDevice", { cudaGetDevice(&dev); sink += dev; });
    TIME("cudaStreamGetDevice", { cudaStreamGetDevice(s, &dev); sink += dev; });
    TIME("cudaStreamIsCapturing", { cudaStreamIsCapturing(s, &cs); sink += cs; });
    TIME("cudaStreamGetId", { cudaStreamGetId(s, &id); sink += (int)id; });
    TIME("cuCtxGetCurrent", { cuCtxGetCurrent(&ctx); sink += ctx != NULL; });
    TIME("cuCtxPushCurrent+cuCtxPopCurrent", { cuCtxPushCurrent(primary); cuCtxPopCurrent(&ctx); });
    TIME("cudaGetLastError", { sink += cudaGetLastError(); });
    cudaMemPool_t pool;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    unsigned long long keep = ~0ull;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    void *p;
    void *m16 = NULL;
    cudaMalloc(&m16, 16);
    TIME("cudaMallocFromPoolAsync+cudaFreeAsync 1MiB", {
        cudaMallocFromPoolAsync(&p, 1 << 20, pool, s);
        cudaFreeAsync(p, s);
    });
    cudaStreamSynchronize(s);
    /* during a capture: does a refused device or id query end the capture? */
    const char *what[3] = {"cudaStreamGetDevice", "cudaStreamGetId", "cudaStreamIsCapturing"};
    for (int q = 0; q < 3; ++q) {
        cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
        cudaError_t e;
        if (q == 0) e = cudaStreamGetDevice(s, &dev);
        else if (q == 1) e = cudaStreamGetId(s, &id);
        else e = cudaStreamIsCapturing(s, &cs);
        cudaError_t after = cudaGetLastError();
        cudaMemsetAsync(m16, 0, 16, s);
        cudaGraph_t g = NULL;
        cudaError_t end = cudaStreamEndCapture(s, &g);
        printf("during capture: %s -> %s (last error then %s); end capture -> %s\n", what[q],
               cudaGetErrorName(e), cudaGetErrorName(after), cudaGetErrorName(end));
        if (g) cudaGraphDestroy(g);
        cudaGetLastError();
    }
    printf("(sink %d)\n", sink);
    return 0;
}
