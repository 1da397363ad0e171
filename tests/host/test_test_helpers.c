/*
 * The tests' own helpers (tests/common/cm_test.c) that GPU tests rely on for host work:
 * cm_test_parallel_for covers every index exactly once, in contiguous ranges, whatever the
 * thread count (CM_TEST_THREADS) and minimum chunk, and runs small inputs on the caller.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *hits; /* per index: how many times a range covered it */
    pthread_t caller;
    int on_caller;       /* ranges that ran on the calling thread */
    int ranges;
    pthread_mutex_t lock;
} cover_t;

static void mark(size_t lo, size_t hi, void *ctx) {
    cover_t *c = ctx;
    for (size_t i = lo; i < hi; ++i) ++c->hits[i]; /* ranges are disjoint: no race */
    pthread_mutex_lock(&c->lock);
    ++c->ranges;
    if (pthread_equal(pthread_self(), c->caller)) ++c->on_caller;
    pthread_mutex_unlock(&c->lock);
}

static void run(size_t n, size_t min_chunk, const char *threads, int *ranges, int *on_caller) {
    if (threads) setenv("CM_TEST_THREADS", threads, 1);
    else unsetenv("CM_TEST_THREADS");
    cover_t c;
    memset(&c, 0, sizeof c);
    c.hits = calloc(n + 1, 1);
    assert_non_null(c.hits);
    c.caller = pthread_self();
    pthread_mutex_init(&c.lock, NULL);
    cm_test_parallel_for(n, min_chunk, mark, &c);
    for (size_t i = 0; i < n; ++i)
        if (c.hits[i] != 1) fail_msg("n %zu chunk %zu threads %s: index %zu covered %d times", n,
                                     min_chunk, threads ? threads : "-", i, c.hits[i]);
    pthread_mutex_destroy(&c.lock);
    free(c.hits);
    unsetenv("CM_TEST_THREADS");
    *ranges = c.ranges;
    *on_caller = c.on_caller;
}

static void test_parallel_for_covers_once(void **state) {
    (void)state;
    static const size_t ns[] = {1, 2, 7, 63, 64, 65, 1000, 4099};
    static const size_t chunks[] = {0, 1, 3, 64, 5000};
    static const char *threads[] = {"1", "2", "3", "8", "64", "1000", NULL};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; ++a)
        for (size_t b = 0; b < sizeof chunks / sizeof chunks[0]; ++b)
            for (size_t t = 0; t < sizeof threads / sizeof threads[0]; ++t) {
                int ranges = 0, on_caller = 0;
                run(ns[a], chunks[b], threads[t], &ranges, &on_caller);
                assert_true(ranges >= 1);
                assert_true(ranges <= 64);
                assert_true(on_caller >= 1); /* the caller always runs a range */
                const size_t chunk = chunks[b] ? chunks[b] : 1;
                if (ns[a] / chunk >= 1) assert_true((size_t)ranges <= ns[a] / chunk);
            }
    int ranges = 0, on_caller = 0;
    run(4096, 1, "4", &ranges, &on_caller); /* as asked: four ranges */
    assert_int_equal(ranges, 4);
    run(10, 100, "8", &ranges, &on_caller); /* under one chunk: the caller alone */
    assert_int_equal(ranges, 1);
    assert_int_equal(on_caller, 1);
    run(100, 1, "0", &ranges, &on_caller); /* nonsense counts mean one thread */
    assert_int_equal(ranges, 1);
}

static void test_parallel_for_empty(void **state) {
    (void)state;
    cm_test_parallel_for(0, 1, NULL, NULL); /* nothing to run: body never called */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_for_covers_once),
        cmocka_unit_test(test_parallel_for_empty),
    };
    cm_test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
