/*
 * launch.h against the real runtime.
 *
 * The proof: for several hundred random launch configurations (fixed seed, printed; override
 * with CM_TEST_SEED) across five kernels that differ in registers, launch bounds and static and
 * dynamic shared memory, our verdict (cm_launch_config_validate with cm_device_get_limits(0)
 * and cm_kernel_attrs_get) must equal what CUDA does with the same configuration through a raw
 * cudaLaunchKernel / cudaLaunchKernelExC: success <=> we accept, for 100% of them.
 * Then occupancy against cudaOccupancyMaxActiveBlocksPerMultiprocessor, and cm_launch itself:
 * real results (with a NULL stream, synchronous, and on the test's own CUDA stream wrapped as a
 * library stream), bad configurations that must not launch, the automatic configuration against
 * cudaOccupancyMaxPotentialBlockSize, when a launch returns (on a stream: at once; with a NULL
 * stream: after the kernel; in synchronous debug mode: after the kernel), the attribute cache
 * after cudaFuncSetAttribute, and the kernel-image check.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/launch.h>
#include <cudamodel/version.h>

/* from test_gpu_launch_kernels.cu */
int tk_proof_count(void);
unsigned tk_mark(void);
const void *tk_proof_kernel(int which);
const char *tk_proof_kernel_label(int which);
const void *tk_fill_kernel_ptr(void);
const void *tk_dyn_fill_kernel_ptr(void);
const void *tk_spin_kernel_ptr(void);
int tk_max_potential_block_size(int which, size_t dynamic_smem, int *min_grid, int *block);

enum { K_LIGHT = 0, K_BOUNDED = 1, K_HEAVY = 2, K_STATIC = 3, K_DYNAMIC = 4, K_MAX = 8 };

#define KIB ((size_t)1024)
#define PROOF_CONFIGS 640
#define GRID_BLOCKS_CAP (1u << 20) /* accepted launches run at most this many blocks */

/* ------------------------------------------------------------------ helpers */

#define CUDA_OK(call)                                                                        \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) fail_msg("%s: %s (%s)", #call, cudaGetErrorName(e_),          \
                                        cudaGetErrorString(e_));                             \
    } while (0)

static uint64_t rng_state;

static uint64_t rnd(void) { /* splitmix64: the same sequence on every platform */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned rnd_below(uint64_t n) { /* 0 .. n-1 */
    return (unsigned)(rnd() % n);
}

static uint64_t test_seed(void) {
    const char *s = getenv("CM_TEST_SEED");
    if (s != NULL && *s != '\0') return strtoull(s, NULL, 0);
    return 0x5eedc0de2026ull;
}

static cm_device_limits_t device_limits(void) {
    cm_device_limits_t l;
    CM_ASSERT_OK(cm_device_get_limits(0, &l));
    return l;
}

static cm_kernel_attrs_t attrs_of(const void *kernel) {
    cm_kernel_attrs_t a;
    CM_ASSERT_OK(cm_kernel_attrs_get(kernel, 0, &a));
    return a;
}

/* Put a kernel's dynamic shared-memory limit back to CUDA's default (48 KiB - static). */
static void reset_dynamic_limit(const void *kernel, const cm_device_limits_t *l) {
    struct cudaFuncAttributes fa;
    CUDA_OK(cudaFuncGetAttributes(&fa, kernel));
    CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(l->shared_mem_per_block - fa.sharedSizeBytes)));
}

static void reset_all_dynamic_limits(const cm_device_limits_t *l) {
    for (int k = 0; k < tk_proof_count(); ++k) reset_dynamic_limit(tk_proof_kernel(k), l);
    reset_dynamic_limit(tk_fill_kernel_ptr(), l);
    reset_dynamic_limit(tk_dyn_fill_kernel_ptr(), l);
}

static void setup_device(void) {
    CUDA_OK(cudaSetDevice(0));
    cm_sync_mode_set(false);
    cm_last_error_clear();
}

static void print_attrs(const char *label, const cm_kernel_attrs_t *a) {
    print_message("  %-18s %3d registers, %6zu B static smem, max dynamic %6zu B, "
                  "maxThreadsPerBlock %4d, local %zu B, sm_%d (PTX %d)\n",
                  label, a->num_regs, a->static_shared_bytes, a->max_dynamic_shared_bytes,
                  a->max_threads_per_block, a->local_bytes, a->binary_version, a->ptx_version);
}

/* ------------------------------------------------------------------ the kernels themselves */

static void test_kernel_attributes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    reset_all_dynamic_limits(&l);
    print_message("device 0: %s (sm_%d%d), %d SMs, smem/block %zu (opt-in %zu), reserved %zu\n",
                  l.name, l.cc_major, l.cc_minor, l.multiprocessor_count, l.shared_mem_per_block,
                  l.shared_mem_per_block_optin, l.reserved_shared_mem_per_block);
    for (int k = 0; k < tk_proof_count(); ++k) {
        const void *fn = tk_proof_kernel(k);
        cm_kernel_attrs_t a = attrs_of(fn);
        struct cudaFuncAttributes fa;
        CUDA_OK(cudaFuncGetAttributes(&fa, fn));
        print_attrs(tk_proof_kernel_label(k), &a);
        /* cm_kernel_attrs_get says what cudaFuncGetAttributes says */
        assert_int_equal(a.num_regs, fa.numRegs);
        assert_int_equal(a.static_shared_bytes, fa.sharedSizeBytes);
        assert_int_equal(a.max_dynamic_shared_bytes, (size_t)fa.maxDynamicSharedSizeBytes);
        assert_int_equal(a.max_threads_per_block, fa.maxThreadsPerBlock);
        assert_int_equal(a.local_bytes, fa.localSizeBytes);
        assert_int_equal(a.binary_version, fa.binaryVersion);
        assert_int_equal(a.ptx_version, fa.ptxVersion);
        assert_true(a.name[0] != '\0');
        assert_int_equal(a.max_dynamic_shared_bytes, l.shared_mem_per_block - a.static_shared_bytes);
    }
    /* the kernels really differ the way the proof needs */
    cm_kernel_attrs_t heavy = attrs_of(tk_proof_kernel(K_HEAVY));
    print_message("heavy-registers kernel: %d registers per thread -> maxThreadsPerBlock %d "
                  "(cudaFuncGetAttributes)\n",
                  heavy.num_regs, heavy.max_threads_per_block);
    assert_true(heavy.num_regs > 64);
    assert_true(heavy.max_threads_per_block < 1024);
    assert_int_equal(attrs_of(tk_proof_kernel(K_BOUNDED)).max_threads_per_block, 256);
    assert_true(attrs_of(tk_proof_kernel(K_STATIC)).static_shared_bytes >= 40 * KIB);
    assert_int_equal(attrs_of(tk_proof_kernel(K_LIGHT)).max_threads_per_block, 1024);
}

/* ------------------------------------------------------------------ the random proof */

typedef struct {
    int kernel;
    cm_launch_config_t cfg;
    int dyn_limit_set; /* -1: left as it was; else the value given to cudaFuncSetAttribute */
} proof_case_t;

static unsigned gen_axis_edge(int limit) { /* limit - 1, limit or limit + 1 */
    return (unsigned)(limit - 1) + rnd_below(3);
}

static void gen_block(cm_dim3_t *b, const cm_kernel_attrs_t *a, const cm_device_limits_t *l) {
    unsigned r = rnd_below(100);
    b->x = b->y = b->z = 1;
    if (r < 50) { /* fits the device's 1024 threads, or half the time the kernel's own maximum */
        unsigned cap = (unsigned)l->max_threads_per_block;
        if (rnd_below(2) == 0 && a->max_threads_per_block > 0) cap = (unsigned)a->max_threads_per_block;
        b->x = 1 + rnd_below(cap);
        b->y = 1 + rnd_below(cap / b->x);
        unsigned zmax = cap / (b->x * b->y);
        if (zmax > 64) zmax = 64;
        b->z = 1 + rnd_below(zmax);
    } else if (r < 64) { /* around the kernel's own maximum (launch bounds, registers) or 1024 */
        int max = rnd_below(3) == 0 ? l->max_threads_per_block : a->max_threads_per_block;
        int t = max + (int)rnd_below(65) - 32;
        if (t < 1) t = 1;
        if (rnd_below(2) == 0 && t % 2 == 0) {
            b->x = (unsigned)t / 2;
            b->y = 2;
        } else {
            b->x = (unsigned)t;
        }
    } else if (r < 73) { /* one axis at its limit, one under or one over */
        unsigned axis = rnd_below(3);
        if (axis == 0) b->x = gen_axis_edge(l->max_block_dim[0]);
        if (axis == 1) b->y = gen_axis_edge(l->max_block_dim[1]);
        if (axis == 2) b->z = gen_axis_edge(l->max_block_dim[2]);
    } else if (r < 75) { /* block.x of 0 */
        b->x = 0;
        b->y = 1 + rnd_below(4);
    } else { /* anything in range of the issue: x to 2048, y to 1100, z to 70 */
        b->x = 1 + rnd_below(2048);
        b->y = 1 + rnd_below(1100);
        b->z = 1 + rnd_below(70);
        if (rnd_below(2) == 0) b->y = 1 + rnd_below(4);
        if (rnd_below(2) == 0) b->z = 1 + rnd_below(3);
    }
}

static void gen_grid(cm_dim3_t *g, const cm_device_limits_t *l) {
    unsigned r = rnd_below(100);
    g->x = 1 + rnd_below(64);
    g->y = 1 + rnd_below(4);
    g->z = 1 + rnd_below(4);
    if (r < 65) {
        /* small */
    } else if (r < 75) { /* long in x */
        g->x = 1 + rnd_below(GRID_BLOCKS_CAP);
        g->y = g->z = 1;
    } else if (r < 87) { /* y or z around 65535, some beyond */
        static const unsigned v[] = {65534u, 65535u, 65536u, 65537u, 70000u, 100000u, 1u << 20};
        unsigned val = v[rnd_below(sizeof v / sizeof v[0])];
        g->x = 1 + rnd_below(2);
        if (rnd_below(2) == 0) {
            g->y = val;
            g->z = 1;
        } else {
            g->z = val;
            g->y = 1;
        }
    } else if (r < 93) { /* x beyond 2^31 - 1 (a valid x that large would run too long) */
        static const unsigned v[] = {2147483648u, 2147483649u, 4294967295u};
        g->x = v[rnd_below(3)];
    } else { /* y and z both large */
        g->x = 1;
        g->y = 65000u + rnd_below(1000);
        g->z = 1 + rnd_below(2);
        if (rnd_below(3) == 0) g->z = 65535u + rnd_below(2);
    }
    /* keep accepted launches cheap: a grid within the limits runs at most GRID_BLOCKS_CAP blocks */
    for (;;) {
        int within = g->x <= (unsigned)l->max_grid_dim[0] && g->y <= (unsigned)l->max_grid_dim[1] &&
                     g->z <= (unsigned)l->max_grid_dim[2];
        uint64_t blocks = (uint64_t)g->x * g->y * g->z;
        if (!within || blocks <= GRID_BLOCKS_CAP) break;
        if (g->z >= g->y && g->z > 1) g->z /= 2;
        else if (g->y > 1) g->y /= 2;
        else g->x /= 2;
    }
}

static size_t clamp_sub(size_t v, size_t center_minus) {
    return v > center_minus ? v - center_minus : 0;
}

static size_t gen_dynamic(const cm_kernel_attrs_t *a, const cm_device_limits_t *l) {
    unsigned r = rnd_below(100);
    if (r < 30) return 0;
    if (r < 55) return rnd_below(8 * KIB + 1);
    if (r < 72) return clamp_sub(a->max_dynamic_shared_bytes + rnd_below(129), 64);
    if (r < 82) return clamp_sub(l->shared_mem_per_block_optin - a->static_shared_bytes + rnd_below(129), 64);
    return rnd_below(240 * KIB + 1);
}

/* Sometimes change the kernel's dynamic shared-memory limit first (mostly the dynamic kernel). */
static int gen_dynamic_limit(int kernel, const cm_kernel_attrs_t *a, const cm_device_limits_t *l) {
    unsigned chance = kernel == K_DYNAMIC ? 45 : 12;
    if (rnd_below(100) >= chance) return -1;
    size_t max = l->shared_mem_per_block_optin - a->static_shared_bytes;
    switch (rnd_below(4)) {
    case 0: return (int)(l->shared_mem_per_block - a->static_shared_bytes); /* the default */
    case 1: return (int)max;
    case 2: return (int)(rnd_below(max / 1024 + 1) * 1024);
    default: return (int)rnd_below(max + 1);
    }
}

/* What the test itself sees as broken, to show which rules the proof covered. */
enum { R_BLOCK = 1, R_GRID = 2, R_KERNEL_THREADS = 4, R_SMEM = 8 };

static unsigned rules_broken(const cm_launch_config_t *c, const cm_kernel_attrs_t *a,
                             const cm_device_limits_t *l) {
    unsigned r = 0;
    uint64_t threads = (uint64_t)c->block.x * c->block.y * c->block.z;
    if (c->block.x == 0 || threads > (uint64_t)l->max_threads_per_block ||
        c->block.x > (unsigned)l->max_block_dim[0] || c->block.y > (unsigned)l->max_block_dim[1] ||
        c->block.z > (unsigned)l->max_block_dim[2])
        r |= R_BLOCK;
    if (c->grid.x > (unsigned)l->max_grid_dim[0] || c->grid.y > (unsigned)l->max_grid_dim[1] ||
        c->grid.z > (unsigned)l->max_grid_dim[2])
        r |= R_GRID;
    if (threads > 0 && threads <= (uint64_t)l->max_threads_per_block &&
        threads > (uint64_t)a->max_threads_per_block)
        r |= R_KERNEL_THREADS;
    if (a->static_shared_bytes + c->dynamic_shared_bytes > l->shared_mem_per_block_optin ||
        c->dynamic_shared_bytes > a->max_dynamic_shared_bytes)
        r |= R_SMEM;
    return r;
}

typedef struct {
    int err;
    int count;
} err_count_t;

static void count_error(err_count_t *t, int n, int err) {
    for (int i = 0; i < n; ++i) {
        if (t[i].count == 0 || t[i].err == err) {
            t[i].err = err;
            ++t[i].count;
            return;
        }
    }
}

static void test_random_configs_agree_with_cuda(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cm_device_limits_t l = device_limits();
    reset_all_dynamic_limits(&l);
    const uint64_t seed = test_seed();
    rng_state = seed;
    print_message("launch proof: seed 0x%" PRIx64 " (set CM_TEST_SEED to repeat another), %d "
                  "configurations on %s\n",
                  seed, PROOF_CONFIGS, l.name);

    unsigned *d_out = NULL;
    CUDA_OK(cudaMalloc((void **)&d_out, 2 * sizeof(unsigned)));
    const unsigned mark = tk_mark();

    int agree = 0, accepted = 0, rejected = 0, shown = 0;
    int per_kernel_accept[K_MAX] = {0}, per_kernel_total[K_MAX] = {0};
    int single_rule[16] = {0}; /* rejected configurations that broke exactly one rule */
    err_count_t cuda_errors[16];
    memset(cuda_errors, 0, sizeof cuda_errors);
    int ran_checked = 0, limit_changes = 0, limit_refused = 0;

    for (int i = 0; i < PROOF_CONFIGS; ++i) {
        proof_case_t pc;
        memset(&pc, 0, sizeof pc);
        pc.kernel = (int)rnd_below((uint64_t)tk_proof_count());
        const void *fn = tk_proof_kernel(pc.kernel);
        cm_kernel_attrs_t a = attrs_of(fn);
        pc.dyn_limit_set = gen_dynamic_limit(pc.kernel, &a, &l);
        if (pc.dyn_limit_set >= 0) {
            cudaError_t se = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  pc.dyn_limit_set);
            if (se != cudaSuccess) { /* within 0 .. opt-in - static: should not happen */
                print_message("note: cudaFuncSetAttribute(%s, MaxDynamicSharedMemorySize, %d): %s\n",
                              tk_proof_kernel_label(pc.kernel), pc.dyn_limit_set,
                              cudaGetErrorName(se));
                (void)cudaGetLastError();
                ++limit_refused;
            } else {
                ++limit_changes;
            }
            a = attrs_of(fn); /* what the kernel is now */
            if (se == cudaSuccess) assert_int_equal(a.max_dynamic_shared_bytes, (size_t)pc.dyn_limit_set);
        }
        gen_block(&pc.cfg.block, &a, &l);
        gen_grid(&pc.cfg.grid, &l);
        pc.cfg.dynamic_shared_bytes = gen_dynamic(&a, &l);
        const cm_launch_config_t *c = &pc.cfg;

        /* our verdict */
        cm_last_error_clear();
        cm_status_t verdict = cm_launch_config_validate(c, &l, &a);
        assert_true(verdict == CM_OK || verdict == CM_ERROR_INVALID_LAUNCH);
        char why[CM_ERROR_MESSAGE_MAX];
        snprintf(why, sizeof why, "%s", verdict == CM_OK ? "" : cm_last_error()->message);

        /* what CUDA does */
        CUDA_OK(cudaMemset(d_out, 0, 2 * sizeof(unsigned)));
        unsigned param = pc.kernel == K_DYNAMIC ? (unsigned)(c->dynamic_shared_bytes / 4) : 0u;
        void *args[] = {&d_out, &param};
        cudaError_t launch_err;
        if (i % 2 == 0) {
            dim3 g = {c->grid.x, c->grid.y, c->grid.z};
            dim3 b = {c->block.x, c->block.y, c->block.z};
            launch_err = cudaLaunchKernel(fn, g, b, args, c->dynamic_shared_bytes, 0);
        } else {
            cudaLaunchConfig_t lc;
            memset(&lc, 0, sizeof lc);
            lc.gridDim.x = c->grid.x;
            lc.gridDim.y = c->grid.y;
            lc.gridDim.z = c->grid.z;
            lc.blockDim.x = c->block.x;
            lc.blockDim.y = c->block.y;
            lc.blockDim.z = c->block.z;
            lc.dynamicSmemBytes = c->dynamic_shared_bytes;
            launch_err = cudaLaunchKernelExC(&lc, fn, args);
        }
        cudaError_t last = cudaGetLastError();
        int cuda_ok = launch_err == cudaSuccess && last == cudaSuccess;
        if (cuda_ok) {
            cudaError_t sync = cudaDeviceSynchronize();
            if (sync != cudaSuccess)
                fail_msg("config %d: the kernel faulted (%s): a defect of the test kernels", i,
                         cudaGetErrorName(sync));
            unsigned h[2] = {0, 0};
            CUDA_OK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
            if (h[0] != (mark | (unsigned)pc.kernel))
                fail_msg("config %d: CUDA accepted the launch but the kernel did not run "
                         "(marker 0x%x)", i, h[0]);
            ++ran_checked;
            ++accepted;
            ++per_kernel_accept[pc.kernel];
        } else {
            ++rejected;
            count_error(cuda_errors, 16, launch_err != cudaSuccess ? (int)launch_err : (int)last);
            unsigned r = rules_broken(c, &a, &l);
            if (r == R_BLOCK || r == R_GRID || r == R_KERNEL_THREADS || r == R_SMEM) ++single_rule[r];
        }
        ++per_kernel_total[pc.kernel];

        int ours_ok = verdict == CM_OK;
        if (ours_ok == cuda_ok) {
            ++agree;
        } else if (shown++ < 25) {
            print_error("DISAGREE config %d: kernel %s (%d regs, %zu static, max dyn %zu, max "
                        "threads %d) grid (%u,%u,%u) block (%u,%u,%u) dyn %zu: CUDA %s, we %s%s\n",
                        i, tk_proof_kernel_label(pc.kernel), a.num_regs, a.static_shared_bytes,
                        a.max_dynamic_shared_bytes, a.max_threads_per_block, c->grid.x, c->grid.y,
                        c->grid.z, c->block.x, c->block.y, c->block.z, c->dynamic_shared_bytes,
                        cuda_ok ? "accepted" : cudaGetErrorName(launch_err != cudaSuccess ? launch_err : last),
                        ours_ok ? "accepted" : "rejected: ", why);
        }
    }
    CUDA_OK(cudaFree(d_out));
    reset_all_dynamic_limits(&l);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);

    print_message("launch proof: %d of %d configurations agree with CUDA (%.1f%%); CUDA accepted "
                  "%d (each ran and wrote its marker), rejected %d; %d dynamic-limit changes "
                  "(%d refused by CUDA); %.2f s\n",
                  agree, PROOF_CONFIGS, 100.0 * agree / PROOF_CONFIGS, accepted, rejected,
                  limit_changes, limit_refused, secs);
    for (int k = 0; k < tk_proof_count(); ++k)
        print_message("  %-18s %3d configurations, %3d accepted\n", tk_proof_kernel_label(k),
                      per_kernel_total[k], per_kernel_accept[k]);
    for (int i = 0; i < 16 && cuda_errors[i].count > 0; ++i)
        print_message("  CUDA said %-32s %4d times\n", cudaGetErrorName((cudaError_t)cuda_errors[i].err),
                      cuda_errors[i].count);
    print_message("  rejections that broke one rule only: block shape %d, grid %d, kernel's max "
                  "threads %d, shared memory %d\n",
                  single_rule[R_BLOCK], single_rule[R_GRID], single_rule[R_KERNEL_THREADS],
                  single_rule[R_SMEM]);

    assert_int_equal(agree, PROOF_CONFIGS);
    assert_int_equal(ran_checked, accepted);
    /* the proof means something only when both verdicts and every rule were exercised */
    assert_true(accepted >= PROOF_CONFIGS / 5);
    assert_true(rejected >= PROOF_CONFIGS / 5);
    for (int k = 0; k < tk_proof_count(); ++k) assert_true(per_kernel_accept[k] > 0);
    assert_true(single_rule[R_BLOCK] >= 5);
    assert_true(single_rule[R_GRID] >= 5);
    assert_true(single_rule[R_KERNEL_THREADS] >= 5);
    assert_true(single_rule[R_SMEM] >= 5);
}

/* ------------------------------------------------------------------ occupancy */

typedef struct {
    int compared, agree, nonzero;
} occ_tally_t;

static void occupancy_sweep(const void *fn, const char *label, const cm_device_limits_t *l,
                            const size_t *dyn, int n_dyn, occ_tally_t *t) {
    cm_kernel_attrs_t a = attrs_of(fn);
    for (int d = 0; d < n_dyn; ++d) {
        for (unsigned bs = 32; bs <= 1024; bs += 32) {
            int cuda_blocks = -1;
            cudaError_t ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cuda_blocks, fn, (int)bs,
                                                                           dyn[d]);
            if (ce != cudaSuccess) (void)cudaGetLastError();
            cm_occupancy_t o;
            memset(&o, 0, sizeof o);
            cm_status_t s = cm_occupancy_compute(l, &a, bs, dyn[d], &o);
            int same;
            if (ce == cudaSuccess)
                same = s == CM_OK ? o.active_blocks_per_sm == cuda_blocks : cuda_blocks == 0;
            else
                same = s != CM_OK || o.active_blocks_per_sm == 0;
            ++t->compared;
            if (same) {
                ++t->agree;
                if (ce == cudaSuccess && cuda_blocks > 0) ++t->nonzero;
            } else {
                print_error("OCCUPANCY %s block %u dyn %zu (max dyn %zu): CUDA %s %d, we %s %d "
                            "(limiter %s)\n",
                            label, bs, dyn[d], a.max_dynamic_shared_bytes, cudaGetErrorName(ce),
                            cuda_blocks, cm_status_name(s), o.active_blocks_per_sm,
                            cm_occupancy_limiter_name(o.limiters));
            }
        }
    }
}

static void test_occupancy_matches_cuda(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    reset_all_dynamic_limits(&l);
    occ_tally_t t = {0, 0, 0};
    const size_t dyn[] = {0, 1 * KIB, 8 * KIB, 20 * KIB};
    for (int k = 0; k < tk_proof_count(); ++k)
        occupancy_sweep(tk_proof_kernel(k), tk_proof_kernel_label(k), &l, dyn, 4, &t);
    occupancy_sweep(tk_fill_kernel_ptr(), "fill", &l, dyn, 4, &t);

    /* with the dynamic limit raised to the opt-in maximum */
    const size_t big[] = {64 * KIB, 100 * KIB, 150 * KIB, l.shared_mem_per_block_optin - 40 * KIB};
    const int raised[] = {K_DYNAMIC, K_STATIC, K_LIGHT};
    for (int i = 0; i < 3; ++i) {
        const void *fn = tk_proof_kernel(raised[i]);
        struct cudaFuncAttributes fa;
        CUDA_OK(cudaFuncGetAttributes(&fa, fn));
        CUDA_OK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)(l.shared_mem_per_block_optin - fa.sharedSizeBytes)));
        char label[64];
        snprintf(label, sizeof label, "%s (raised)", tk_proof_kernel_label(raised[i]));
        occupancy_sweep(fn, label, &l, big, 4, &t);
    }
    reset_all_dynamic_limits(&l);
    print_message("occupancy: %d of %d (kernel, block size, dynamic smem) agree with "
                  "cudaOccupancyMaxActiveBlocksPerMultiprocessor; %d of them with blocks > 0\n",
                  t.agree, t.compared, t.nonzero);
    assert_int_equal(t.agree, t.compared);
    assert_true(t.nonzero >= t.compared / 2);
}

/* ------------------------------------------------------------------ cm_launch */

static void poison(unsigned *d, size_t n) {
    CUDA_OK(cudaMemset(d, 0xab, n * sizeof(unsigned)));
    CUDA_OK(cudaDeviceSynchronize()); /* done before work on any stream, non-blocking ones too */
}

/* Every element of d[0..n) equals mul * i + add. */
static void expect_fill(const unsigned *d, size_t n, unsigned mul, unsigned add, const char *what) {
    unsigned *h = malloc(n * sizeof(unsigned));
    assert_non_null(h);
    CUDA_OK(cudaMemcpy(h, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; ++i) {
        if (h[i] != mul * (unsigned)i + add) {
            if (bad++ == 0) first_bad = i;
        }
    }
    if (bad != 0) {
        print_error("%s: %zu of %zu elements wrong; first at %zu: %u, expected %u\n", what, bad, n,
                    first_bad, h[first_bad], mul * (unsigned)first_bad + add);
        free(h);
        fail();
    }
    free(h);
}

static void expect_untouched(const unsigned *d, size_t n, const char *what) {
    unsigned *h = malloc(n * sizeof(unsigned));
    assert_non_null(h);
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) {
        if (h[i] != 0xababababu) {
            print_error("%s: element %zu is 0x%x: a kernel ran\n", what, i, h[i]);
            free(h);
            fail();
        }
    }
    free(h);
}

static void test_cm_launch_computes_right_results(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    const unsigned long long n = 1000003;
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, n * sizeof(unsigned)));
    unsigned mul = 7, add = 12345;
    void *args[] = {&d, (void *)&n, &mul, &add};

    /* 1-D, through CM_LAUNCH */
    cm_launch_config_t cfg;
    CM_ASSERT_OK(cm_launch_config_1d(n, 256, &cfg));
    poison(d, n);
    CM_ASSERT_OK(CM_LAUNCH(NULL, tk_fill_kernel_ptr(), &cfg, args));
    CUDA_OK(cudaDeviceSynchronize());
    expect_fill(d, n, mul, add, "1-D CM_LAUNCH");

    /* 3-D grid of 3-D blocks covering exactly n3 elements, through cm_launch */
    cm_launch_config_t c3 = CM_LAUNCH_CONFIG_INIT;
    c3.grid.x = 7;
    c3.grid.y = 5;
    c3.grid.z = 3;
    c3.block.x = 8;
    c3.block.y = 4;
    c3.block.z = 2;
    unsigned long long n3 = cm_launch_config_threads(&c3);
    assert_int_equal(n3, 7 * 5 * 3 * 8 * 4 * 2);
    mul = 3;
    add = 1;
    void *args3[] = {&d, &n3, &mul, &add};
    poison(d, n);
    CM_ASSERT_OK(cm_launch(NULL, tk_fill_kernel_ptr(), &c3, args3));
    CUDA_OK(cudaDeviceSynchronize());
    expect_fill(d, n3, mul, add, "3-D cm_launch");

    /* a 2-D tiling on a CUDA stream of our own, wrapped as a library stream */
    cm_launch_config_t c2;
    CM_ASSERT_OK(cm_launch_config_2d(1000, 77, 32, 8, &c2));
    unsigned long long n2 = cm_launch_config_threads(&c2);
    assert_true(n2 >= 1000 * 77 && n2 <= n);
    mul = 11;
    add = 5;
    void *args2[] = {&d, &n2, &mul, &add};
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *w = NULL;
    CM_ASSERT_OK(cm_stream_wrap(dev, s, &w));
    poison(d, n);
    CM_ASSERT_OK(cm_launch_at(w, tk_fill_kernel_ptr(), &c2, args2, __FILE__, __LINE__));
    CM_ASSERT_OK(cm_stream_synchronize(w));
    CM_ASSERT_OK(cm_stream_release(w)); /* the wrapper goes before the CUDA stream */
    CM_ASSERT_OK(cm_device_close(dev));
    CUDA_OK(cudaStreamDestroy(s));
    expect_fill(d, n2, mul, add, "2-D cm_launch_at on a wrapped CUDA stream");

    /* an empty launch (grid.x = 0) is fine and runs nothing */
    cm_launch_config_t c0;
    CM_ASSERT_OK(cm_launch_config_1d(0, 256, &c0));
    assert_int_equal(c0.grid.x, 0);
    poison(d, n);
    CM_ASSERT_OK(cm_launch(NULL, tk_fill_kernel_ptr(), &c0, args));
    expect_untouched(d, 1024, "empty launch");
    CUDA_OK(cudaFree(d));
}

/* A bad configuration: CM_ERROR_INVALID_LAUNCH naming the rule, and nothing runs. */
static void expect_rejected(const void *fn, const cm_launch_config_t *c, void **args,
                            unsigned *d, size_t n, const char *what, const char *const *needles,
                            int n_needles) {
    poison(d, n);
    cm_last_error_clear();
    int line = __LINE__ + 1;
    cm_status_t s = cm_launch_at(NULL, fn, c, args, __FILE__, line);
    const cm_error_t *e = cm_last_error();
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    print_message("%s -> %s\n%s\n", what, cm_status_name(s), report);
    assert_int_equal(s, CM_ERROR_INVALID_LAUNCH);
    assert_int_equal(e->status, CM_ERROR_INVALID_LAUNCH);
    for (int i = 0; i < n_needles; ++i) {
        if (strstr(e->message, needles[i]) == NULL)
            fail_msg("%s: the message does not say \"%s\": %s", what, needles[i], e->message);
    }
    assert_true(e->hint[0] != '\0');
    /* cm_launch_at records the caller's file:line (launch.h) */
    if (strstr(e->file, "test_gpu_launch.c") == NULL || e->line != line)
        fail_msg("%s: the detail names %s:%d, not the caller's test_gpu_launch.c:%d", what,
                 e->file, e->line, line);
    /* nothing launched: no CUDA error pending, output untouched */
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    expect_untouched(d, n, what);
}

static void test_cm_launch_rejects_bad_config_without_launching(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    reset_all_dynamic_limits(&l);
    const size_t n = 4096;
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, n * sizeof(unsigned)));
    unsigned long long nn = n;
    unsigned mul = 1, add = 0, param = 0;
    void *fill_args[] = {&d, &nn, &mul, &add};
    void *proof_args[] = {&d, &param};
    char buf[4][64];

    /* 2048 threads per block */
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 2;
    c.block.x = 2048;
    snprintf(buf[0], sizeof buf[0], "allows %d", l.max_threads_per_block);
    const char *n1[] = {"block has 2048 threads", buf[0]};
    expect_rejected(tk_fill_kernel_ptr(), &c, fill_args, d, n, "block of 2048 threads", n1, 2);

    /* a grid.y over 65535 */
    c = (cm_launch_config_t)CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 1;
    c.grid.y = 70000;
    c.block.x = 32;
    const char *n2[] = {"grid.y is 70000", "65535"};
    expect_rejected(tk_fill_kernel_ptr(), &c, fill_args, d, n, "grid.y of 70000", n2, 2);

    /* 64 KiB of dynamic shared memory without raising the kernel's limit */
    c = (cm_launch_config_t)CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 1;
    c.block.x = 64;
    c.dynamic_shared_bytes = 64 * KIB;
    const char *n3[] = {"cudaFuncAttributeMaxDynamicSharedMemorySize", "64 KiB"};
    expect_rejected(tk_fill_kernel_ptr(), &c, fill_args, d, n, "64 KiB dynamic smem", n3, 2);

    /* the heavy kernel at 1024 threads: more than its registers allow */
    cm_kernel_attrs_t heavy = attrs_of(tk_proof_kernel(K_HEAVY));
    c = (cm_launch_config_t)CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 1;
    c.block.x = 1024;
    snprintf(buf[1], sizeof buf[1], "at most %d per block", heavy.max_threads_per_block);
    const char *n4[] = {buf[1]};
    expect_rejected(tk_proof_kernel(K_HEAVY), &c, proof_args, d, n, "heavy kernel at 1024 threads",
                    n4, 1);

    /* __launch_bounds__(256) at 512 threads */
    c.block.x = 512;
    const char *n5[] = {"at most 256 per block", "__launch_bounds__"};
    expect_rejected(tk_proof_kernel(K_BOUNDED), &c, proof_args, d, n,
                    "bounded(256) kernel at 512 threads", n5, 2);

    /* several rules at once are all listed */
    c = (cm_launch_config_t)CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 1;
    c.grid.z = 65536;
    c.block.x = 4;
    c.block.z = 65;
    c.dynamic_shared_bytes = 300 * KIB;
    const char *n6[] = {"block.z is 65", "grid.z is 65536", "shared memory", "3 launch rules"};
    expect_rejected(tk_fill_kernel_ptr(), &c, fill_args, d, n, "three rules at once", n6, 4);

    /* and CUDA agrees that each of these is not launchable */
    dim3 g = {2, 1, 1}, b = {2048, 1, 1};
    cudaError_t raw = cudaLaunchKernel(tk_fill_kernel_ptr(), g, b, fill_args, 0, 0);
    assert_int_not_equal(raw, cudaSuccess);
    print_message("raw cudaLaunchKernel with 2048 threads: %s \"%s\"\n", cudaGetErrorName(raw),
                  cudaGetErrorString(raw));
    (void)cudaGetLastError();
    CUDA_OK(cudaFree(d));
}

static void test_launch_config_auto_matches_cuda(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    reset_all_dynamic_limits(&l);
    const size_t dyn[] = {0, 4 * KIB};
    int checked = 0;
    for (int k = -1; k < tk_proof_count(); ++k) {
        const void *fn = k < 0 ? tk_fill_kernel_ptr() : tk_proof_kernel(k);
        const char *label = k < 0 ? "fill" : tk_proof_kernel_label(k);
        for (int d = 0; d < 2; ++d) {
            int cuda_grid = 0, cuda_block = 0;
            int ce = tk_max_potential_block_size(k, dyn[d], &cuda_grid, &cuda_block);
            if (ce != (int)cudaSuccess)
                fail_msg("cudaOccupancyMaxPotentialBlockSize(%s, %zu): %s", label, dyn[d],
                         cudaGetErrorName((cudaError_t)ce));
            cm_launch_config_t c;
            CM_ASSERT_OK(cm_launch_config_auto(fn, 1000000, dyn[d], &c));
            cm_kernel_attrs_t a = attrs_of(fn);
            unsigned best = 0;
            int min_grid = 0;
            CM_ASSERT_OK(cm_occupancy_best_block_size(&l, &a, dyn[d], &best, &min_grid));
            print_message("  %-18s dyn %5zu: cm_launch_config_auto block %4u grid %5u; CUDA block "
                          "%4d, min grid %4d; ours min grid %4d\n",
                          label, dyn[d], c.block.x, c.grid.x, cuda_block, cuda_grid, min_grid);
            assert_int_equal(c.block.x, (unsigned)cuda_block);
            assert_int_equal(best, (unsigned)cuda_block);
            assert_int_equal(min_grid, cuda_grid);
            assert_int_equal(c.dynamic_shared_bytes, dyn[d]);
            assert_int_equal(c.grid.x, (1000000u + c.block.x - 1) / c.block.x);
            ++checked;
        }
    }
    assert_int_equal(checked, 2 * (tk_proof_count() + 1));

    /* and the automatic configuration runs */
    const unsigned long long n = 777777;
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, n * sizeof(unsigned)));
    unsigned mul = 5, add = 9;
    void *args[] = {&d, (void *)&n, &mul, &add};
    cm_launch_config_t c;
    CM_ASSERT_OK(cm_launch_config_auto(tk_fill_kernel_ptr(), n, 0, &c));
    poison(d, n);
    CM_ASSERT_OK(CM_LAUNCH(NULL, tk_fill_kernel_ptr(), &c, args));
    CUDA_OK(cudaDeviceSynchronize());
    expect_fill(d, n, mul, add, "cm_launch_config_auto");
    CUDA_OK(cudaFree(d));
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* When cm_launch returns: on a stream at once (the kernel still runs); with a NULL stream after
 * the kernel, whatever the mode; on a stream in synchronous debug mode after the kernel. */
static void test_sync_mode_waits_for_the_kernel(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *s = NULL; /* a pooled stream: non-blocking */
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_LOW, &s));
    cudaStream_t cs = NULL;
    CM_ASSERT_OK(cm_stream_cuda(s, &cs));
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, 2 * sizeof(unsigned)));
    unsigned us = 20000; /* the kernel waits 20 ms */
    void *args[] = {&d, &us};
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    c.grid.x = 1;
    c.block.x = 32;
    /* warm up: module load and the attribute cache stay out of the timing */
    unsigned us0 = 0;
    void *args0[] = {&d, &us0};
    CM_ASSERT_OK(cm_launch(s, tk_spin_kernel_ptr(), &c, args0));
    CM_ASSERT_OK(cm_stream_synchronize(s));

    /* on a stream, asynchronous (default): cm_launch returns while the kernel still runs */
    cm_sync_mode_set(false);
    assert_false(cm_sync_mode());
    double t0 = now_ms();
    CM_ASSERT_OK(CM_LAUNCH(s, tk_spin_kernel_ptr(), &c, args));
    double async_ms = now_ms() - t0;
    cudaError_t q = cudaStreamQuery(cs);
    (void)cudaGetLastError();
    assert_int_equal(q, cudaErrorNotReady);
    CM_ASSERT_OK(cm_stream_synchronize(s));

    /* a NULL stream is synchronous without the debug mode: cm_launch returns after the kernel
     * finished, and the legacy default stream is idle */
    CUDA_OK(cudaMemset(d, 0, 2 * sizeof(unsigned)));
    CUDA_OK(cudaDeviceSynchronize());
    t0 = now_ms();
    CM_ASSERT_OK(CM_LAUNCH(NULL, tk_spin_kernel_ptr(), &c, args));
    double null_ms = now_ms() - t0;
    q = cudaStreamQuery(0);
    assert_int_equal(q, cudaSuccess);
    assert_true(null_ms >= 15.0);
    unsigned h[2];
    CUDA_OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    assert_int_equal(h[0], tk_mark() | 7u);

    /* synchronous debug mode: a launch on a stream returns after the kernel finished */
    cm_sync_mode_set(true);
    assert_true(cm_sync_mode());
    CUDA_OK(cudaMemset(d, 0, 2 * sizeof(unsigned)));
    CUDA_OK(cudaDeviceSynchronize());
    t0 = now_ms();
    CM_ASSERT_OK(CM_LAUNCH(s, tk_spin_kernel_ptr(), &c, args));
    double sync_ms = now_ms() - t0;
    q = cudaStreamQuery(cs);
    cm_sync_mode_set(false);
    print_message("cm_launch of a 20 ms kernel returned after %.3f ms (on a stream), %.3f ms "
                  "(NULL stream) and %.3f ms (on a stream, sync mode)\n",
                  async_ms, null_ms, sync_ms);
    assert_int_equal(q, cudaSuccess);
    assert_true(sync_ms >= 15.0);
    CUDA_OK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    assert_int_equal(h[0], tk_mark() | 7u);

    /* a bad configuration in sync mode is still rejected before launch */
    cm_sync_mode_set(true);
    c.block.x = 2048;
    assert_int_equal(cm_launch(s, tk_spin_kernel_ptr(), &c, args), CM_ERROR_INVALID_LAUNCH);
    assert_int_equal(cm_launch(NULL, tk_spin_kernel_ptr(), &c, args), CM_ERROR_INVALID_LAUNCH);
    cm_sync_mode_set(false);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    CM_ASSERT_OK(cm_stream_release(s));
    CM_ASSERT_OK(cm_device_close(dev));
    CUDA_OK(cudaFree(d));
}

/* out[b * words + w] as tk_dyn_fill_kernel writes it */
static void expect_dyn_fill(const unsigned *d, unsigned blocks, unsigned words) {
    size_t n = (size_t)blocks * words;
    unsigned *h = malloc(n * sizeof(unsigned));
    assert_non_null(h);
    CUDA_OK(cudaMemcpy(h, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned b = 0; b < blocks; ++b) {
        for (unsigned w = 0; w < words; ++w) {
            unsigned want = ((((w + 1) % words) * 2654435761u) ^ b) + 1u;
            if (h[(size_t)b * words + w] != want) {
                print_error("dyn fill: block %u word %u is 0x%x, expected 0x%x\n", b, w,
                            h[(size_t)b * words + w], want);
                free(h);
                fail();
            }
        }
    }
    free(h);
}

static void test_stale_attribute_cache_is_refreshed(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    const void *fn = tk_dyn_fill_kernel_ptr();
    const unsigned blocks = 4;
    const unsigned max_words = (unsigned)(100 * KIB / 4);
    unsigned *d = NULL;
    CUDA_OK(cudaMalloc((void **)&d, (size_t)blocks * max_words * sizeof(unsigned)));
    unsigned words = 0;
    void *args[] = {&d, &words};
    cm_launch_config_t c = CM_LAUNCH_CONFIG_INIT;
    c.grid.x = blocks;
    c.block.x = 256;

    /* the default limit: 48 KiB. A 64 KiB launch fails (and leaves 48 KiB in the cache). */
    CUDA_OK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(48 * KIB)));
    c.dynamic_shared_bytes = 64 * KIB;
    words = (unsigned)(c.dynamic_shared_bytes / 4);
    assert_int_equal(cm_launch(NULL, fn, &c, args), CM_ERROR_INVALID_LAUNCH);
    assert_int_equal(cudaGetLastError(), cudaSuccess);

    /* 48 KiB works */
    c.dynamic_shared_bytes = 48 * KIB;
    words = (unsigned)(c.dynamic_shared_bytes / 4);
    poison(d, (size_t)blocks * max_words);
    CM_ASSERT_OK(cm_launch(NULL, fn, &c, args));
    CUDA_OK(cudaDeviceSynchronize());
    expect_dyn_fill(d, blocks, words);

    /* raise the limit behind the library's back, then launch with 100 KiB: the cached 48 KiB
     * would reject it; the library must look again and launch */
    CUDA_OK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(100 * KIB)));
    c.dynamic_shared_bytes = 100 * KIB;
    words = max_words;
    poison(d, (size_t)blocks * max_words);
    CM_ASSERT_OK(cm_launch(NULL, fn, &c, args));
    CUDA_OK(cudaDeviceSynchronize());
    expect_dyn_fill(d, blocks, words);
    print_message("stale cache: 48 KiB launch, limit raised to 100 KiB by cudaFuncSetAttribute, "
                  "100 KiB launch succeeded and every word of dynamic shared memory checked\n");

    /* the other way: the limit lowered behind the library's back. The cache still says
     * 100 KiB, so validation passes and CUDA refuses: an error, never a launch. */
    CUDA_OK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(48 * KIB)));
    poison(d, (size_t)blocks * max_words);
    cm_status_t s = cm_launch(NULL, fn, &c, args);
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    print_message("limit lowered to 48 KiB, 100 KiB launch -> %s\n%s\n", cm_status_name(s), report);
    assert_int_not_equal(s, CM_OK);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    expect_untouched(d, (size_t)blocks * max_words, "launch after the limit was lowered");
    assert_int_equal(cm_check_context(0), CM_OK);

    reset_dynamic_limit(fn, &l);
    CUDA_OK(cudaFree(d));
}

static void test_check_image_reports_native_code(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    setup_device();
    cm_device_limits_t l = device_limits();
    int cc = l.cc_major * 10 + l.cc_minor;
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    cm_arch_list_t archs;
    CM_ASSERT_OK(cm_arch_list_parse(vi.cuda_architectures, &archs));
    int used = 0;
    cm_image_kind_t predicted = cm_arch_image_for(&archs, cc, &used);
    for (int k = 0; k < tk_proof_count(); ++k) {
        cm_kernel_image_report_t rep;
        CM_ASSERT_OK(cm_kernel_check_image(tk_proof_kernel(k), 0, &rep));
        print_message("  %-18s %s\n", tk_proof_kernel_label(k), rep.message);
        assert_int_equal(rep.device_cc, cc);
        assert_true(rep.message[0] != '\0');
        if (predicted == CM_IMAGE_NATIVE) {
            /* built for this architecture (on the H200: 90 in CMAKE_CUDA_ARCHITECTURES) */
            assert_int_equal(rep.binary_version, used);
            assert_false(rep.jit_likely);
            if (used == cc) assert_int_equal(rep.binary_version, cc);
        } else {
            assert_int_equal(predicted, CM_IMAGE_PTX_JIT); /* or the kernel could not run */
            assert_int_equal(rep.binary_version, cc);      /* the driver compiled it for cc */
        }
    }
    print_message("build architectures \"%s\": %s for sm_%d\n", vi.cuda_architectures,
                  cm_image_kind_name(predicted), cc);

    /* not a kernel: a host object's address */
    static int not_a_kernel;
    cm_kernel_image_report_t rep;
    assert_int_equal(cm_kernel_check_image(&not_a_kernel, 0, &rep), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    assert_int_equal(cm_kernel_check_image(NULL, 0, &rep), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_kernel_check_image(tk_proof_kernel(0), 0, NULL), CM_ERROR_INVALID_ARGUMENT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_attributes),
        cmocka_unit_test(test_random_configs_agree_with_cuda),
        cmocka_unit_test(test_occupancy_matches_cuda),
        cmocka_unit_test(test_cm_launch_computes_right_results),
        cmocka_unit_test(test_cm_launch_rejects_bad_config_without_launching),
        cmocka_unit_test(test_launch_config_auto_matches_cuda),
        cmocka_unit_test(test_sync_mode_waits_for_the_kernel),
        cmocka_unit_test(test_stale_attribute_cache_is_refreshed),
        cmocka_unit_test(test_check_image_reports_native_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
