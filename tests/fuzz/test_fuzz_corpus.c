/*
 * FAULT INJECTION: the API fuzzer's driver (fuzz_driver.c) without libFuzzer, built with the
 * project's compiler: every input of the seed corpus (tests/fuzz/corpus/) and of the crashes
 * found by fuzzing (tests/fuzz/regressions/, one file per crash) runs through the same driver
 * and must keep every invariant; then a fixed sequence of pseudo-random inputs (the same on
 * every run) does. scripts/fuzz.sh runs the driver under libFuzzer for a bounded time.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_driver.h"

static size_t run_dir(const char *dir, unsigned long *calls) {
    DIR *d = opendir(dir);
    if (d == NULL) fail_msg("cannot open %s", dir);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL) fail_msg("cannot open %s", path);
        unsigned char buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cmfz_result_t r;
        if (cmfz_run(buf, len, &r) != 0) fail_msg("%s: %s", path, r.why);
        *calls += r.calls;
        ++n;
    }
    closedir(d);
    return n;
}

static void test_seed_corpus(void **state) {
    (void)state;
    unsigned long calls = 0;
    size_t n = run_dir(CM_FUZZ_DIR "/corpus", &calls);
    print_message("seed corpus: %zu inputs, %lu library calls\n", n, calls);
    assert_true(n >= 24);
}

static void test_regressions(void **state) {
    (void)state;
    unsigned long calls = 0;
    size_t n = run_dir(CM_FUZZ_DIR "/regressions", &calls);
    print_message("regressions: %zu inputs, %lu library calls\n", n, calls);
}

/* Inputs that show a library issue not fixed yet (tests/fuzz/regressions-pending/README): each
 * must still fail in strict mode; once one passes, the fix landed: move it to regressions/. */
static void test_pending_still_fail(void **state) {
    (void)state;
    DIR *d = opendir(CM_FUZZ_DIR "/regressions-pending");
    if (d == NULL) return;
    cmfz_set_strict(1);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        /* sanitizer findings of clang only (fuzz.sh replays them): not checkable here */
        if (e->d_name[0] == '.' || strstr(e->d_name, ".bin") == NULL || strstr(e->d_name, "clang")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", CM_FUZZ_DIR "/regressions-pending", e->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL) fail_msg("cannot open %s", path);
        unsigned char buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cmfz_result_t r;
        if (cmfz_run(buf, len, &r) == 0) {
            cmfz_set_strict(0);
            fail_msg("%s passes now: the issue it shows is fixed; move it to tests/fuzz/regressions/", path);
        }
        print_message("still failing (known issue): %s: %.200s\n", e->d_name, r.why);
        ++n;
    }
    closedir(d);
    cmfz_set_strict(0);
}

static void test_fixed_random_inputs(void **state) {
    (void)state;
    uint64_t seed = 0x5eed5eedull;
    unsigned long calls = 0, faults = 0;
    for (int i = 0; i < 300; ++i) {
        unsigned char buf[600];
        size_t len = 16 + cm_test_rand(&seed) % (sizeof buf - 16);
        for (size_t k = 0; k < len; ++k) buf[k] = (unsigned char)(cm_test_rand(&seed) >> 24);
        cmfz_result_t r;
        if (cmfz_run(buf, len, &r) != 0) {
            /* kept for replaying (test_fuzz_corpus FILE) and for tests/fuzz/regressions/ */
            char path[64];
            snprintf(path, sizeof path, "fuzz-random-%d.bin", i);
            FILE *f = fopen(path, "wb");
            if (f != NULL) {
                fwrite(buf, 1, len, f);
                fclose(f);
            }
            fail_msg("random input %d (%zu bytes, written to %s): %s", i, len, path, r.why);
        }
        calls += r.calls;
        faults += r.faults;
    }
    print_message("300 random inputs: %lu library calls, %lu injected failures\n", calls, faults);
    cmfz_print_known_issues(stdout, "");
}

/* test_fuzz_corpus FILE...: run those inputs alone (CMFZ_VERBOSE=1 prints every operation). */
static int run_files(int argc, char **argv) {
    int rc = 0;
    for (int i = 1; i < argc; ++i) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            fprintf(stderr, "cannot open %s\n", argv[i]);
            return 2;
        }
        static unsigned char buf[1 << 20];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        cmfz_result_t r;
        int bad = cmfz_run(buf, len, &r);
        printf("%s: %s (%lu library calls, %lu CUDA calls, %lu injected failures, %d thread%s)%s%s\n",
               argv[i], bad ? "FAILED" : "ok", r.calls, r.cuda_calls, r.faults, r.threads,
               r.threads == 1 ? "" : "s", bad ? "\n" : "", bad ? r.why : "");
        rc |= bad;
    }
    return rc;
}

int main(int argc, char **argv) {
    cmfz_set_strict(getenv("CMFZ_STRICT") != NULL);
    if (argc > 1) return run_files(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_corpus),
        cmocka_unit_test(test_regressions),
        cmocka_unit_test(test_pending_still_fail),
        cmocka_unit_test(test_fixed_random_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
