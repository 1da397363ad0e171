/*
 * Shared helpers for the CMocka tests.
 *
 * GPU tests call CM_REQUIRE_GPU() first thing in the test body (never in a setup function,
 * where cmocka 1.1.5 counts a skip as a failure). Without a usable GPU the test is skipped with
 * the reason, unless CUDAMODEL_REQUIRE_GPU=1 (set by scripts/gpu-check.sh), where a missing
 * GPU fails the test: on the GPU machine nothing may pass by skipping.
 */
#ifndef CM_TEST_H
#define CM_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

struct cm_device;
struct cm_stream;

/** The GPU tests' fixture: device 0 opened and one low-priority pooled stream, for a cmocka
 *  group setup (0 without a GPU, leaving both NULL: the tests skip themselves; -1 when the
 *  open or the acquire fails). cm_test_gpu_teardown releases them (a no-op after a setup
 *  without a GPU) and sets both to NULL. */
int cm_test_gpu_setup(struct cm_device **dev, struct cm_stream **stream);
int cm_test_gpu_teardown(struct cm_device **dev, struct cm_stream **stream);

/** The same fixture held here, for a test file that needs no other: pass
 *  cm_test_gpu_group_setup / cm_test_gpu_group_teardown to cmocka_run_group_tests and use
 *  cm_test_gpu.dev and cm_test_gpu.stream in the tests. */
typedef struct cm_test_gpu_fixture {
    struct cm_device *dev;
    struct cm_stream *stream;
} cm_test_gpu_fixture_t;
extern cm_test_gpu_fixture_t cm_test_gpu;
int cm_test_gpu_group_setup(void **state);
int cm_test_gpu_group_teardown(void **state);

/** true when cudaGetDeviceCount() reports at least one device; else reason says why. */
bool cm_test_have_gpu(char *reason, size_t size);

/** true when CUDAMODEL_REQUIRE_GPU=1: skips are failures. */
bool cm_test_gpu_required(void);

/** true when CM_TEST_UNDER_SANITIZER=1 (scripts/gpu-check.sh sets it for compute-sanitizer
 *  runs, which slow kernels down many times): tests then run fewer rounds and do not assert
 *  timing bounds; every correctness check still runs. */
bool cm_test_under_sanitizer(void);

/** CM_TEST_FILTER=<pattern> (cmocka's '*' and '?' wildcards): run only the tests of this
 *  executable whose names match (cmocka_set_test_filter), for a targeted run on a GPU machine.
 *  Call before cmocka_run_group_tests; unset or empty: every test. */
void cm_test_filter_from_env(void);

/** Start this test executable again (posix_spawn of /proc/self/exe's target, the environment
 *  inherited) with one argument; fails the test if it cannot. Returns the child's pid. */
int cm_test_spawn_self(const char *arg);

/** Runs body(lo, hi, ctx) over [0, n) cut into contiguous ranges, one per thread, on up to
 *  CM_TEST_THREADS threads (default: the online CPUs, at most 64; the calling thread runs one
 *  range), and returns when every range is done. Ranges hold at least min_chunk items (at
 *  least 1), so a small n runs on the calling thread alone, as it does when a thread cannot be
 *  started. body must write only what its range owns and must not call cmocka's assertions
 *  (they longjmp out of the thread): it records what it finds for the caller to assert. For
 *  host work the tests repeat per element, e.g. a float64 reference of every element of C. */
void cm_test_parallel_for(size_t n, size_t min_chunk, void (*body)(size_t lo, size_t hi, void *ctx),
                          void *ctx);

/** xorshift64 step of *state (never 0): the tests' reproducible random source. */
uint64_t cm_test_rand(uint64_t *state);

/** Uniform in [-1, 1) with the full double mantissa, from cm_test_rand(state). */
double cm_test_rand_unit(uint64_t *state);

#define CM_REQUIRE_GPU()                                                                     \
    do {                                                                                     \
        char cm__reason_[512];                                                               \
        if (!cm_test_have_gpu(cm__reason_, sizeof cm__reason_)) {                            \
            if (cm_test_gpu_required())                                                      \
                fail_msg("no usable GPU (%s) but CUDAMODEL_REQUIRE_GPU=1", cm__reason_);     \
            print_message("skipping: this test needs a GPU: %s\n", cm__reason_);             \
            skip();                                                                          \
        }                                                                                    \
    } while (0)

/** Assert a libcudamodel call returned CM_OK; on failure print the library's own report. */
#define CM_ASSERT_OK(expr) cm_test_assert_ok((expr), #expr, __FILE__, __LINE__)
void cm_test_assert_ok(int status, const char *expr, const char *file, int line);

/** Assert a call returned the expected status; print the detail when it did not. */
#define CM_ASSERT_STATUS(expr, expected)                                                     \
    cm_test_assert_status((expr), (expected), #expr, __FILE__, __LINE__)
void cm_test_assert_status(int status, int expected, const char *expr, const char *file, int line);

#endif /* CM_TEST_H */
