/*
 * The out-of-memory report: its text built from injected numbers (cm__oom_format() is a pure
 * function), byte formatting, the probe for the largest allocation that succeeds, and the whole
 * path on a simulated device with a known amount of memory: trim the pools and retry once
 * (which succeeds when cached memory was in the way), or report with the real numbers and leave
 * the device usable.
 *
 * FAULT INJECTION: the path tests run on a simulated device (test_buffer_fake.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "memory_internal.h"
#include "test_buffer_fake.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

static void test_format_bytes(void **state) {
    (void)state;
    char b[32];
    assert_string_equal(cm__format_bytes(0, b, sizeof b), "0 B");
    assert_string_equal(cm__format_bytes(1023, b, sizeof b), "1023 B");
    assert_string_equal(cm__format_bytes(1024, b, sizeof b), "1.00 KiB");
    assert_string_equal(cm__format_bytes(1536, b, sizeof b), "1.50 KiB");
    assert_string_equal(cm__format_bytes(MiB, b, sizeof b), "1.00 MiB");
    assert_string_equal(cm__format_bytes(140 * GiB, b, sizeof b), "140.00 GiB");
    assert_string_equal(cm__format_bytes((size_t)1 << 40, b, sizeof b), "1.00 TiB");
    assert_string_equal(cm__format_bytes(SIZE_MAX, b, sizeof b), "16.00 EiB");
    char tiny[4];
    assert_string_equal(cm__format_bytes(140 * GiB, tiny, sizeof tiny), "140");
    assert_null(cm__format_bytes(1, NULL, 0));
}

static cm__oom_numbers_t h200_case(void) {
    cm__oom_numbers_t n;
    memset(&n, 0, sizeof n);
    n.device = 0;
    n.device_name = "NVIDIA H200";
    n.requested = 40 * GiB;
    n.total_bytes = 140 * GiB;
    n.free_bytes = 10 * GiB;
    n.live_bytes = 80 * GiB;
    n.live_buffers = 12;
    n.cached_bytes = 2 * GiB;
    n.trimmed_bytes = 1 * GiB;
    n.largest_ok = 9 * GiB + 512 * MiB;
    n.largest_known = true;
    return n;
}

static void test_report_text_from_numbers(void **state) {
    (void)state;
    cm__oom_numbers_t n = h200_case();
    char msg[CM_ERROR_MESSAGE_MAX], hint[CM_ERROR_HINT_MAX];
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    /* ours = 80 live + 2 cached = 82 GiB; used = 140 - 10 = 130 GiB; outside = 48 GiB */
    assert_string_equal(msg,
        "out of memory: cannot allocate 40.00 GiB (42949672960 bytes) on device 0 (NVIDIA H200); "
        "the device has 140.00 GiB in total, 10.00 GiB free; this process holds 82.00 GiB through "
        "libcudamodel (80.00 GiB in 12 live buffers, 2.00 GiB cached in its pools after 1.00 GiB "
        "were released for a second attempt); 48.00 GiB is held outside the library (other "
        "processes, CUDA contexts, direct CUDA allocations); the largest allocation that succeeds "
        "now is 9.50 GiB");
    assert_string_equal(hint,
        "ask for at most 9.50 GiB at once (smaller batches or tiles); destroy buffers you no "
        "longer need (12 live, 80.00 GiB; cm_device_leak_report() lists them); release cached "
        "pool memory of other streams' frees once they complete (synchronize, then "
        "cm_device_pool_trim()); 48.00 GiB is used outside the library: nvidia-smi "
        "--query-compute-apps=pid,process_name,used_memory --format=csv names the processes that "
        "hold it");

    /* a stream-ordered request, one live buffer, nothing trimmed */
    n.stream_ordered = true;
    n.live_buffers = 1;
    n.trimmed_bytes = 0;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "(42949672960 bytes) for a stream-ordered buffer on device 0"));
    assert_non_null(strstr(msg, "in 1 live buffer, "));
    assert_non_null(strstr(msg, "a second attempt after trimming them failed too"));
    assert_non_null(strstr(hint, "(1 live, 80.00 GiB;"));
}

static void test_report_text_edge_cases(void **state) {
    (void)state;
    char msg[CM_ERROR_MESSAGE_MAX], hint[CM_ERROR_HINT_MAX];
    /* larger than the whole GPU: say so first */
    cm__oom_numbers_t n = h200_case();
    n.requested = (size_t)1 << 40;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "cannot allocate 1.00 TiB (1099511627776 bytes)"));
    assert_true(strncmp(hint, "the request alone is larger than the whole GPU (140.00 GiB): split "
                              "the work into smaller batches or tiles", 100) == 0);

    /* the library holds more than the driver counts as used (rounding): nothing is outside */
    n = h200_case();
    n.free_bytes = 100 * GiB;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "; 0 B is held outside the library"));
    assert_null(strstr(hint, "nvidia-smi"));

    /* nothing live, nothing cached: no advice about them */
    n = h200_case();
    n.live_bytes = n.live_buffers = n.cached_bytes = 0;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "this process holds 0 B through libcudamodel (0 B in 0 live buffers"));
    assert_null(strstr(hint, "destroy buffers"));
    assert_null(strstr(hint, "cached pool memory"));
    assert_non_null(strstr(hint, "130.00 GiB is used outside the library"));

    /* the probe found nothing at all, or could not run */
    n = h200_case();
    n.largest_ok = 0;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "not even 2 MiB can be allocated now"));
    assert_true(strncmp(hint, "use smaller batches or tiles", 28) == 0);
    n.largest_known = false;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_null(strstr(msg, "largest"));
    assert_null(strstr(msg, "not even"));
    /* not probed because the request exceeds the free memory: the free memory bounds it */
    assert_true(strncmp(hint, "ask for at most 10.00 GiB at once, the free memory now (smaller "
                              "batches or tiles)", 78) == 0);
    n.free_bytes = MiB; /* less than a 2 MiB page free: no figure to give */
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_true(strncmp(hint, "use smaller batches or tiles", 28) == 0);
    n.free_bytes = 50 * GiB; /* the request fit the free memory but the probe could not run */
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_true(strncmp(hint, "use smaller batches or tiles", 28) == 0);

    /* memory info unavailable */
    n = h200_case();
    n.free_bytes = n.total_bytes = 0;
    n.device_name = NULL;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_non_null(strstr(msg, "on device 0 (GPU); the device's free and total memory could not be read"));
    assert_null(strstr(msg, "outside"));

    /* extreme numbers: nothing overflows, everything stays terminated and in bounds */
    memset(&n, 0xFF, sizeof n);
    n.device_name = "a very long device name that goes on and on and on and on and on and on";
    n.processes_known = true; /* NVML said there are SIZE_MAX processes but listed none */
    n.processes = NULL;
    n.largest_known = true;
    n.stream_ordered = true;
    n.not_attempted = false;
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_true(strlen(msg) < sizeof msg);
    n.not_attempted = true; /* the refusal's wording, at the same extremes */
    cm__oom_format(&n, msg, sizeof msg, hint, sizeof hint);
    assert_true(strlen(msg) < sizeof msg);
    assert_true(strlen(hint) < sizeof hint);
    char small_msg[20], small_hint[8];
    n = h200_case();
    cm__oom_format(&n, small_msg, sizeof small_msg, small_hint, sizeof small_hint);
    assert_int_equal(strlen(small_msg), sizeof small_msg - 1);
    assert_true(strlen(small_hint) < sizeof small_hint); /* items that do not fit are left out */
    cm__oom_format(&n, NULL, 0, NULL, 0);                /* allowed: nothing to write */
}

/* ---------------------------------------------------------------- on the simulated device */

static int setup(void **state) {
    (void)state;
    fake_install(1, 64 * MiB);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    fake_uninstall();
    return (left || violations) ? -1 : 0;
}

static void test_probe_largest(void **state) {
    (void)state;
    bool known = false;
    assert_int_equal(cm__probe_largest(0, 8, &known), 0);
    assert_true(known);
    /* 24 MiB + 5 free: the probe finds 24 MiB at once (the 2 MiB granularity below free) */
    fake.external = 40 * MiB - 5;
    assert_int_equal(cm__probe_largest(fake_free_bytes(0), 8, &known), 24 * MiB);
    assert_true(known);
    assert_int_equal(fake.calls[FAKE_MALLOC], 1);
    /* free memory that cannot be had in one piece: binary search within the probes */
    fake.external = 50 * MiB;
    assert_int_equal(cm__probe_largest(40 * MiB, 8, &known), 14 * MiB);
    assert_true(known);
    /* another error: unknown */
    fake_fail_always(FAKE_MALLOC, cudaErrorUnknown);
    assert_int_equal(cm__probe_largest(10 * MiB, 8, &known), 0);
    assert_false(known);
    fake_fail_clear();
    EXPECT_CLEAN();
}

static void test_trim_and_retry_succeeds(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    fake.external = 8 * MiB;
    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *live = NULL, *s = NULL, *big = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 16 * MiB, &live));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 20 * MiB, &s));
    CM_ASSERT_OK(cm_buffer_destroy(s)); /* 20 MiB stay cached in the pool */
    assert_int_equal(fake_free_bytes(0), 20 * MiB);
    /* 30 MiB do not fit next to the cache; trimming it makes room */
    cm_last_error_clear();
    CM_ASSERT_OK(cm_buffer_create(dev, 30 * MiB, &big));
    assert_int_equal(fake.calls[FAKE_MALLOC], 3);     /* 16, 30 failed, 30 again */
    assert_int_equal(fake.calls[FAKE_POOL_TRIM], 1);
    assert_int_equal(cm_last_error()->status, CM_OK); /* nothing to report */
    CM_ASSERT_OK(cm_buffer_destroy(big));

    /* the same for a stream-ordered allocation: its own pool's cache is trimmed */
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 30 * MiB, &s));
    CM_ASSERT_OK(cm_buffer_destroy(s));
    CM_ASSERT_OK(cm_buffer_create(dev, 20 * MiB, &big)); /* cache 30 in the way: trim */
    assert_int_equal(fake.calls[FAKE_POOL_TRIM], 2);
    CM_ASSERT_OK(cm_buffer_destroy(big));
    CM_ASSERT_OK(cm_buffer_destroy(live));
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_report_on_real_failure(void **state) {
    (void)state;
    cm_device_t *dev = NULL, *other = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    CM_ASSERT_OK(cm_device_open(0, &other)); /* a second object on the same GPU counts as ours */
    fake.external = 10 * MiB;
    cm_stream_t *w = fake_wrap(dev, 0), *w_other = fake_wrap(other, 0);
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL, *s = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 16 * MiB, &a));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w_other, other, 8 * MiB, &b));
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 4 * MiB, &s));
    CM_ASSERT_OK(cm_buffer_destroy(s)); /* 4 MiB cached; trimmed before the retry */
    /* free now: 64 - 10 - 16 - 8 - 4 = 26 MiB, 30 after the trim */
    cm_buffer_t *keep = (cm_buffer_t *)(uintptr_t)0x1;
    EXPECT_FAIL(cm_buffer_create(dev, 40 * MiB, &keep), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "out of memory: cannot allocate 40.00 MiB (41943040 bytes) on device 0 (Fake GPU); "
                "the device has 64.00 MiB in total, 30.00 MiB free; this process holds 24.00 MiB "
                "through libcudamodel (24.00 MiB in 2 live buffers, 0 B cached in its pools after "
                "4.00 MiB were released for a second attempt); 10.00 MiB is held outside the "
                "library (other processes, CUDA contexts, direct CUDA allocations)");
    assert_ptr_equal(keep, (cm_buffer_t *)(uintptr_t)0x1);
    /* more than the free memory: not probed (a probe would hold all 30 MiB for a moment), so
     * no cudaMalloc asked for anything but the 40 MiB */
    assert_null(strstr(cm_last_error()->message, "largest"));
    assert_int_equal(fake.largest_ask, 40 * MiB);
    assert_int_equal(fake.calls[FAKE_MALLOC], 3); /* 16, then 40 twice (around the trim) */
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->cuda_error, cudaErrorMemoryAllocation);
    assert_string_equal(e->cuda_error_name, "cudaErrorMemoryAllocation");
    assert_int_equal(e->device, 0);
    assert_false(e->context_lost);
    assert_non_null(strstr(e->call, "cudaMalloc(41943040 bytes)"));
    assert_non_null(strstr(e->hint, "ask for at most 30.00 MiB at once, the free memory now"));
    assert_non_null(strstr(e->hint, "(2 live, 24.00 MiB;"));
    assert_non_null(strstr(e->hint, "nvidia-smi"));
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    assert_non_null(strstr(report, "CM_ERROR_DEVICE_OUT_OF_MEMORY: out of memory"));

    /* stream-ordered */
    EXPECT_FAIL(cm_buffer_create_on_stream(w, dev, 50 * MiB, &keep),
                CM_ERROR_DEVICE_OUT_OF_MEMORY, "(52428800 bytes) for a stream-ordered buffer");
    assert_non_null(strstr(cm_last_error()->call, "cudaMallocFromPoolAsync(52428800 bytes)"));

    /* the process is usable: what fits is allocated, and nothing was leaked by the probes */
    CM_ASSERT_OK(cm_buffer_create(dev, 30 * MiB, &c));
    cm_memory_report_t r;
    CM_ASSERT_OK(cm_device_memory_report(dev, &r));
    assert_int_equal(r.live_buffers, 2);
    assert_int_equal(r.live_bytes, 46 * MiB);
    CM_ASSERT_OK(cm_buffer_destroy(c));
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_stream_release(w_other));
    CM_ASSERT_OK(cm_device_close(dev));
    CM_ASSERT_OK(cm_device_close(other));
    EXPECT_CLEAN();
}

/* A request that the free memory would hold fails anyway (fragmentation, simulated by a largest
 * piece): the report probes below the request, never above it, and names what fits. */
static void test_report_probes_below_the_request(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    fake.max_piece = 12 * MiB;
    cm_buffer_t *b = NULL;
    unsigned long mallocs = fake.calls[FAKE_MALLOC];
    EXPECT_FAIL(cm_buffer_create(dev, 20 * MiB, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "the device has 64.00 MiB in total, 64.00 MiB free; this process holds 0 B "
                "through libcudamodel");
    assert_null(b);
    const cm_error_t *e = cm_last_error();
    assert_non_null(strstr(e->message, "; the largest allocation that succeeds now is 12.00 MiB"));
    assert_non_null(strstr(e->hint, "ask for at most 12.00 MiB at once (smaller batches"));
    assert_int_equal(fake.largest_ask, 20 * MiB); /* the probes stayed below the request */
    /* the request and its retry, then the probes: 18 no, 8, 12 yes, 14 no */
    assert_int_equal(fake.calls[FAKE_MALLOC] - mallocs, 2 + 4);
    assert_int_equal(fake_free_bytes(0), 64 * MiB); /* every probe was freed */

    /* a request of one 2 MiB page or less is not probed (nothing below it to name) */
    fake.max_piece = MiB;
    mallocs = fake.calls[FAKE_MALLOC];
    EXPECT_FAIL(cm_buffer_create(dev, 2 * MiB, &b), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "cannot allocate 2.00 MiB");
    assert_null(strstr(cm_last_error()->message, "largest"));
    assert_null(strstr(cm_last_error()->message, "not even"));
    assert_int_equal(fake.calls[FAKE_MALLOC] - mallocs, 2);
    fake.max_piece = 0;
    CM_ASSERT_OK(cm_buffer_create(dev, 20 * MiB, &b)); /* usable afterwards */
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

/* A request larger than the whole device: refused without a CUDA call (the driver may hold
 * most of the free memory for a moment before it refuses one) and without trimming the pools'
 * cache for a retry that cannot succeed. */
static void test_larger_than_the_device_not_attempted(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_stream_t *w = fake_wrap(dev, 0);
    cm_buffer_t *s = NULL, *b = NULL;
    CM_ASSERT_OK(cm_buffer_create_on_stream(w, dev, 20 * MiB, &s));
    CM_ASSERT_OK(cm_buffer_destroy(s)); /* 20 MiB stay cached in the pool */
    const unsigned long mallocs = fake.calls[FAKE_MALLOC], asyncs = fake.calls[FAKE_MALLOC_ASYNC],
                        trims = fake.calls[FAKE_POOL_TRIM];
    cm_buffer_t *keep = (cm_buffer_t *)(uintptr_t)0x1;
    EXPECT_FAIL(cm_buffer_create(dev, 64 * MiB + 1, &keep), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                "out of memory: cannot allocate 64.00 MiB (67108865 bytes) on device 0 (Fake "
                "GPU); the device has 64.00 MiB in total, 44.00 MiB free; this process holds "
                "20.00 MiB through libcudamodel (0 B in 0 live buffers, 20.00 MiB cached in its "
                "pools); not attempted: no allocation larger than the device's whole memory can "
                "succeed");
    assert_ptr_equal(keep, (cm_buffer_t *)(uintptr_t)0x1);
    const cm_error_t *e = cm_last_error();
    assert_int_equal(e->cuda_error, cudaErrorMemoryAllocation);
    assert_false(e->context_lost);
    assert_non_null(strstr(e->call, "cudaMalloc(67108865 bytes) in cm_buffer_create"));
    assert_non_null(strstr(e->call, "not called: more than the device has"));
    assert_null(strstr(e->message, "second attempt"));
    assert_non_null(strstr(e->hint, "the request alone is larger than the whole GPU (64.00 MiB)"));
    EXPECT_FAIL(cm_buffer_create_on_stream(w, dev, 100 * MiB, &keep),
                CM_ERROR_DEVICE_OUT_OF_MEMORY, "(104857600 bytes) for a stream-ordered buffer");
    assert_non_null(strstr(cm_last_error()->call, "cudaMallocFromPoolAsync(104857600 bytes)"));
    /* CUDA was not asked, the cache was not trimmed */
    assert_int_equal(fake.calls[FAKE_MALLOC], mallocs);
    assert_int_equal(fake.calls[FAKE_MALLOC_ASYNC], asyncs);
    assert_int_equal(fake.calls[FAKE_POOL_TRIM], trims);
    assert_int_equal(fake_free_bytes(0), 44 * MiB);
    CM_ASSERT_OK(cm_buffer_create(dev, 20 * MiB, &b)); /* usable afterwards */
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_release(w));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

static void test_pinned_host_out_of_memory(void **state) {
    (void)state;
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_open(0, &dev));
    cm_host_buffer_t *h = NULL;
    fake_fail(FAKE_HOST_ALLOC, cudaErrorMemoryAllocation, 1);
    EXPECT_FAIL(cm_host_buffer_create(dev, 3 * GiB, 0, &h), CM_ERROR_HOST_OUT_OF_MEMORY,
                "cannot pin 3.00 GiB (3221225472 bytes) of host memory for device 0: cudaHostAlloc "
                "failed (cudaErrorMemoryAllocation)");
    assert_non_null(strstr(cm_last_error()->hint, "ulimit -l"));
    unsigned char mem[256];
    fake_fail(FAKE_HOST_REGISTER, cudaErrorMemoryAllocation, 1);
    EXPECT_FAIL(cm_host_buffer_register(dev, mem, sizeof mem, 0, &h), CM_ERROR_HOST_OUT_OF_MEMORY,
                "cannot pin 256 B (256 bytes) of host memory for device 0: cudaHostRegister");
    assert_null(h);
    CM_ASSERT_OK(cm_host_buffer_create(dev, 64, 0, &h)); /* usable afterwards */
    CM_ASSERT_OK(cm_host_buffer_destroy(h));
    CM_ASSERT_OK(cm_device_close(dev));
    EXPECT_CLEAN();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_bytes),
        cmocka_unit_test(test_report_text_from_numbers),
        cmocka_unit_test(test_report_text_edge_cases),
        cmocka_unit_test_setup_teardown(test_probe_largest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trim_and_retry_succeeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_on_real_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_report_probes_below_the_request, setup, teardown),
        cmocka_unit_test_setup_teardown(test_larger_than_the_device_not_attempted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_pinned_host_out_of_memory, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
