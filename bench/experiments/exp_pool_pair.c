/*
 * Where the time of a stream-ordered buffer create + destroy goes (us per pair, median of 11
 * interleaved rounds of 2000 pairs, each round ended by a stream synchronize): the raw runtime
 * pair that bench_buffer compares against, the same pair through the driver, on the library's
 * own kind of pool, and the library's pair with what it adds step by step, then the library
 * itself. Build (against a build of the library) and run on the GPU machine:
 *   gcc -O2 -Iinclude -I/usr/local/cuda/include bench/experiments/exp_pool_pair.c \
 *       -Lbuild -lcudamodel -L/usr/local/cuda/lib64 -lcudart -lcuda -o exp_pool_pair
 */
#define _POSIX_C_SOURCE 200809L
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cudamodel/buffer.h>
#include <cudamodel/interop.h>

#define PAIRS 2000
#define ROUNDS 11
#define BYTES ((size_t)1 << 20)

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { RAW, RAW_POOL, DRV, DRV_POOL, CHECKS, CTX, OBJ, OURS, NV };
static const char *names[NV] = {
    "cudaMallocAsync+cudaFreeAsync (default pool)",
    "cudaMallocFromPoolAsync+cudaFreeAsync (own pool)",
    "cuMemAllocAsync+cuMemFreeAsync (default pool)",
    "cuMemAllocFromPoolAsync+cuMemFreeAsync (own pool)",
    " + cuStreamIsCapturing + cuStreamGetDevice",
    " + 2 x cuCtxGetCurrent",
    " + malloc/free of a 200-byte object",
    "cm_buffer_create_on_stream (wrapped) + destroy",
};

int main(void) {
    cudaStream_t s;
    if (cudaSetDevice(0) != cudaSuccess || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
        return 1;
    cudaMemPool_t def;
    cudaDeviceGetDefaultMemPool(&def, 0);
    unsigned long long keep = ~0ull;
    cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &keep);
    struct cudaMemPoolProps pp = {0};
    pp.allocType = cudaMemAllocationTypePinned;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = 0;
    cudaMemPool_t own;
    if (cudaMemPoolCreate(&own, &pp) != cudaSuccess) return 1;
    cudaMemPoolSetAttribute(own, cudaMemPoolAttrReleaseThreshold, &keep);
    cm_device_t *dev;
    if (cm_device_open(0, &dev) != CM_OK) return 1;
    cm_stream_t *ws = NULL; /* s adopted once as a library stream, for the library's pair */
    if (cm_stream_wrap(dev, s, &ws) != CM_OK) return 1;
    CUstream cs = (CUstream)s;
    double r[NV][ROUNDS];
    volatile int sink = 0;
    for (int round = -2; round < ROUNDS; ++round) {
        for (int v = 0; v < NV; ++v) {
            double t0 = now_us();
            for (int i = 0; i < PAIRS; ++i) {
                void *p = NULL;
                CUdeviceptr dp = 0;
                switch (v) {
                case RAW:
                    cudaMallocAsync(&p, BYTES, s);
                    cudaFreeAsync(p, s);
                    break;
                case RAW_POOL:
                    cudaMallocFromPoolAsync(&p, BYTES, own, s);
                    cudaFreeAsync(p, s);
                    break;
                case DRV:
                    cuMemAllocAsync(&dp, BYTES, cs);
                    cuMemFreeAsync(dp, cs);
                    break;
                case DRV_POOL:
                    cuMemAllocFromPoolAsync(&dp, BYTES, (CUmemoryPool)own, cs);
                    cuMemFreeAsync(dp, cs);
                    break;
                case CHECKS:
                case CTX:
                case OBJ: {
                    CUstreamCaptureStatus st;
                    CUdevice d;
                    CUcontext c;
                    void *o = NULL;
                    cuStreamIsCapturing(cs, &st);
                    cuStreamGetDevice(cs, &d);
                    sink += st + d;
                    if (v >= CTX) cuCtxGetCurrent(&c), sink += c != NULL;
                    if (v >= OBJ) o = malloc(200), sink += o != NULL;
                    cudaMallocFromPoolAsync(&p, BYTES, own, s);
                    if (v >= CTX) cuCtxGetCurrent(&c), sink += c != NULL;
                    cudaFreeAsync(p, s);
                    free(o);
                    break;
                }
                case OURS: {
                    cm_buffer_t *b = NULL;
                    if (cm_buffer_create_on_stream(ws, dev, BYTES, &b) != CM_OK ||
                        cm_buffer_destroy(b) != CM_OK) { /* freed on ws, its stream */
                        fprintf(stderr, "library pair failed\n");
                        return 1;
                    }
                    break;
                }
                }
            }
            cudaStreamSynchronize(s);
            double us = (now_us() - t0) / PAIRS;
            if (round >= 0) r[v][round] = us;
        }
    }
    for (int v = 0; v < NV; ++v) {
        qsort(r[v], ROUNDS, sizeof r[v][0], cmp);
        printf("%-52s %7.3f us  (min %.3f, max %.3f)\n", names[v], r[v][ROUNDS / 2], r[v][0],
               r[v][ROUNDS - 1]);
    }
    /* what each query the stream-device check could ask costs, one call at a time */
#define ONE(label, stmt)                                                                     \
    do {                                                                                     \
        double q[ROUNDS];                                                                    \
        for (int k = 0; k < ROUNDS; ++k) {                                                   \
            double t0 = now_us();                                                            \
            for (int i = 0; i < 100000; ++i) { stmt; }                                       \
            q[k] = (now_us() - t0) * 1e3 / 100000;                                           \
        }                                                                                    \
        qsort(q, ROUNDS, sizeof q[0], cmp);                                                  \
        printf("%-52s %7.1f ns\n", label, q[ROUNDS / 2]);                                    \
    } while (0)
    {
        CUstreamCaptureStatus st;
        CUdevice d;
        CUcontext c;
        unsigned long long id;
        unsigned fl;
        ONE("cuStreamIsCapturing", { cuStreamIsCapturing(cs, &st); sink += st; });
        ONE("cuStreamGetDevice", { cuStreamGetDevice(cs, &d); sink += d; });
        ONE("cuStreamGetCtx", { cuStreamGetCtx(cs, &c); sink += c != NULL; });
        ONE("cuStreamGetId", { cuStreamGetId(cs, &id); sink += (int)id; });
        ONE("cuStreamGetFlags", { cuStreamGetFlags(cs, &fl); sink += (int)fl; });
        ONE("cuCtxGetCurrent", { cuCtxGetCurrent(&c); sink += c != NULL; });
        ONE("cudaStreamGetDevice", { int dd; cudaStreamGetDevice(s, &dd); sink += dd; });
    }
    /* during a capture: does the query fail, and does the capture survive it? */
    {
        void *m16 = NULL;
        cudaMalloc(&m16, 16);
        const char *what[4] = {"cuStreamGetCtx", "cuStreamGetFlags", "cuStreamGetDevice",
                               "cuMemAllocFromPoolAsync+cuMemFreeAsync"};
        for (int q = 0; q < 4; ++q) {
            cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
            CUresult e;
            CUcontext c;
            unsigned fl;
            CUdevice d;
            CUdeviceptr dp = 0;
            if (q == 0) e = cuStreamGetCtx(cs, &c);
            else if (q == 1) e = cuStreamGetFlags(cs, &fl);
            else if (q == 2) e = cuStreamGetDevice(cs, &d);
            else {
                e = cuMemAllocFromPoolAsync(&dp, 1 << 20, (CUmemoryPool)own, cs);
                if (e == CUDA_SUCCESS) e = cuMemFreeAsync(dp, cs);
            }
            cudaMemsetAsync(m16, 0, 16, s);
            cudaGraph_t g = NULL;
            cudaError_t end = cudaStreamEndCapture(s, &g);
            printf("during capture: %s -> %d; end capture -> %s\n", what[q], (int)e,
                   cudaGetErrorName(end));
            if (g) cudaGraphDestroy(g);
            cudaGetLastError();
        }
        /* a thread with no current context: what the driver's pair says */
        CUcontext none = NULL, popped = NULL;
        cuCtxGetCurrent(&none);
        while (none != NULL) {
            cuCtxPopCurrent(&popped);
            cuCtxGetCurrent(&none);
        }
        CUdeviceptr dp = 0;
        CUresult ea = cuMemAllocFromPoolAsync(&dp, 1 << 20, (CUmemoryPool)own, cs);
        CUresult ef = ea == CUDA_SUCCESS ? cuMemFreeAsync(dp, cs) : CUDA_SUCCESS;
        CUcontext after = NULL;
        cuCtxGetCurrent(&after);
        printf("no current context: cuMemAllocFromPoolAsync -> %d, cuMemFreeAsync -> %d, "
               "context after: %s\n", (int)ea, (int)ef, after ? "some" : "none");
        CUstreamCaptureStatus st;
        CUdevice d;
        printf("no current context: cuStreamIsCapturing -> %d, cuStreamGetDevice -> %d\n",
               (int)cuStreamIsCapturing(cs, &st), (int)cuStreamGetDevice(cs, &d));
        cudaSetDevice(0);
    }
    printf("(sink %d)\n", sink);
    cm_stream_release(ws); /* the wrapper goes before the device */
    cm_device_close(dev);
    return 0;
}
