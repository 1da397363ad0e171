/*
 * NVTX ranges around library calls that queue GPU work (stream.h, "Profilers"). NVTX v3 is
 * header-only in the CUDA toolkit: with no profiler attached its calls return at once. The
 * library opens ranges only when CUDAMODEL_NVTX=1 (read once), so by default a call costs
 * one relaxed atomic load and a branch.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* NVTX's loader casts dlsym's object pointer to a function pointer (POSIX allows it, ISO C
 * does not): keep -Wpedantic quiet for the toolkit's header, whatever its include flags */
#if defined(__GNUC__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <nvtx3/nvToolsExt.h>
#if defined(__GNUC__)
#  pragma GCC diagnostic pop
#endif

#include "internal.h"

/* -1: not read yet; 0: off; 1: on */
static atomic_int cm__nvtx_state = -1;

bool cm__nvtx_enabled(void) {
    int s = atomic_load_explicit(&cm__nvtx_state, memory_order_relaxed);
    if (s >= 0) return s == 1;
    const char *v = getenv("CUDAMODEL_NVTX");
    s = (v != NULL && (strcmp(v, "1") == 0 || strcmp(v, "on") == 0 || strcmp(v, "true") == 0)) ? 1 : 0;
    atomic_store_explicit(&cm__nvtx_state, s, memory_order_relaxed);
    return s == 1;
}

void cm__nvtx_push_slow(const char *name) {
    nvtxRangePushA(name);
}

void cm__nvtx_pop_slow(void) {
    nvtxRangePop();
}

void cm__nvtx_reload_for_tests(void) {
    atomic_store(&cm__nvtx_state, -1);
}
