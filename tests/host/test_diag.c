/*
 * Environment diagnostics (diag.h) judged from injected inputs: one test per verdict, the exit
 * code rule (lowest error code wins), the text and JSON writers (escaping, validity) and the
 * argument checks. Needs no GPU: cm_diag_evaluate() is pure.
 */
#define _GNU_SOURCE /* open_memstream, mkstemp, popen */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cm_test.h"

#include <cudamodel/diag.h>

#define H200_ARCHS "75-real;80-real;86-real;89-real;90-real;100-real;110-real;120"

static cm_diag_inputs_t g_in;
static cm_diag_report_t g_report;

/* ------------------------------------------------------------------ fixtures */

static void h200_limits(cm_device_limits_t *l, int ordinal) {
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "NVIDIA H200");
    l->ordinal = ordinal;
    l->cc_major = 9;
    l->cc_minor = 0;
    l->multiprocessor_count = 132;
    l->warp_size = 32;
    l->max_threads_per_block = 1024;
    l->max_block_dim[0] = 1024;
    l->max_block_dim[1] = 1024;
    l->max_block_dim[2] = 64;
    l->max_grid_dim[0] = 2147483647;
    l->max_grid_dim[1] = 65535;
    l->max_grid_dim[2] = 65535;
    l->shared_mem_per_block = 49152;
    l->shared_mem_per_block_optin = 232448;
    l->shared_mem_per_multiprocessor = 233472;
    l->reserved_shared_mem_per_block = 1024;
    l->regs_per_block = 65536;
    l->regs_per_multiprocessor = 65536;
    l->max_threads_per_multiprocessor = 2048;
    l->max_blocks_per_multiprocessor = 32;
    l->l2_cache_bytes = 62914560;
    l->total_global_mem = 150754820096ull;
    l->cluster_launch = 1;
    snprintf(l->pci_bus_id, sizeof l->pci_bus_id, "0000:%02x:00.0", 0x3b + ordinal);
}

/* A device whose probe ran natively from SASS of its own arch. */
static void probed_native(cm_diag_device_t *d, int binary) {
    d->image_checked = true;
    d->image_status = CM_OK;
    d->image.cuda_error = 0;
    d->image.binary_version = binary;
    d->image.ptx_version = binary;
    d->image.launch_ok = 1;
}

static void set_cc(cm_diag_device_t *d, int major, int minor) {
    d->limits.cc_major = major;
    d->limits.cc_minor = minor;
}

static void set_env(cm_diag_env_var_t *v, const char *value) {
    v->set = true;
    snprintf(v->value, sizeof v->value, "%s", value);
}

/* Everything fine: an H200 with driver 13.0, runtime 13.0, the default architectures. */
static cm_diag_inputs_t *ok_inputs(void) {
    cm_diag_inputs_t *in = &g_in;
    memset(in, 0, sizeof *in);
    in->libcuda_loadable = true;
    snprintf(in->libcuda_path, sizeof in->libcuda_path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    in->driver_version = 13000;
    in->runtime_version = 13000;
    in->runtime_version_built = 13000;
    in->device_count_error = 0;
    in->device_count = 1;
    h200_limits(&in->devices[0].limits, 0);
    in->devices[0].free_bytes = 149000000000ull;
    in->devices[0].total_bytes = 150754820096ull;
    probed_native(&in->devices[0], 90);
    snprintf(in->library_version, sizeof in->library_version, "0.1.0");
    snprintf(in->library_archs, sizeof in->library_archs, "%s", H200_ARCHS);
    set_env(&in->cuda_home, "/usr/local/cuda");
    in->cuda_home_exists = true;
    snprintf(in->nvcc_path, sizeof in->nvcc_path, "/usr/local/cuda/bin/nvcc");
    in->nvcc_version = 13000;
    return in;
}

/* No driver at all: what this CI machine looks like. */
static cm_diag_inputs_t *no_driver_inputs(void) {
    cm_diag_inputs_t *in = ok_inputs();
    in->libcuda_loadable = false;
    snprintf(in->libcuda_path, sizeof in->libcuda_path,
             "libcuda.so.1: cannot open shared object file: No such file or directory");
    in->driver_version = 0;
    in->device_count_error = 35; /* cudaErrorInsufficientDriver */
    in->device_count = 0;
    memset(in->devices, 0, sizeof in->devices);
    return in;
}

static cm_diag_report_t *evaluate(const cm_diag_inputs_t *in) {
    memset(&g_report, 0xab, sizeof g_report); /* evaluate must fill everything */
    CM_ASSERT_OK(cm_diag_evaluate(in, &g_report));
    assert_int_equal(g_report.exit_code, cm_diag_exit_code(&g_report));
    return &g_report;
}

static const cm_diag_check_t *find_check(const cm_diag_report_t *r, const char *id) {
    for (int i = 0; i < r->n_checks; ++i)
        if (strcmp(r->checks[i].id, id) == 0) return &r->checks[i];
    return NULL;
}

static const cm_diag_check_t *must_find(const cm_diag_report_t *r, const char *id) {
    const cm_diag_check_t *c = find_check(r, id);
    if (c == NULL) fail_msg("no check \"%s\" in the report (%d checks)", id, r->n_checks);
    static const cm_diag_check_t missing; /* not reached: fail_msg does not return */
    return c != NULL ? c : &missing;
}

static int count_verdict(const cm_diag_report_t *r, cm_diag_verdict_t v) {
    int n = 0;
    for (int i = 0; i < r->n_checks; ++i) n += (r->checks[i].verdict == v);
    return n;
}

#define assert_contains(hay, needle)                                                         \
    do {                                                                                     \
        if (strstr((hay), (needle)) == NULL)                                                 \
            fail_msg("expected \"%s\" in:\n%s", (needle), (hay));                            \
    } while (0)

#define assert_not_contains(hay, needle)                                                     \
    do {                                                                                     \
        if (strstr((hay), (needle)) != NULL)                                                 \
            fail_msg("did not expect \"%s\" in:\n%s", (needle), (hay));                      \
    } while (0)

/* The text report as a malloc'd string. */
static char *text_of(const cm_diag_report_t *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    CM_ASSERT_OK(cm_diag_write_text(r, f));
    assert_int_equal(fclose(f), 0);
    return buf;
}

static char *json_of(const cm_diag_report_t *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    CM_ASSERT_OK(cm_diag_write_json(r, f));
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* The last line of a text (without its newline), copied into out. */
static void last_line(const char *text, char *out, size_t size) {
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') --n;
    size_t start = n;
    while (start > 0 && text[start - 1] != '\n') --start;
    size_t len = n - start < size - 1 ? n - start : size - 1;
    memcpy(out, text + start, len);
    out[len] = '\0';
}

/* ------------------------------------------------------------------ a JSON checker */

typedef struct json_cursor {
    const char *p;
    int depth;
} json_cursor_t;

static bool json_value(json_cursor_t *c);

static void json_ws(json_cursor_t *c) {
    while (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r') ++c->p;
}

static bool json_string(json_cursor_t *c) {
    if (*c->p != '"') return false;
    ++c->p;
    for (;;) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '\0' || ch < 0x20) return false;
        if (ch == '"') {
            ++c->p;
            return true;
        }
        if (ch == '\\') {
            ++c->p;
            char e = *c->p;
            if (e == 'u') {
                for (int i = 1; i <= 4; ++i)
                    if (strchr("0123456789abcdefABCDEF", c->p[i]) == NULL || c->p[i] == '\0')
                        return false;
                c->p += 5;
                continue;
            }
            if (e == '\0' || strchr("\"\\/bfnrt", e) == NULL) return false;
        }
        ++c->p;
    }
}

static bool json_number(json_cursor_t *c) {
    const char *p = c->p;
    if (*p == '-') ++p;
    if (*p == '0') ++p;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') ++p;
    else return false;
    if (*p == '.') {
        ++p;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') ++p;
    }
    if (*p == 'e' || *p == 'E') {
        ++p;
        if (*p == '+' || *p == '-') ++p;
        if (!(*p >= '0' && *p <= '9')) return false;
        while (*p >= '0' && *p <= '9') ++p;
    }
    c->p = p;
    return true;
}

static bool json_literal(json_cursor_t *c, const char *lit) {
    size_t n = strlen(lit);
    if (strncmp(c->p, lit, n) != 0) return false;
    c->p += n;
    return true;
}

static bool json_container(json_cursor_t *c, char open, char close, bool keyed) {
    if (*c->p != open || ++c->depth > 64) return false;
    ++c->p;
    json_ws(c);
    if (*c->p == close) {
        ++c->p;
        --c->depth;
        return true;
    }
    for (;;) {
        json_ws(c);
        if (keyed) {
            if (!json_string(c)) return false;
            json_ws(c);
            if (*c->p != ':') return false;
            ++c->p;
        }
        if (!json_value(c)) return false;
        json_ws(c);
        if (*c->p == ',') {
            ++c->p;
            continue;
        }
        if (*c->p != close) return false;
        ++c->p;
        --c->depth;
        return true;
    }
}

static bool json_value(json_cursor_t *c) {
    json_ws(c);
    switch (*c->p) {
    case '{': return json_container(c, '{', '}', true);
    case '[': return json_container(c, '[', ']', false);
    case '"': return json_string(c);
    case 't': return json_literal(c, "true");
    case 'f': return json_literal(c, "false");
    case 'n': return json_literal(c, "null");
    default: return json_number(c);
    }
}

/* Exactly one JSON object, nothing but white space around it. */
static bool json_valid(const char *text) {
    json_cursor_t c = {text, 0};
    json_ws(&c);
    if (*c.p != '{' || !json_value(&c)) return false;
    json_ws(&c);
    return *c.p == '\0';
}

/* The top-level "exit_code" (indented by two spaces in our output). */
__attribute__((noinline)) static int json_exit_code(const char *json) {
    const char *p = strstr(json, "\n  \"exit_code\": ");
    if (p == NULL) return -1;
    return atoi(p + strlen("\n  \"exit_code\": "));
}

static bool have_python3(void) {
    return system("command -v python3 >/dev/null 2>&1") == 0;
}

/* Run a python3 one-liner on a JSON text (as a file on stdin); returns its stdout (malloc'd)
 * and its exit status in *status. */
static char *python_on_json(const char *json, const char *script, int *status) {
    char path[] = "/tmp/cm_test_diag_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(json);
    assert_int_equal(write(fd, json, len), (ssize_t)len);
    close(fd);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "python3 -c '%s' < '%s'", script, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *out = calloc(1, 65536);
    assert_non_null(out);
    size_t used = fread(out, 1, 65535, p);
    out[used] = '\0';
    *status = pclose(p);
    unlink(path);
    return out;
}

/* Validate with our checker, and with python3 -m json.tool where python3 exists. */
static void assert_json_valid(const char *json) {
    if (!json_valid(json)) fail_msg("invalid JSON:\n%s", json);
    if (!have_python3()) return;
    int status = 0;
    char *out = python_on_json(json, "import json,sys; json.load(sys.stdin); print(\"valid\")",
                               &status);
    if (status != 0 || strcmp(out, "valid\n") != 0)
        fail_msg("python3 rejects the JSON (status %d, %s):\n%s", status, out, json);
    free(out);
}

/* ------------------------------------------------------------------ managed memory */

/* Whether managed memory can oversubscribe a device (memspace.h) is part of the device's line,
 * its text block and its JSON; zeroed inputs (not read) say nothing about it. */
static void test_managed_memory_capabilities(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    cm_diag_report_t *r = evaluate(in);
    assert_null(strstr(must_find(r, "device0")->message, "managed memory"));
    char *json = json_of(r);
    assert_contains(json, "\"managed\": null");
    assert_json_valid(json);
    free(json);

    in = ok_inputs();
    in->devices[0].managed_read = true;
    in->devices[0].concurrent_managed_access = 1;
    in->devices[0].pageable_memory_access = 1;
    r = evaluate(in);
    const cm_diag_check_t *dev = must_find(r, "device0");
    assert_int_equal(dev->verdict, CM_DIAG_OK);
    assert_contains(dev->message, "; managed memory: concurrent access (may exceed device memory), "
                                  "pageable host memory access");
    char *text = text_of(r);
    assert_contains(text, "managed memory      concurrent access yes, pageable memory access yes");
    free(text);
    json = json_of(r);
    assert_contains(json, "\"managed\": {\"concurrent_managed_access\": true, "
                          "\"pageable_memory_access\": true}");
    assert_json_valid(json);
    free(json);

    in = ok_inputs();
    in->wsl = true;
    in->devices[0].managed_read = true;
    r = evaluate(in);
    dev = must_find(r, "device0");
    assert_int_equal(dev->verdict, CM_DIAG_OK); /* information, not a fault */
    assert_contains(dev->message, "managed memory: no concurrent access (WSL2: cannot exceed "
                                  "device memory, no prefetch)");
    assert_null(strstr(dev->message, "pageable"));
    text = text_of(r);
    assert_contains(text, "concurrent access no, pageable memory access no");
    free(text);
}

/* ------------------------------------------------------------------ verdicts */

static void test_everything_ok_h200(void **state) {
    (void)state;
    cm_diag_report_t *r = evaluate(ok_inputs());
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OK);
    assert_int_equal(r->overall, CM_DIAG_OK);
    assert_int_equal(count_verdict(r, CM_DIAG_ERROR), 0);
    assert_int_equal(count_verdict(r, CM_DIAG_WARNING), 0);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_OK);
    assert_contains(img->message, "native");
    assert_contains(img->message, "sm_90");
    assert_null(find_check(r, "device0.prediction"));
    const cm_diag_check_t *dev = must_find(r, "device0");
    assert_contains(dev->message, "NVIDIA H200");
    assert_contains(dev->message, "132 SMs");
    assert_contains(dev->message, "0000:3b:00.0");
    assert_contains(must_find(r, "driver")->message, "13.0");
    assert_int_equal(must_find(r, "driver")->verdict, CM_DIAG_OK);

    char *text = text_of(r);
    char line[256];
    last_line(text, line, sizeof line);
    assert_string_equal(line, "verdict: ok");
    assert_contains(text, "sm_90");
    assert_contains(text, "native");
    assert_contains(text, "1024 x 1024 x 64");
    assert_contains(text, "2147483647 x 65535 x 65535");
    assert_contains(text, "opt-in 227 KiB");
    assert_contains(text, "65536 per block");
    assert_not_contains(text, "[ERROR]");
    assert_not_contains(text, "[warn ]");
    free(text);
}

static void test_no_driver(void **state) {
    (void)state;
    cm_diag_report_t *r = evaluate(no_driver_inputs());
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DRIVER);
    assert_int_equal(r->overall, CM_DIAG_ERROR);
    const cm_diag_check_t *drv = must_find(r, "driver");
    assert_int_equal(drv->verdict, CM_DIAG_ERROR);
    assert_int_equal(drv->exit_code, CM_DIAG_EXIT_NO_DRIVER);
    assert_contains(drv->message, "no NVIDIA driver");
    assert_contains(drv->message, "libcuda.so.1: cannot open shared object file");
    assert_contains(drv->fix, ">= 580");
    assert_contains(drv->fix, "--gpus all");
    assert_contains(drv->fix, "NVIDIA Container Toolkit");
    assert_not_contains(drv->fix, "Windows");
    /* no device check can say more than the driver did */
    assert_null(find_check(r, "device0"));
    assert_int_equal(must_find(r, "devices")->exit_code, CM_DIAG_EXIT_NO_DRIVER);

    char *text = text_of(r);
    char line[256];
    last_line(text, line, sizeof line);
    assert_string_equal(line, "verdict: error (exit 2: no NVIDIA driver)");
    assert_not_contains(line, "insufficient");
    assert_contains(text, "[ERROR] driver: no NVIDIA driver is installed");
    assert_contains(text, "        fix: install the NVIDIA driver");
    free(text);
}

static void test_no_driver_wsl(void **state) {
    (void)state;
    cm_diag_inputs_t *in = no_driver_inputs();
    in->wsl = true;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DRIVER);
    const cm_diag_check_t *drv = must_find(r, "driver");
    assert_contains(drv->message, "no NVIDIA driver");
    assert_contains(drv->fix, "on Windows, not inside WSL");
    assert_contains(drv->fix, "/usr/lib/wsl/lib");
    assert_contains(must_find(r, "platform")->message, "WSL2");
}

static void test_no_driver_stub_libcuda(void **state) {
    (void)state;
    cm_diag_inputs_t *in = no_driver_inputs();
    in->libcuda_loadable = true;
    snprintf(in->libcuda_path, sizeof in->libcuda_path, "/usr/local/cuda/lib64/stubs/libcuda.so.1");
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DRIVER);
    const cm_diag_check_t *drv = must_find(r, "driver");
    assert_contains(drv->message, "no NVIDIA driver");
    assert_contains(drv->message, "stub");
    assert_contains(drv->fix, "stubs");
}

static void test_driver_major_older(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->driver_version = 12040;
    in->device_count_error = 35;
    in->device_count = 0;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_DRIVER_OLD);
    const cm_diag_check_t *drv = must_find(r, "driver");
    assert_int_equal(drv->verdict, CM_DIAG_ERROR);
    assert_int_equal(drv->exit_code, CM_DIAG_EXIT_DRIVER_OLD);
    assert_contains(drv->message, "12.4");
    assert_contains(drv->message, "13.0");
    assert_contains(drv->message, "too old");
    assert_not_contains(drv->message, "no NVIDIA driver");
    assert_contains(drv->fix, ">= 580");
    char *text = text_of(r);
    assert_contains(text, "verdict: error (exit 3: driver older than the CUDA runtime)");
    free(text);
}

static void test_driver_minor_older_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->driver_version = 13000;
    in->runtime_version = 13010;
    in->runtime_version_built = 13010;
    in->nvcc_version = 13010;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OK);
    const cm_diag_check_t *drv = must_find(r, "driver");
    assert_int_equal(drv->verdict, CM_DIAG_WARNING);
    assert_int_equal(drv->exit_code, 0);
    assert_contains(drv->message, "minor-version compatibility");
    assert_contains(drv->message, "cudaErrorUnsupportedPtxVersion");
    assert_int_equal(r->overall, CM_DIAG_WARNING);
    char *text = text_of(r);
    assert_contains(text, "[warn ] driver: ");
    char line[256];
    last_line(text, line, sizeof line);
    assert_contains(line, "verdict: ok with");
    assert_contains(line, "(exit 0)");
    free(text);
}

static void test_driver_newer_is_ok(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->driver_version = 13020;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(must_find(r, "driver")->verdict, CM_DIAG_OK);
    assert_int_equal(cm_diag_exit_code(r), 0);
}

static void test_no_device(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->device_count_error = 100; /* cudaErrorNoDevice */
    in->device_count = 0;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DEVICE);
    const cm_diag_check_t *dev = must_find(r, "devices");
    assert_int_equal(dev->verdict, CM_DIAG_ERROR);
    assert_int_equal(dev->exit_code, CM_DIAG_EXIT_NO_DEVICE);
    assert_contains(dev->message, "installed but no CUDA device is visible");
    assert_not_contains(dev->message, "CUDA_VISIBLE_DEVICES");
    assert_contains(dev->fix, "nvidia-smi");
    assert_null(find_check(r, "device0"));
    /* success with a count of 0 means the same */
    in->device_count_error = 0;
    r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DEVICE);
}

static void check_hidden(const char *value, const char *expect) {
    cm_diag_inputs_t *in = ok_inputs();
    in->device_count_error = 100;
    in->device_count = 0;
    set_env(&in->cuda_visible_devices, value);
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DEVICE);
    const cm_diag_check_t *dev = must_find(r, "devices");
    assert_int_equal(dev->verdict, CM_DIAG_ERROR);
    assert_contains(dev->message, "CUDA_VISIBLE_DEVICES");
    assert_contains(dev->message, expect);
    assert_contains(dev->fix, "unset CUDA_VISIBLE_DEVICES or list ordinals shown by nvidia-smi");
    assert_contains(must_find(r, "env.CUDA_VISIBLE_DEVICES")->message, value);
}

static void test_hidden_by_visible_devices_empty(void **state) {
    (void)state;
    check_hidden("", "empty");
}

static void test_hidden_by_visible_devices_minus_one(void **state) {
    (void)state;
    check_hidden("-1", "hides every device");
}

static void test_hidden_by_visible_devices_missing_ordinal(void **state) {
    (void)state;
    check_hidden("7", "none of the devices it lists exists");
}

static void test_visible_devices_with_devices_ok(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_env(&in->cuda_visible_devices, "0");
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), 0);
    assert_contains(must_find(r, "devices")->message, "CUDA_VISIBLE_DEVICES=\"0\"");
}

static void test_jit_only_device(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "80-real;90-virtual");
    set_cc(&in->devices[0], 10, 0);
    in->devices[0].image_checked = false;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OK);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_WARNING);
    assert_contains(img->message, "PTX JIT");
    assert_contains(img->message, "compute_90");
    assert_contains(img->message, "slow");
    assert_contains(img->fix, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=100");

    /* the runtime agrees: the driver compiled compute_90 PTX into sm_100 code */
    probed_native(&in->devices[0], 100);
    in->devices[0].image.ptx_version = 90;
    r = evaluate(in);
    img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_WARNING);
    assert_contains(img->message, "the runtime confirms");
    assert_null(find_check(r, "device0.prediction"));
}

static void test_sm121_runs_sm120_natively(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_cc(&in->devices[0], 12, 1);
    probed_native(&in->devices[0], 120);
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_OK);
    assert_contains(img->message, "native");
    assert_contains(img->message, "sm_120");
    assert_int_equal(cm_diag_exit_code(r), 0);
}

static void test_jit_ptx_newer_than_driver_is_no_image(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "80-real;90-virtual");
    set_cc(&in->devices[0], 10, 0);
    in->devices[0].image_checked = false;
    in->runtime_version = 13010;
    in->runtime_version_built = 13010; /* PTX made by CUDA 13.1 */
    in->driver_version = 13000;        /* a driver for 13.0 cannot JIT it */
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_IMAGE);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_ERROR);
    assert_contains(img->message, "cudaErrorUnsupportedPtxVersion");
    assert_contains(img->fix, "-DCMAKE_CUDA_ARCHITECTURES=100");
}

static void test_no_image(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "120-real");
    in->devices[0].image_checked = false;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_IMAGE);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_ERROR);
    assert_int_equal(img->exit_code, CM_DIAG_EXIT_NO_IMAGE);
    assert_contains(img->message, "no kernel image");
    assert_contains(img->message, "120-real");
    assert_contains(img->fix, "rebuild with -DCMAKE_CUDA_ARCHITECTURES=90");

    /* and confirmed by the runtime: no mismatch warning */
    in->devices[0].image_checked = true;
    in->devices[0].image_status = CM_ERROR_NO_KERNEL_IMAGE;
    in->devices[0].image.cuda_error = 209; /* cudaErrorNoKernelImageForDevice */
    in->devices[0].image.binary_version = 0;
    in->devices[0].image.launch_ok = 0;
    r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_IMAGE);
    img = must_find(r, "device0.image");
    assert_contains(img->message, "cudaErrorNoKernelImageForDevice");
    assert_null(find_check(r, "device0.prediction"));
    char *text = text_of(r);
    assert_contains(text, "verdict: error (exit 5: no kernel image for a device)");
    free(text);
}

static void test_prediction_mismatch_warns(void **state) {
    (void)state;
    /* predicted native from "90-real", but the runtime found no image */
    cm_diag_inputs_t *in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "90-real");
    in->devices[0].image_status = CM_ERROR_NO_KERNEL_IMAGE;
    in->devices[0].image.cuda_error = 209;
    in->devices[0].image.binary_version = 0;
    in->devices[0].image.launch_ok = 0;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *p = must_find(r, "device0.prediction");
    assert_int_equal(p->verdict, CM_DIAG_WARNING);
    assert_contains(p->message, "predicted native");
    assert_contains(p->message, "none");
    /* what the runtime said decides the image verdict */
    assert_int_equal(must_find(r, "device0.image")->verdict, CM_DIAG_ERROR);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_IMAGE);

    /* predicted none, but the runtime ran it (through JIT): a warning, exit 0 */
    in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "120-real");
    probed_native(&in->devices[0], 90);
    r = evaluate(in);
    p = must_find(r, "device0.prediction");
    assert_int_equal(p->verdict, CM_DIAG_WARNING);
    assert_contains(p->message, "predicted none");
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OK);
}

static void test_probe_failure_is_other_error(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->devices[0].image_status = CM_ERROR_CUDA;
    in->devices[0].image.cuda_error = 46; /* cudaErrorDevicesUnavailable */
    in->devices[0].image.binary_version = 0;
    in->devices[0].image.launch_ok = 0;
    snprintf(in->devices[0].detail, sizeof in->devices[0].detail, "device busy");
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *img = must_find(r, "device0.image");
    assert_int_equal(img->verdict, CM_DIAG_ERROR);
    assert_int_equal(img->exit_code, CM_DIAG_EXIT_OTHER);
    assert_contains(img->message, "cudaErrorDevicesUnavailable");
    assert_contains(img->message, "device busy");
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OTHER);
}

static void test_limits_error_is_other_error(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->devices[0].limits_error = 999;
    in->devices[0].image_checked = false;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *dev = must_find(r, "device0");
    assert_int_equal(dev->verdict, CM_DIAG_ERROR);
    assert_contains(dev->message, "cudaErrorUnknown");
    assert_null(find_check(r, "device0.image"));
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OTHER);
}

static void test_device_count_other_error(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->device_count_error = 803; /* cudaErrorSystemDriverMismatch */
    in->device_count = 0;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *dev = must_find(r, "devices");
    assert_int_equal(dev->exit_code, CM_DIAG_EXIT_OTHER);
    assert_contains(dev->message, "cudaErrorSystemDriverMismatch");
    assert_contains(dev->fix, "reboot");
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_OTHER);
}

static void test_launch_blocking_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_env(&in->cuda_launch_blocking, "1");
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "env.CUDA_LAUNCH_BLOCKING");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "serialises every kernel launch");
    assert_contains(c->fix, "unset CUDA_LAUNCH_BLOCKING");
    assert_int_equal(cm_diag_exit_code(r), 0);
    set_env(&in->cuda_launch_blocking, "0");
    r = evaluate(in);
    assert_int_equal(must_find(r, "env.CUDA_LAUNCH_BLOCKING")->verdict, CM_DIAG_OK);
}

static void test_cudamodel_sync_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_env(&in->cudamodel_sync, "1");
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "env.CUDAMODEL_SYNC");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "debugging only");
    assert_int_equal(cm_diag_exit_code(r), 0);
    in->cudamodel_sync.set = false;
    in->cudamodel_sync.value[0] = '\0';
    r = evaluate(in);
    assert_int_equal(must_find(r, "env.CUDAMODEL_SYNC")->verdict, CM_DIAG_OK);
}

static void test_nvcc_newer_than_driver_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->nvcc_version = 13010;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "nvcc.driver");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "13.1");
    assert_contains(c->message, "cannot JIT");
    assert_null(find_check(r, "nvcc.runtime"));
    assert_int_equal(cm_diag_exit_code(r), 0);
}

static void test_nvcc_major_differs_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->nvcc_version = 12040;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "nvcc.runtime");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "12.4");
    assert_null(find_check(r, "nvcc.driver"));
    assert_int_equal(must_find(r, "nvcc")->verdict, CM_DIAG_OK);
}

static void test_nvcc_absent(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->nvcc_path[0] = '\0';
    in->nvcc_version = 0;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "nvcc");
    assert_int_equal(c->verdict, CM_DIAG_OK);
    assert_contains(c->message, "none on PATH");
    assert_int_equal(cm_diag_exit_code(r), 0);
    /* found but its version unreadable: a warning */
    snprintf(in->nvcc_path, sizeof in->nvcc_path, "/opt/weird/nvcc");
    r = evaluate(in);
    assert_int_equal(must_find(r, "nvcc")->verdict, CM_DIAG_WARNING);
}

static void test_cuda_home_missing_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_env(&in->cuda_home, "/opt/cuda-11.8-gone");
    in->cuda_home_exists = false;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "env.CUDA_HOME");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "/opt/cuda-11.8-gone");
    assert_contains(c->message, "not an existing directory");
    assert_int_equal(cm_diag_exit_code(r), 0);
    /* CUDA_PATH is judged on its own flag */
    set_env(&in->cuda_path, "/usr/local/cuda");
    in->cuda_path_exists = true;
    r = evaluate(in);
    assert_int_equal(must_find(r, "env.CUDA_PATH")->verdict, CM_DIAG_OK);
    assert_int_equal(must_find(r, "env.CUDA_HOME")->verdict, CM_DIAG_WARNING);
}

static void test_runtime_differs_from_built_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->driver_version = 13010;
    in->runtime_version = 13010;
    in->runtime_version_built = 13000;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *c = must_find(r, "runtime");
    assert_int_equal(c->verdict, CM_DIAG_WARNING);
    assert_contains(c->message, "13.1");
    assert_contains(c->message, "built against 13.0");
    assert_int_equal(cm_diag_exit_code(r), 0);
}

static void test_multiple_errors_lowest_code_wins(void **state) {
    (void)state;
    /* driver too old (3) and a device without an image (5): 3 */
    cm_diag_inputs_t *in = ok_inputs();
    in->driver_version = 12040;
    snprintf(in->library_archs, sizeof in->library_archs, "120-real");
    in->devices[0].image_checked = false;
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(must_find(r, "driver")->exit_code, CM_DIAG_EXIT_DRIVER_OLD);
    assert_int_equal(must_find(r, "device0.image")->exit_code, CM_DIAG_EXIT_NO_IMAGE);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_DRIVER_OLD);

    /* a broken architecture list (6) and hidden devices (4): 4 */
    in = ok_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "sm_banana");
    in->device_count_error = 100;
    in->device_count = 0;
    set_env(&in->cuda_visible_devices, "-1");
    r = evaluate(in);
    assert_int_equal(must_find(r, "library")->exit_code, CM_DIAG_EXIT_OTHER);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DEVICE);
    cm_last_error_clear();

    /* no driver (2) beats everything */
    in = no_driver_inputs();
    snprintf(in->library_archs, sizeof in->library_archs, "120-real");
    set_env(&in->cuda_visible_devices, "");
    r = evaluate(in);
    assert_int_equal(cm_diag_exit_code(r), CM_DIAG_EXIT_NO_DRIVER);
}

/* ---------------------------------------------------------------- several GPUs, NCCL */

static cm_diag_inputs_t *two_h200_inputs(void) {
    cm_diag_inputs_t *in = ok_inputs();
    in->device_count = 2;
    h200_limits(&in->devices[1].limits, 1);
    probed_native(&in->devices[1], 90);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) in->peer_access[i][j] = CM_DIAG_PEER_YES;
    in->nccl_version_built = 22809;
    in->nccl_version = 22809;
    return in;
}

static void test_peers_and_nccl_ok(void **state) {
    (void)state;
    cm_diag_report_t *r = evaluate(two_h200_inputs());
    const cm_diag_check_t *p = must_find(r, "peers");
    assert_int_equal(p->verdict, CM_DIAG_OK);
    assert_contains(p->message, "every pair of the 2 devices");
    const cm_diag_check_t *n = must_find(r, "nccl");
    assert_int_equal(n->verdict, CM_DIAG_OK);
    assert_contains(n->message, "NCCL 2.28.9 (built against 2.28.9)");
    assert_int_equal(count_verdict(r, CM_DIAG_WARNING), 0);
    char *text = text_of(r);
    assert_contains(text, "peer access (row device reads");
    assert_contains(text, "    0    =   y\n");
    free(text);
    char *json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"peer_access\": [[true, true], [true, true]]");
    assert_contains(json, "\"nccl\": {\"built\": true, \"version_built\": 22809, \"version\": 22809, \"version_text\": \"2.28.9\"}");
    free(json);
    /* one device: no peers check */
    cm_diag_inputs_t *one = two_h200_inputs();
    one->device_count = 1;
    r = evaluate(one);
    assert_null(find_check(r, "peers"));
    json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"peer_access\": [[true]],");
    free(json);
}

static void test_peers_missing_warns(void **state) {
    (void)state;
    cm_diag_inputs_t *in = two_h200_inputs();
    in->device_count = 3;
    h200_limits(&in->devices[2].limits, 2);
    probed_native(&in->devices[2], 90);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) in->peer_access[i][j] = CM_DIAG_PEER_YES;
    in->peer_access[2][0] = CM_DIAG_PEER_NO; /* one direction is enough */
    in->peer_access[1][2] = CM_DIAG_PEER_NO;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *p = must_find(r, "peers");
    assert_int_equal(p->verdict, CM_DIAG_WARNING);
    assert_contains(p->message, "devices 0 and 2 cannot access each other's memory directly "
                                "(and 1 more pair); 1 of 3 pairs can");
    assert_contains(p->fix, "nvidia-smi topo -m");
    assert_int_equal(cm_diag_exit_code(r), 0);
    char *text = text_of(r);
    assert_contains(text, "    2    -   y   =\n");
    free(text);
    char *json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "[false, true, true]");
    free(json);
    /* not read at all (zeroed inputs): information only */
    in = two_h200_inputs();
    memset(in->peer_access, 0, sizeof in->peer_access);
    r = evaluate(in);
    assert_int_equal(must_find(r, "peers")->verdict, CM_DIAG_OK);
    assert_contains(must_find(r, "peers")->message, "was not read");
    json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "[[null, null], [null, null]]");
    free(json);
}

static void test_nccl_not_built_or_mismatched(void **state) {
    (void)state;
    cm_diag_inputs_t *in = two_h200_inputs();
    in->nccl_version_built = 0;
    in->nccl_version = 0;
    cm_diag_report_t *r = evaluate(in);
    const cm_diag_check_t *n = must_find(r, "nccl");
    assert_int_equal(n->verdict, CM_DIAG_OK); /* only the collectives need it */
    assert_contains(n->message, "not built");
    assert_contains(n->message, "-DCUDAMODEL_WITH_NCCL=ON");
    char *json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"built\": false");
    free(json);
    in = two_h200_inputs();
    in->nccl_version = 30102; /* another major version loaded */
    r = evaluate(in);
    n = must_find(r, "nccl");
    assert_int_equal(n->verdict, CM_DIAG_WARNING);
    assert_contains(n->message, "NCCL 3.1.2 is loaded, but the library was built against NCCL 2.28.9");
    in = two_h200_inputs();
    in->nccl_version_built = 2708; /* the old encoding: 2.7.8 */
    in->nccl_version = 2708;
    r = evaluate(in);
    assert_contains(must_find(r, "nccl")->message, "NCCL 2.7.8 (built against 2.7.8)");
}

static void test_many_devices_fit(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    in->device_count = 20;
    for (int i = 0; i < CM_DIAG_MAX_DEVICES; ++i) {
        h200_limits(&in->devices[i].limits, i);
        probed_native(&in->devices[i], 90);
    }
    /* the most checks a report can need: every device warns twice (JIT seen where native
     * was predicted: an image warning and a prediction warning), nvcc warns twice */
    for (int i = 0; i < CM_DIAG_MAX_DEVICES; ++i) in->devices[i].image.binary_version = 91;
    set_env(&in->cuda_launch_blocking, "1");
    set_env(&in->cudamodel_sync, "1");
    in->nvcc_version = 14000;
    cm_diag_report_t *r = evaluate(in);
    /* + nvml (not available here: no health checks), peers and nccl */
    assert_int_equal(r->n_checks, 4 + 3 * CM_DIAG_MAX_DEVICES + 1 + 2 + 3 + 7);
    assert_true(r->n_checks <= CM_DIAG_MAX_CHECKS);
    assert_int_equal(must_find(r, "device15.prediction")->verdict, CM_DIAG_WARNING);
    assert_non_null(find_check(r, "device15.image"));
    assert_null(find_check(r, "device16"));
    assert_contains(must_find(r, "devices")->message, "first 16");
    assert_non_null(find_check(r, "platform"));
    assert_int_equal(cm_diag_exit_code(r), 0);
    char *json = json_of(r);
    assert_json_valid(json);
    free(json);
}

/* NVML's health in the JSON: numbers, nulls for what is not reported, processes with names
 * that need escaping; and the text block. (The verdicts themselves: test_nvml.c.) */
static void test_health_json_and_text(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    cm_device_health_t *h = &in->devices[0].health;
    h->nvml_available = 1;
    snprintf(h->driver_version, sizeof h->driver_version, "580.65.06");
    snprintf(h->pci_bus_id, sizeof h->pci_bus_id, "00000000:3b:00.0");
    h->persistence_mode = 1;
    h->compute_mode = CM_COMPUTE_MODE_DEFAULT;
    h->mig_mode = h->mig_mode_pending = CM_HEALTH_UNKNOWN;
    h->ecc_mode = h->ecc_mode_pending = 1;
    h->ecc_volatile_uncorrected = h->ecc_aggregate_uncorrected = 0;
    h->retired_pages = h->retired_pages_pending = CM_HEALTH_UNKNOWN;
    h->remapped_rows_correctable = h->remapped_rows_uncorrectable = 0;
    h->row_remap_pending = h->row_remap_failed = 0;
    h->clock_event_reasons = CM_CLOCKS_IDLE;
    h->temperature_c = 35;
    h->power_mw = 75000;
    h->power_limit_mw = 700000;
    h->pcie_gen = 1;
    h->pcie_gen_max = 5;
    h->pcie_width = h->pcie_width_max = 16;
    h->processes_known = 1;
    h->process_count = 2;
    h->processes[0].pid = 4541;
    snprintf(h->processes[0].name, sizeof h->processes[0].name, "py\"th\\on\n");
    h->processes[0].used_bytes = 1ull << 30;
    h->processes[0].visible = 1;
    h->processes[1].pid = 77;
    h->processes[1].used_bytes = CM_PROCESS_BYTES_UNKNOWN;
    in->devices[1].health.nvml_available = 0; /* one device only here: ignored */
    cm_diag_report_t *r = evaluate(in);
    assert_int_equal(count_verdict(r, CM_DIAG_WARNING), 0);
    assert_contains(must_find(r, "device0.pcie")->message, "the link slows down while the GPU is idle");
    char *json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"mig_mode\": null, \"mig_mode_pending\": null");
    assert_contains(json, "\"clock_event_reasons\": 1, \"clock_event_reasons_text\": \"idle\"");
    assert_contains(json, "\"name\": \"py\\\"th\\\\on\\n\"");
    assert_contains(json, "{\"pid\": 77, \"name\": \"\", \"used_bytes\": null");
    free(json);
    char *text = text_of(r);
    assert_contains(text, "\n  processes           4541 py\"th\\on\\n 1.0 GiB, 77 (not visible) ?\n");
    assert_contains(text, "\n  modes               persistence on, compute Default, MIG n/a, ECC on\n");
    free(text);
    /* without NVML: one line saying why, and a JSON object with the reason */
    memset(h, 0, sizeof *h);
    snprintf(h->nvml_reason, sizeof h->nvml_reason, "libnvidia-ml.so.1 cannot be loaded");
    r = evaluate(in);
    json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"health\": {\"nvml_available\": false, \"nvml_reason\": "
                          "\"libnvidia-ml.so.1 cannot be loaded\"}");
    free(json);
    text = text_of(r);
    assert_contains(text, "\n  NVML                not available: libnvidia-ml.so.1 cannot be loaded\n");
    free(text);
}

static void test_evaluate_in_place(void **state) {
    (void)state;
    memset(&g_report, 0, sizeof g_report);
    g_report.inputs = *no_driver_inputs();
    CM_ASSERT_OK(cm_diag_evaluate(&g_report.inputs, &g_report));
    assert_int_equal(cm_diag_exit_code(&g_report), CM_DIAG_EXIT_NO_DRIVER);
    assert_int_equal(g_report.inputs.device_count_error, 35);
}

/* ------------------------------------------------------------------ output */

static void test_text_layout(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    set_env(&in->cuda_launch_blocking, "1");
    snprintf(in->library_archs, sizeof in->library_archs, "120-real");
    in->devices[0].image_checked = false;
    cm_diag_report_t *r = evaluate(in);
    char *text = text_of(r);
    const char *header = "cudamodel-doctor: libcudamodel 0.1.0, architectures \"120-real\"";
    assert_true(strncmp(text, header, strlen(header)) == 0);
    assert_contains(text, "\n[ ok  ] driver: ");
    assert_contains(text, "\n[warn ] env.CUDA_LAUNCH_BLOCKING: ");
    assert_contains(text, "\n[ERROR] device0.image: ");
    assert_contains(text, "\n        fix: rebuild with -DCMAKE_CUDA_ARCHITECTURES=90\n");
    assert_contains(text, "\ndevice 0: NVIDIA H200 (sm_90), PCI 0000:3b:00.0\n");
    /* one line per check: every line is a check, a fix, the device block or the verdict */
    int check_lines = 0;
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        if (strncmp(p, "[ ok  ] ", 8) == 0 || strncmp(p, "[warn ] ", 8) == 0 ||
            strncmp(p, "[ERROR] ", 8) == 0)
            ++check_lines;
        p = nl + 1;
    }
    assert_int_equal(check_lines, r->n_checks);
    char line[256];
    last_line(text, line, sizeof line);
    assert_string_equal(line, "verdict: error (exit 5: no kernel image for a device)");
    free(text);
}

static void test_json_matches_report(void **state) {
    (void)state;
    const cm_diag_inputs_t *cases[3];
    cm_diag_inputs_t copies[3];
    copies[0] = *ok_inputs();
    copies[1] = *no_driver_inputs();
    copies[2] = *ok_inputs();
    snprintf(copies[2].library_archs, sizeof copies[2].library_archs, "80-real;90-virtual");
    set_cc(&copies[2].devices[0], 10, 0);
    copies[2].devices[0].image_checked = false;
    for (int i = 0; i < 3; ++i) cases[i] = &copies[i];
    const int expected[3] = {0, 2, 0};
    for (int i = 0; i < 3; ++i) {
        cm_diag_report_t *r = evaluate(cases[i]);
        char *json = json_of(r);
        assert_json_valid(json);
        assert_int_equal(json_exit_code(json), expected[i]);
        assert_int_equal(json_exit_code(json), cm_diag_exit_code(r));
        if (i == 0) {
            assert_contains(json, "\"arch\": \"sm_90\"");
            assert_contains(json, "\"observed\": \"native\"");
            assert_contains(json, "\"CUDA_PATH\": null");
            assert_contains(json, "\"overall\": \"ok\"");
        } else if (i == 1) {
            assert_contains(json, "\"libcuda_loadable\": false");
            assert_contains(json, "\"driver_version\": 0,");
            assert_contains(json, "\"devices\": []");
            assert_contains(json, "no NVIDIA driver");
            assert_contains(json, "\"exit_meaning\": \"no NVIDIA driver\"");
        } else {
            assert_contains(json, "\"predicted\": \"PTX JIT\"");
            assert_contains(json, "\"observed\": null");
            assert_contains(json, "\"overall\": \"warning\"");
        }
        free(json);
    }
}

static void test_json_escaping(void **state) {
    (void)state;
    cm_diag_inputs_t *in = ok_inputs();
    /* quote, backslash, newline, tab, a control character, a byte that is not UTF-8, and
     * a valid multi-byte character */
    set_env(&in->cuda_home, "/opt/a\"b\\c\nd\te\x01" "f\xff" "g\xc3\xa9");
    in->cuda_home_exists = false;
    snprintf(in->devices[0].limits.name, sizeof in->devices[0].limits.name, "GPU \"quoted\"");
    cm_diag_report_t *r = evaluate(in);
    char *json = json_of(r);
    assert_json_valid(json);
    assert_contains(json, "\"CUDA_HOME\": \"/opt/a\\\"b\\\\c\\nd\\te\\u0001f\\ufffdg\xc3\xa9\"");
    assert_contains(json, "\"name\": \"GPU \\\"quoted\\\"\"");
    if (have_python3()) {
        int status = 0;
        char *out = python_on_json(
            json,
            "import json,sys; d=json.load(sys.stdin); "
            "sys.stdout.buffer.write(d[\"environment\"][\"CUDA_HOME\"].encode())",
            &status);
        assert_int_equal(status, 0);
        assert_string_equal(out, "/opt/a\"b\\c\nd\te\x01" "f\xef\xbf\xbd" "g\xc3\xa9");
        free(out);
    }
    free(json);

    /* the text writer keeps each check on one line */
    char *text = text_of(r);
    assert_contains(text, "[warn ] env.CUDA_HOME: CUDA_HOME=\"/opt/a\"b\\c\\nd\\te\\x01f");
    free(text);
}

static void test_json_checker_rejects_bad_json(void **state) {
    (void)state;
    assert_true(json_valid("{\"a\": [1, -2.5e3, true, null, \"x\\u00e9\"], \"b\": {}}"));
    assert_false(json_valid("{\"a\": \"line\nbreak\"}"));
    assert_false(json_valid("{\"a\": \"bad \\q escape\"}"));
    assert_false(json_valid("{\"a\": 1,}"));
    assert_false(json_valid("{\"a\": \"unterminated}"));
    assert_false(json_valid("{\"a\": 01}"));
    assert_false(json_valid("{\"a\": 1} trailing"));
    assert_false(json_valid("{a: 1}"));
}

/* ------------------------------------------------------------------ arguments, names */

static void test_null_arguments(void **state) {
    (void)state;
    cm_diag_report_t *r = evaluate(ok_inputs());
    CM_ASSERT_STATUS(cm_diag_collect(NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_last_error()->status, CM_ERROR_INVALID_ARGUMENT);
    cm_last_error_clear();
    CM_ASSERT_STATUS(cm_diag_evaluate(NULL, r), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_diag_evaluate(&g_in, NULL), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_diag_write_text(NULL, stdout), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_diag_write_text(r, NULL), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_diag_write_json(NULL, stdout), CM_ERROR_INVALID_ARGUMENT);
    CM_ASSERT_STATUS(cm_diag_write_json(r, NULL), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_diag_exit_code(NULL), CM_DIAG_EXIT_OTHER);
    cm_last_error_clear();
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(cm_diag_verdict_name(CM_DIAG_OK), "ok");
    assert_string_equal(cm_diag_verdict_name(CM_DIAG_WARNING), "warning");
    assert_string_equal(cm_diag_verdict_name(CM_DIAG_ERROR), "error");
    assert_string_equal(cm_diag_verdict_name((cm_diag_verdict_t)7), "unknown");
    assert_string_equal(cm_diag_exit_code_meaning(CM_DIAG_EXIT_NO_DRIVER), "no NVIDIA driver");
    assert_string_equal(cm_diag_exit_code_meaning(CM_DIAG_EXIT_OK), "ok");
    assert_string_equal(cm_diag_exit_code_meaning(CM_DIAG_EXIT_USAGE), "bad command line");
    assert_string_equal(cm_diag_exit_code_meaning(1), "unknown exit code");
    /* the documented values */
    assert_int_equal(CM_DIAG_EXIT_NO_DRIVER, 2);
    assert_int_equal(CM_DIAG_EXIT_DRIVER_OLD, 3);
    assert_int_equal(CM_DIAG_EXIT_NO_DEVICE, 4);
    assert_int_equal(CM_DIAG_EXIT_NO_IMAGE, 5);
    assert_int_equal(CM_DIAG_EXIT_OTHER, 6);
    assert_int_equal(CM_DIAG_EXIT_USAGE, 64);
}

static void test_exit_code_from_checks(void **state) {
    (void)state;
    memset(&g_report, 0, sizeof g_report);
    g_report.n_checks = 3;
    g_report.checks[0].verdict = CM_DIAG_WARNING;
    g_report.checks[1].verdict = CM_DIAG_ERROR;
    g_report.checks[1].exit_code = 5;
    g_report.checks[2].verdict = CM_DIAG_ERROR;
    g_report.checks[2].exit_code = 4;
    assert_int_equal(cm_diag_exit_code(&g_report), 4);
    g_report.checks[2].verdict = CM_DIAG_OK;
    assert_int_equal(cm_diag_exit_code(&g_report), 5);
    g_report.checks[1].exit_code = 0; /* an error without a code is "other" */
    assert_int_equal(cm_diag_exit_code(&g_report), CM_DIAG_EXIT_OTHER);
    g_report.checks[1].verdict = CM_DIAG_WARNING;
    assert_int_equal(cm_diag_exit_code(&g_report), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_everything_ok_h200),
        cmocka_unit_test(test_managed_memory_capabilities),
        cmocka_unit_test(test_no_driver),
        cmocka_unit_test(test_no_driver_wsl),
        cmocka_unit_test(test_no_driver_stub_libcuda),
        cmocka_unit_test(test_driver_major_older),
        cmocka_unit_test(test_driver_minor_older_warns),
        cmocka_unit_test(test_driver_newer_is_ok),
        cmocka_unit_test(test_no_device),
        cmocka_unit_test(test_hidden_by_visible_devices_empty),
        cmocka_unit_test(test_hidden_by_visible_devices_minus_one),
        cmocka_unit_test(test_hidden_by_visible_devices_missing_ordinal),
        cmocka_unit_test(test_visible_devices_with_devices_ok),
        cmocka_unit_test(test_jit_only_device),
        cmocka_unit_test(test_sm121_runs_sm120_natively),
        cmocka_unit_test(test_jit_ptx_newer_than_driver_is_no_image),
        cmocka_unit_test(test_no_image),
        cmocka_unit_test(test_prediction_mismatch_warns),
        cmocka_unit_test(test_probe_failure_is_other_error),
        cmocka_unit_test(test_limits_error_is_other_error),
        cmocka_unit_test(test_device_count_other_error),
        cmocka_unit_test(test_launch_blocking_warns),
        cmocka_unit_test(test_cudamodel_sync_warns),
        cmocka_unit_test(test_nvcc_newer_than_driver_warns),
        cmocka_unit_test(test_nvcc_major_differs_warns),
        cmocka_unit_test(test_nvcc_absent),
        cmocka_unit_test(test_cuda_home_missing_warns),
        cmocka_unit_test(test_runtime_differs_from_built_warns),
        cmocka_unit_test(test_multiple_errors_lowest_code_wins),
        cmocka_unit_test(test_peers_and_nccl_ok),
        cmocka_unit_test(test_peers_missing_warns),
        cmocka_unit_test(test_nccl_not_built_or_mismatched),
        cmocka_unit_test(test_many_devices_fit),
        cmocka_unit_test(test_health_json_and_text),
        cmocka_unit_test(test_evaluate_in_place),
        cmocka_unit_test(test_text_layout),
        cmocka_unit_test(test_json_matches_report),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_json_checker_rejects_bad_json),
        cmocka_unit_test(test_null_arguments),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_exit_code_from_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
