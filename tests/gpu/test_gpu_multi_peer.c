/*
 * multi.h across two GPUs for real (label multi-gpu: skipped with the reason on a machine with
 * one GPU, the only skip the GPU check allows).
 *
 * The set is {1, 0}: members in the reverse of ordinal order, so member 0 is device 1, and the
 * caller's current device is 0 throughout: a call that switched to member 0's device and stayed
 * there, or that confused members with ordinals, fails here.
 * - the peer matrix against cudaDeviceCanAccessPeer, peer access enabled, cm_buffer_copy_path();
 * - cross-device copies on the set's streams (a stream of either device), chained device 0 ->
 *   device 1 -> device 0 without pauses, at odd offsets, every byte checked; a copy past the end
 *   and a stream of a third device (a stream of device 0 for a copy between two buffers of
 *   device 1) are refused with nothing written;
 * - a split over {1, 0}: scatter from a device-0 buffer (peer), gather into a device-1 buffer,
 *   the part on each device holding its range; reductions whose extremes and ties straddle the
 *   boundary between the devices, compared with float64 CPU references;
 * - a set communicator over {1, 0} (when built with NCCL): rank 0 is device 1.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/multi.h>
#include <cudamodel/stream.h>
#include <cudamodel/version.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return cm_test_rand(&rng_state); }
static double rnd_unit(void) { return cm_test_rand_unit(&rng_state); }

static bool two_gpus(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < 2) {
        print_message("skipping: this test needs two GPUs; %d visible\n", n);
        return false;
    }
    return true;
}

#define REQUIRE_TWO_GPUS()                                                                   \
    do {                                                                                     \
        CM_REQUIRE_GPU();                                                                    \
        if (!two_gpus()) skip();                                                             \
    } while (0)

static void check_current0(int line) {
    int d = -1;
    assert_int_equal(cudaGetDevice(&d), cudaSuccess);
    if (d != 0) fail_msg("line %d: the current device is %d, the caller's was 0", line, d);
}
#define CHECK0() check_current0(__LINE__)

static cm_device_set_t *open_reversed(void) {
    const int ord[2] = {1, 0};
    cm_device_set_t *set = NULL;
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    CM_ASSERT_OK(cm_device_set_open(ord, 2, &set));
    CHECK0();
    int o = -1;
    CM_ASSERT_OK(cm_device_set_ordinal(set, 0, &o));
    assert_int_equal(o, 1);
    CM_ASSERT_OK(cm_device_set_ordinal(set, 1, &o));
    assert_int_equal(o, 0);
    return set;
}

static void test_peer_access_and_copies(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    cm_device_set_t *set = open_reversed();
    cm_peer_info_t m[4];
    CM_ASSERT_OK(cm_device_set_peer_matrix(set, CM_PEER_MEASURE_BANDWIDTH, m, 4));
    CHECK0();
    int can10 = 0, can01 = 0;
    assert_int_equal(cudaDeviceCanAccessPeer(&can10, 1, 0), cudaSuccess);
    assert_int_equal(cudaDeviceCanAccessPeer(&can01, 0, 1), cudaSuccess);
    assert_true(m[1].from_ordinal == 1 && m[1].to_ordinal == 0 && m[1].can_access == (can10 != 0));
    assert_true(m[2].from_ordinal == 0 && m[2].to_ordinal == 1 && m[2].can_access == (can01 != 0));
    char text[2048];
    CM_ASSERT_OK(cm_peer_matrix_format(m, 2, text, sizeof text, NULL));
    print_message("%s", text);
    int pairs = -1;
    CM_ASSERT_OK(cm_device_set_enable_peer_access(set, &pairs));
    assert_int_equal(pairs, (can10 != 0) + (can01 != 0));
    CHECK0();

    cm_device_t *dev1 = NULL, *dev0 = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &dev1));
    CM_ASSERT_OK(cm_device_set_device(set, 1, &dev0));
    cm_stream_t *s1 = NULL, *s0 = NULL;
    CM_ASSERT_OK(cm_device_set_stream(set, 0, &s1));
    CM_ASSERT_OK(cm_device_set_stream(set, 1, &s0));
    const size_t n = ((size_t)16 << 20) + 5;
    unsigned char *src = malloc(n), *out = malloc(n);
    assert_true(src && out);
    for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)(rnd() >> 40);
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL, *b2 = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev0, n, &a));
    CM_ASSERT_OK(cm_buffer_create(dev1, n + 3, &b));
    CM_ASSERT_OK(cm_buffer_create(dev1, n, &b2));
    CM_ASSERT_OK(cm_buffer_create(dev0, n + 1, &c));
    cm_copy_path_t path = CM_COPY_SAME_DEVICE;
    CM_ASSERT_OK(cm_buffer_copy_path(b, a, &path));
    assert_int_equal(path, (can10 || can01) ? CM_COPY_PEER : CM_COPY_STAGED_BY_HOST);
    print_message("copies between devices 0 and 1: %s\n", cm_copy_path_name(path));
    CM_ASSERT_OK(cm_buffer_copy_path(a, c, &path));
    assert_int_equal(path, CM_COPY_SAME_DEVICE);
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, a, 0, src, n));
    CM_ASSERT_OK(cm_buffer_set(NULL, c, 0, n + 1, 0xee));
    /* 0 -> 1 on device 1's stream, then 1 -> 0 on device 1's stream too (the source's) */
    CM_ASSERT_OK(cm_buffer_copy(s1, b, 3, a, 0, n));
    CM_ASSERT_OK(cm_buffer_copy(s1, c, 1, b, 3, n));
    CHECK0();
    CM_ASSERT_OK(cm_stream_synchronize(s1));
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 1, out, n));
    if (memcmp(out, src, n) != 0) fail_msg("device 0 -> 1 -> 0 on one stream lost data");
    unsigned char first = 0;
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, c, 0, &first, 1));
    assert_int_equal(first, 0xee);
    /* on device 0's stream: 0 -> 1 */
    CM_ASSERT_OK(cm_buffer_copy(s0, b2, 0, a, 0, n));
    CM_ASSERT_OK(cm_stream_synchronize(s0));
    memset(out, 0, n);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b2, 0, out, n));
    if (memcmp(out, src, n) != 0) fail_msg("device 0 -> 1 on device 0's stream lost data");
    /* refused: past the end; a stream of device 0 for two buffers of device 1 */
    CM_ASSERT_OK(cm_buffer_set(NULL, b2, 0, n, 0x11));
    assert_int_equal(cm_buffer_copy(s1, b2, 1, a, 0, n), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message, "past the end"));
    assert_int_equal(cm_buffer_copy(s0, b2, 0, b, 0, 64), CM_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(cm_last_error()->message,
                           "the stream belongs to device 0 but the buffer to device 1"));
    assert_string_equal(cm_last_error()->call, "cm_buffer_copy"); /* the public name */
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, b2, 0, out, 64));
    for (int i = 0; i < 64; ++i) assert_int_equal(out[i], 0x11); /* nothing written */
    CHECK0();
    cm_buffer_t *all[] = {a, b, c, b2};
    for (int i = 0; i < 4; ++i) CM_ASSERT_OK(cm_buffer_destroy(all[i]));
    free(src);
    free(out);
    CM_ASSERT_OK(cm_device_set_close(set));
    CHECK0();
}

static void test_split_over_two_devices(void **state) {
    (void)state;
    REQUIRE_TWO_GPUS();
    cm_device_set_t *set = open_reversed();
    const size_t n = 1000003;
    float *x = malloc(n * 4), *out = malloc(n * 4);
    assert_true(x && out);
    for (size_t i = 0; i < n; ++i) x[i] = (float)rnd_unit();
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(set, n, 4, &sp));
    size_t first1 = 0, cnt0 = 0, cnt1 = 0;
    CM_ASSERT_OK(cm_split_part(sp, 0, NULL, NULL, &cnt0));
    CM_ASSERT_OK(cm_split_part(sp, 1, NULL, &first1, &cnt1));
    assert_true(cnt0 > 0 && cnt1 > 0 && first1 == cnt0 && cnt0 + cnt1 == n);
    assert_true(cnt0 - cnt1 <= 64);
    /* extremes straddling the boundary: the minimum twice (last of part 0, first of part 1),
     * the maximum only in part 1 (device 0) */
    x[first1 - 1] = -9.0f;
    x[first1] = -9.0f;
    x[n - 1] = 9.0f;
    cm_device_t *dev0 = NULL, *dev1 = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 1, &dev0));
    CM_ASSERT_OK(cm_device_set_device(set, 0, &dev1));
    cm_buffer_t *src = NULL, *dst = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev0, n * 4, &src));
    CM_ASSERT_OK(cm_buffer_create(dev1, (n + 1) * 4, &dst));
    CM_ASSERT_OK(cm_buffer_copy_from_host(NULL, src, 0, x, n * 4));
    CM_ASSERT_OK(cm_split_scatter(sp, src, 0)); /* device 0 -> parts on devices 1 and 0 */
    CHECK0();
    /* each part on its device holds its range */
    cm_buffer_t *p0 = NULL;
    CM_ASSERT_OK(cm_split_part(sp, 0, &p0, NULL, NULL));
    cm_buffer_info_t pinfo;
    CM_ASSERT_OK(cm_buffer_info(p0, &pinfo));
    assert_ptr_equal(pinfo.device, dev1);
    assert_int_equal(pinfo.ordinal, 1);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, p0, 0, out, cnt0 * 4));
    if (memcmp(out, x, cnt0 * 4) != 0) fail_msg("part 0 (device 1) holds the wrong data");
    CM_ASSERT_OK(cm_split_gather(sp, dst, 1 * sizeof(float))); /* from float 1 (in bytes) */
    memset(out, 0, n * 4);
    CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, dst, 4, out, n * 4));
    if (memcmp(out, x, n * 4) != 0) fail_msg("gather into device 1 lost data");
    uint64_t idx = 0;
    float v = 0;
    CM_ASSERT_OK(cm_split_argmin_f32(sp, &idx, &v));
    assert_true(idx == first1 - 1 && v == -9.0f);
    CM_ASSERT_OK(cm_split_argmax_f32(sp, &idx, &v));
    assert_true(idx == n - 1 && v == 9.0f);
    double e = 0, a = 0;
    for (size_t i = 0; i < n; ++i) {
        e += x[i];
        a += fabs(x[i]);
    }
    float s = 0;
    CM_ASSERT_OK(cm_split_sum_f32(sp, &s));
    double k = ceil((double)n / 256.0) + 10.0;
    if (fabs((double)s - e) > ldexp(fabs(e), -24) + (k + 1.0) * ldexp(a, -53))
        fail_msg("sum over two devices: %.9g, exact %.17g", s, e);
    CM_ASSERT_OK(cm_split_add_f32(sp, sp, sp));
    CM_ASSERT_OK(cm_device_set_synchronize(set));
    CM_ASSERT_OK(cm_split_gather_to_host(sp, out, n));
    for (size_t i = 0; i < n; ++i) if (out[i] != x[i] + x[i]) fail_msg("add element %zu", i);
    CHECK0();

    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    if (vi.nccl_built) {
        cm_comm_t *comm = NULL;
        CM_ASSERT_OK(cm_comm_create(set, &comm));
        CHECK0();
        cm_buffer_t *bufs[2] = {p0, NULL};
        CM_ASSERT_OK(cm_split_part(sp, 1, &bufs[1], NULL, NULL));
        /* rank 0 is device 1: its buffer is part 0; a broadcast of min(cnt0, cnt1) elements */
        CM_ASSERT_OK(cm_comm_broadcast(comm, bufs, bufs, cnt1, CM_DTYPE_F32, 0));
        CM_ASSERT_OK(cm_comm_synchronize(comm));
        CHECK0();
        CM_ASSERT_OK(cm_buffer_copy_to_host(NULL, bufs[1], 0, out, cnt1 * 4));
        for (size_t i = 0; i < cnt1; ++i)
            if (out[i] != x[i] + x[i]) fail_msg("broadcast from device 1: element %zu", i);
        cm_buffer_t *swapped[2] = {bufs[1], bufs[0]};
        assert_int_equal(cm_comm_all_reduce(comm, swapped, swapped, 16, CM_DTYPE_F32, CM_COMM_SUM),
                         CM_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(cm_last_error()->message, "local rank 0 is device 1"));
        CM_ASSERT_OK(cm_comm_destroy(comm));
        CHECK0();
    }
    CM_ASSERT_OK(cm_buffer_destroy(src));
    CM_ASSERT_OK(cm_buffer_destroy(dst));
    CM_ASSERT_OK(cm_split_destroy(sp));
    CM_ASSERT_OK(cm_device_set_close(set));
    CHECK0();
    free(x);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_peer_access_and_copies),
        cmocka_unit_test(test_split_over_two_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
