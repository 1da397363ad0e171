/*
 * FAULT INJECTION: constant and __device__ symbols and managed memory of memspace.h on the
 * simulated GPUs of test_full_fake.h: every argument rule (devices, symbols, ranges, streams of
 * another device, locations, advice, concurrent managed access), the copies' results, the
 * out-of-memory report of managed memory with and without oversubscription, and the leak
 * report. Real-GPU behaviour belongs to the GPU tests.
 */
#include "test_memspace.h"

/* ---------------------------------------------------------------- symbols */

static void test_symbol_copies_round_trip(void **state) {
    (void)state;
    cm_device_t *d0 = ms_open(0), *d1 = ms_open(1);
    const void *sym = cmf_symbol(64);
    float taps[16], back[16];
    for (int i = 0; i < 16; ++i) taps[i] = (float)i * 0.5f;
    MS_OK(cm_symbol_copy_from_host(NULL, d0, sym, 0, taps, sizeof taps));
    assert_memory_equal(cmf_symbol_data(sym, 0), taps, sizeof taps);
    /* the symbol of device 1 is another one: untouched */
    for (int i = 0; i < 64; ++i) assert_int_equal(cmf_symbol_data(sym, 1)[i], 0);
    MS_OK(cm_symbol_copy_to_host(NULL, d0, sym, 0, back, sizeof back));
    assert_memory_equal(back, taps, sizeof taps);
    /* an offset, on a stream of the device */
    cm_stream_t *s = ms_stream(d1);
    MS_OK(cm_symbol_copy_from_host(s, d1, sym, 60, &taps[3], 4));
    MS_OK(cm_stream_synchronize(s));
    assert_memory_equal(cmf_symbol_data(sym, 1) + 60, &taps[3], 4);
    float one = 0.0f;
    MS_OK(cm_symbol_copy_to_host(s, d1, sym, 60, &one, sizeof one));
    MS_OK(cm_stream_synchronize(s));
    assert_true(one == taps[3]);
    /* 0 bytes at the end, and from a NULL pointer: nothing to do */
    MS_OK(cm_symbol_copy_from_host(NULL, d0, sym, 64, NULL, 0));
    MS_OK(cm_stream_release(s));
    MS_OK(cm_device_close(d0));
    MS_OK(cm_device_close(d1));
}

static void test_symbol_range_is_checked_before_writing(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    const void *sym = cmf_symbol(64);
    unsigned char big[80];
    memset(big, 0x77, sizeof big);
    MS_FAIL_HINT(cm_symbol_copy_from_host(NULL, d, sym, 0, big, 80), CM_ERROR_INVALID_ARGUMENT,
                 "a copy of 80 bytes at offset 0 (ending at byte 80) does not fit the 64-byte "
                 "symbol", "at most 64 bytes fit");
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, sym, 60, big, 8), CM_ERROR_INVALID_ARGUMENT,
            "8 bytes at offset 60");
    MS_FAIL_HINT(cm_symbol_copy_to_host(NULL, d, sym, 65, big, 0), CM_ERROR_INVALID_ARGUMENT,
                 "64-byte symbol", "offsets into the symbol run from 0 to its size, 64");
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, sym, 8, big, SIZE_MAX), CM_ERROR_INVALID_ARGUMENT,
            "overflows size_t");
    /* nothing was written */
    for (int i = 0; i < 64; ++i) assert_int_equal(cmf_symbol_data(sym, 0)[i], 0);
    MS_OK(cm_device_close(d));
}

static void test_symbol_arguments(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0), *other = ms_open(1);
    const void *sym = cmf_symbol(16);
    char buf[16] = {0};
    MS_FAIL(cm_symbol_copy_from_host(NULL, NULL, sym, 0, buf, 4), CM_ERROR_INVALID_ARGUMENT,
            "dev is NULL");
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, NULL, 0, buf, 4), CM_ERROR_INVALID_ARGUMENT,
            "symbol is NULL");
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, sym, 0, NULL, 4), CM_ERROR_INVALID_ARGUMENT,
            "src is NULL but bytes is 4");
    MS_FAIL(cm_symbol_copy_to_host(NULL, d, sym, 0, NULL, 4), CM_ERROR_INVALID_ARGUMENT,
            "dst is NULL but bytes is 4");
    /* an address that is no symbol: the causes are named */
    static const char not_a_symbol[] = "taps";
    MS_FAIL_HINT(cm_symbol_copy_from_host(NULL, d, not_a_symbol, 0, buf, 4),
                 CM_ERROR_INVALID_ARGUMENT, "is not a __constant__ or __device__ variable",
                 "-cudart shared");
    assert_int_equal(cm_last_error()->cuda_error, cudaErrorInvalidSymbol);
    /* a stream of another device, a released stream */
    cm_stream_t *s1 = ms_stream(other);
    MS_FAIL_HINT(cm_symbol_copy_from_host(s1, d, sym, 0, buf, 4), CM_ERROR_INVALID_ARGUMENT,
                 "the stream belongs to device 1 but the symbol's device to device 0",
                 "stream of device 0");
    MS_OK(cm_stream_release(s1));
    MS_FAIL(cm_symbol_copy_from_host(s1, d, sym, 0, buf, 4), CM_ERROR_INVALID_ARGUMENT,
            "already released");
    /* a closed device */
    MS_OK(cm_device_close(other));
    MS_FAIL(cm_symbol_copy_to_host(NULL, other, sym, 0, buf, 4), CM_ERROR_INVALID_ARGUMENT,
            "already closed");
    MS_FAIL(cm_symbol_address(other, sym, NULL, NULL), CM_ERROR_INVALID_ARGUMENT,
            "already closed");
    MS_OK(cm_device_close(d));
}

static void test_symbol_address(void **state) {
    (void)state;
    cm_device_t *d = ms_open(1);
    const void *sym = cmf_symbol(256);
    void *p = NULL;
    size_t n = 0;
    MS_OK(cm_symbol_address(d, sym, &p, &n));
    assert_ptr_equal(p, cmf_symbol_data(sym, 1));
    assert_int_equal(n, 256);
    MS_OK(cm_symbol_address(d, sym, NULL, &n)); /* either output may be left out */
    MS_OK(cm_symbol_address(d, sym, &p, NULL));
    static const int not_a_symbol = 3;
    p = (void *)(uintptr_t)0x1;
    MS_FAIL(cm_symbol_address(d, &not_a_symbol, &p, &n), CM_ERROR_INVALID_ARGUMENT,
            "not a __constant__ or __device__ variable");
    assert_ptr_equal(p, (void *)(uintptr_t)0x1);
    MS_FAIL(cm_symbol_address(d, NULL, &p, &n), CM_ERROR_INVALID_ARGUMENT, "symbol is NULL");
    MS_OK(cm_device_close(d));
}

static void test_symbol_copy_failure_is_named(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    const void *sym = cmf_symbol(32);
    char buf[32] = {0};
    cmf_arm(cmf_member_index("memcpy_to_symbol_async"), 0, 1, cudaErrorIllegalAddress);
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, sym, 0, buf, 32), CM_ERROR_CONTEXT_LOST, NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "cudaMemcpyToSymbolAsync"));
    assert_int_equal(cm_last_error()->device, 0);
    /* the device is lost: calls on it fail fast, device 1 still works */
    MS_FAIL(cm_symbol_copy_from_host(NULL, d, sym, 0, buf, 32), CM_ERROR_CONTEXT_LOST, NULL);
    cm_device_t *d1 = ms_open(1);
    MS_OK(cm_symbol_copy_from_host(NULL, d1, sym, 0, buf, 32));
    MS_OK(cm_device_close(d1));
    MS_OK(cm_device_close(d));
}

/* ---------------------------------------------------------------- managed memory */

static void test_managed_create_info_copies(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_managed_t *m = NULL;
    MS_OK(cm_managed_create_at(d, 4096, &m, "weights", "model.c", 12));
    cm_managed_info_t info;
    MS_OK(cm_managed_info(m, &info));
    assert_int_equal(info.bytes, 4096);
    assert_non_null(info.data);
    assert_ptr_equal(info.device, d);
    assert_int_equal(info.ordinal, 0);
    assert_true(info.concurrent_access);
    assert_string_equal(info.label, "weights");
    void *p = NULL;
    MS_OK(cm_managed_data(m, &p));
    assert_ptr_equal(p, info.data);
    /* copies in and out, at an offset, synchronous and on a stream */
    unsigned char in[100], out[100];
    for (int i = 0; i < 100; ++i) in[i] = (unsigned char)(i + 3);
    MS_OK(cm_managed_copy_from_host(NULL, m, 1000, in, sizeof in));
    assert_memory_equal((unsigned char *)p + 1000, in, sizeof in);
    cm_stream_t *s = ms_stream(d);
    MS_OK(cm_managed_copy_to_host(s, m, 1000, out, sizeof out));
    MS_OK(cm_stream_synchronize(s));
    assert_memory_equal(out, in, sizeof in);
    /* the leak report lists it, a close is refused while it lives */
    char report[1024];
    MS_OK(cm_device_leak_report(d, report, sizeof report, NULL));
    assert_non_null(strstr(report, "managed buffer of 4.00 KiB (4096 bytes), created at model.c:12 \"weights\""));
    MS_FAIL_HINT(cm_device_close(d), CM_ERROR_BUSY, "managed buffer of 4.00 KiB",
                 "cm_managed_destroy()");
    MS_OK(cm_stream_release(s));
    MS_OK(cm_managed_destroy(m));
    MS_FAIL(cm_managed_destroy(m), CM_ERROR_INVALID_ARGUMENT,
            "m was already destroyed: it was a managed buffer (cm_managed_t)");
    MS_FAIL(cm_managed_info(m, &info), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    MS_OK(cm_managed_destroy(NULL));
    /* an empty buffer holds no memory */
    MS_OK(cm_managed_create(d, 0, &m));
    MS_OK(cm_managed_data(m, &p));
    assert_null(p);
    MS_OK(cm_managed_copy_from_host(NULL, m, 0, NULL, 0));
    MS_OK(cm_managed_destroy(m));
    MS_OK(cm_device_close(d));
}

static void test_managed_arguments(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0), *d1 = ms_open(1);
    cm_managed_t *m = NULL;
    MS_FAIL(cm_managed_create(d, 64, NULL), CM_ERROR_INVALID_ARGUMENT, "out is NULL");
    MS_FAIL(cm_managed_create(NULL, 64, &m), CM_ERROR_INVALID_ARGUMENT, "dev is NULL");
    assert_null(m);
    MS_OK(cm_managed_create(d, 256, &m));
    char buf[64];
    MS_FAIL_HINT(cm_managed_copy_from_host(NULL, m, 200, buf, 64), CM_ERROR_INVALID_ARGUMENT,
                 "dst range out of bounds: offset 200 + 64 bytes = 264 is past the end of the "
                 "256-byte managed buffer", "at most 56 bytes fit");
    MS_FAIL(cm_managed_copy_to_host(NULL, m, 0, NULL, 8), CM_ERROR_INVALID_ARGUMENT,
            "dst is NULL but bytes is 8");
    MS_FAIL(cm_managed_copy_to_host(NULL, m, SIZE_MAX, buf, 2), CM_ERROR_INVALID_ARGUMENT,
            "src range out of bounds");
    cm_stream_t *s1 = ms_stream(d1);
    MS_FAIL(cm_managed_copy_from_host(s1, m, 0, buf, 8), CM_ERROR_INVALID_ARGUMENT,
            "the stream belongs to device 1 but the managed buffer to device 0");
    MS_FAIL(cm_managed_prefetch(s1, m, 0, 8, 0), CM_ERROR_INVALID_ARGUMENT,
            "the stream belongs to device 1 but the managed buffer to device 0");
    /* a handle of another kind */
    MS_FAIL(cm_managed_data((const cm_managed_t *)(const void *)s1, (void **)&buf),
            CM_ERROR_INVALID_ARGUMENT, "is a cm_stream_t, not a cm_managed_t");
    MS_OK(cm_stream_release(s1));
    MS_OK(cm_managed_destroy(m));
    MS_OK(cm_device_close(d));
    MS_OK(cm_device_close(d1));
}

static void test_managed_prefetch_and_advice(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_managed_t *m = NULL;
    MS_OK(cm_managed_create(d, 1 << 20, &m));
    void *p = NULL;
    MS_OK(cm_managed_data(m, &p));
    cm_stream_t *s = ms_stream(d);
    MS_OK(cm_managed_prefetch(s, m, 4096, 65536, 1));
    assert_ptr_equal(cmf.last_prefetch_ptr, (unsigned char *)p + 4096);
    assert_int_equal(cmf.last_prefetch_n, 65536);
    assert_int_equal(cmf.last_prefetch_loc.type, cudaMemLocationTypeDevice);
    assert_int_equal(cmf.last_prefetch_loc.id, 1);
    MS_OK(cm_managed_prefetch(NULL, m, 0, 1 << 20, CM_LOCATION_HOST));
    assert_int_equal(cmf.last_prefetch_loc.type, cudaMemLocationTypeHost);
    cmf.last_prefetch_n = 7;
    MS_OK(cm_managed_prefetch(NULL, m, 1 << 20, 0, 0)); /* empty: nothing queued */
    assert_int_equal(cmf.last_prefetch_n, 7);
    MS_FAIL(cm_managed_prefetch(NULL, m, 0, (1 << 20) + 1, 0), CM_ERROR_INVALID_ARGUMENT,
            "m range out of bounds");
    MS_FAIL_HINT(cm_managed_prefetch(NULL, m, 0, 64, 2), CM_ERROR_INVALID_ARGUMENT,
                 "location 2 is neither CM_LOCATION_HOST (-1) nor a device: 2 devices are visible",
                 "CM_LOCATION_HOST");
    MS_FAIL(cm_managed_prefetch(NULL, m, 0, 64, -7), CM_ERROR_INVALID_ARGUMENT, "location -7");
    /* advice */
    MS_OK(cm_managed_advise(m, 0, 1 << 20, CM_ADVISE_READ_MOSTLY, 12345)); /* location ignored */
    assert_int_equal(cmf.last_advice, cudaMemAdviseSetReadMostly);
    MS_OK(cm_managed_advise(m, 0, 4096, CM_ADVISE_PREFERRED_LOCATION, CM_LOCATION_HOST));
    assert_int_equal(cmf.last_advice_loc.type, cudaMemLocationTypeHost);
    MS_OK(cm_managed_advise(m, 4096, 4096, CM_ADVISE_ACCESSED_BY, 1));
    assert_int_equal(cmf.last_advice, cudaMemAdviseSetAccessedBy);
    assert_int_equal(cmf.last_advice_loc.id, 1);
    MS_OK(cm_managed_advise(m, 0, 4096, CM_ADVISE_UNSET_PREFERRED_LOCATION, 0));
    MS_FAIL(cm_managed_advise(m, 0, 4096, (cm_advice_t)9, 0), CM_ERROR_INVALID_ARGUMENT,
            "advice 9 is not a cm_advice_t");
    MS_FAIL(cm_managed_advise(m, 0, 4096, (cm_advice_t)0, 0), CM_ERROR_INVALID_ARGUMENT,
            "advice 0 is not a cm_advice_t");
    MS_FAIL(cm_managed_advise(m, 1 << 20, 1, CM_ADVISE_READ_MOSTLY, 0), CM_ERROR_INVALID_ARGUMENT,
            "m range out of bounds");
    MS_FAIL(cm_managed_advise(m, 0, 64, CM_ADVISE_ACCESSED_BY, 5), CM_ERROR_INVALID_ARGUMENT,
            "location 5");
    MS_OK(cm_stream_release(s));
    MS_OK(cm_managed_destroy(m));
    MS_OK(cm_device_close(d));
}

/* A device without concurrent managed access (WSL2, Windows, pre-Pascal): prefetch and device
 * advice are refused with why, the memory itself works. */
static void test_managed_without_concurrent_access(void **state) {
    (void)state;
    cmf_set_attr(1, cudaDevAttrConcurrentManagedAccess, 0);
    cm_device_t *d0 = ms_open(0), *d1 = ms_open(1);
    cm_managed_t *m0 = NULL, *m1 = NULL;
    MS_OK(cm_managed_create(d0, 8192, &m0));
    MS_OK(cm_managed_create(d1, 8192, &m1));
    cm_managed_info_t info;
    MS_OK(cm_managed_info(m1, &info));
    assert_false(info.concurrent_access);
    MS_FAIL_HINT(cm_managed_prefetch(NULL, m1, 0, 8192, 1), CM_ERROR_NOT_SUPPORTED,
                 "prefetching needs concurrent managed access on the buffer's device 1",
                 "WSL2");
    MS_FAIL(cm_managed_prefetch(NULL, m0, 0, 8192, 1), CM_ERROR_NOT_SUPPORTED,
            "prefetching to device 1 needs concurrent managed access, and device 1 has none");
    MS_OK(cm_managed_prefetch(NULL, m0, 0, 8192, 0));
    MS_FAIL(cm_managed_advise(m0, 0, 8192, CM_ADVISE_PREFERRED_LOCATION, 1), CM_ERROR_NOT_SUPPORTED,
            "a preferred location on device 1 needs concurrent managed access");
    MS_FAIL(cm_managed_advise(m0, 0, 8192, CM_ADVISE_ACCESSED_BY, 1), CM_ERROR_NOT_SUPPORTED,
            "access by device 1");
    MS_OK(cm_managed_advise(m0, 0, 8192, CM_ADVISE_UNSET_ACCESSED_BY, 1));
    MS_OK(cm_managed_advise(m1, 0, 8192, CM_ADVISE_READ_MOSTLY, 0));
    char out[16];
    MS_OK(cm_managed_copy_to_host(NULL, m1, 0, out, sizeof out));
    MS_OK(cm_managed_destroy(m0));
    MS_OK(cm_managed_destroy(m1));
    /* a device that cannot allocate managed memory at all */
    cmf_set_attr(0, cudaDevAttrManagedMemory, 0);
    MS_FAIL(cm_managed_create(d0, 64, &m0), CM_ERROR_NOT_SUPPORTED,
            "cannot allocate managed memory on this system");
    MS_OK(cm_device_close(d0));
    MS_OK(cm_device_close(d1));
}

/* Out of memory: the report says whether managed memory could have exceeded the device's. */
static void test_managed_out_of_memory_report(void **state) {
    (void)state;
    cm_device_t *d0 = ms_open(0), *d1 = ms_open(1);
    cm_managed_t *m = NULL;
    /* concurrent access: the limit is the host's memory, not the device's */
    MS_OK(cm_managed_create(d0, 100 * MS_MIB, &m)); /* more than the device's 64 MiB */
    MS_OK(cm_managed_destroy(m));
    m = NULL;
    MS_FAIL_HINT(cm_managed_create(d0, 1024 * MS_MIB, &m), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                 "device 0 has concurrentManagedAccess, so managed memory may exceed its memory",
                 "ulimit -v");
    assert_null(m);
    /* without it, managed memory takes device memory at once */
    cmf_set_attr(1, cudaDevAttrConcurrentManagedAccess, 0);
    MS_FAIL_HINT(cm_managed_create(d1, 100 * MS_MIB, &m), CM_ERROR_DEVICE_OUT_OF_MEMORY,
                 "device 1 has no concurrentManagedAccess (as on WSL2, Windows and GPUs before "
                 "Pascal), so managed memory cannot oversubscribe it",
                 "cannot exceed this device's free memory here");
    assert_non_null(strstr(cm_last_error()->message, "cannot allocate 100.00 MiB"));
    /* the retry after trimming the pools succeeds when the trim freed enough */
    cmf_arm(cmf_member_index("malloc_managed"), 0, 1, cudaErrorMemoryAllocation);
    MS_OK(cm_managed_create(d1, MS_MIB, &m));
    assert_int_equal(cmf_disarm(), 1);
    MS_OK(cm_managed_destroy(m));
    MS_OK(cm_device_close(d0));
    MS_OK(cm_device_close(d1));
}

static void test_managed_failures_leak_nothing(void **state) {
    (void)state;
    cm_device_t *d = ms_open(0);
    cm_managed_t *m = NULL;
    cmf_arm(cmf_member_index("device_get_attribute"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_managed_create(d, 64, &m), CM_ERROR_CUDA, "cudaDevAttrManagedMemory");
    (void)cmf_disarm();
    assert_null(m);
    MS_OK(cm_managed_create(d, 64, &m));
    cmf_arm(cmf_member_index("mem_advise"), 0, 1, cudaErrorInvalidValue);
    MS_FAIL(cm_managed_advise(m, 0, 64, CM_ADVISE_READ_MOSTLY, 0), CM_ERROR_INVALID_ARGUMENT,
            NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "cudaMemAdviseSetReadMostly"));
    cmf_arm(cmf_member_index("stream_synchronize"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_managed_prefetch(NULL, m, 0, 64, 0), CM_ERROR_CUDA, NULL);
    (void)cmf_disarm();
    assert_non_null(strstr(cm_last_error()->call, "after the prefetch"));
    cmf_arm(cmf_member_index("device_free"), 0, 1, cudaErrorUnknown);
    MS_FAIL(cm_managed_destroy(m), CM_ERROR_CUDA, NULL);
    (void)cmf_disarm();
    MS_FAIL(cm_managed_destroy(m), CM_ERROR_INVALID_ARGUMENT, "already destroyed");
    MS_OK(cm_device_close(d));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_symbol_copies_round_trip, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_symbol_range_is_checked_before_writing, ms_setup,
                                        ms_teardown),
        cmocka_unit_test_setup_teardown(test_symbol_arguments, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_symbol_address, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_symbol_copy_failure_is_named, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_create_info_copies, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_arguments, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_prefetch_and_advice, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_without_concurrent_access, ms_setup,
                                        ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_out_of_memory_report, ms_setup, ms_teardown),
        cmocka_unit_test_setup_teardown(test_managed_failures_leak_nothing, ms_setup, ms_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
