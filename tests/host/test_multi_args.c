/*
 * Host tests of multi.h: the split arithmetic (cm_split_plan(): uneven sizes, more parts than
 * elements, n = 0, granules, sizes near SIZE_MAX, checked against its stated rule over every
 * small case), the communicator id text, the peer-matrix text, and the argument checks of every
 * public function (NULL, closed / destroyed and foreign handles, bad counts, ordinals given
 * twice, splits of different layouts or element sizes, wrong lengths and ranges, byte offsets
 * that are not a multiple of the element size). Each failure returns its status with a message
 * and a hint and changes nothing.
 *
 * Device sets and split arrays run on the simulated devices and streams of test_buffer_fake.h /
 * test_stream_fake.h (fault injection): opening, closing (refused while anything is alive),
 * the parts' buffers, peer access and the caller's current device are checked without a GPU.
 * Nothing here queues a kernel or starts NCCL.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>
#include <cudamodel/multi.h>
#include <cudamodel/version.h>

#include "multi_internal.h"
#include "test_stream_fake.h" /* and test_buffer_fake.h */

#define INV CM_ERROR_INVALID_ARGUMENT

static int setup(void **state) {
    (void)state;
    xfake_install(3);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    int left = fake_outstanding(), violations = fake.violations;
    int streams = atomic_load(&xfake.streams);
    xfake_uninstall();
    if (left || violations || streams) {
        print_error("simulation left %d allocations, %d violations, %d streams\n", left,
                    violations, streams);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- split arithmetic */

/* Every property cm_split_plan() documents, for one case. */
static void check_plan(size_t n, int parts, size_t granule) {
    cm_split_part_t p[CM_DEVICE_SET_MAX];
    memset(p, 0xee, sizeof p);
    CM_ASSERT_OK(cm_split_plan(n, parts, granule, p));
    const size_t g = granule ? granule : 1;
    const size_t units = n / g + (n % g != 0);
    size_t next = 0, prev_units = SIZE_MAX;
    for (int k = 0; k < parts; ++k) {
        if (p[k].first != next)
            fail_msg("n %zu parts %d g %zu: part %d starts at %zu, want %zu", n, parts, g, k,
                     p[k].first, next);
        if (p[k].count > n - next)
            fail_msg("n %zu parts %d g %zu: part %d runs past n", n, parts, g, k);
        /* boundaries on granule multiples, except at n */
        size_t end = p[k].first + p[k].count;
        if (end != n && end % g != 0)
            fail_msg("n %zu parts %d g %zu: part %d ends at %zu, not a multiple of %zu", n, parts,
                     g, k, end, g);
        /* units: floor(U / parts) + 1 for the first U mod parts */
        size_t u = p[k].count / g + (p[k].count % g != 0);
        size_t want = units / (size_t)parts + ((size_t)k < units % (size_t)parts ? 1u : 0u);
        if (u != want)
            fail_msg("n %zu parts %d g %zu: part %d has %zu units, want %zu", n, parts, g, k, u,
                     want);
        if (u > prev_units) fail_msg("n %zu parts %d: part %d larger than part %d", n, parts, k, k - 1);
        prev_units = u;
        next = end;
    }
    if (next != n) fail_msg("n %zu parts %d g %zu: parts cover %zu", n, parts, g, next);
}

static void test_plan_rule_exhaustive(void **state) {
    (void)state;
    const size_t granules[] = {0, 1, 2, 3, 7, 64, 1000};
    for (size_t gi = 0; gi < sizeof granules / sizeof granules[0]; ++gi)
        for (int parts = 1; parts <= 9; ++parts)
            for (size_t n = 0; n <= 300; ++n) check_plan(n, parts, granules[gi]);
    for (int parts = 1; parts <= CM_DEVICE_SET_MAX; ++parts) {
        check_plan(((size_t)1 << 30) + 12345, parts, 64);
        check_plan(SIZE_MAX, parts, 1);
        check_plan(SIZE_MAX, parts, 64);
        check_plan(SIZE_MAX - 1, parts, (size_t)1 << 40);
    }
}

static void test_plan_examples(void **state) {
    (void)state;
    cm_split_part_t p[8];
    /* uneven: 10 over 4 -> 3 3 2 2 */
    CM_ASSERT_OK(cm_split_plan(10, 4, 1, p));
    const size_t c10[] = {3, 3, 2, 2}, o10[] = {0, 3, 6, 8};
    for (int k = 0; k < 4; ++k) {
        assert_int_equal(p[k].count, c10[k]);
        assert_int_equal(p[k].first, o10[k]);
    }
    /* more parts than elements: 3 over 5 -> 1 1 1 0 0, the empty parts at n */
    CM_ASSERT_OK(cm_split_plan(3, 5, 1, p));
    const size_t c3[] = {1, 1, 1, 0, 0}, o3[] = {0, 1, 2, 3, 3};
    for (int k = 0; k < 5; ++k) {
        assert_int_equal(p[k].count, c3[k]);
        assert_int_equal(p[k].first, o3[k]);
    }
    /* n = 0: every part empty at 0 */
    CM_ASSERT_OK(cm_split_plan(0, 3, 64, p));
    for (int k = 0; k < 3; ++k) {
        assert_int_equal(p[k].count, 0);
        assert_int_equal(p[k].first, 0);
    }
    /* granule 64 (256 bytes of floats): 1000 = 16 units over 2 -> 512 + 488 */
    CM_ASSERT_OK(cm_split_plan(1000, 2, 64, p));
    assert_int_equal(p[0].count, 512);
    assert_int_equal(p[1].first, 512);
    assert_int_equal(p[1].count, 488);
    /* fewer units than parts: 100 floats = 2 units over 3 -> 64, 36, 0 */
    CM_ASSERT_OK(cm_split_plan(100, 3, 64, p));
    assert_int_equal(p[0].count, 64);
    assert_int_equal(p[1].count, 36);
    assert_int_equal(p[2].count, 0);
    assert_int_equal(p[2].first, 100);
    /* one part takes everything */
    CM_ASSERT_OK(cm_split_plan(SIZE_MAX, 1, 64, p));
    assert_true(p[0].first == 0 && p[0].count == SIZE_MAX);
    /* 2^30 over 2: exact halves */
    CM_ASSERT_OK(cm_split_plan((size_t)1 << 30, 2, 64, p));
    assert_int_equal(p[0].count, (size_t)1 << 29);
    assert_int_equal(p[1].count, (size_t)1 << 29);
}

static void test_plan_arguments(void **state) {
    (void)state;
    cm_split_part_t p[CM_DEVICE_SET_MAX + 1];
    memset(p, 0x5a, sizeof p);
    cm_split_part_t before = p[0];
    EXPECT_FAIL(cm_split_plan(10, 2, 1, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_plan(10, 0, 1, p), INV, "parts is 0");
    EXPECT_FAIL(cm_split_plan(10, -1, 1, p), INV, "parts is -1");
    EXPECT_FAIL(cm_split_plan(10, CM_DEVICE_SET_MAX + 1, 1, p), INV, "parts is 65");
    assert_memory_equal(&p[0], &before, sizeof before);
}

/* ---------------------------------------------------------------- id text */

static void test_id_hex_round_trip(void **state) {
    (void)state;
    cm_comm_id_t id, back;
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < CM_COMM_ID_BYTES; ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        id.bytes[i] = (unsigned char)(s >> 24);
    }
    id.bytes[0] = 0x00;
    id.bytes[1] = 0xff;
    char hex[CM_COMM_ID_HEX_SIZE];
    memset(hex, 'x', sizeof hex);
    CM_ASSERT_OK(cm_comm_id_to_hex(&id, hex, sizeof hex));
    assert_int_equal(strlen(hex), 256);
    assert_true(strncmp(hex, "00ff", 4) == 0);
    for (int i = 0; i < 256; ++i) assert_non_null(strchr("0123456789abcdef", hex[i]));
    memset(&back, 0, sizeof back);
    CM_ASSERT_OK(cm_comm_id_from_hex(hex, &back));
    assert_memory_equal(id.bytes, back.bytes, CM_COMM_ID_BYTES);

    /* upper case and surrounding white space (a file with a newline) */
    char text[CM_COMM_ID_HEX_SIZE + 8];
    snprintf(text, sizeof text, "  %s\n", hex);
    for (char *c = text; *c; ++c)
        if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
    memset(&back, 0, sizeof back);
    CM_ASSERT_OK(cm_comm_id_from_hex(text, &back));
    assert_memory_equal(id.bytes, back.bytes, CM_COMM_ID_BYTES);
}

static void test_id_hex_arguments(void **state) {
    (void)state;
    cm_comm_id_t id, out;
    memset(&id, 0x11, sizeof id);
    memset(&out, 0x77, sizeof out);
    char hex[CM_COMM_ID_HEX_SIZE];
    memset(hex, 'q', sizeof hex);
    EXPECT_FAIL(cm_comm_id_to_hex(NULL, hex, sizeof hex), INV, "id is NULL");
    EXPECT_FAIL(cm_comm_id_to_hex(&id, NULL, sizeof hex), INV, "buf is NULL");
    EXPECT_FAIL(cm_comm_id_to_hex(&id, hex, CM_COMM_ID_HEX_SIZE - 1), INV, "needs 257");
    assert_int_equal(hex[0], 'q'); /* nothing written */
    CM_ASSERT_OK(cm_comm_id_to_hex(&id, hex, sizeof hex));
    EXPECT_FAIL(cm_comm_id_from_hex(NULL, &out), INV, "hex is NULL");
    EXPECT_FAIL(cm_comm_id_from_hex(hex, NULL), INV, "out is NULL");
    char bad[CM_COMM_ID_HEX_SIZE];
    memcpy(bad, hex, sizeof bad);
    bad[100] = 'g';
    EXPECT_FAIL(cm_comm_id_from_hex(bad, &out), INV, "character 100");
    bad[100] = ' ';
    EXPECT_FAIL(cm_comm_id_from_hex(bad, &out), INV, "character 100");
    EXPECT_FAIL(cm_comm_id_from_hex(hex + 2, &out), INV, "254 hex digits");
    EXPECT_FAIL(cm_comm_id_from_hex("", &out), INV, "0 hex digits");
    char longer[CM_COMM_ID_HEX_SIZE + 2];
    snprintf(longer, sizeof longer, "%s00", hex);
    EXPECT_FAIL(cm_comm_id_from_hex(longer, &out), INV, "258 hex digits");
    unsigned char poison[CM_COMM_ID_BYTES];
    memset(poison, 0x77, sizeof poison);
    assert_memory_equal(out.bytes, poison, CM_COMM_ID_BYTES); /* unchanged on failure */
}

/* ---------------------------------------------------------------- names, text */

static void test_names_and_sizes(void **state) {
    (void)state;
    assert_int_equal(cm_dtype_size(CM_DTYPE_I8), 1);
    assert_int_equal(cm_dtype_size(CM_DTYPE_U8), 1);
    assert_int_equal(cm_dtype_size(CM_DTYPE_F16), 2);
    assert_int_equal(cm_dtype_size(CM_DTYPE_BF16), 2);
    assert_int_equal(cm_dtype_size(CM_DTYPE_I32), 4);
    assert_int_equal(cm_dtype_size(CM_DTYPE_U32), 4);
    assert_int_equal(cm_dtype_size(CM_DTYPE_F32), 4);
    assert_int_equal(cm_dtype_size(CM_DTYPE_I64), 8);
    assert_int_equal(cm_dtype_size(CM_DTYPE_U64), 8);
    assert_int_equal(cm_dtype_size(CM_DTYPE_F64), 8);
    assert_int_equal(cm_dtype_size((cm_dtype_t)99), 0);
    assert_string_equal(cm_copy_path_name(CM_COPY_SAME_DEVICE), "same device");
    assert_string_equal(cm_copy_path_name(CM_COPY_PEER), "peer");
    assert_string_equal(cm_copy_path_name(CM_COPY_STAGED_BY_HOST), "staged through host");
    assert_string_equal(cm_copy_path_name((cm_copy_path_t)7), "unknown");
}

static void test_peer_matrix_text(void **state) {
    (void)state;
    cm_peer_info_t m[4];
    memset(m, 0, sizeof m);
    const int ord[2] = {3, 5};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            m[i * 2 + j].from_ordinal = ord[i];
            m[i * 2 + j].to_ordinal = ord[j];
            m[i * 2 + j].can_access = i == j || (i == 0);
        }
    char buf[1024];
    size_t len = 0;
    CM_ASSERT_OK(cm_peer_matrix_format(m, 2, buf, sizeof buf, &len));
    assert_int_equal(len, strlen(buf));
    assert_non_null(strstr(buf, "   3   5\n"));          /* headings: the ordinals */
    assert_non_null(strstr(buf, "    3    =   y\n"));    /* 3 reads 5: yes */
    assert_non_null(strstr(buf, "    5    -   =\n"));    /* 5 reads 3: no */
    assert_null(strstr(buf, "GB/s"));
    /* measured: bandwidths appear */
    m[1].bandwidth_gbs = 123.4;
    m[0].bandwidth_gbs = 2000.0;
    CM_ASSERT_OK(cm_peer_matrix_format(m, 2, buf, sizeof buf, &len));
    assert_non_null(strstr(buf, "GB/s"));
    assert_non_null(strstr(buf, "y  123"));
    assert_non_null(strstr(buf, "= 2000"));
    /* snprintf rules: measure, truncate */
    size_t need = 0;
    CM_ASSERT_OK(cm_peer_matrix_format(m, 2, NULL, 0, &need));
    assert_int_equal(need, len);
    char small[16];
    CM_ASSERT_OK(cm_peer_matrix_format(m, 2, small, sizeof small, &need));
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(need, len);
    EXPECT_FAIL(cm_peer_matrix_format(NULL, 2, buf, sizeof buf, NULL), INV, "matrix is NULL");
    EXPECT_FAIL(cm_peer_matrix_format(m, 0, buf, sizeof buf, NULL), INV, "count is 0");
    EXPECT_FAIL(cm_peer_matrix_format(m, 65, buf, sizeof buf, NULL), INV, "count is 65");
    EXPECT_FAIL(cm_peer_matrix_format(m, 2, NULL, 5, NULL), INV, "buf is NULL");
}

/* ---------------------------------------------------------------- NCCL entry points */

static void test_nccl_entry_points(void **state) {
    (void)state;
    /* the "not built" message, whatever this build is */
    EXPECT_FAIL(cm__nccl_not_built("cm_comm_all_reduce"), CM_ERROR_NOT_SUPPORTED,
                "not built: cm_comm_all_reduce needs NCCL");
    assert_non_null(strstr(cm_last_error()->hint, "CUDAMODEL_WITH_NCCL=ON"));
    assert_non_null(strstr(cm_last_error()->hint, "nccl_built field of cm_version_info_t"));
    int fake_handle[16] = {0};
    cm_comm_t *foreign = (cm_comm_t *)(void *)fake_handle;
    cm_buffer_t *bufs[1] = {NULL};
    cm_comm_id_t id;
    memset(&id, 0, sizeof id);
    cm_comm_t *comm = NULL;
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    assert_int_equal(vi.nccl_built, cm__nccl_built());
    if (!vi.nccl_built) {
        assert_int_equal(vi.nccl_built_version, 0);
        assert_int_equal(vi.nccl, 0);
        assert_int_equal(cm__nccl_version(), 0);
        EXPECT_FAIL(cm_comm_id_create(&id), CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_create(NULL, &comm), CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 2, 0, &comm), CM_ERROR_NOT_SUPPORTED,
                    "not built");
        EXPECT_FAIL(cm_comm_all_reduce(foreign, bufs, bufs, 1, CM_DTYPE_F32, CM_COMM_SUM),
                    CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_broadcast(foreign, bufs, bufs, 1, CM_DTYPE_F32, 0),
                    CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_all_gather(foreign, bufs, bufs, 1, CM_DTYPE_F32),
                    CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_synchronize(foreign), CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_size(foreign, NULL, NULL, NULL), CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_stream(foreign, 0, NULL), CM_ERROR_NOT_SUPPORTED, "not built");
        EXPECT_FAIL(cm_comm_destroy(foreign), CM_ERROR_NOT_SUPPORTED, "not built");
        CM_ASSERT_OK(cm_comm_destroy(NULL));
        assert_null(comm);
        return;
    }
    assert_true(vi.nccl_built_version >= 20000);
    assert_int_equal(vi.nccl_built_version, cm__nccl_version_built());
    assert_true(vi.nccl > 0);
    assert_int_equal(vi.nccl, cm__nccl_version());
    assert_int_equal(vi.nccl / 10000, vi.nccl_built_version / 10000); /* same major */
    EXPECT_FAIL(cm_comm_id_create(NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_comm_create(NULL, &comm), INV, "set is NULL");
    EXPECT_FAIL(cm_comm_create((cm_device_set_t *)(void *)fake_handle, &comm), INV,
                "not a live cm_device_set_t");
    EXPECT_FAIL(cm_comm_create((cm_device_set_t *)(void *)fake_handle, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 2, 0, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_comm_create_rank(NULL, NULL, 2, 0, &comm), INV, "id is NULL");
    EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 0, 0, &comm), INV, "nranks is 0");
    EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 2, 2, &comm), INV, "rank 2 is out of range");
    EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 2, -1, &comm), INV, "rank -1");
    EXPECT_FAIL(cm_comm_create_rank(NULL, &id, 2, 0, &comm), INV, "dev is NULL");
    assert_null(comm);
    EXPECT_FAIL(cm_comm_all_reduce(NULL, bufs, bufs, 1, CM_DTYPE_F32, CM_COMM_SUM), INV,
                "comm is NULL");
    EXPECT_FAIL(cm_comm_all_reduce(foreign, bufs, bufs, 1, CM_DTYPE_F32, CM_COMM_SUM), INV,
                "not a live cm_comm_t");
    EXPECT_FAIL(cm_comm_broadcast(foreign, bufs, bufs, 1, CM_DTYPE_F32, 0), INV, "not a live");
    EXPECT_FAIL(cm_comm_all_gather(NULL, bufs, bufs, 1, CM_DTYPE_F32), INV, "comm is NULL");
    EXPECT_FAIL(cm_comm_synchronize(NULL), INV, "comm is NULL");
    EXPECT_FAIL(cm_comm_size(foreign, NULL, NULL, NULL), INV, "not a live");
    cm_stream_t *s = NULL;
    EXPECT_FAIL(cm_comm_stream(NULL, 0, &s), INV, "comm is NULL");
    EXPECT_FAIL(cm_comm_stream(foreign, 0, NULL), INV, "stream is NULL");
    EXPECT_FAIL(cm_comm_destroy(foreign), INV, "not a live cm_comm_t");
    CM_ASSERT_OK(cm_comm_destroy(NULL));
    cm_comm_t *none = NULL;
    cm_comm_scope_exit(&none);
    cm_comm_scope_exit(NULL);
}

/* ---------------------------------------------------------------- device sets (simulated) */

static cm_device_set_t *open_set(const int *ord, int n) {
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open(ord, n, &set));
    assert_non_null(set);
    return set;
}

static void test_set_open_arguments(void **state) {
    (void)state;
    cm_device_set_t *set = NULL;
    const int ord[3] = {0, 1, 2}, twice[3] = {1, 0, 1}, bad[2] = {0, 3}, neg[1] = {-1};
    EXPECT_FAIL(cm_device_set_open(ord, 2, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_device_set_open(NULL, 2, &set), INV, "ordinals is NULL");
    EXPECT_FAIL(cm_device_set_open(ord, 0, &set), INV, "count is 0");
    EXPECT_FAIL(cm_device_set_open(ord, CM_DEVICE_SET_MAX + 1, &set), INV, "count is 65");
    EXPECT_FAIL(cm_device_set_open(twice, 3, &set), INV,
                "device 1 is given twice (ordinals[0] and ordinals[2])");
    EXPECT_FAIL(cm_device_set_open(bad, 2, &set), INV, "device 3 does not exist: 3 devices");
    assert_non_null(strstr(cm_last_error()->message, "ordinals[1]"));
    EXPECT_FAIL(cm_device_set_open(neg, 1, &set), INV, "device -1 does not exist");
    EXPECT_FAIL(cm_device_set_open_all(NULL), INV, "out is NULL");
    assert_null(set);
    /* a failure while opening leaves nothing open: the second stream creation fails */
    xfake_fail(XF_STREAM_CREATE, cudaErrorMemoryAllocation, 2);
    assert_int_not_equal(cm_device_set_open(ord, 3, &set), CM_OK);
    xfake_fail_clear();
    assert_null(set);
    assert_int_equal(fake_outstanding(), 0);
    assert_int_equal(atomic_load(&xfake.streams), 0);
    /* and so does a failing pinned allocation */
    fake_fail(FAKE_HOST_ALLOC, cudaErrorMemoryAllocation, 1);
    assert_int_equal(cm_device_set_open(ord, 2, &set), CM_ERROR_HOST_OUT_OF_MEMORY);
    fake_fail_clear();
    assert_null(set);
    assert_int_equal(fake_outstanding(), 0);
}

static void test_set_accessors_and_close(void **state) {
    (void)state;
    fake.current = 2;
    cm_device_set_t *set = NULL;
    CM_ASSERT_OK(cm_device_set_open_all(&set));
    int count = 0;
    CM_ASSERT_OK(cm_device_set_count(set, &count));
    assert_int_equal(count, 3);
    for (int k = 0; k < 3; ++k) {
        int o = -1;
        CM_ASSERT_OK(cm_device_set_ordinal(set, k, &o));
        assert_int_equal(o, k);
        cm_device_t *dev = NULL;
        CM_ASSERT_OK(cm_device_set_device(set, k, &dev));
        CM_ASSERT_OK(cm_device_ordinal(dev, &o));
        assert_int_equal(o, k);
        cm_stream_t *s = NULL;
        CM_ASSERT_OK(cm_device_set_stream(set, k, &s));
        cm_device_t *sd = NULL;
        CM_ASSERT_OK(cm_stream_device(s, &sd));
        assert_ptr_equal(sd, dev);
    }
    assert_int_equal(fake.current, 2); /* the caller's device is unchanged */
    cm_device_t *dev = NULL;
    cm_stream_t *s = NULL;
    int o = 0;
    EXPECT_FAIL(cm_device_set_count(set, NULL), INV, "count is NULL");
    EXPECT_FAIL(cm_device_set_count(NULL, &count), INV, "set is NULL");
    EXPECT_FAIL(cm_device_set_device(set, 3, &dev), INV, "member 3 does not exist: the set has 3");
    EXPECT_FAIL(cm_device_set_device(set, -1, &dev), INV, "member -1");
    EXPECT_FAIL(cm_device_set_device(set, 0, NULL), INV, "dev is NULL");
    EXPECT_FAIL(cm_device_set_ordinal(set, 3, &o), INV, "member 3");
    EXPECT_FAIL(cm_device_set_ordinal(set, 0, NULL), INV, "ordinal is NULL");
    EXPECT_FAIL(cm_device_set_stream(set, 7, &s), INV, "member 7");
    EXPECT_FAIL(cm_device_set_stream(set, 0, NULL), INV, "stream is NULL");
    EXPECT_FAIL(cm_device_set_synchronize(NULL), INV, "set is NULL");
    CM_ASSERT_OK(cm_device_set_synchronize(set));

    /* close is refused while a member's device holds a buffer, a lent stream or an event */
    CM_ASSERT_OK(cm_device_set_device(set, 1, &dev));
    cm_buffer_t *b = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 100, &b));
    EXPECT_FAIL(cm_device_set_close(set), CM_ERROR_BUSY,
                "member 1 (device 1) still has 1 live buffer (100 bytes)");
    CM_ASSERT_OK(cm_buffer_destroy(b));
    CM_ASSERT_OK(cm_stream_acquire(dev, CM_STREAM_PRIORITY_HIGH, &s));
    EXPECT_FAIL(cm_device_set_close(set), CM_ERROR_BUSY, "1 lent stream besides the set's own");
    CM_ASSERT_OK(cm_stream_release(s));
    cm_event_t *e = NULL;
    CM_ASSERT_OK(cm_event_acquire(dev, CM_EVENT_SYNC_ONLY, &e));
    EXPECT_FAIL(cm_device_set_close(set), CM_ERROR_BUSY, "1 lent event");
    CM_ASSERT_OK(cm_event_release(e));
    /* the set still works after refused closes */
    CM_ASSERT_OK(cm_device_set_count(set, &count));
    assert_int_equal(fake.current, 2);
    CM_ASSERT_OK(cm_device_set_close(set));
    assert_int_equal(fake.current, 2);
    /* closed: every use is reported, not a crash */
    EXPECT_FAIL(cm_device_set_count(set, &count), INV, "set was already closed: it was a device set");
    EXPECT_FAIL(cm_device_set_close(set), INV, "already closed");
    int foreign[8] = {0};
    EXPECT_FAIL(cm_device_set_close((cm_device_set_t *)(void *)foreign), INV, "not a live");
    CM_ASSERT_OK(cm_device_set_close(NULL));
    cm_device_set_t *none = NULL;
    cm_device_set_scope_exit(&none);
    cm_device_set_scope_exit(NULL);
}

static void test_set_scope_exit(void **state) {
    (void)state;
    const int ord[1] = {2};
    cm_device_set_t *set = open_set(ord, 1);
    cm_split_t *sp = NULL;
    CM_ASSERT_OK(cm_split_create(set, 10, 4, &sp));
    cm_device_set_scope_exit(&set); /* refused: the split is alive; the handle stays */
    assert_non_null(set);
    assert_int_equal(cm_last_error()->status, CM_ERROR_BUSY);
    assert_non_null(strstr(cm_last_error()->message, "1 live split array"));
    cm_split_scope_exit(&sp);
    assert_null(sp);
    cm_device_set_scope_exit(&set);
    assert_null(set);
}

static void test_peer_access_simulated(void **state) {
    (void)state;
    const int ord[3] = {2, 0, 1};
    fake.current = 1;
    cm_device_set_t *set = open_set(ord, 3);
    cm_peer_info_t m[9];
    memset(m, 0, sizeof m);
    CM_ASSERT_OK(cm_device_set_peer_matrix(set, 0, m, 9));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            assert_int_equal(m[i * 3 + j].from_ordinal, ord[i]);
            assert_int_equal(m[i * 3 + j].to_ordinal, ord[j]);
            assert_true(m[i * 3 + j].can_access); /* the simulation allows every pair */
            assert_true(m[i * 3 + j].bandwidth_gbs == 0.0);
        }
    assert_int_equal(m[0].performance_rank, 0);
    cm_peer_info_t small[4];
    EXPECT_FAIL(cm_device_set_peer_matrix(set, 0, small, 4), INV,
                "matrix has 4 entries; a set of 3 members needs 9");
    EXPECT_FAIL(cm_device_set_peer_matrix(set, 0, NULL, 9), INV, "matrix is NULL");
    EXPECT_FAIL(cm_device_set_peer_matrix(set, 8u, m, 9), INV, "unknown flag bits 0x8");
    EXPECT_FAIL(cm_device_set_peer_matrix(NULL, 0, m, 9), INV, "set is NULL");
    int pairs = -1;
    CM_ASSERT_OK(cm_device_set_enable_peer_access(set, &pairs));
    assert_int_equal(pairs, 6);
    CM_ASSERT_OK(cm_device_set_enable_peer_access(set, NULL)); /* idempotent */
    EXPECT_FAIL(cm_device_set_enable_peer_access(NULL, &pairs), INV, "set is NULL");
    /* pairs without peer access */
    fake.peer_ok = 0;
    CM_ASSERT_OK(cm_device_set_peer_matrix(set, 0, m, 9));
    assert_false(m[1].can_access);
    assert_int_equal(m[1].performance_rank, -1);
    assert_true(m[4].can_access); /* the diagonal */
    /* the copy path of two buffers */
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &d0));
    CM_ASSERT_OK(cm_device_set_device(set, 1, &d1));
    cm_buffer_t *a = NULL, *b = NULL, *c = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, 64, &a));
    CM_ASSERT_OK(cm_buffer_create(d0, 64, &b));
    CM_ASSERT_OK(cm_buffer_create(d1, 64, &c));
    cm_copy_path_t path = CM_COPY_PEER;
    CM_ASSERT_OK(cm_buffer_copy_path(a, b, &path));
    assert_int_equal(path, CM_COPY_SAME_DEVICE);
    CM_ASSERT_OK(cm_buffer_copy_path(a, c, &path));
    assert_int_equal(path, CM_COPY_STAGED_BY_HOST);
    fake.peer_ok = 1;
    CM_ASSERT_OK(cm_buffer_copy_path(c, a, &path));
    assert_int_equal(path, CM_COPY_PEER);
    EXPECT_FAIL(cm_buffer_copy_path(a, c, NULL), INV, "path is NULL");
    EXPECT_FAIL(cm_buffer_copy_path(NULL, c, &path), INV, "dst");
    EXPECT_FAIL(cm_buffer_copy_path(a, NULL, &path), INV, "src");
    CM_ASSERT_OK(cm_buffer_destroy(a));
    CM_ASSERT_OK(cm_buffer_destroy(b));
    EXPECT_FAIL(cm_buffer_copy_path(c, a, &path), INV, "src");
    CM_ASSERT_OK(cm_buffer_destroy(c));
    assert_int_equal(fake.current, 1);
    CM_ASSERT_OK(cm_device_set_close(set));
    assert_int_equal(fake.current, 1);
}

/* ---------------------------------------------------------------- split arrays (simulated) */

typedef struct visit {
    int calls;
    int index[4];
    int current[4];
    size_t first[4], count[4];
    cm_stream_t *stream[4];
    cm_buffer_t *part[4];
    int stop_at;
} visit_t;

static cm_status_t visit_part(void *user, int index, cm_stream_t *stream, cm_buffer_t *part,
                              size_t first, size_t count) {
    visit_t *v = user;
    v->index[v->calls] = index;
    v->current[v->calls] = fake.current;
    v->first[v->calls] = first;
    v->count[v->calls] = count;
    v->stream[v->calls] = stream;
    v->part[v->calls] = part;
    ++v->calls;
    fake.current = 0; /* the callback switches the device: the library restores it */
    if (index == v->stop_at)
        return cm__fail(CM_ERROR_BUSY, -1, __FILE__, __LINE__, "visit_part", "stop", "stopped");
    return CM_OK;
}

static void test_split_layout_and_for_each(void **state) {
    (void)state;
    const int ord[3] = {2, 0, 1};
    fake.current = 1;
    cm_device_set_t *set = open_set(ord, 3);
    cm_split_t *sp = NULL;
    /* 1000 floats over 3: 64-element units, 16 units -> 6, 5, 5 units: 384, 320, 296 */
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &sp));
    const size_t want_off[3] = {0, 384, 704}, want_cnt[3] = {384, 320, 296};
    for (int k = 0; k < 3; ++k) {
        cm_buffer_t *b = NULL;
        size_t first = 1, cnt = 1;
        CM_ASSERT_OK(cm_split_part(sp, k, &b, &first, &cnt));
        assert_int_equal(first, want_off[k]);
        assert_int_equal(cnt, want_cnt[k]);
        cm_buffer_info_t info;
        CM_ASSERT_OK(cm_buffer_info(b, &info));
        assert_int_equal(info.bytes, want_cnt[k] * 4);
        cm_device_t *dev = NULL;
        int o = -1;
        CM_ASSERT_OK(cm_device_set_device(set, k, &dev));
        assert_ptr_equal(info.device, dev); /* the member's device object */
        CM_ASSERT_OK(cm_device_ordinal(info.device, &o));
        assert_int_equal(o, ord[k]);
        assert_int_equal(info.ordinal, ord[k]);
        assert_false(info.stream_ordered); /* the parts are synchronous buffers */
        assert_null(info.stream);
    }
    CM_ASSERT_OK(cm_split_part(sp, 1, NULL, NULL, NULL));
    size_t n = 0, eb = 0;
    cm_device_set_t *owner = NULL;
    CM_ASSERT_OK(cm_split_info(sp, &n, &eb, &owner));
    assert_int_equal(n, 1000);
    assert_int_equal(eb, 4);
    assert_ptr_equal(owner, set);
    CM_ASSERT_OK(cm_split_info(sp, NULL, NULL, NULL));
    /* the parts are counted in the device objects with a label */
    cm_device_t *d2 = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &d2));
    char report[1024];
    CM_ASSERT_OK(cm_device_leak_report(d2, report, sizeof report, NULL));
    assert_non_null(strstr(report, "split part 0/3"));
    assert_non_null(strstr(report, "test_multi_args.c"));

    visit_t v;
    memset(&v, 0, sizeof v);
    v.stop_at = -1;
    CM_ASSERT_OK(cm_split_for_each(sp, visit_part, &v));
    assert_int_equal(v.calls, 3);
    for (int k = 0; k < 3; ++k) {
        assert_int_equal(v.index[k], k);
        assert_int_equal(v.current[k], ord[k]); /* the member's device is current in fn */
        assert_int_equal(v.first[k], want_off[k]);
        assert_int_equal(v.count[k], want_cnt[k]);
        cm_stream_t *s = NULL;
        cm_buffer_t *b = NULL;
        CM_ASSERT_OK(cm_device_set_stream(set, k, &s));
        CM_ASSERT_OK(cm_split_part(sp, k, &b, NULL, NULL));
        assert_ptr_equal(v.stream[k], s);
        assert_ptr_equal(v.part[k], b);
    }
    assert_int_equal(fake.current, 1); /* restored, although fn switched it */
    memset(&v, 0, sizeof v);
    v.stop_at = 1;
    EXPECT_FAIL(cm_split_for_each(sp, visit_part, &v), CM_ERROR_BUSY, "stopped");
    assert_int_equal(v.calls, 2);
    assert_int_equal(fake.current, 1);
    EXPECT_FAIL(cm_split_for_each(sp, NULL, &v), INV, "fn is NULL");
    EXPECT_FAIL(cm_split_for_each(NULL, visit_part, &v), INV, "split is NULL");

    /* more members than units: an empty split and a split of fewer elements than members */
    cm_split_t *empty = NULL, *tiny = NULL;
    CM_ASSERT_OK(cm_split_create(set, 0, 8, &empty));
    CM_ASSERT_OK(cm_split_create(set, 2, 8, &tiny));
    size_t cnt = 9;
    CM_ASSERT_OK(cm_split_part(tiny, 0, NULL, NULL, &cnt));
    assert_int_equal(cnt, 2);
    CM_ASSERT_OK(cm_split_part(tiny, 2, NULL, NULL, &cnt));
    assert_int_equal(cnt, 0);
    /* 12-byte elements do not divide 256: granule 1, an even split */
    cm_split_t *odd = NULL;
    CM_ASSERT_OK(cm_split_create(set, 10, 12, &odd));
    CM_ASSERT_OK(cm_split_part(odd, 0, NULL, NULL, &cnt));
    assert_int_equal(cnt, 4);
    CM_ASSERT_OK(cm_split_part(odd, 2, NULL, NULL, &cnt));
    assert_int_equal(cnt, 3);

    EXPECT_FAIL(cm_device_set_close(set), CM_ERROR_BUSY, "4 live split arrays");
    CM_ASSERT_OK(cm_split_destroy(empty));
    CM_ASSERT_OK(cm_split_destroy(tiny));
    CM_ASSERT_OK(cm_split_destroy(odd));
    CM_ASSERT_OK(cm_split_destroy(sp));
    EXPECT_FAIL(cm_split_destroy(sp), INV, "already destroyed: it was a split array");
    EXPECT_FAIL(cm_split_part(sp, 0, NULL, NULL, NULL), INV, "destroyed");
    CM_ASSERT_OK(cm_split_destroy(NULL));
    assert_int_equal(fake.current, 1);
    CM_ASSERT_OK(cm_device_set_close(set));
}

static void test_split_create_arguments(void **state) {
    (void)state;
    const int ord[2] = {0, 1};
    cm_device_set_t *set = open_set(ord, 2);
    cm_split_t *sp = NULL;
    EXPECT_FAIL(cm_split_create(set, 10, 4, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_create(NULL, 10, 4, &sp), INV, "set is NULL");
    EXPECT_FAIL(cm_split_create(set, 10, 0, &sp), INV, "elem_bytes is 0");
    EXPECT_FAIL(cm_split_create(set, SIZE_MAX / 4 + 1, 4, &sp), INV, "overflow size_t");
    /* out of device memory (2 GiB parts on 1 GiB devices): the report names the device */
    assert_int_equal(cm_split_create(set, (size_t)1 << 30, 4, &sp), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_null(sp);
    assert_non_null(strstr(cm_last_error()->message, "on device 0"));
    /* the second member's part fails after the first was made: nothing is left allocated */
    fake_fail(FAKE_MALLOC, cudaErrorInvalidValue, 2);
    assert_int_not_equal(cm_split_create(set, 1000, 4, &sp), CM_OK);
    fake_fail_clear();
    assert_null(sp);
    for (int k = 0; k < 2; ++k) {
        cm_device_t *dk = NULL;
        CM_ASSERT_OK(cm_device_set_device(set, k, &dk));
        cm_memory_report_t m;
        CM_ASSERT_OK(cm_device_memory_report(dk, &m));
        assert_int_equal(m.live_buffers, 0);
    }
    EXPECT_FAIL(cm_split_part(NULL, 0, NULL, NULL, NULL), INV, "split is NULL");
    EXPECT_FAIL(cm_split_info(NULL, NULL, NULL, NULL), INV, "split is NULL");
    CM_ASSERT_OK(cm_split_create(set, 100, 4, &sp));
    EXPECT_FAIL(cm_split_part(sp, 2, NULL, NULL, NULL), INV, "member 2 does not exist");
    CM_ASSERT_OK(cm_split_destroy(sp));
    CM_ASSERT_OK(cm_device_set_close(set));
}

static void test_split_operation_arguments(void **state) {
    (void)state;
    const int ord[2] = {1, 2}, other_ord[2] = {0, 1};
    cm_device_set_t *set = open_set(ord, 2), *other = open_set(other_ord, 2);
    cm_split_t *f = NULL, *f2 = NULL, *d = NULL, *shorter = NULL, *i32 = NULL, *foreign = NULL;
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &f));
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &f2));
    CM_ASSERT_OK(cm_split_create(set, 1000, 8, &d));
    CM_ASSERT_OK(cm_split_create(set, 999, 4, &shorter));
    CM_ASSERT_OK(cm_split_create(set, 1000, 4, &i32));
    CM_ASSERT_OK(cm_split_create(other, 1000, 4, &foreign));
    cm_split_t *dead = NULL;
    CM_ASSERT_OK(cm_split_create(set, 4, 4, &dead));
    CM_ASSERT_OK(cm_split_destroy(dead));

    /* vector operations: NULL, destroyed, element size, layouts */
    EXPECT_FAIL(cm_split_add_f32(NULL, f, f2), INV, "out is NULL");
    EXPECT_FAIL(cm_split_add_f32(f, NULL, f2), INV, "a is NULL");
    EXPECT_FAIL(cm_split_add_f32(f, f, NULL), INV, "b is NULL");
    EXPECT_FAIL(cm_split_add_f32(f, dead, f2), INV, "a was already destroyed: it was a split array");
    EXPECT_FAIL(cm_split_add_f32(d, d, d), INV, "out has elements of 8 bytes, not float");
    EXPECT_FAIL(cm_split_add_f64(f, f, f), INV, "out has elements of 4 bytes, not double");
    EXPECT_FAIL(cm_split_add_f32(f, shorter, f2), INV,
                "out has 1000 elements of 4 bytes but a has 999 elements");
    EXPECT_FAIL(cm_split_add_f32(f, f2, foreign), INV, "different device sets");
    /* the enum forms: types and operations outside what splits take, unread operands */
    const float one_f = 1.0f;
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_FILL, CM_DTYPE_F32, NULL, f, NULL, NULL), INV,
                "alpha is NULL");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_COPY, CM_DTYPE_F32, &one_f, f, f2, NULL), INV,
                "does not read alpha");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_ADD, CM_DTYPE_I32, NULL, f, f, f2), INV, "CM_DTYPE_F32");
    EXPECT_FAIL(cm_split_vector((cm_vector_op_t)11, CM_DTYPE_F32, NULL, f, f, f2), INV,
                "not a cm_vector_op_t");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_FILL, CM_DTYPE_F32, &one_f, f, f2, NULL), INV,
                "does not read x");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_SCALE, CM_DTYPE_F32, &one_f, f, f2, f2), INV,
                "does not read y");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_AXPY, CM_DTYPE_F32, &one_f, f, f2, f2), INV,
                "out must be y");
    EXPECT_FAIL(cm_split_vector(CM_VECTOR_COPY, CM_DTYPE_F64, NULL, f, f2, NULL), INV,
                "not double");
    {
        float r = 0.0f;
        EXPECT_FAIL(cm_split_reduce(CM_REDUCE_ARGMAX, CM_DTYPE_I32, f, NULL, &r, NULL), INV,
                    "CM_DTYPE_F32 or CM_DTYPE_F64");
        EXPECT_FAIL(cm_split_reduce(CM_REDUCE_SUM, CM_DTYPE_F32, f, f2, &r, NULL), INV,
                    "does not read y");
        EXPECT_FAIL(cm_split_reduce(CM_REDUCE_SUM, CM_DTYPE_F32, f, NULL, &r, &r), INV,
                    "value is not NULL");
        EXPECT_FAIL(cm_split_reduce((cm_reduce_op_t)9, CM_DTYPE_F32, f, NULL, &r, NULL), INV,
                    "not a cm_reduce_op_t");
    }
    EXPECT_FAIL(cm_split_axpy_f32(2.0f, NULL, f), INV, "x is NULL");
    EXPECT_FAIL(cm_split_axpy_f32(2.0f, f, NULL), INV, "y is NULL");
    EXPECT_FAIL(cm_split_axpy_f32(2.0f, shorter, f), INV, "y has 1000 elements");
    EXPECT_FAIL(cm_split_axpy_f64(2.0, f, d), INV, "x has elements of 4 bytes, not double");
    EXPECT_FAIL(cm_split_scale_f32(2.0f, f, d), INV, "x has elements of 8 bytes");
    EXPECT_FAIL(cm_split_scale_f64(2.0, d, NULL), INV, "x is NULL");
    EXPECT_FAIL(cm_split_scale_f32(2.0f, NULL, f), INV, "out is NULL");
    EXPECT_FAIL(cm_split_fill_f32(d, 1.0f), INV, "not float");
    EXPECT_FAIL(cm_split_fill_f64(NULL, 1.0), INV, "out is NULL");

    /* reductions */
    float rf = 0;
    double rd = 0;
    int64_t ri = 0;
    int32_t r32 = 0;
    uint64_t idx = 0;
    EXPECT_FAIL(cm_split_sum_f32(f, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_sum_f32(NULL, &rf), INV, "x is NULL");
    EXPECT_FAIL(cm_split_sum_f32(d, &rf), INV, "x has elements of 8 bytes, not float");
    EXPECT_FAIL(cm_split_sum_f64(f, &rd), INV, "not double");
    EXPECT_FAIL(cm_split_sum_f64(f, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_sum_i32(d, &ri), INV, "not int32_t");
    EXPECT_FAIL(cm_split_sum_i32(i32, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_min_f32(dead, &rf), INV, "already destroyed");
    EXPECT_FAIL(cm_split_min_f64(f, &rd), INV, "not double");
    EXPECT_FAIL(cm_split_min_i32(d, &r32), INV, "not int32_t");
    EXPECT_FAIL(cm_split_max_f32(f, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_max_f64(NULL, &rd), INV, "x is NULL");
    EXPECT_FAIL(cm_split_max_i32(i32, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_argmin_f32(f, NULL, &rf), INV, "index is NULL");
    EXPECT_FAIL(cm_split_argmin_f64(f, &idx, &rd), INV, "not double");
    EXPECT_FAIL(cm_split_argmax_f32(d, &idx, NULL), INV, "not float");
    EXPECT_FAIL(cm_split_argmax_f64(NULL, &idx, NULL), INV, "x is NULL");
    EXPECT_FAIL(cm_split_dot_f32(f, NULL, &rf), INV, "y is NULL");
    EXPECT_FAIL(cm_split_dot_f32(f, shorter, &rf), INV, "x has 1000 elements");
    EXPECT_FAIL(cm_split_dot_f32(f, foreign, &rf), INV, "different device sets");
    EXPECT_FAIL(cm_split_dot_f32(f, f2, NULL), INV, "out is NULL");
    EXPECT_FAIL(cm_split_dot_f64(d, f, &rd), INV, "y has elements of 4 bytes");
    EXPECT_FAIL(cm_split_dot_f64(d, d, NULL), INV, "out is NULL");

    /* scatter and gather */
    float host[1000];
    cm_device_t *dev = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &dev));
    cm_buffer_t *buf = NULL, *gone = NULL, *part = NULL;
    CM_ASSERT_OK(cm_buffer_create(dev, 4000, &buf));
    CM_ASSERT_OK(cm_buffer_create(dev, 4, &gone));
    CM_ASSERT_OK(cm_buffer_destroy(gone));
    CM_ASSERT_OK(cm_split_part(f, 1, &part, NULL, NULL));
    EXPECT_FAIL(cm_split_scatter_from_host(f, host, 999), INV,
                "n is 999 but the split holds 1000 elements of 4 bytes");
    EXPECT_FAIL(cm_split_scatter_from_host(f, NULL, 1000), INV, "src is NULL but n is 1000");
    EXPECT_FAIL(cm_split_scatter_from_host(NULL, host, 1000), INV, "split is NULL");
    EXPECT_FAIL(cm_split_gather_to_host(f, host, 1001), INV, "n is 1001");
    EXPECT_FAIL(cm_split_gather_to_host(f, NULL, 1000), INV, "dst is NULL");
    EXPECT_FAIL(cm_split_gather_to_host(dead, host, 1000), INV, "already destroyed");
    EXPECT_FAIL(cm_split_scatter(f, NULL, 0), INV, "src");
    EXPECT_FAIL(cm_split_scatter(f, gone, 0), INV, "src");
    /* offsets are bytes: one element in is 4 bytes */
    EXPECT_FAIL(cm_split_scatter(f, buf, 4), INV,
                "src range out of bounds: offset 4 + 4000 bytes (1000 elements of 4 bytes) does "
                "not fit in its 4000 bytes");
    EXPECT_FAIL(cm_split_scatter(f, buf, SIZE_MAX - 3), INV, "src range out of bounds");
    EXPECT_FAIL(cm_split_scatter(d, buf, 0), INV,
                "offset 0 + 8000 bytes (1000 elements of 8 bytes) does not fit in its 4000 bytes");
    EXPECT_FAIL(cm_split_scatter(f, part, 0), INV, "src is part 1 of the split itself");
    EXPECT_FAIL(cm_split_gather(f, part, 0), INV, "dst is part 1");
    EXPECT_FAIL(cm_split_gather(f, buf, 3 * 4), INV, "dst range out of bounds");
    /* offsets count bytes: one that is not a multiple of the split's element size is refused
     * (before the range is looked at), naming the argument, and nothing is copied */
    const unsigned long copies = fake.calls[FAKE_MEMCPY] + fake.calls[FAKE_MEMCPY_ASYNC] +
                                 fake.calls[FAKE_MEMCPY_PEER] + fake.calls[FAKE_MEMCPY_PEER_ASYNC];
    EXPECT_FAIL(cm_split_scatter(f, buf, 6), INV,
                "src offset 6 is not a multiple of the 4-byte element");
    assert_non_null(strstr(cm_last_error()->hint, "offsets count bytes"));
    EXPECT_FAIL(cm_split_scatter(d, buf, 4), INV,
                "src offset 4 is not a multiple of the 8-byte element");
    EXPECT_FAIL(cm_split_gather(f, buf, 2), INV,
                "dst offset 2 is not a multiple of the 4-byte element");
    EXPECT_FAIL(cm_split_gather(d, buf, 12), INV,
                "dst offset 12 is not a multiple of the 8-byte element");
    assert_int_equal(fake.calls[FAKE_MEMCPY] + fake.calls[FAKE_MEMCPY_ASYNC] +
                     fake.calls[FAKE_MEMCPY_PEER] + fake.calls[FAKE_MEMCPY_PEER_ASYNC], copies);
    EXPECT_FAIL(cm_split_gather(NULL, buf, 0), INV, "split is NULL");
    /* empty operations succeed without touching anything */
    cm_split_t *empty = NULL;
    CM_ASSERT_OK(cm_split_create(set, 0, 4, &empty));
    CM_ASSERT_OK(cm_split_scatter_from_host(empty, NULL, 0));
    CM_ASSERT_OK(cm_split_gather_to_host(empty, NULL, 0));
    CM_ASSERT_OK(cm_split_scatter(empty, buf, 4000)); /* byte offsets, element-aligned */
    CM_ASSERT_OK(cm_split_gather(empty, buf, 8));
    EXPECT_FAIL(cm_split_gather(empty, buf, 2), INV,
                "dst offset 2 is not a multiple of the 4-byte element");
    CM_ASSERT_OK(cm_split_add_f32(empty, empty, empty));
    CM_ASSERT_OK(cm_split_sum_f32(empty, &rf));
    assert_true(rf == 0.0f);
    CM_ASSERT_OK(cm_split_max_i32(empty, &r32));
    assert_int_equal(r32, INT32_MIN);
    cm_split_t *empty8 = NULL;
    CM_ASSERT_OK(cm_split_create(set, 0, 8, &empty8));
    rd = 0.0;
    CM_ASSERT_OK(cm_split_argmin_f64(empty8, &idx, &rd));
    assert_true(idx == CM_REDUCE_NO_INDEX && rd > 1e308);
    CM_ASSERT_OK(cm_split_dot_f64(empty8, empty8, &rd));
    assert_true(rd == 0.0);
    CM_ASSERT_OK(cm_split_destroy(empty8));
    CM_ASSERT_OK(cm_split_destroy(empty));

    CM_ASSERT_OK(cm_buffer_destroy(buf));
    cm_split_t *all[] = {f, f2, d, shorter, i32, foreign};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) CM_ASSERT_OK(cm_split_destroy(all[i]));
    CM_ASSERT_OK(cm_device_set_close(set));
    CM_ASSERT_OK(cm_device_set_close(other));
}

/* cm_split_gemm: every argument rule, each refused with nothing queued (a member's GEMM queued
 * before a later member's check failed would have reached the simulated devices' kernel launch
 * and failed with a CUDA error instead), and an empty split, which queues nothing */
static void test_split_gemm_arguments(void **state) {
    (void)state;
    const int ord[2] = {1, 2}, other_ord[2] = {0, 1};
    cm_device_set_t *set = open_set(ord, 2), *other = open_set(other_ord, 2);
    const size_t m = 300, n = 96, k = 80;
    cm_split_t *a = NULL, *c = NULL, *c16 = NULL, *a16 = NULL, *cshort = NULL, *cforeign = NULL,
               *craggy = NULL, *aragged = NULL;
    CM_ASSERT_OK(cm_split_create(set, m, k * 4, &a));      /* rows of A, float */
    CM_ASSERT_OK(cm_split_create(set, m, n * 4, &c));      /* rows of C, float */
    CM_ASSERT_OK(cm_split_create(set, m, n * 2, &c16));    /* rows of C, bf16 */
    CM_ASSERT_OK(cm_split_create(set, m, k * 2, &a16));    /* rows of A, bf16 */
    CM_ASSERT_OK(cm_split_create(set, m - 1, n * 4, &cshort));
    CM_ASSERT_OK(cm_split_create(other, m, n * 4, &cforeign));
    /* rows of 16 floats (64 bytes: a granule of 4 rows) against rows of 100 floats (granule 1):
     * 7 rows cut 4 / 3 in one and 4 / 3 in the other, 9 rows 8 / 1 against 5 / 4 */
    CM_ASSERT_OK(cm_split_create(set, 9, 16 * 4, &craggy));
    CM_ASSERT_OK(cm_split_create(set, 9, 100 * 4, &aragged));
    cm_device_t *d0 = NULL, *d1 = NULL;
    CM_ASSERT_OK(cm_device_set_device(set, 0, &d0));
    CM_ASSERT_OK(cm_device_set_device(set, 1, &d1));
    cm_buffer_t *b0 = NULL, *b1 = NULL, *b1small = NULL, *dead = NULL;
    CM_ASSERT_OK(cm_buffer_create(d0, k * n * 4, &b0));
    CM_ASSERT_OK(cm_buffer_create(d1, k * n * 4, &b1));
    CM_ASSERT_OK(cm_buffer_create(d1, k * n * 4 - 4, &b1small));
    CM_ASSERT_OK(cm_buffer_create(d1, 16, &dead));
    CM_ASSERT_OK(cm_buffer_destroy(dead));
    cm_buffer_t *b[2] = {b0, b1}, *swapped[2] = {b1, b0}, *small[2] = {b0, b1small},
                *with_null[2] = {b0, NULL}, *with_dead[2] = {b0, dead};
    const cm_gemm_op_t N = CM_GEMM_OP_N, T = CM_GEMM_OP_T;

    EXPECT_FAIL(cm_split_gemm((cm_gemm_precision_t)9, N, n, k, 1, a, b, n, 0, c), INV,
                "precision 9 is not a cm_gemm_precision_t");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, (cm_gemm_op_t)5, n, k, 1, a, b, n, 0, c), INV,
                "op_b 5 is not a cm_gemm_op_t");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, 0, k, 1, a, b, n, 0, c), INV, "n is 0");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, 0, 1, a, b, n, 0, c), INV, "k is 0");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, NULL, b, n, 0, c), INV, "a is NULL");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, b, n, 0, NULL), INV, "c is NULL");
    /* element sizes that are not rows, for the precision's types */
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a16, b, n, 0, c), INV,
                "a has elements of 160 bytes, but a row of k = 80 float elements is 320 bytes");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_BF16, N, n, k, 1, a, b, n, 0, c), INV,
                "a row of k = 80 cm_bf16_t elements is 160 bytes");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_BF16_OUT_BF16, N, n, k, 1, a16, b, n, 0, c), INV,
                "c has elements of 384 bytes, but a row of n = 96 cm_bf16_t elements is 192");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n + 1, k, 1, a, b, n + 1, 0, c), INV,
                "a row of n = 97 float elements");
    /* sets, lengths, parts */
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, b, n, 0, cforeign), INV,
                "different device sets");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, b, n, 0, cshort), INV,
                "a has 300 rows but c has 299");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, 16, 100, 1, aragged, b, 16, 0, craggy), INV,
                "member 0 holds rows [0, 5) of a but rows [0, 8) of c");
    /* B */
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, b, n - 1, 0, c), INV,
                "ldb = 95 is less than 96, the columns of the stored B");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, T, n, k, 1, a, b, k - 1, 0, c), INV,
                "ldb = 79 is less than 80");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, NULL, n, 0, c), INV, "b is NULL");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, with_null, n, 0, c), INV,
                "b[1] is NULL, but member 1 (device 2) holds 150 rows");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, with_dead, n, 0, c), INV,
                "(b[1] of cm_split_gemm; nothing was queued)");
    {
        cm_buffer_t *cpart = NULL;
        CM_ASSERT_OK(cm_split_part(c, 1, &cpart, NULL, NULL));
        cm_buffer_t *into_c[2] = {b0, cpart};
        EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, into_c, n, 0, c), INV,
                    "b[1] is member 1's part of c");
    }
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, swapped, n, 0, c), INV,
                "b[0] is a buffer of device 2, but member 0 is device 1");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, N, n, k, 1, a, small, n, 0, c), INV,
                "b[1] holds 30716 bytes, less than the 30720 bytes B spans");
    EXPECT_FAIL(cm_split_gemm(CM_GEMM_FP32, T, n, k, 1, a, b, SIZE_MAX / 2, 0, c), INV,
                "B's extent overflows size_t");
    /* an empty split: no member holds rows, nothing is queued, b is not read */
    cm_split_t *ea = NULL, *ec = NULL;
    CM_ASSERT_OK(cm_split_create(set, 0, k * 4, &ea));
    CM_ASSERT_OK(cm_split_create(set, 0, n * 4, &ec));
    cm_buffer_t *none[2] = {NULL, NULL};
    CM_ASSERT_OK(cm_split_gemm(CM_GEMM_TF32, N, n, k, 1, ea, none, n, 0, ec));
    CM_ASSERT_OK(cm_split_destroy(ea));
    CM_ASSERT_OK(cm_split_destroy(ec));

    cm_buffer_t *bufs[] = {b0, b1, b1small};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i) CM_ASSERT_OK(cm_buffer_destroy(bufs[i]));
    cm_split_t *all[] = {a, c, c16, a16, cshort, cforeign, craggy, aragged};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) CM_ASSERT_OK(cm_split_destroy(all[i]));
    CM_ASSERT_OK(cm_device_set_close(set));
    CM_ASSERT_OK(cm_device_set_close(other));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_rule_exhaustive),
        cmocka_unit_test(test_plan_examples),
        cmocka_unit_test(test_plan_arguments),
        cmocka_unit_test(test_id_hex_round_trip),
        cmocka_unit_test(test_id_hex_arguments),
        cmocka_unit_test(test_names_and_sizes),
        cmocka_unit_test(test_peer_matrix_text),
        cmocka_unit_test_setup_teardown(test_nccl_entry_points, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_open_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_accessors_and_close, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_scope_exit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peer_access_simulated, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_layout_and_for_each, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_create_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_operation_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_split_gemm_arguments, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
