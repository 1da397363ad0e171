/*
 * grid_indexing: how a thread finds its element in a 2-D grid of 2-D blocks.
 *
 * The launch is grid (2, 3) x block (4, 5): 6 blocks of 20 threads, 120 threads in all. Each
 * thread computes its global index with
 *
 *     block  = blockIdx.y * gridDim.x + blockIdx.x          blocks numbered row by row
 *     thread = threadIdx.y * blockDim.x + threadIdx.x       threads numbered row by row
 *     g      = block * (blockDim.x * blockDim.y) + thread   all of block 0, then block 1, ...
 *
 * and writes who it is (its blockIdx and threadIdx) at out[g]. The host checks that each of
 * the 120 slots was written exactly by the thread the formula names (the buffer is poisoned
 * first), then prints the picture: the grid as the hardware sees it, each block a 4 x 5 tile,
 * each cell the global index of the thread at that place.
 * Plain C: the kernel is in kernels/example_kernels.cu. Exits 0 when every slot is right,
 * 1 otherwise (without a GPU: the library's report of why).
 */
#include <stdio.h>
#include <string.h>

#include <cudamodel/interop.h>
#include <cudamodel/launch.h>

/* from kernels/example_kernels.cu: out[g] = blockIdx.x | blockIdx.y << 8 | threadIdx.x << 16 | threadIdx.y << 24 */
const void *example_grid_index_kernel(void);

#define GX 2u
#define GY 3u
#define BX 4u
#define BY 5u
#define N (GX * GY * BX * BY)

static unsigned global_index(unsigned bx, unsigned by, unsigned tx, unsigned ty) {
    unsigned block = by * GX + bx;
    unsigned thread = ty * BX + tx;
    return block * (BX * BY) + thread;
}

static cm_status_t run(void) {
    cm_status_t status = CM_OK;
    unsigned *d_out = NULL;
    unsigned h_out[N];

    int count = 0;
    CM_TRY(cm_device_count(&count));
    cm_device_limits_t dev;
    CM_TRY(cm_device_get_limits(0, &dev));
    printf("device 0: %s (sm_%d%d)\n", dev.name, dev.cc_major, dev.cc_minor);

    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    cfg.grid.x = GX;
    cfg.grid.y = GY;
    cfg.block.x = BX;
    cfg.block.y = BY;
    printf("launch: grid (%u, %u) x block (%u, %u) = %llu threads\n", cfg.grid.x, cfg.grid.y,
           cfg.block.x, cfg.block.y, (unsigned long long)cm_launch_config_threads(&cfg));

    CM_CUDA_TRY(cudaMalloc((void **)&d_out, sizeof h_out));
    CM_CUDA_TRY_GOTO(cudaMemset(d_out, 0xff, sizeof h_out), status, done); /* poison */
    void *args[] = {&d_out};
    /* a NULL stream: synchronous, the kernel has run (and a fault of it is reported) on return */
    CM_TRY_GOTO(CM_LAUNCH(NULL, example_grid_index_kernel(), &cfg, args), status, done);
    CM_CUDA_TRY_GOTO(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost), status, done);

    /* every slot written by the thread the formula names */
    {
        unsigned wrong = 0;
        for (unsigned by = 0; by < GY; ++by)
            for (unsigned bx = 0; bx < GX; ++bx)
                for (unsigned ty = 0; ty < BY; ++ty)
                    for (unsigned tx = 0; tx < BX; ++tx) {
                        unsigned g = global_index(bx, by, tx, ty);
                        unsigned want = bx | by << 8 | tx << 16 | ty << 24;
                        if (h_out[g] != want) {
                            if (wrong++ < 5)
                                fprintf(stderr, "out[%u] = 0x%08x: expected block (%u,%u) thread "
                                        "(%u,%u)\n", g, h_out[g], bx, by, tx, ty);
                        }
                    }
        printf("verify: %u of %u slots wrong\n\n", wrong, N);
        if (wrong != 0) {
            status = CM_ERROR_CUDA;
            goto done;
        }
    }

    /* the picture: rows of the grid top to bottom (blockIdx.y, then threadIdx.y), columns left
     * to right (blockIdx.x, then threadIdx.x); each cell is the thread's global index g */
    printf("global index g of each thread, laid out as the grid (| and - separate blocks):\n\n");
    printf("            ");
    for (unsigned bx = 0; bx < GX; ++bx) printf("   blockIdx.x=%u   ", bx);
    printf("\n");
    for (unsigned by = 0; by < GY; ++by) {
        for (unsigned ty = 0; ty < BY; ++ty) {
            if (ty == BY / 2) printf("blockIdx.y=%u", by);
            else printf("            ");
            for (unsigned bx = 0; bx < GX; ++bx) {
                printf(" |");
                for (unsigned tx = 0; tx < BX; ++tx) {
                    unsigned g = global_index(bx, by, tx, ty);
                    /* the value read back from the GPU, decoded */
                    unsigned v = h_out[g];
                    unsigned dbx = v & 0xffu, dby = v >> 8 & 0xffu, dtx = v >> 16 & 0xffu,
                             dty = v >> 24;
                    printf(" %3u", global_index(dbx, dby, dtx, dty));
                }
            }
            printf(" |\n");
        }
        if (by + 1 < GY) {
            printf("            ");
            for (unsigned bx = 0; bx < GX; ++bx) printf(" -----------------");
            printf("\n");
        }
    }
    printf("\nthread (threadIdx.x, threadIdx.y) of block (blockIdx.x, blockIdx.y) -> g = "
           "(blockIdx.y * %u + blockIdx.x) * %u + threadIdx.y * %u + threadIdx.x\n",
           GX, BX * BY, BX);
    printf("grid_indexing: PASSED\n");

done:
    cudaFree(d_out);
    return status;
}

int main(void) {
    cm_status_t s = run();
    if (s != CM_OK) {
        if (cm_last_error()->status == s) {
            char report[2048];
            cm_error_format(NULL, report, sizeof report);
            fprintf(stderr, "grid_indexing failed:\n%s\n", report);
        } else {
            fprintf(stderr, "grid_indexing: FAILED (see above)\n");
        }
        return 1;
    }
    return 0;
}
