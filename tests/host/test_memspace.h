/*
 * FAULT INJECTION: what the host tests of memspace.h share (test_memspace_*.c). They run on the
 * complete simulation of test_full_fake.h (two simulated GPUs of 64 MiB, memory pools, symbols,
 * pitched memory, arrays, texture and surface objects, managed memory) and fail its calls with
 * cmf_arm(). Every test ends with the same checks (ms_teardown): no live handle of any kind,
 * nothing of the library left in the simulation, no copy or free outside its memory, no memory
 * freed under a texture object, the thread's context stack as it was.
 */
#ifndef CM_TEST_MEMSPACE_H
#define CM_TEST_MEMSPACE_H

#ifndef _POSIX_C_SOURCE
#  define _POSIX_C_SOURCE 200809L
#endif

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/memspace.h>
#include <cudamodel/stream.h>

#include "handle.h"
#include "memspace_internal.h"
#include "test_full_fake.h"

#define MS_MIB ((size_t)1 << 20)
#define MS_OK(expr) CM_ASSERT_OK(expr)

static inline int ms_setup(void **state) {
    (void)state;
    cmf_install(2, 64 * MS_MIB);
    return 0;
}

static inline int ms_teardown(void **state) {
    (void)state;
    int bad = cmf_leftovers_report();
    if (cmf_ctx_depth() != 0 || cmf.implicit_ctx != 0) {
        print_error("context stack depth %d, %lu implicit bindings (%s)\n", cmf_ctx_depth(),
                    cmf.implicit_ctx, cmf.implicit_what);
        bad = 1;
    }
    cmf_uninstall();
    return bad ? -1 : 0;
}

/* The call returned st, its message holds sub (NULL: any), a hint is there (and holds hsub). */
#define MS_FAIL(expr, st, sub) ms_expect_fail((expr), (st), (sub), NULL, #expr, __FILE__, __LINE__)
#define MS_FAIL_HINT(expr, st, sub, hsub)                                                    \
    ms_expect_fail((expr), (st), (sub), (hsub), #expr, __FILE__, __LINE__)
static inline void ms_expect_fail(int got, int st, const char *sub, const char *hsub,
                                  const char *expr, const char *file, int line) {
    cm_test_assert_status(got, st, expr, file, line);
    const cm_error_t *e = cm_last_error();
    if (sub != NULL && strstr(e->message, sub) == NULL) {
        print_error("%s: message \"%s\" lacks \"%s\"\n", expr, e->message, sub);
        _fail(file, line);
    }
    if (e->hint[0] == '\0') {
        print_error("%s: no hint (message \"%s\")\n", expr, e->message);
        _fail(file, line);
    }
    if (hsub != NULL && strstr(e->hint, hsub) == NULL) {
        print_error("%s: hint \"%s\" lacks \"%s\"\n", expr, e->hint, hsub);
        _fail(file, line);
    }
}

static inline cm_device_t *ms_open(int ordinal) {
    cm_device_t *d = NULL;
    MS_OK(cm_device_open(ordinal, &d));
    return d;
}

static inline cm_stream_t *ms_stream(cm_device_t *d) {
    cm_stream_t *s = NULL;
    MS_OK(cm_stream_acquire(d, CM_STREAM_PRIORITY_LOW, &s));
    return s;
}

/* A handle value that was live once and is now stale (destroyed). */
static inline cm_pitched_t *ms_stale_pitched(cm_device_t *d) {
    cm_pitched_t *p = NULL;
    MS_OK(cm_pitched_create(d, 4, 4, CM_FORMAT_U8, &p));
    MS_OK(cm_pitched_destroy(p));
    return p;
}

#endif /* CM_TEST_MEMSPACE_H */
