/*
 * The driver entry points of core/calls.c against a fake driver: this executable defines
 * cudaGetDriverEntryPointByVersion, so the library (linked statically into it) looks its driver
 * calls up here instead of in libcudart. The fake answers as the driver does: for a symbol whose
 * ABI changed (cudaTypedefs.h lists each form as PFN_<name>_v<version>) it returns the newest form
 * not newer than the version asked for.
 *
 * What it guards: asked with CUDA_VERSION (13000), "cuStreamGetCtx" is the three-argument form
 * of 12.5 (cuStreamGetCtx_v2: ..., CUgreenCtx *); a two-argument call leaves the third pointer
 * undefined and the driver writes through it (bench/NOTES-core.md has the crash it caused).
 * Here every wrapper is called once; each must reach the form with its own arguments, and the
 * values the fake writes must come back through the wrapper.
 */
#include "cm_test.h"

#include <stdint.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "internal.h"

/* ------------------------------------------------------------------ the fake driver */

/* Which forms were called (a bit per form in the enum below). */
enum {
    F_CTX_GET = 1u << 0,
    F_CTX_PUSH_V1 = 1u << 1, /* cuCtxPushCurrent of 2.0 */
    F_CTX_PUSH_V2 = 1u << 2, /* cuCtxPushCurrent_v2 of 4.0 */
    F_CTX_POP_V1 = 1u << 3,
    F_CTX_POP_V2 = 1u << 4,
    F_RETAIN = 1u << 5,
    F_STATE = 1u << 6,
    F_STREAM_DEVICE = 1u << 7,
    F_STREAM_CTX_V1 = 1u << 8, /* cuStreamGetCtx of 9.2: (stream, ctx *) */
    F_STREAM_CTX_V2 = 1u << 9, /* cuStreamGetCtx_v2 of 12.5: (stream, ctx *, green ctx *) */
    F_ALLOC_ASYNC = 1u << 10,
    F_FREE_ASYNC = 1u << 11,
    F_CAPTURING = 1u << 12,
};
static unsigned called;
static unsigned asked_stream_ctx; /* the version the library asked for cuStreamGetCtx */

#define FAKE_CTX ((CUcontext)(uintptr_t)0xc0de0)
#define FAKE_STREAM ((cudaStream_t)(uintptr_t)0x5700)

static CUresult CUDAAPI fake_ctx_get(CUcontext *c) {
    called |= F_CTX_GET;
    *c = FAKE_CTX;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_push_v1(CUcontext c) {
    called |= F_CTX_PUSH_V1;
    return c == FAKE_CTX ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
static CUresult CUDAAPI fake_push_v2(CUcontext c) {
    called |= F_CTX_PUSH_V2;
    return c == FAKE_CTX ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
static CUresult CUDAAPI fake_pop_v1(CUcontext *c) {
    called |= F_CTX_POP_V1;
    *c = FAKE_CTX;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_pop_v2(CUcontext *c) {
    called |= F_CTX_POP_V2;
    *c = FAKE_CTX;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_retain(CUcontext *c, CUdevice d) {
    called |= F_RETAIN;
    *c = d == 3 ? FAKE_CTX : NULL;
    return d == 3 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
static CUresult CUDAAPI fake_state(CUdevice d, unsigned int *flags, int *active) {
    called |= F_STATE;
    *flags = d == 3 ? 4u : 0u;
    *active = 1;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_stream_device(CUstream s, CUdevice *d) {
    called |= F_STREAM_DEVICE;
    *d = (cudaStream_t)s == FAKE_STREAM ? 3 : -1;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_stream_ctx_v1(CUstream s, CUcontext *c) {
    called |= F_STREAM_CTX_V1;
    *c = (cudaStream_t)s == FAKE_STREAM ? FAKE_CTX : NULL;
    return CUDA_SUCCESS;
}
/* The 12.5 form: the driver writes *green (here only recorded: a call of this form with two
 * arguments would pass an undefined third one, which the test must never reach). */
static CUresult CUDAAPI fake_stream_ctx_v2(CUstream s, CUcontext *c, CUgreenCtx *green) {
    (void)green;
    called |= F_STREAM_CTX_V2;
    *c = (cudaStream_t)s == FAKE_STREAM ? FAKE_CTX : NULL;
    return CUDA_SUCCESS;
}
static CUresult CUDAAPI fake_alloc_async(CUdeviceptr *p, size_t bytes, CUmemoryPool pool,
                                         CUstream s) {
    called |= F_ALLOC_ASYNC;
    *p = bytes == 256 && pool == (CUmemoryPool)(uintptr_t)0x9001 && (cudaStream_t)s == FAKE_STREAM
             ? (CUdeviceptr)0x700000
             : 0;
    return *p != 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI fake_free_async(CUdeviceptr p, CUstream s) {
    called |= F_FREE_ASYNC;
    return p == (CUdeviceptr)0x700000 && (cudaStream_t)s == FAKE_STREAM ? CUDA_SUCCESS
                                                                          : CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI fake_capturing(CUstream s, CUstreamCaptureStatus *st) {
    called |= F_CAPTURING;
    *st = (cudaStream_t)s == FAKE_STREAM ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                         : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

/* One symbol's forms, oldest first: the version each appeared in (cudaTypedefs.h) and it. */
typedef struct {
    const char *symbol;
    unsigned since[2];
    void *form[2];
} fake_entry_t;

#define FN(f) ((void *)(uintptr_t)(f))
static const fake_entry_t fake_driver[] = {
    {"cuCtxGetCurrent", {4000, 0}, {FN(fake_ctx_get), NULL}},
    {"cuCtxPushCurrent", {2000, 4000}, {FN(fake_push_v1), FN(fake_push_v2)}},
    {"cuCtxPopCurrent", {2000, 4000}, {FN(fake_pop_v1), FN(fake_pop_v2)}},
    {"cuDevicePrimaryCtxRetain", {7000, 0}, {FN(fake_retain), NULL}},
    {"cuDevicePrimaryCtxGetState", {7000, 0}, {FN(fake_state), NULL}},
    {"cuStreamGetDevice", {12080, 0}, {FN(fake_stream_device), NULL}},
    {"cuStreamGetCtx", {9020, 12050}, {FN(fake_stream_ctx_v1), FN(fake_stream_ctx_v2)}},
    {"cuMemAllocFromPoolAsync", {11020, 0}, {FN(fake_alloc_async), NULL}},
    {"cuMemFreeAsync", {11020, 0}, {FN(fake_free_async), NULL}},
    {"cuStreamIsCapturing", {10000, 0}, {FN(fake_capturing), NULL}},
};

/* Replaces libcudart's (the library is linked statically into this executable). */
cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(
    const char *symbol, void **funcPtr, unsigned int cudaVersion, unsigned long long flags,
    enum cudaDriverEntryPointQueryResult *driverStatus) {
    (void)flags;
    *funcPtr = NULL;
    if (strcmp(symbol, "cuStreamGetCtx") == 0) asked_stream_ctx = cudaVersion;
    for (size_t i = 0; i < sizeof fake_driver / sizeof fake_driver[0]; ++i) {
        const fake_entry_t *e = &fake_driver[i];
        if (strcmp(e->symbol, symbol) != 0) continue;
        for (int k = 1; k >= 0; --k) {
            if (e->form[k] != NULL && cudaVersion >= e->since[k]) {
                *funcPtr = e->form[k];
                break;
            }
        }
        if (driverStatus != NULL)
            *driverStatus = *funcPtr != NULL ? cudaDriverEntryPointSuccess
                                             : cudaDriverEntryPointVersionNotSufficent;
        return cudaSuccess;
    }
    if (driverStatus != NULL) *driverStatus = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ tests */

/* Every wrapper reaches the form whose arguments it passes, and what the fake driver writes
 * comes back through it. */
static void test_each_wrapper_calls_its_own_form(void **state) {
    (void)state;
    void *ctx = NULL;
    assert_int_equal(cm__drv_ctx_get_current(&ctx), cudaSuccess);
    assert_ptr_equal(ctx, FAKE_CTX);
    assert_int_equal(cm__drv_ctx_push_current(FAKE_CTX), cudaSuccess);
    ctx = NULL;
    assert_int_equal(cm__drv_ctx_pop_current(&ctx), cudaSuccess);
    assert_ptr_equal(ctx, FAKE_CTX);
    ctx = NULL;
    assert_int_equal(cm__drv_primary_ctx_retain(&ctx, 3), cudaSuccess);
    assert_ptr_equal(ctx, FAKE_CTX);
    unsigned flags = 0;
    int active = 0;
    assert_int_equal(cm__drv_primary_ctx_state(3, &flags, &active), cudaSuccess);
    assert_int_equal(flags, 4u);
    assert_int_equal(active, 1);
    int device = -7;
    assert_int_equal(cm__drv_stream_get_device(FAKE_STREAM, &device), cudaSuccess);
    assert_int_equal(device, 3);
    ctx = NULL;
    assert_int_equal(cm__drv_stream_get_ctx(FAKE_STREAM, &ctx), cudaSuccess);
    assert_ptr_equal(ctx, FAKE_CTX);
    void *p = NULL;
    assert_int_equal(cm__drv_malloc_from_pool_async(&p, 256, (cudaMemPool_t)(uintptr_t)0x9001,
                                                    FAKE_STREAM),
                     cudaSuccess);
    assert_ptr_equal(p, (void *)(uintptr_t)0x700000);
    assert_int_equal(cm__drv_free_async(p, FAKE_STREAM), cudaSuccess);
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    assert_int_equal(cm__drv_stream_is_capturing(FAKE_STREAM, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusActive);

    /* cuStreamGetCtx: the two-argument form, asked for with a version before its 12.5 change */
    assert_true(called & F_STREAM_CTX_V1);
    assert_false(called & F_STREAM_CTX_V2);
    assert_true(asked_stream_ctx >= 9020 && asked_stream_ctx < 12050);
    /* the push and pop of 4.0 (the forms cuda.h names cuCtxPushCurrent / cuCtxPopCurrent) */
    assert_true(called & F_CTX_PUSH_V2);
    assert_true(called & F_CTX_POP_V2);
    const unsigned all = F_CTX_GET | F_CTX_PUSH_V2 | F_CTX_POP_V2 | F_RETAIN | F_STATE |
                         F_STREAM_DEVICE | F_STREAM_CTX_V1 | F_ALLOC_ASYNC | F_FREE_ASYNC |
                         F_CAPTURING;
    assert_int_equal(called, all);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_wrapper_calls_its_own_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
