/*
 * libFuzzer entry point of the API fuzzer (built by scripts/fuzz.sh: clang,
 * -fsanitize=fuzzer,address,undefined, option CUDAMODEL_FUZZ). Every input runs through the
 * driver of fuzz_driver.c; a broken invariant aborts, so libFuzzer keeps the input as a crash.
 * At exit it prints the inputs run and the public library calls they made.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_driver.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cmfz_report(void) {
    fprintf(stderr, "cudamodel fuzzer: %llu inputs, %llu library calls executed\n",
            cmfz_total_inputs(), cmfz_total_calls());
    cmfz_print_known_issues(stderr, "cudamodel fuzzer: ");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    atexit(cmfz_report);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static cmfz_result_t r;
    if (cmfz_run(data, size, &r) != 0) {
        fprintf(stderr, "cudamodel fuzzer: invariant broken (%d thread%s): %s\n", r.threads,
                r.threads == 1 ? "" : "s", r.why);
        cmfz_report();
        abort();
    }
    return 0;
}
