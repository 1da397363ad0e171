/*
 * Bounded waits of the multi-GPU module (multi_internal.h): the collective timeout's default
 * (CUDAMODEL_COLLECTIVE_TIMEOUT_MS) and a wait on several streams that polls cudaStreamQuery
 * instead of blocking in cudaStreamSynchronize, so that a collective whose peer never arrives
 * turns into a status after the timeout instead of holding the caller forever. Used by the
 * collectives (collectives.c) and by the sets and splits of an unusable set (multi.c).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cudamodel/multi.h>
#include <cudamodel/stream.h>

#include "../core/internal.h"
#include "multi_internal.h"

uint32_t cm__collective_timeout_default(void) {
    const char *v = getenv("CUDAMODEL_COLLECTIVE_TIMEOUT_MS");
    if (v == NULL) return CM_COLLECTIVE_TIMEOUT_DEFAULT_MS;
    while (*v == ' ' || *v == '\t') ++v;
    if (*v < '0' || *v > '9') return CM_COLLECTIVE_TIMEOUT_DEFAULT_MS;
    errno = 0;
    char *end = NULL;
    unsigned long long ms = strtoull(v, &end, 10);
    while (end != NULL && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
    if (errno != 0 || end == NULL || *end != '\0' || ms > UINT32_MAX)
        return CM_COLLECTIVE_TIMEOUT_DEFAULT_MS;
    return (uint32_t)ms;
}

static uint64_t cm__now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cm__sleep_ns(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
                          .tv_nsec = (long)(ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

cm_status_t cm__wait_streams(cm_stream_t *const *streams, const int *ordinals, int n,
                             uint32_t timeout_ms, cm__wait_check_fn check, void *user,
                             int *pending_index, int *failed_index) {
    if (pending_index != NULL) *pending_index = -1;
    if (failed_index != NULL) *failed_index = -1;
    bool idle[CM_DEVICE_SET_MAX];
    memset(idle, 0, sizeof idle);
    const uint64_t start = cm__now_ns();
    uint64_t pause = 20000; /* 20 us, doubling to 1 ms: short collectives cost little latency */
    for (;;) {
        int pending = -1;
        for (int k = 0; k < n; ++k) {
            if (idle[k]) continue;
            cm_status_t s = cm__context_guard(ordinals[k]);
            bool done = false;
            if (s == CM_OK) s = cm_stream_query(streams[k], &done);
            if (s != CM_OK) {
                if (failed_index != NULL) *failed_index = k;
                return s;
            }
            idle[k] = done;
            if (!done && pending < 0) pending = k;
        }
        if (check != NULL) CM_TRY(check(user));
        if (pending < 0) return CM_OK;
        const uint64_t elapsed = cm__now_ns() - start;
        if (timeout_ms != 0 && elapsed >= (uint64_t)timeout_ms * 1000000ull) {
            if (pending_index != NULL) *pending_index = pending;
            return cm__fail(CM_ERROR_BUSY, ordinals[pending], __FILE__, __LINE__,
                            "cudaStreamQuery", "raise the timeout if the work is merely slow",
                            "the work queued on stream %d (device %d) did not finish within "
                            "%u ms", pending, ordinals[pending], timeout_ms);
        }
        uint64_t nap = pause;
        if (timeout_ms != 0) {
            const uint64_t left = (uint64_t)timeout_ms * 1000000ull - elapsed;
            if (nap > left) nap = left;
        }
        cm__sleep_ns(nap);
        if (pause < 1000000) pause *= 2;
    }
}
