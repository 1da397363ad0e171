/*
 * cm_diag_collect() on the real machine: it must succeed without a GPU or a driver and report
 * what it found consistently, read the environment, find nvcc on PATH itself (quoting its path
 * for the shell) and parse `nvcc --version`. Runs on CI (no driver) and on GPU machines.
 */
#define _GNU_SOURCE /* setenv, mkdtemp */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cm_test.h"

#include <cudamodel/diag.h>
#include <cudamodel/version.h>

static cm_diag_inputs_t g_in;
static cm_diag_report_t g_report;

#define assert_contains(hay, needle)                                                         \
    do {                                                                                     \
        if (strstr((hay), (needle)) == NULL)                                                 \
            fail_msg("expected \"%s\" in:\n%s", (needle), (hay));                            \
    } while (0)

static const cm_diag_check_t *find_check(const cm_diag_report_t *r, const char *id) {
    for (int i = 0; i < r->n_checks; ++i)
        if (strcmp(r->checks[i].id, id) == 0) return &r->checks[i];
    fail_msg("no check \"%s\"", id);
    static const cm_diag_check_t missing; /* not reached: fail_msg does not return */
    return &missing;
}

static void assert_env_matches(const char *name, const cm_diag_env_var_t *v) {
    const char *real = getenv(name);
    assert_int_equal(v->set, real != NULL);
    if (real != NULL && strlen(real) < sizeof v->value) assert_string_equal(v->value, real);
    if (real == NULL) assert_string_equal(v->value, "");
}

/* ------------------------------------------------------------------ saved environment */

static const char *const g_vars[] = {"PATH", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH",
                                     "CUDA_LAUNCH_BLOCKING", "CUDAMODEL_SYNC"};
#define N_VARS (sizeof g_vars / sizeof g_vars[0])
static char *g_saved[N_VARS];
static bool g_saved_set[N_VARS];

static void env_save(void) {
    for (size_t i = 0; i < N_VARS; ++i) {
        const char *v = getenv(g_vars[i]);
        g_saved_set[i] = (v != NULL);
        g_saved[i] = v != NULL ? strdup(v) : NULL;
    }
}

static void env_restore(void) {
    for (size_t i = 0; i < N_VARS; ++i) {
        if (g_saved_set[i]) setenv(g_vars[i], g_saved[i], 1);
        else unsetenv(g_vars[i]);
        free(g_saved[i]);
        g_saved[i] = NULL;
    }
}

/* A directory whose name needs quoting in a shell: spaces and a single quote. */
static void make_tmpdir(char *buf, size_t size) {
    snprintf(buf, size, "/tmp/cm diag 'q' XXXXXX");
    assert_non_null(mkdtemp(buf));
}

static void write_file(const char *dir, const char *name, const char *text, mode_t mode) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

static void remove_file(const char *dir, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
}

/* WSL2 by its two signs, read independently of the library. */
static bool machine_is_wsl(void) {
    if (access("/dev/dxg", F_OK) == 0) return true;
    FILE *f = fopen("/proc/version", "r");
    if (f == NULL) return false;
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, "icrosoft") != NULL || strstr(buf, "WSL") != NULL;
}

/* ------------------------------------------------------------------ tests */

static void test_collect_this_machine(void **state) {
    (void)state;
    int before = -1;
    bool have_device = cudaGetDevice(&before) == cudaSuccess;
    (void)cudaGetLastError();

    memset(&g_in, 0x5a, sizeof g_in); /* collect must zero it first */
    /* an earlier failure on this thread: collect leaves the detail clean */
    CM_ASSERT_STATUS(cm_diag_evaluate(NULL, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_last_error()->status, CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_OK(cm_diag_collect(&g_in));
    assert_int_equal(cm_last_error()->status, CM_OK); /* expected failures are not left over */

    assert_string_equal(g_in.library_version, cm_version_string());
    assert_string_equal(g_in.library_version, CM_VERSION_STRING);
    cm_version_info_t vi;
    CM_ASSERT_OK(cm_version_info(&vi));
    assert_string_equal(g_in.library_archs, vi.cuda_architectures);
    assert_int_equal(g_in.driver_version, vi.driver);
    assert_int_equal(g_in.nccl_version_built, vi.nccl_built_version);
    assert_int_equal(g_in.nccl_version, vi.nccl);
    assert_int_equal(g_in.runtime_version_built, CUDART_VERSION);
    int rt = 0;
    assert_int_equal(cudaRuntimeGetVersion(&rt), cudaSuccess);
    assert_int_equal(g_in.runtime_version, rt);
    assert_true(g_in.runtime_version > 0);

    assert_env_matches("CUDA_HOME", &g_in.cuda_home);
    assert_env_matches("CUDA_PATH", &g_in.cuda_path);
    assert_env_matches("LD_LIBRARY_PATH", &g_in.ld_library_path);
    assert_env_matches("CUDA_VISIBLE_DEVICES", &g_in.cuda_visible_devices);
    assert_env_matches("CUDA_LAUNCH_BLOCKING", &g_in.cuda_launch_blocking);
    assert_env_matches("CUDAMODEL_SYNC", &g_in.cudamodel_sync);
    if (g_in.nvcc_path[0] != '\0') assert_int_equal(access(g_in.nvcc_path, X_OK), 0);
    assert_int_equal(g_in.wsl, machine_is_wsl());

    CM_ASSERT_OK(cm_diag_evaluate(&g_in, &g_report));
    int code = cm_diag_exit_code(&g_report);

    if (!g_in.libcuda_loadable) {
        /* no driver: this machine must say so, and nothing about devices */
        print_message("no driver here: %s\n", g_in.libcuda_path);
        assert_true(g_in.libcuda_path[0] != '\0'); /* the dlerror() text */
        assert_int_equal(g_in.driver_version, 0);
        assert_int_equal(g_in.device_count, 0);
        assert_int_not_equal(g_in.device_count_error, 0);
        assert_int_equal(code, CM_DIAG_EXIT_NO_DRIVER);
        assert_contains(find_check(&g_report, "driver")->message, "no NVIDIA driver");
        assert_false(g_in.devices[0].image_checked);
        assert_string_equal(g_in.devices[0].limits.name, "");
        return;
    }

    /* a driver: it has a version and either devices or a reason for none */
    print_message("driver %d, %d device(s), libcuda at %s\n", g_in.driver_version,
                  g_in.device_count, g_in.libcuda_path);
    assert_true(g_in.driver_version > 0);
    assert_true(g_in.libcuda_path[0] == '/' || strchr(g_in.libcuda_path, '/') != NULL ||
                strcmp(g_in.libcuda_path, "libcuda.so.1") == 0);
    if (g_in.device_count_error != 0) {
        assert_int_equal(g_in.device_count, 0);
        assert_int_not_equal(code, CM_DIAG_EXIT_OK);
        return;
    }
    if (g_in.device_count == 0) {
        assert_int_equal(code, CM_DIAG_EXIT_NO_DEVICE);
        return;
    }
    int n = g_in.device_count < CM_DIAG_MAX_DEVICES ? g_in.device_count : CM_DIAG_MAX_DEVICES;
    for (int i = 0; i < n; ++i) {
        const cm_diag_device_t *d = &g_in.devices[i];
        assert_int_equal(d->limits_error, 0);
        assert_int_equal(d->limits.ordinal, i);
        assert_true(d->limits.name[0] != '\0');
        assert_true(d->limits.cc_major >= 5);
        assert_true(d->limits.multiprocessor_count > 0);
        assert_int_equal(d->limits.warp_size, 32);
        assert_true(d->total_bytes > 0 && d->free_bytes <= d->total_bytes);
        assert_true(d->image_checked);
        char arch[16];
        snprintf(arch, sizeof arch, "sm_%d", d->limits.cc_major * 10 + d->limits.cc_minor);
        char id[32];
        snprintf(id, sizeof id, "device%d.image", i);
        assert_contains(find_check(&g_report, id)->message, arch);
    }
    /* the caller's current device is unchanged */
    int after = -1;
    assert_int_equal(cudaGetDevice(&after), cudaSuccess);
    if (have_device) assert_int_equal(after, before);
}

static void test_collect_reads_environment(void **state) {
    (void)state;
    env_save();
    char bindir[256], decoy[256];
    make_tmpdir(bindir, sizeof bindir);
    make_tmpdir(decoy, sizeof decoy);
    write_file(bindir, "nvcc",
               "#!/bin/sh\n"
               "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
               "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n"
               "echo 'Build cuda_12.4.r12.4/compiler.34097967_0'\n",
               0755);
    write_file(decoy, "nvcc", "not a program\n", 0644); /* on PATH first, not executable */

    char path[1024];
    snprintf(path, sizeof path, "%s:%s:/usr/bin:/bin", decoy, bindir);
    setenv("PATH", path, 1);
    setenv("CUDA_HOME", "/nonexistent/cm-diag-test-cuda", 1);
    setenv("CUDA_PATH", bindir, 1);
    setenv("LD_LIBRARY_PATH", "/opt/x/lib64:/opt/y \"quoted\"", 1);
    setenv("CUDA_LAUNCH_BLOCKING", "1", 1);
    setenv("CUDAMODEL_SYNC", "0", 1);

    CM_ASSERT_OK(cm_diag_collect(&g_in));
    char expected_nvcc[512];
    snprintf(expected_nvcc, sizeof expected_nvcc, "%s/nvcc", bindir);
    assert_string_equal(g_in.nvcc_path, expected_nvcc);
    assert_int_equal(g_in.nvcc_version, 12040);
    assert_true(g_in.cuda_home.set);
    assert_string_equal(g_in.cuda_home.value, "/nonexistent/cm-diag-test-cuda");
    assert_false(g_in.cuda_home_exists);
    assert_true(g_in.cuda_path_exists);
    assert_string_equal(g_in.ld_library_path.value, "/opt/x/lib64:/opt/y \"quoted\"");
    assert_string_equal(g_in.cuda_launch_blocking.value, "1");
    assert_true(g_in.cudamodel_sync.set);
    assert_string_equal(g_in.cudamodel_sync.value, "0");

    CM_ASSERT_OK(cm_diag_evaluate(&g_in, &g_report));
    assert_int_equal(find_check(&g_report, "env.CUDA_HOME")->verdict, CM_DIAG_WARNING);
    assert_int_equal(find_check(&g_report, "env.CUDA_PATH")->verdict, CM_DIAG_OK);
    assert_int_equal(find_check(&g_report, "env.CUDA_LAUNCH_BLOCKING")->verdict, CM_DIAG_WARNING);
    assert_int_equal(find_check(&g_report, "env.CUDAMODEL_SYNC")->verdict, CM_DIAG_OK);
    assert_contains(find_check(&g_report, "nvcc")->message, "12.4");
    assert_int_equal(find_check(&g_report, "nvcc.runtime")->verdict, CM_DIAG_WARNING);

    /* an nvcc that prints no release: found, version unknown */
    write_file(bindir, "nvcc", "#!/bin/sh\necho hello\n", 0755);
    CM_ASSERT_OK(cm_diag_collect(&g_in));
    assert_string_equal(g_in.nvcc_path, expected_nvcc);
    assert_int_equal(g_in.nvcc_version, 0);

    /* an empty PATH entry means the current directory */
    write_file(bindir, "nvcc", "#!/bin/sh\necho 'Cuda compilation tools, release 11.8, V11.8.89'\n",
               0755);
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(bindir), 0);
    snprintf(path, sizeof path, "%s::/nonexistent", decoy);
    setenv("PATH", path, 1);
    CM_ASSERT_OK(cm_diag_collect(&g_in));
    assert_int_equal(chdir(cwd), 0);
    assert_string_equal(g_in.nvcc_path, "./nvcc");
    assert_int_equal(g_in.nvcc_version, 11080);

    /* no nvcc anywhere on PATH */
    setenv("PATH", decoy, 1);
    CM_ASSERT_OK(cm_diag_collect(&g_in));
    assert_string_equal(g_in.nvcc_path, "");
    assert_int_equal(g_in.nvcc_version, 0);
    unsetenv("PATH");
    CM_ASSERT_OK(cm_diag_collect(&g_in));
    assert_string_equal(g_in.nvcc_path, "");

    env_restore();
    remove_file(bindir, "nvcc");
    remove_file(decoy, "nvcc");
    rmdir(bindir);
    rmdir(decoy);
    assert_int_equal(cm_last_error()->status, CM_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collect_this_machine),
        cmocka_unit_test(test_collect_reads_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
