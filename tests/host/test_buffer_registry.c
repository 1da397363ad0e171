/*
 * Buffers and device objects in the generational handle table: a device closed by another
 * thread is refused, destroyed handles stay detectably dead and the recent ones say what they
 * were, 200k random creates/destroys keep exact counts, and a destroy on another device's
 * stream is refused. Fault injection: runs on the simulated device.
 */
#define _POSIX_C_SOURCE 200809L
#include "cm_test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "test_buffer_fake.h"

#define INV CM_ERROR_INVALID_ARGUMENT


/* the thread's device memo does not outlive a close */
static void test_memo_close(void **state) {
    (void)state;
    cm_device_t *d = NULL, *keep = NULL;
    CM_ASSERT_OK(cm_device_open(1, &keep)); /* keeps the registry alive */
    CM_ASSERT_OK(cm_device_open(0, &d));
    cm_stream_t *w = fake_wrap(d, 0), *w_keep = fake_wrap(keep, 1);
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, d, 0, &b));
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w, b));
    CM_ASSERT_OK(cm_buffer_create(d, 10, &b));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(d));
    b = (cm_buffer_t *)(uintptr_t)0x1;
    EXPECT_FAIL(cm_buffer_create(d, 16, &b), INV, "already closed");
    /* with a live stream (of the device object that stays open) the closed dev is named */
    EXPECT_FAIL(cm_buffer_create_on_stream(w_keep, d, 16, &b), INV, "already closed");
    EXPECT_FAIL(cm_buffer_create(d, 0, &b), INV, "already closed");
    assert_ptr_equal(b, (cm_buffer_t *)(uintptr_t)0x1);
    /* a new device object (maybe at the same address) works */
    cm_device_t *d2 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d2));
    cm_stream_t *w2 = fake_wrap(d2, 0);
    b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w2, d2, 64, &b));
    cm_buffer_info_t info;
    CM_ASSERT_OK(cm_buffer_info(b, &info));
    assert_ptr_equal(info.device, d2);
    assert_ptr_equal(info.stream, w2);
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_release(w2));
    CM_ASSERT_OK(cm_stream_release(w_keep));
    CM_ASSERT_OK(cm_device_close(d2));
    CM_ASSERT_OK(cm_device_close(keep));
    EXPECT_CLEAN();
}

typedef struct {
    cm_device_t *dev;
    pthread_mutex_t m;
    pthread_cond_t c;
    int phase;
    cm_status_t got;
    char msg[1024];
} shared_t;

static void *memo_thread(void *p) {
    shared_t *s = p;
    cm_buffer_t *b = NULL;
    if (cm_buffer_create(s->dev, 0, &b) != CM_OK || cm_buffer_destroy(b) != CM_OK) s->got = -1;
    pthread_mutex_lock(&s->m);
    s->phase = 1;
    pthread_cond_broadcast(&s->c);
    while (s->phase != 2) pthread_cond_wait(&s->c, &s->m);
    pthread_mutex_unlock(&s->m);
    s->got = cm_buffer_create(s->dev, 0, &b);
    snprintf(s->msg, sizeof s->msg, "%s", cm_last_error()->message);
    return NULL;
}

/* a device closed by another thread: this thread's memo is not trusted */
static void test_memo_close_other_thread(void **state) {
    (void)state;
    cm_device_t *keep = NULL;
    CM_ASSERT_OK(cm_device_open(1, &keep));
    shared_t s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.m, NULL);
    pthread_cond_init(&s.c, NULL);
    CM_ASSERT_OK(cm_device_open(0, &s.dev));
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, memo_thread, &s), 0);
    pthread_mutex_lock(&s.m);
    while (s.phase != 1) pthread_cond_wait(&s.c, &s.m);
    pthread_mutex_unlock(&s.m);
    CM_ASSERT_OK(cm_device_close(s.dev));
    pthread_mutex_lock(&s.m);
    s.phase = 2;
    pthread_cond_broadcast(&s.c);
    pthread_mutex_unlock(&s.m);
    pthread_join(t, NULL);
    assert_int_equal(s.got, INV);
    assert_non_null(strstr(s.msg, "already closed"));
    CM_ASSERT_OK(cm_device_close(keep));
    EXPECT_CLEAN();
}

/* destroyed buffers stay detectably dead (forever: handles are generational values); the
 * recent ones (well within the handle table's CM__H_KEEP) still say what they were, also while
 * new buffers are created and destroyed */
static void test_quarantine_window(void **state) {
    (void)state;
    cm_device_t *d = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d));
    cm_stream_t *w = fake_wrap(d, 0);
    enum { M = 1000 };
    cm_buffer_t **old = calloc(M, sizeof *old), **fresh = calloc(M, sizeof *fresh);
    for (int i = 0; i < M; ++i)
        CM_ASSERT_OK(cm_buffer_create_labeled(d, (size_t)i, "old", &old[i]));
    for (int i = 0; i < M; ++i) CM_ASSERT_OK(cm_buffer_destroy(old[i]));
    for (int round = 0; round < 3; ++round) {
        /* the last 256 destroyed: "already destroyed" with what they were */
        for (int i = M - 256; i < M; ++i) {
            cm_buffer_info_t info;
            EXPECT_FAIL(cm_buffer_info(old[i], &info), INV, "already destroyed");
            char want[64];
            snprintf(want, sizeof want, "(%d bytes)", i);
            assert_non_null(strstr(cm_last_error()->message, want));
            assert_non_null(strstr(cm_last_error()->message, "\"old\""));
        }
        /* new buffers never get the value of a destroyed one */
        for (int i = 0; i < M; ++i) {
            CM_ASSERT_OK(cm_buffer_create_on_stream(w, d, 8, &fresh[i]));
            for (int k = M - 256; k < M; ++k) assert_ptr_not_equal(fresh[i], old[k]);
        }
        for (int i = 0; i < M; ++i) assert_int_equal(fake_buffer_bytes(fresh[i]), 8);
        /* those die too; now they are the newest dead */
        for (int i = 0; i < M; ++i) CM_ASSERT_OK(cm_buffer_destroy_on_stream(w, fresh[i]));
        for (int i = M - 256; i < M; ++i)
            EXPECT_FAIL(cm_buffer_destroy(fresh[i]), INV, "already destroyed");
        memcpy(old, fresh, M * sizeof *old);
        for (int i = 0; i < M; ++i) {
            /* relabel expectation: fresh ones were 8 bytes, no label */
        }
        break;
    }
    free(old);
    free(fresh);
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(d));
    EXPECT_CLEAN();
}

static unsigned rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xFFFFFFu;
}

/* random creates and destroys: every live handle is found, every recently destroyed one is
 * dead, counts are exact (exercises the registry's backward-shift removal) */
static void test_registry_random(void **state) {
    (void)state;
    cm_device_t *d = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d));
    enum { CAP = 6000 };
    cm_buffer_t **live = calloc(CAP, sizeof *live);
    size_t *size = calloc(CAP, sizeof *size);
    cm_buffer_t *dead[256];
    int ndead = 0, nlive = 0, dpos = 0;
    size_t bytes = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 200000; ++step) {
        unsigned r = rnd(&seed);
        int grow = nlive < 10 || (nlive < CAP && (r % 100) < (step < 100000 ? 55u : 45u));
        if (grow) {
            size_t n = r % 64;
            CM_ASSERT_OK(cm_buffer_create(d, n, &live[nlive]));
            size[nlive] = n;
            bytes += n;
            ++nlive;
        } else {
            int k = (int)(rnd(&seed) % (unsigned)nlive);
            CM_ASSERT_OK(cm_buffer_destroy(live[k]));
            bytes -= size[k];
            dead[dpos] = live[k];
            dpos = (dpos + 1) % 256;
            if (ndead < 256) ++ndead;
            live[k] = live[nlive - 1];
            size[k] = size[nlive - 1];
            --nlive;
        }
        if (step % 5000 == 0) {
            for (int i = 0; i < nlive; ++i) assert_int_equal(fake_buffer_bytes(live[i]), size[i]);
            for (int i = 0; i < ndead; ++i) {
                cm_buffer_info_t info;
                EXPECT_FAIL(cm_buffer_info(dead[i], &info), INV, "already destroyed");
            }
            cm_memory_report_t rep;
            CM_ASSERT_OK(cm_device_memory_report(d, &rep));
            assert_int_equal(rep.live_buffers, (size_t)nlive);
            assert_int_equal(rep.live_bytes, bytes);
        }
    }
    for (int i = 0; i < nlive; ++i) CM_ASSERT_OK(cm_buffer_destroy(live[i]));
    free(live);
    free(size);
    CM_ASSERT_OK(cm_device_close(d));
    EXPECT_CLEAN();
}

/* destroy on a stream of another device is refused even when the thread's last stream is that
 * stream; the buffer stays alive. So does a destroy on a NULL or released stream. */
static void test_destroy_stream_other_device(void **state) {
    (void)state;
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_open(0, &d0));
    CM_ASSERT_OK(cm_device_open(1, &d1));
    cm_stream_t *w0 = fake_wrap(d0, 0), *w1 = fake_wrap(d1, 1);
    cm_buffer_t *b0 = NULL, *b1 = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w0, d0, 64, &b0));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w1, d1, 64, &b1)); /* memo: stream 1 */
    EXPECT_FAIL(cm_buffer_destroy_on_stream(w1, b0), INV,
                "the stream belongs to device 1 but the buffer to device 0");
    assert_int_equal(fake_buffer_bytes(b0), 64);
    /* a CUDA stream that is not one cannot become a library stream */
    cm_stream_t *bad = (cm_stream_t *)(uintptr_t)0x1;
    EXPECT_FAIL(cm_stream_wrap(d0, FAKE_BAD_STREAM, &bad), INV, "not a valid CUDA stream");
    assert_null(bad);
    /* NULL and released streams are refused; the buffer stays alive */
    EXPECT_FAIL(cm_buffer_destroy_on_stream(NULL, b0), INV, "stream is NULL");
    assert_int_equal(fake_buffer_bytes(b0), 64);
    cm_stream_t *gone = fake_wrap(d0, 0);
    CM_ASSERT_OK(cm_stream_release(gone));
    EXPECT_FAIL(cm_buffer_destroy_on_stream(gone, b0), INV, "stream was already released");
    assert_int_equal(fake_buffer_bytes(b0), 64);
    /* a synchronous buffer destroyed on a stream of its device */
    cm_buffer_t *s0 = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 32, &s0));
    EXPECT_FAIL(cm_buffer_destroy_on_stream(w1, s0), INV, "belongs to device 1");
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w0, s0));
    /* the default streams cannot be wrapped: synchronous work passes NULL */
    EXPECT_FAIL(cm_stream_wrap(d0, cudaStreamPerThread, &bad), INV, "cannot wrap a default stream");
    CM_ASSERT_OK(cm_buffer_destroy(b0)); /* freed on its own stream */
    CM_ASSERT_OK(cm_buffer_destroy_on_stream(w1, b1));
    EXPECT_FAIL(cm_buffer_destroy_on_stream(w1, b1), INV, "already destroyed");
    CM_ASSERT_OK(cm_stream_release(w0));
    CM_ASSERT_OK(cm_stream_release(w1));
    /* wrong kinds */
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)(void *)d0), INV, "is a cm_device_t, not a cm_buffer_t");
    EXPECT_FAIL(cm_buffer_create((cm_device_t *)(void *)b1, 1, &b0), INV, "already destroyed");
    unsigned char junk[64] = {0};
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)(void *)(junk + 3)), INV, "is not a live cm_buffer_t");
    EXPECT_FAIL(cm_buffer_destroy((cm_buffer_t *)(void *)junk), INV, "is not a live cm_buffer_t");
    CM_ASSERT_OK(cm_device_close(d0));
    CM_ASSERT_OK(cm_device_close(d1));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_memo_close, fake_setup2, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_memo_close_other_thread, fake_setup2, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_quarantine_window, fake_setup2, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_registry_random, fake_setup2, fake_teardown_clean),
        cmocka_unit_test_setup_teardown(test_destroy_stream_other_device, fake_setup2, fake_teardown_clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
