/*
 * Walks every cudaError_t that the toolkit's driver_types.h defines and checks that the
 * library maps each one explicitly: to a status, with its name and a real hint, and that
 * every error CUDA documents as "the process must be terminated and relaunched" is sticky.
 */
#define _POSIX_C_SOURCE 200809L

#include "cm_test.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <cudamodel/interop.h>
#include <cudamodel/status.h>

#include "cuda_errors.h"

typedef struct {
    char name[96];
    int value;
    bool documented_sticky;
} enumerator_t;

static enumerator_t g_enum[400];
static int g_count;

/* Parse "enum cudaError { /" "** doc *" "/ cudaErrorX = N, ... }" out of driver_types.h. */
static int parse_driver_types(void **state) {
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/driver_types.h", CM_TEST_CUDA_INCLUDE_DIR);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        print_error("cannot open %s\n", path);
        return -1;
    }
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *p = strstr(text, "enum __device_builtin__ cudaError");
    if (p == NULL) return -1;
    char *end = strstr(p, "};");
    if (end == NULL) return -1;
    *end = '\0';
    const char *last_comment = NULL;
    size_t last_comment_len = 0;
    while (*p) {
        if (p[0] == '/' && p[1] == '*') {
            char *c = strstr(p + 2, "*/");
            if (c == NULL) break;
            last_comment = p;
            last_comment_len = (size_t)(c - p);
            p = c + 2;
            continue;
        }
        if ((strncmp(p, "cudaError", 9) == 0 || strncmp(p, "cudaSuccess", 11) == 0) &&
            (p == text || !isalnum((unsigned char)p[-1]))) {
            char *q = p;
            while (isalnum((unsigned char)*q) || *q == '_') ++q;
            char *eq = q;
            while (isspace((unsigned char)*eq)) ++eq;
            if (*eq == '=' && g_count < (int)(sizeof g_enum / sizeof g_enum[0])) {
                enumerator_t *e = &g_enum[g_count++];
                size_t len = (size_t)(q - p);
                if (len >= sizeof e->name) len = sizeof e->name - 1;
                memcpy(e->name, p, len);
                e->name[len] = '\0';
                e->value = (int)strtol(eq + 1, NULL, 10);
                e->documented_sticky = false;
                if (last_comment != NULL) {
                    /* collapse the comment's whitespace and '*' before searching it */
                    char flat[4096];
                    size_t k = 0;
                    for (size_t i = 0; i < last_comment_len && k + 1 < sizeof flat; ++i) {
                        char ch = last_comment[i];
                        if (ch == '*' || isspace((unsigned char)ch)) {
                            if (k > 0 && flat[k - 1] != ' ') flat[k++] = ' ';
                        } else {
                            flat[k++] = ch;
                        }
                    }
                    flat[k] = '\0';
                    e->documented_sticky = strstr(flat, "must be terminated and relaunched") != NULL;
                }
                last_comment = NULL;
                p = q;
                continue;
            }
            p = q;
            continue;
        }
        ++p;
    }
    return g_count > 100 ? 0 : -1;
}

static void test_header_parsed(void **state) {
    (void)state;
    /* CUDA 13.0 defines about 130 runtime errors; the parser must find them all */
    assert_true(g_count >= 120);
    bool saw_success = false, saw_unknown = false;
    for (int i = 0; i < g_count; ++i) {
        if (g_enum[i].value == 0) saw_success = true;
        if (strcmp(g_enum[i].name, "cudaErrorUnknown") == 0) saw_unknown = g_enum[i].value == 999;
    }
    assert_true(saw_success);
    assert_true(saw_unknown);
}

static void test_every_error_has_an_entry(void **state) {
    (void)state;
    int missing = 0;
    for (int i = 0; i < g_count; ++i) {
        const cm__cuda_error_entry_t *e = cm__cuda_error_lookup(g_enum[i].value);
        if (e == NULL) {
            print_error("no entry for %s = %d\n", g_enum[i].name, g_enum[i].value);
            ++missing;
            continue;
        }
        if (strcmp(e->name, g_enum[i].name) != 0) {
            print_error("entry %d is named %s, header says %s\n", g_enum[i].value, e->name,
                        g_enum[i].name);
            ++missing;
        }
    }
    assert_int_equal(missing, 0);
    /* and nothing in the table that CUDA does not define */
    assert_int_equal((int)cm__cuda_error_table_size(), g_count);
}

static void test_names_match_the_runtime(void **state) {
    (void)state;
    for (int i = 0; i < g_count; ++i) {
        const char *rt = cudaGetErrorName((cudaError_t)g_enum[i].value);
        assert_non_null(rt);
        if (strcmp(rt, g_enum[i].name) != 0) {
            print_error("cudaGetErrorName(%d) = %s, header says %s\n", g_enum[i].value, rt,
                        g_enum[i].name);
            fail();
        }
    }
}

static void test_every_error_has_a_status_and_hint(void **state) {
    (void)state;
    for (int i = 0; i < g_count; ++i) {
        cudaError_t err = (cudaError_t)g_enum[i].value;
        cm_status_t s = cm_status_from_cuda(err);
        assert_true((int)s >= 0 && (int)s < CM_STATUS_COUNT);
        if (err == cudaSuccess) {
            assert_int_equal(s, CM_OK);
        } else if (s == CM_OK) {
            print_error("%s maps to CM_OK\n", g_enum[i].name);
            fail();
        }
        const char *hint = cm_cuda_error_hint(err);
        assert_non_null(hint);
        if (err != cudaSuccess && strlen(hint) < 30) {
            print_error("%s has a thin hint: \"%s\"\n", g_enum[i].name, hint);
            fail();
        }
    }
}

static void test_documented_sticky_errors_are_sticky(void **state) {
    (void)state;
    int documented = 0;
    for (int i = 0; i < g_count; ++i) {
        cudaError_t err = (cudaError_t)g_enum[i].value;
        if (g_enum[i].documented_sticky) {
            ++documented;
            if (!cm_cuda_error_is_sticky(err)) {
                print_error("%s: CUDA says the process must restart, we do not\n", g_enum[i].name);
                fail();
            }
        }
        /* whatever is sticky is reported as a lost context */
        if (cm_cuda_error_is_sticky(err)) assert_int_equal(cm_status_from_cuda(err), CM_ERROR_CONTEXT_LOST);
    }
    /* CUDA 13.0 documents 13 of them (illegal address, launch failure, assert, ...) */
    assert_true(documented >= 10);
    assert_true(cm_cuda_error_is_sticky(cudaErrorIllegalAddress));
    assert_true(cm_cuda_error_is_sticky(cudaErrorLaunchFailure));
    assert_false(cm_cuda_error_is_sticky(cudaErrorInvalidValue));
    assert_false(cm_cuda_error_is_sticky(cudaErrorMemoryAllocation));
}

static void test_key_mappings(void **state) {
    (void)state;
    assert_int_equal(cm_status_from_cuda(cudaSuccess), CM_OK);
    assert_int_equal(cm_status_from_cuda(cudaErrorInvalidValue), CM_ERROR_INVALID_ARGUMENT);
    assert_int_equal(cm_status_from_cuda(cudaErrorMemoryAllocation), CM_ERROR_DEVICE_OUT_OF_MEMORY);
    assert_int_equal(cm_status_from_cuda(cudaErrorInsufficientDriver), CM_ERROR_DRIVER_TOO_OLD);
    assert_int_equal(cm_status_from_cuda(cudaErrorStubLibrary), CM_ERROR_NO_DRIVER);
    assert_int_equal(cm_status_from_cuda(cudaErrorNoDevice), CM_ERROR_NO_DEVICE);
    assert_int_equal(cm_status_from_cuda(cudaErrorNoKernelImageForDevice), CM_ERROR_NO_KERNEL_IMAGE);
    assert_int_equal(cm_status_from_cuda(cudaErrorInvalidConfiguration), CM_ERROR_INVALID_LAUNCH);
    assert_int_equal(cm_status_from_cuda(cudaErrorLaunchOutOfResources),
                     CM_ERROR_LAUNCH_OUT_OF_RESOURCES);
    assert_int_equal(cm_status_from_cuda(cudaErrorIllegalAddress), CM_ERROR_CONTEXT_LOST);
    assert_int_equal(cm_status_from_cuda(cudaErrorNotReady), CM_ERROR_BUSY);
    assert_int_equal(cm_status_from_cuda(cudaErrorNotSupported), CM_ERROR_NOT_SUPPORTED);
    assert_int_equal(cm_status_from_cuda(cudaErrorUnknown), CM_ERROR_CUDA);
    /* a value CUDA 13 does not define */
    assert_int_equal(cm_status_from_cuda((cudaError_t)12345), CM_ERROR_CUDA);
    assert_non_null(strstr(cm_cuda_error_hint((cudaError_t)12345), "not known"));
    assert_false(cm_cuda_error_is_sticky((cudaError_t)12345));
    assert_non_null(strstr(cm_cuda_error_hint(cudaErrorNoKernelImageForDevice),
                           "CMAKE_CUDA_ARCHITECTURES"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_parsed),
        cmocka_unit_test(test_every_error_has_an_entry),
        cmocka_unit_test(test_names_match_the_runtime),
        cmocka_unit_test(test_every_error_has_a_status_and_hint),
        cmocka_unit_test(test_documented_sticky_errors_are_sticky),
        cmocka_unit_test(test_key_mappings),
    };
    return cmocka_run_group_tests(tests, parse_driver_types, NULL);
}
