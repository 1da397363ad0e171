/*
 * occupancy_planner: choose a block size for a kernel on GPUs you do not have.
 *
 * Occupancy (resident warps per SM over the SM's warp slots) depends on the block size, the
 * kernel's registers per thread and its shared memory, and the architecture's limits. The
 * library carries the limits of each architecture (cm_target_limits: "RTX 4060 Ti" is sm_89,
 * "H200" is sm_90) and computes occupancy on the host with the toolkit's own calculator, so
 * this runs anywhere, with or without a GPU. For a kernel described by its resources
 * (default: 40 registers per thread, 8 KiB of static shared memory) it prints, per target,
 * the occupancy and the binding limit for block sizes 64 to 1024, then the block size the
 * occupancy calculator recommends. With a GPU present it also plans for device 0.
 *
 * Usage: occupancy_planner [--regs N] [--smem BYTES] [--dyn BYTES] [target ...]
 *        targets default to "RTX 4060 Ti" "H200"; any name cm_target_limits knows works
 *        ("sm_86", "A100", "Jetson Orin", "RTX 50", ...).
 * Exits 0, or 2 for a bad argument or an unknown target (with the library's report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/launch.h>

static int plan(const cm_device_limits_t *l, const cm_kernel_attrs_t *k, size_t dyn) {
    printf("%s: %d SMs, %d threads/SM, %d blocks/SM, %zu KiB shared memory/SM, %d registers/SM\n",
           l->name, l->multiprocessor_count, l->max_threads_per_multiprocessor,
           l->max_blocks_per_multiprocessor, l->shared_mem_per_multiprocessor / 1024,
           l->regs_per_multiprocessor);
    printf("  %6s  %10s  %9s  %9s  %s\n", "block", "blocks/SM", "warps/SM", "occupancy",
           "limited by");
    for (unsigned bs = 64; bs <= 1024; bs += 64) {
        cm_occupancy_t o;
        if (cm_occupancy_compute(l, k, bs, dyn, &o) != CM_OK) {
            char report[1024];
            cm_error_format(NULL, report, sizeof report);
            printf("  %6u  cannot be computed:\n%s\n", bs, report);
            continue;
        }
        printf("  %6u  %10d  %4d/%-4d  %8.1f%%  %s\n", bs, o.active_blocks_per_sm,
               o.active_warps_per_sm, o.max_warps_per_sm, 100.0 * o.occupancy,
               o.active_blocks_per_sm == 0 ? "does not fit" : cm_occupancy_limiter_name(o.limiters));
    }
    unsigned best = 0;
    int min_grid = 0;
    cm_occupancy_t o;
    if (cm_occupancy_best_block_size(l, k, dyn, &best, &min_grid) != CM_OK ||
        cm_occupancy_compute(l, k, best, dyn, &o) != CM_OK) {
        char report[1024];
        cm_error_format(NULL, report, sizeof report);
        printf("  no block size can run this kernel here:\n%s\n\n", report);
        return 0;
    }
    printf("  best block size: %u threads (%.1f%% occupancy, %d blocks/SM); a grid of %d blocks "
           "fills all %d SMs once\n\n",
           best, 100.0 * o.occupancy, o.active_blocks_per_sm, min_grid, l->multiprocessor_count);
    return 0;
}

static int parse_size(const char *s, size_t *out) {
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 0);
    if (end == s || *end != '\0') return -1;
    *out = (size_t)v;
    return 0;
}

int main(int argc, char **argv) {
    cm_kernel_attrs_t k;
    memset(&k, 0, sizeof k);
    snprintf(k.name, sizeof k.name, "my_kernel");
    k.num_regs = 40;
    k.static_shared_bytes = 8 * 1024;
    k.max_threads_per_block = 1024;
    size_t dyn = 0;
    const char *targets[32];
    int n_targets = 0;

    for (int i = 1; i < argc; ++i) {
        size_t v = 0;
        if ((strcmp(argv[i], "--regs") == 0 || strcmp(argv[i], "--smem") == 0 ||
             strcmp(argv[i], "--dyn") == 0) &&
            i + 1 < argc && parse_size(argv[i + 1], &v) == 0) {
            if (argv[i][2] == 'r') k.num_regs = (int)v;
            else if (argv[i][2] == 's') k.static_shared_bytes = v;
            else dyn = v;
            ++i;
        } else if (argv[i][0] == '-' || n_targets == 32) {
            fprintf(stderr, "usage: %s [--regs N] [--smem BYTES] [--dyn BYTES] [target ...]\n",
                    argv[0]);
            return 2;
        } else {
            targets[n_targets++] = argv[i];
        }
    }
    if (n_targets == 0) {
        targets[n_targets++] = "RTX 4060 Ti";
        targets[n_targets++] = "H200";
    }
    /* what the kernel may use by default: 48 KiB of shared memory in all (more needs an opt-in
     * with cudaFuncSetAttribute); a real kernel's figures come from cm_kernel_attrs_get() */
    k.max_dynamic_shared_bytes = k.static_shared_bytes < 48 * 1024 ? 48 * 1024 - k.static_shared_bytes : 0;
    if (dyn > k.max_dynamic_shared_bytes) k.max_dynamic_shared_bytes = dyn;
    printf("kernel %s: %d registers per thread, %zu bytes of static shared memory, %zu bytes of "
           "dynamic shared memory per block\n\n",
           k.name, k.num_regs, k.static_shared_bytes, dyn);

    for (int i = 0; i < n_targets; ++i) {
        cm_device_limits_t l;
        if (cm_target_limits(targets[i], &l) != CM_OK) {
            char report[2048];
            cm_error_format(NULL, report, sizeof report);
            fprintf(stderr, "%s\n", report);
            return 2;
        }
        printf("target \"%s\" -> ", targets[i]);
        plan(&l, &k, dyn);
    }

    /* the GPU in this machine, if there is one */
    int count = 0;
    cm_device_limits_t dev;
    if (cm_device_count(&count) == CM_OK && count > 0 && cm_device_get_limits(0, &dev) == CM_OK) {
        printf("device 0 of this machine -> ");
        plan(&dev, &k, dyn);
    } else {
        printf("no GPU in this machine (%s): planned for the built-in targets only\n",
               cm_status_name(cm_last_error()->status));
    }
    return 0;
}
