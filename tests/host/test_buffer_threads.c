/*
 * A device object used by several threads at once (buffer.h: "A cm_device_t is thread-safe"):
 * threads create and destroy buffers (synchronous and stream-ordered, device and pinned host),
 * copy data through them (direct and through the shared staging buffers) and read the reports,
 * while the counts must stay exact and every byte arrive where it belongs. Run it under
 * AddressSanitizer or valgrind to catch races that corrupt memory.
 *
 * FAULT INJECTION: runs on a simulated device (test_buffer_fake.h), one device.
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

enum { THREADS = 6, ROUNDS = 150 };

typedef struct worker {
    cm_device_t *dev;
    cm_stream_t *stream; /* shared by the workers: queuing on one stream from several threads */
    unsigned seed;
    int failures;
    char first_failure[256];
} worker_t;

static unsigned next_rand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xFFFFFFu;
}

static void note(worker_t *w, const char *what) {
    if (w->failures++ == 0) {
        char detail[2048];
        cm_error_format(NULL, detail, sizeof detail);
        snprintf(w->first_failure, sizeof w->first_failure, "%s: %.200s", what, detail);
    }
}

static void *work(void *p) {
    worker_t *w = p;
    unsigned char *src = malloc(40000), *dst = malloc(40000);
    if (src == NULL || dst == NULL) {
        w->failures++;
        free(src);
        free(dst);
        return NULL;
    }
    for (int round = 0; round < ROUNDS; ++round) {
        size_t n = 1 + next_rand(&w->seed) % 39999;
        for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)next_rand(&w->seed);
        cm_buffer_t *b = NULL;
        cm_host_buffer_t *h = NULL;
        bool ordered = next_rand(&w->seed) % 2;
        cm_status_t s = ordered ? cm_buffer_create_on_stream(w->stream, w->dev, n, &b)
                                : cm_buffer_create(w->dev, n, &b);
        if (s != CM_OK) {
            note(w, "create");
            continue;
        }
        if (cm_buffer_copy_from_host(NULL, b, 0, src, n) != CM_OK) note(w, "copy in");
        memset(dst, 0, n);
        if (round % 3 == 0) {
            /* through a pinned host buffer */
            if (cm_host_buffer_create(w->dev, n, 0, &h) != CM_OK ||
                cm_buffer_copy_to_host_buffer(NULL, b, 0, h, 0, n) != CM_OK) {
                note(w, "pinned");
            } else {
                void *hp = NULL;
                if (cm_host_buffer_data(h, &hp) == CM_OK) memcpy(dst, hp, n);
            }
        } else if (cm_buffer_copy_to_host(NULL, b, 0, dst, n) != CM_OK) {
            note(w, "copy out");
        }
        if (memcmp(dst, src, n) != 0) note(w, "data differs");
        if (round % 10 == 0) {
            cm_memory_report_t r;
            char text[256];
            if (cm_device_memory_report(w->dev, &r) != CM_OK ||
                cm_device_leak_report(w->dev, text, sizeof text, NULL) != CM_OK)
                note(w, "reports");
            else if (r.live_buffers < 1)
                note(w, "my buffer is not counted");
        }
        if (cm_host_buffer_destroy(h) != CM_OK) note(w, "host destroy");
        if (cm_buffer_destroy(b) != CM_OK) note(w, "destroy");
        if (cm_buffer_destroy(b) != CM_ERROR_INVALID_ARGUMENT) note(w, "double destroy not seen");
    }
    free(src);
    free(dst);
    return NULL;
}

static void test_one_device_many_threads(void **state) {
    (void)state;
    fake_install(1, (size_t)512 << 20);
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    /* every copy staged, through few small staging buffers: the threads contend for them */
    cm_staging_config_t cfg = {4096, 2, 2, 1};
    CM_ASSERT_OK(cm_device_staging_configure(dev, &cfg));
    cm_stream_t *stream = fake_wrap(dev, 0);
    pthread_t t[THREADS];
    worker_t w[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].dev = dev;
        w[i].stream = stream;
        w[i].seed = 17u * (unsigned)i + 1u;
        assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i) assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < THREADS; ++i) {
        if (w[i].failures != 0) {
            print_error("thread %d: %d failures, the first: %s\n", i, w[i].failures,
                        w[i].first_failure);
            fail();
        }
    }
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 0);
    assert_int_equal(r.live_bytes, 0);
    assert_int_equal(r.live_host_buffers, 0);
    assert_true(r.peak_live_bytes > 0);
    CM_ASSERT_OK(cm_stream_release(stream));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
    fake_uninstall();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_device_many_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
