/* Launch configurations (launch.h). */
#include <string.h>

#include <cudamodel/launch.h>

#include "internal.h"

cm_status_t cm_launch_config_1d(uint64_t n, unsigned int threads_per_block, cm_launch_config_t *cfg) {
    CM__REQUIRE(cfg != NULL, "pass the address of a cm_launch_config_t", "cfg is NULL");
    if (threads_per_block == 0) threads_per_block = 256;
    CM__REQUIRE(threads_per_block <= 1024,
                "use at most 1024 threads per block (the limit of every GPU since Fermi); 128-512 "
                "is usually best",
                "block has %u threads; CUDA allows at most 1024 per block", threads_per_block);
    /* ceil(n / tpb) without overflow for n near UINT64_MAX */
    uint64_t blocks = n / threads_per_block + (n % threads_per_block != 0);
    CM__REQUIRE(blocks <= CM_MAX_GRID_X,
                "use a grid-stride loop with a fixed grid (e.g. 4 x SMs blocks), or more threads "
                "per block",
                "%llu elements at %u threads per block need %llu blocks; grid.x allows at most %u",
                (unsigned long long)n, threads_per_block, (unsigned long long)blocks,
                CM_MAX_GRID_X);
    cm_launch_config_t c;
    memset(&c, 0, sizeof c);
    c.grid.x = (unsigned int)blocks;
    c.grid.y = c.grid.z = 1;
    c.block.x = threads_per_block;
    c.block.y = c.block.z = 1;
    *cfg = c;
    return CM_OK;
}

static uint64_t cm__extent(unsigned int v) {
    return v == 0 ? 1u : v;
}

/* a * b, saturating at UINT64_MAX */
static uint64_t cm__mul_sat(uint64_t a, uint64_t b) {
    return (b != 0 && a > UINT64_MAX / b) ? UINT64_MAX : a * b;
}

uint64_t cm_launch_config_threads(const cm_launch_config_t *cfg) {
    if (cfg == NULL || cfg->grid.x == 0) return 0;
    uint64_t blocks = cm__mul_sat((uint64_t)cfg->grid.x * cm__extent(cfg->grid.y), cm__extent(cfg->grid.z));
    uint64_t threads = cm__extent(cfg->block.x) * cm__extent(cfg->block.y) * cm__extent(cfg->block.z);
    return cm__mul_sat(blocks, threads);
}
