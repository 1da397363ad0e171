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

static int child(int rank, const char *id_path) {
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
    cm_device_t *dev = NULL;
    CHILD_OK(cm_device_open(rank, &dev));
    cm_comm_t *comm = NULL;
    CHILD_OK(cm_comm_create_rank(dev, &id, 2, rank, &comm));
    CHILD_HOME();
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
    for (size_t i = 0; i < N; ++i) {
        double a = value_of(0, i), b = value_of(1, i);
        CHILD_CHECK(fabs((double)out[i] - (a + b)) <= ldexp(fabs(a) + fabs(b), -23),
                    "sum element %zu: %g, want %g", i, out[i], a + b);
    }
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

/* ---------------------------------------------------------------- the parent */

static void test_two_processes(void **state) {
    (void)state;
    CM_REQUIRE_GPU();
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
        char *argv[] = {(char *)"test_gpu_multi_ranks", (char *)"--child", rank_arg, id_path, NULL};
        int rc = posix_spawn(&pids[r], "/proc/self/exe", NULL, NULL, argv, environ);
        if (rc != 0) fail_msg("posix_spawn of rank %d: %s", r, strerror(rc));
    }
    int status[2] = {-1, -1};
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
    (void)rmdir(dir);
    for (int r = 0; r < 2; ++r) {
        if (!WIFEXITED(status[r]) || WEXITSTATUS(status[r]) != 0)
            fail_msg("rank %d %s %d (its report is above)", r,
                     WIFEXITED(status[r]) ? "exited with" : "was killed by signal",
                     WIFEXITED(status[r]) ? WEXITSTATUS(status[r]) : WTERMSIG(status[r]));
    }
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(atoi(argv[2]), argv[3]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
