/*
 * The entry points of memspace.h that queue work: symbol copies, 2-D copies, managed prefetch
 * and managed copies. Each resolves its library stream (NULL: synchronous) into a queue and
 * runs the memory layer's body (memory/symbol.c, pitched.c, managed.c), inside an NVTX range
 * when CUDAMODEL_NVTX=1, like buffer_ops.c does for buffer.h.
 */
#include <stddef.h>

#include <cudamodel/memspace.h>

#include "../core/internal.h"
#include "../memory/memspace_internal.h"
#include "stream_internal.h"

cm_status_t cm_symbol_copy_from_host(cm_stream_t *stream, cm_device_t *dev, const void *symbol,
                                     size_t offset, const void *src, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_symbol_copy_from_host");
    cm_status_t st = cm__symbol_copy_q(&q, dev, symbol, offset, (void *)(uintptr_t)src, bytes,
                                       true, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_symbol_copy_to_host(cm_stream_t *stream, cm_device_t *dev, const void *symbol,
                                   size_t offset, void *dst, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_symbol_copy_to_host");
    cm_status_t st = cm__symbol_copy_q(&q, dev, symbol, offset, dst, bytes, false, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_copy_2d(cm_stream_t *stream, cm_place_t dst, cm_place_t src, size_t width,
                       size_t height) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_copy_2d");
    cm_status_t st = cm__copy_2d_q(&q, &dst, &src, width, height, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_managed_prefetch(cm_stream_t *stream, cm_managed_t *m, size_t offset, size_t bytes,
                                int location) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_managed_prefetch");
    cm_status_t st = cm__managed_prefetch_q(&q, m, offset, bytes, location, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_managed_copy_from_host(cm_stream_t *stream, cm_managed_t *dst, size_t dst_offset,
                                      const void *src, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_managed_copy_from_host");
    cm_status_t st = cm__managed_copy_q(&q, dst, dst_offset, (void *)(uintptr_t)src, bytes, true,
                                        __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_managed_copy_to_host(cm_stream_t *stream, const cm_managed_t *src,
                                    size_t src_offset, void *dst, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_managed_copy_to_host");
    cm_status_t st = cm__managed_copy_q(&q, src, src_offset, dst, bytes, false, __func__);
    CM__NVTX_POP();
    return st;
}
