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
    unsigned long capture_leaks; /* allocations whose free CUDA refused inside a capture and that
                                    were never freed (an invariant: 0 when it holds) */
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

/** Print which known library issues the driver tolerates (one line, after prefix; none at
 *  present: every invariant is checked in full). */
void cmfz_print_known_issues(FILE *out, const char *prefix);

/** 1: the known library issues (fuzz_driver.c, "Known library issue"; none at present) are
 *  failures like any broken invariant; 0: they are counted only. The default comes from
 *  CMFZ_STRICT in the environment. */
void cmfz_set_strict(int on);

#endif /* CM_FUZZ_DRIVER_H */
