/*
 * The API-sequence fuzzer's driver (tests/fuzz/fuzz_driver.c): input bytes become a sequence of
 * public libcudamodel calls on the simulated CUDA of tests/host/test_full_fake.h, run by one to
 * three threads, with injected CUDA and NCCL failures, and invariants checked after every call.
 *
 * The same driver runs under libFuzzer (fuzz_main.c, clang) and in the host suite without it
 * (test_fuzz_corpus.c: the seed corpus and every crash found, replayed with the project's
 * compiler), so a crash found by fuzzing becomes a regression test by adding its input file to
 * tests/fuzz/regressions/.
 */
#ifndef CM_FUZZ_DRIVER_H
#define CM_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct cmfz_result {
    unsigned long calls;       /* public library calls made for this input */
    unsigned long cuda_calls;  /* calls through the CUDA-call table (simulated) */
    unsigned long faults;      /* injected failures that fired */
    int threads;               /* threads that ran the input */
    unsigned long capture_leaks; /* known issue (see fuzz_driver.c): device memory dropped by a
                                    cm_buffer_destroy that CUDA refused inside a capture */
    char why[2048];            /* the broken invariant, with the last operations ("" when none) */
} cmfz_result_t;

/**
 * Run one input. Returns 0 when every invariant held, 1 otherwise (out->why says which, with a
 * trace of the last operations of the thread that saw it). Not reentrant: one input at a time.
 */
int cmfz_run(const uint8_t *data, size_t size, cmfz_result_t *out);

/** Public calls made by every cmfz_run so far (the fuzzer prints it at exit). */
unsigned long long cmfz_total_calls(void);

/** Inputs run so far. */
unsigned long long cmfz_total_inputs(void);

/** Inputs that hit the known capture-leak issue so far (0 once the library is fixed). */
unsigned long long cmfz_total_capture_leaks(void);

/** Destroys that hit the known enter-leak issue so far (0 once the library is fixed). */
unsigned long long cmfz_total_enter_leaks(void);

/** Staging reconfigurations that hit the known implicit-binding issue so far. */
unsigned long long cmfz_total_staging_binds(void);

/** Operations that hit the known unknown-context binding issue so far. */
unsigned long long cmfz_total_unknown_ctx_binds(void);

/** Failures whose detail a later cleanup or report step overwrote (known issues) so far. */
unsigned long long cmfz_total_detail_overwrites(void);

/** Device closes that left their pool behind and returned CM_OK (known issue) so far. */
unsigned long long cmfz_total_close_pool_leaks(void);

/** Peer setups whose cudaMemPoolSetAccess ran with no current context (known issue) so far. */
unsigned long long cmfz_total_peer_binds(void);

/** Print how often each known issue was hit (one line, after prefix). */
void cmfz_print_known_issues(FILE *out, const char *prefix);

/** 1: the known issues (fuzz_driver.c: capture leak, enter leak) are failures like any broken
 *  invariant; 0: they are counted only. The default comes from CMFZ_STRICT in the environment. */
void cmfz_set_strict(int on);

#endif /* CM_FUZZ_DRIVER_H */
