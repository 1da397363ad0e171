/*
 * A program that uses an installed libcudamodel the way a user would: only <cudamodel/...>
 * headers, no CUDA header, built with
 *     cc consumer.c $(pkg-config --cflags --libs cudamodel)
 * or through find_package(cudamodel) (tests/consumer/CMakeLists.txt).
 * Run by tests/consumer/run_consumer_test.sh (the "install" test). Exits non-zero when
 * anything the library answers is inconsistent; works with or without a GPU.
 */
#include <stdio.h>
#include <string.h>

#include <cudamodel/launch.h>
#include <cudamodel/multi.h>
#include <cudamodel/version.h>

static int failures = 0;

#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "consumer: FAILED: %s: ", #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
            failures++;                                                                      \
        }                                                                                    \
    } while (0)

int main(void) {
    /* The headers we compiled with and the library we run with are the same version. */
    const char *version = cm_version_string();
    CHECK(version != NULL, "cm_version_string() returned NULL");
    if (version != NULL) {
        CHECK(strcmp(version, CM_VERSION_STRING) == 0, "library %s, headers %s", version,
              CM_VERSION_STRING);
    }
    cm_version_info_t vi;
    memset(&vi, 0, sizeof vi);
    cm_status_t st = cm_version_info(&vi);
    CHECK(st == CM_OK, "cm_version_info returned %s", cm_status_name(st));
    CHECK(vi.library == (unsigned int)CM_VERSION_NUMBER, "library %u, headers %u", vi.library,
          (unsigned int)CM_VERSION_NUMBER);
    CHECK(vi.library_string != NULL && version != NULL && strcmp(vi.library_string, version) == 0,
          "cm_version_info: library_string %s, cm_version_string() %s",
          vi.library_string != NULL ? vi.library_string : "(null)",
          version != NULL ? version : "(null)");
    CHECK(vi.runtime_built > 0 && vi.cuda_architectures != NULL && vi.driver >= 0,
          "cm_version_info: runtime_built %d, architectures %s, driver %d", vi.runtime_built,
          vi.cuda_architectures != NULL ? vi.cuda_architectures : "(null)", vi.driver);
    printf("libcudamodel %s\n", version != NULL ? version : "(null)");

    /* Status names and texts: static, never NULL, names stable. */
    CHECK(strcmp(cm_status_name(CM_OK), "CM_OK") == 0, "cm_status_name(CM_OK) = %s",
          cm_status_name(CM_OK));
    CHECK(strcmp(cm_status_name(CM_ERROR_NO_DRIVER), "CM_ERROR_NO_DRIVER") == 0,
          "cm_status_name(CM_ERROR_NO_DRIVER) = %s", cm_status_name(CM_ERROR_NO_DRIVER));
    for (int s = 0; s < CM_STATUS_COUNT; s++) {
        const char *name = cm_status_name((cm_status_t)s);
        const char *text = cm_status_string((cm_status_t)s);
        CHECK(name != NULL && strncmp(name, "CM_", 3) == 0, "status %d has name %s", s,
              name != NULL ? name : "(null)");
        CHECK(text != NULL && text[0] != '\0', "status %d has an empty text", s);
    }
    CHECK(cm_status_name((cm_status_t)999) != NULL, "unknown status gives a NULL name");
    CHECK(cm_status_string((cm_status_t)999) != NULL, "unknown status gives a NULL text");

    /* A 1-D launch configuration: 1000 elements, 256 threads per block -> 4 blocks. */
    cm_launch_config_t cfg = CM_LAUNCH_CONFIG_INIT;
    st = cm_launch_config_1d(1000, 256, &cfg);
    CHECK(st == CM_OK, "cm_launch_config_1d(1000, 256) returned %s", cm_status_name(st));
    CHECK(cfg.grid.x == 4 && cfg.block.x == 256, "grid.x = %u, block.x = %u (want 4, 256)",
          cfg.grid.x, cfg.block.x);
    CHECK(cm_launch_config_threads(&cfg) == 1024, "threads = %llu (want 1024)",
          (unsigned long long)cm_launch_config_threads(&cfg));
    printf("cm_launch_config_1d(1000, 256): grid %u x block %u\n", cfg.grid.x, cfg.block.x);

    st = cm_launch_config_1d(1000, 2048, &cfg);
    CHECK(st == CM_ERROR_INVALID_ARGUMENT, "2048 threads per block returned %s",
          cm_status_name(st));
    if (st != CM_OK) {
        const cm_error_t *e = cm_last_error();
        CHECK(e != NULL && e->status == st, "cm_last_error() does not hold the failure");
        CHECK(e != NULL && e->message[0] != '\0', "the failure has no message");
    }

    /* multi.h: the split arithmetic, and NCCL when the library was built with it (a static
     * install must bring libnccl through pkg-config / the CMake target for this to link). */
    cm_split_part_t parts[3];
    st = cm_split_plan(10, 3, 1, parts);
    CHECK(st == CM_OK && parts[0].count == 4 && parts[1].count == 3 && parts[2].first == 7,
          "cm_split_plan(10, 3) returned %s", cm_status_name(st));
    if (vi.nccl_built) {
        CHECK(vi.nccl > 0 && vi.nccl / 10000 == vi.nccl_built_version / 10000,
              "NCCL %d, built against %d", vi.nccl, vi.nccl_built_version);
        printf("NCCL %d\n", vi.nccl);
    } else {
        CHECK(vi.nccl == 0 && vi.nccl_built_version == 0,
              "built without NCCL, but NCCL %d, built against %d", vi.nccl,
              vi.nccl_built_version);
        cm_comm_id_t id;
        st = cm_comm_id_create(&id);
        CHECK(st == CM_ERROR_NOT_SUPPORTED, "cm_comm_id_create without NCCL returned %s",
              cm_status_name(st));
        printf("built without NCCL\n");
    }

    /* Devices: a machine without a GPU answers "no driver" or "no device". */
    int count = -1;
    st = cm_device_count(&count);
    printf("cm_device_count: %s (%s), count %d\n", cm_status_name(st), cm_status_string(st),
           count);
    CHECK(st == CM_OK || st == CM_ERROR_NO_DRIVER || st == CM_ERROR_NO_DEVICE,
          "cm_device_count returned %s", cm_status_name(st));
    if (st == CM_OK) {
        CHECK(count >= 0, "count %d", count);
    } else {
        CHECK(count == 0, "count is %d after a failure (want 0)", count);
        char report[2048];
        size_t need = cm_error_format(NULL, report, sizeof report);
        CHECK(need > 0, "cm_error_format wrote nothing");
        printf("%s\n", report);
    }

    if (failures != 0) {
        fprintf(stderr, "consumer: %d check(s) failed\n", failures);
        return 1;
    }
    printf("consumer: all checks passed\n");
    return 0;
}
