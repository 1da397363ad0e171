/*
 * Collectives across processes, one GPU each (label multi-gpu: skipped with the reason on a
 * machine with fewer than two GPUs or a libcudamodel built without NCCL).
 *
 * The test starts two copies of this executable (posix_spawn of /proc/self/exe with
 * CM_RANKS_CHILD=<rank>; the parent makes no NCCL call). Rank 0 makes the communicator id
 * (cm_comm_id_create()), writes it as hex into a temporary file (written to a .tmp name and
 * renamed, so the reader never sees half of it); rank 1 waits for the file and reads the id back
 * (cm_comm_id_from_hex()). Each rank opens its own device (device = rank) and joins with
 * cm_comm_create_rank(). With the *other* device current (so a library that left its rank's
 * device current is caught), each rank checks:
 * - cm_comm_size(): 2 ranks, 1 local, first rank = its rank;
 * - all-reduce sum of 2^20 + 3 floats (each rank's data from a seed both ranks know: references
 *   in float64 for both ranks' data), out of place, recv poisoned first;
 * - all-reduce max in place, exact; int32 sum, exact;
 * - broadcast from rank 1 (rank 0 passes no send buffer);
 * - all-gather, every element checked;
 * and destroys the communicator. The parent waits for both with a 180-second limit (killing its
 * own children by pid when it runs out) and passes when both exit 0.
 *
 * test_rank_dies_mid_all_reduce (issue #17, "collectives that fail instead of hang"): the same
 * two ranks join and run one checked all-reduce; rank 0 sets a collective timeout of
 * DIES_TIMEOUT_MS, queues a second all-reduce, marks the file <id>.in and waits in
 * cm_comm_synchronize(); rank 1 waits for that mark and kills itself (SIGKILL) instead of
 * joining the all-reduce. Rank 0 must get a failure (the timeout, CM_ERROR_BUSY, or NCCL's
 * error about the dead peer) within the timeout plus DIES_SLACK_MS, have every later collective
 * refused at once, destroy the communicator within DIES_SLACK_MS, and still use its device
 * (a set and a copy back, checked) before it closes it. The parent passes when rank 0 exits 0
 * and rank 1 died of SIGKILL.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/multi.h>
#include <cudamodel/version.h>

extern char **environ;

#define N (((size_t)1 << 20) + 3)
#define WAIT_S 180
#define DIES_TIMEOUT_MS 5000u /* rank 0's collective timeout in the dying-rank test */
#define DIES_SLACK_MS 15000.0 /* what the failure, and then the destroy, may take beyond it */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Both ranks' data, from seeds both know. */
static float value_of(int rank, size_t i) {
    uint64_t s = (uint64_t)(rank + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull;
    s ^= s >> 31;
    s *= 0x94D049BB133111EBull;
    s ^= s >> 29;
    return (float)((double)(s >> 11) * 0x1.0p-52 - 1.0);
}

static int32_t int_of(int rank, size_t i) {
    return (int32_t)(value_of(rank, i) * 1.0e9f);
}

/* ---------------------------------------------------------------- the child: one rank */

#define CHILD_CHECK(cond, ...)                                                               \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "rank %d: FAILED at line %d: ", rank, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

#define CHILD_OK(expr)                                                                       \
    do {                                                                                     \
        cm_status_t st_ = (expr);                                                            \
        if (st_ != CM_OK) {                                                                  \
            char rep_[2048];                                                                 \
            cm_error_format(NULL, rep_, sizeof rep_);                                        \
            fprintf(stderr, "rank %d: %s failed at line %d:\n%s\n", rank, #expr, __LINE__,   \
                    rep_);                                                                   \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

#define CHILD_HOME()                                                                         \
    do {                                                                                     \
        int d_ = -1;                                                                         \
        CHILD_CHECK(cudaGetDevice(&d_) == cudaSuccess && d_ == other,                        \
                    "the current device is %d, the caller's was %d", d_, other);             \
    } while (0)

/* The all-reduce sum of both ranks' first n values in out, each within one float rounding of
 * the float64 sum. 0, or 1 with the first wrong element printed. */
static int check_sum(int rank, const float *out, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        double a = value_of(0, i), b = value_of(1, i);
        CHILD_CHECK(fabs((double)out[i] - (a + b)) <= ldexp(fabs(a) + fabs(b), -23),
                    "sum element %zu: %g, want %g", i, out[i], a + b);
    }
    return 0;
}

/* Join the two-rank communicator (rank 0 publishes the id in id_path, rank 1 reads it), with
 * the other rank's device current. 0 on success, else 1 with the failure printed. */
static int join(int rank, const char *id_path, cm_device_t **devp, cm_comm_t **commp) {
    const int other = 1 - rank;
    CHILD_CHECK(cudaSetDevice(other) == cudaSuccess, "cudaSetDevice(%d)", other);
    cm_comm_id_t id;
    char hex[CM_COMM_ID_HEX_SIZE + 16];
    if (rank == 0) {
        CHILD_OK(cm_comm_id_create(&id));
        CHILD_OK(cm_comm_id_to_hex(&id, hex, sizeof hex));
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", id_path);
        FILE *f = fopen(tmp, "w");
        CHILD_CHECK(f != NULL, "cannot write %s: %s", tmp, strerror(errno));
        fprintf(f, "%s\n", hex);
        CHILD_CHECK(fclose(f) == 0 && rename(tmp, id_path) == 0, "cannot publish the id");
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 60 * 20 && (f = fopen(id_path, "r")) == NULL; ++i) sleep_ms(50);
        CHILD_CHECK(f != NULL, "no id in %s after 60 s", id_path);
        size_t got = fread(hex, 1, sizeof hex - 1, f);
        fclose(f);
        hex[got] = '\0';
        CHILD_OK(cm_comm_id_from_hex(hex, &id));
    }
    CHILD_OK(cm_device_open(rank, devp));
    CHILD_OK(cm_comm_create_rank(*devp, &id, 2, rank, commp));
    CHILD_HOME();
    return 0;
}

static int child(int rank, const char *id_path) {
    const int other = 1 - rank;
    cm_device_t *dev = NULL;
    cm_comm_t *comm = NULL;
    if (join(rank, id_path, &dev, &comm) != 0) return 1;
    int nranks = 0, local = 0, first = -1;
    CHILD_OK(cm_comm_size(comm, &nranks, &local, &first));
    CHILD_CHECK(nranks == 2 && local == 1 && first == rank, "size %d %d %d", nranks, local, first);

    float *h = malloc(N * 4), *out = malloc(2 * N * 4);
    int32_t *hi = malloc(N * 4);
    CHILD_CHECK(h && out && hi, "out of host memory");
    for (size_t i = 0; i < N; ++i) {
        h[i] = value_of(rank, i);
        hi[i] = int_of(rank, i);
    }
    cm_buffer_t *send = NULL, *recv = NULL, *gath = NULL;
    CHILD_OK(cm_buffer_create(dev, N * 4, &send));
    CHILD_OK(cm_buffer_create(dev, N * 4, &recv));
    CHILD_OK(cm_buffer_create(dev, 2 * N * 4, &gath));
    CHILD_OK(cm_buffer_copy_from_host(NULL, send, 0, h, N * 4));
    CHILD_OK(cm_buffer_set(NULL, recv, 0, N * 4, 0xff));

    /* all-reduce sum, out of place */
    CHILD_OK(cm_comm_all_reduce(comm, &send, &recv, N, CM_DTYPE_F32, CM_COMM_SUM));
    CHILD_HOME();
    CHILD_OK(cm_comm_synchronize(comm));
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, out, N * 4));
    if (check_sum(rank, out, N) != 0) return 1;
    /* all-reduce max, in place */
    CHILD_OK(cm_buffer_copy_from_host(NULL, recv, 0, h, N * 4));
    CHILD_OK(cm_comm_all_reduce(comm, &recv, &recv, N, CM_DTYPE_F32, CM_COMM_MAX));
    CHILD_OK(cm_comm_synchronize(comm));
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, out, N * 4));
    for (size_t i = 0; i < N; ++i)
        CHILD_CHECK(out[i] == fmaxf(value_of(0, i), value_of(1, i)), "max element %zu", i);
    /* int32 sum, exact */
    CHILD_OK(cm_buffer_copy_from_host(NULL, send, 0, hi, N * 4));
    CHILD_OK(cm_comm_all_reduce(comm, &send, &recv, N, CM_DTYPE_I32, CM_COMM_SUM));
    CHILD_OK(cm_comm_synchronize(comm));
    int32_t *oi = (int32_t *)(void *)out;
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, oi, N * 4));
    for (size_t i = 0; i < N; ++i)
        CHILD_CHECK(oi[i] == int_of(0, i) + int_of(1, i), "int sum element %zu", i);
    /* broadcast from rank 1; rank 0 passes no send buffer */
    CHILD_OK(cm_buffer_copy_from_host(NULL, send, 0, h, N * 4));
    CHILD_OK(cm_buffer_set(NULL, recv, 0, N * 4, 0xff));
    cm_buffer_t *bsend = rank == 1 ? send : NULL;
    CHILD_OK(cm_comm_broadcast(comm, &bsend, &recv, N, CM_DTYPE_F32, 1));
    CHILD_OK(cm_comm_synchronize(comm));
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, out, N * 4));
    for (size_t i = 0; i < N; ++i)
        CHILD_CHECK(out[i] == value_of(1, i), "broadcast element %zu", i);
    /* all-gather */
    CHILD_OK(cm_buffer_set(NULL, gath, 0, 2 * N * 4, 0xff));
    CHILD_OK(cm_comm_all_gather(comm, &send, &gath, N, CM_DTYPE_F32));
    CHILD_OK(cm_comm_synchronize(comm));
    CHILD_OK(cm_buffer_copy_to_host(NULL, gath, 0, out, 2 * N * 4));
    for (int r = 0; r < 2; ++r)
        for (size_t i = 0; i < N; ++i)
            CHILD_CHECK(out[(size_t)r * N + i] == value_of(r, i), "all-gather rank %d element %zu",
                        r, i);
    CHILD_HOME();
    CHILD_OK(cm_comm_destroy(comm));
    CHILD_HOME();
    CHILD_OK(cm_buffer_destroy(send));
    CHILD_OK(cm_buffer_destroy(recv));
    CHILD_OK(cm_buffer_destroy(gath));
    CHILD_OK(cm_device_close(dev));
    free(h);
    free(out);
    free(hi);
    fprintf(stderr, "rank %d: all checks passed\n", rank);
    return 0;
}

/* The dying-rank scenario (see the top of the file). */
static int child_dies(int rank, const char *id_path) {
    cm_device_t *dev = NULL;
    cm_comm_t *comm = NULL;
    if (join(rank, id_path, &dev, &comm) != 0) return 1;
    char mark[4096];
    snprintf(mark, sizeof mark, "%s.in", id_path);
    const size_t n = ((size_t)1 << 16) + 5;
    float *h = malloc(n * 4), *out = malloc(n * 4);
    CHILD_CHECK(h && out, "out of host memory");
    for (size_t i = 0; i < n; ++i) h[i] = value_of(rank, i);
    cm_buffer_t *send = NULL, *recv = NULL;
    CHILD_OK(cm_buffer_create(dev, n * 4, &send));
    CHILD_OK(cm_buffer_create(dev, n * 4, &recv));
    CHILD_OK(cm_buffer_copy_from_host(NULL, send, 0, h, n * 4));
    /* one all-reduce that both ranks join: the communicator works */
    CHILD_OK(cm_comm_all_reduce(comm, &send, &recv, n, CM_DTYPE_F32, CM_COMM_SUM));
    CHILD_OK(cm_comm_synchronize(comm));
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, out, n * 4));
    if (check_sum(rank, out, n) != 0) return 1;
    if (rank == 1) {
        /* die while rank 0 waits inside the next all-reduce */
        bool marked = false;
        for (int i = 0; i < 60 * 20 && !marked; ++i) {
            marked = access(mark, F_OK) == 0;
            if (!marked) sleep_ms(50);
        }
        CHILD_CHECK(marked, "rank 0 never marked %s", mark);
        sleep_ms(200);
        fprintf(stderr, "rank 1: killing itself in the middle of the all-reduce\n");
        raise(SIGKILL);
        return 1; /* not reached */
    }
    CHILD_OK(cm_comm_set_timeout(comm, DIES_TIMEOUT_MS));
    CHILD_OK(cm_comm_all_reduce(comm, &send, &recv, n, CM_DTYPE_F32, CM_COMM_SUM));
    FILE *f = fopen(mark, "w");
    CHILD_CHECK(f != NULL && fclose(f) == 0, "cannot mark %s: %s", mark, strerror(errno));
    double t0 = now_ms();
    cm_status_t st = cm_comm_synchronize(comm);
    double waited = now_ms() - t0;
    char report[2048];
    cm_error_format(NULL, report, sizeof report);
    fprintf(stderr, "rank 0: cm_comm_synchronize after the peer died: status %d after %.0f ms:\n%s\n",
            (int)st, waited, report);
    CHILD_CHECK(st != CM_OK, "the all-reduce with a dead peer reported success");
    CHILD_CHECK(cm_last_error()->status == st && cm_last_error()->message[0] != '\0',
                "cm_last_error() does not describe the failure");
    CHILD_CHECK(waited <= DIES_TIMEOUT_MS + DIES_SLACK_MS,
                "the failure took %.0f ms (timeout %u ms)", waited, DIES_TIMEOUT_MS);
    /* the aborted communicator refuses further collectives at once */
    t0 = now_ms();
    cm_status_t again = cm_comm_all_reduce(comm, &send, &recv, n, CM_DTYPE_F32, CM_COMM_SUM);
    if (again == CM_OK) again = cm_comm_synchronize(comm);
    CHILD_CHECK(again != CM_OK, "a collective on the aborted communicator succeeded");
    CHILD_CHECK(now_ms() - t0 <= 1000.0, "the refusal took %.0f ms", now_ms() - t0);
    t0 = now_ms();
    st = cm_comm_destroy(comm);
    double destroy_ms = now_ms() - t0;
    fprintf(stderr, "rank 0: cm_comm_destroy: status %d after %.0f ms\n", (int)st, destroy_ms);
    CHILD_CHECK(destroy_ms <= DIES_SLACK_MS, "the destroy took %.0f ms", destroy_ms);
    /* the device object still works */
    CHILD_OK(cm_buffer_set(NULL, recv, 0, n * 4, 0x3f));
    CHILD_OK(cm_buffer_copy_to_host(NULL, recv, 0, out, n * 4));
    uint32_t bits;
    memcpy(&bits, &out[n - 1], 4);
    CHILD_CHECK(bits == 0x3f3f3f3fu, "the device's memory after the abort: %08x", bits);
    CHILD_OK(cm_buffer_destroy(send));
    CHILD_OK(cm_buffer_destroy(recv));
    CHILD_OK(cm_device_close(dev));
    free(h);
    free(out);
    fprintf(stderr, "rank 0: the dead peer was reported in bounded time; all checks passed\n");
    return 0;
}

/* ---------------------------------------------------------------- the parent */

/* Start both ranks (--child or --child-dies), wait for them (WAIT_S at most), and return their
 * wait statuses in status[]. Skips without two GPUs or NCCL. */
static void run_ranks(const char *mode, int status[2]) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    if (n < 2) {
        print_message("skipping: one process per GPU needs two GPUs; %d visible\n", n);
        skip();
    }
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    if (!vi.nccl_built) {
        print_message("skipping: this libcudamodel was built without NCCL\n");
        skip();
    }
    char dir[] = "/tmp/cm_ranks_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char id_path[256];
    snprintf(id_path, sizeof id_path, "%s/nccl_id", dir);
    pid_t pids[2] = {0, 0};
    for (int r = 0; r < 2; ++r) {
        char rank_arg[16];
        snprintf(rank_arg, sizeof rank_arg, "%d", r);
        char *argv[] = {(char *)"test_gpu_multi_ranks", (char *)mode, rank_arg, id_path, NULL};
        int rc = posix_spawn(&pids[r], "/proc/self/exe", NULL, NULL, argv, environ);
        if (rc != 0) fail_msg("posix_spawn of rank %d: %s", r, strerror(rc));
    }
    status[0] = status[1] = -1;
    bool done[2] = {false, false};
    for (int waited_ms = 0; !(done[0] && done[1]); waited_ms += 100) {
        for (int r = 0; r < 2; ++r) {
            if (done[r]) continue;
            pid_t p = waitpid(pids[r], &status[r], WNOHANG);
            if (p == pids[r]) done[r] = true;
        }
        if (done[0] && done[1]) break;
        if (waited_ms >= WAIT_S * 1000) {
            for (int r = 0; r < 2; ++r)
                if (!done[r]) {
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], &status[r], 0);
                }
            fail_msg("the ranks did not finish in %d s (a hang in the collectives?)", WAIT_S);
        }
        sleep_ms(100);
    }
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", id_path);
    (void)unlink(id_path);
    (void)unlink(tmp);
    snprintf(tmp, sizeof tmp, "%s.in", id_path);
    (void)unlink(tmp);
    (void)rmdir(dir);
}

static void expect_exit_0(int r, int status) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("rank %d %s %d (its report is above)", r,
                 WIFEXITED(status) ? "exited with" : "was killed by signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void test_two_processes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int status[2];
    run_ranks("--child", status);
    for (int r = 0; r < 2; ++r) expect_exit_0(r, status[r]);
}

static void test_rank_dies_mid_all_reduce(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
    int status[2];
    run_ranks("--child-dies", status);
    expect_exit_0(0, status[0]);
    if (!WIFSIGNALED(status[1]) || WTERMSIG(status[1]) != SIGKILL)
        fail_msg("rank 1 should have died of SIGKILL; its wait status is %d", status[1]);
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(atoi(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "--child-dies") == 0)
        return child_dies(atoi(argv[2]), argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_processes),
        cmocka_unit_test(test_rank_dies_mid_all_reduce),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
