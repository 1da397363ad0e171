/*
 * The entry points of buffer.h that queue work: create, destroy on a stream, the copies, set and
 * fill. Each resolves its library stream (NULL: synchronous) into a queue and runs the memory
 * layer's body (memory/buffer.c), inside an NVTX range when CUDAMODEL_NVTX=1. They live in the
 * exec layer because a library stream is an exec object; the memory layer below only sees the
 * CUDA stream and its device.
 */
#include <stddef.h>

#include <cudamodel/buffer.h>

#include "../core/internal.h"
#include "../memory/memory_internal.h"
#include "stream_internal.h"

cm_status_t cm_buffer_create_at(cm_stream_t *stream, cm_device_t *dev, size_t bytes,
                                cm_buffer_t **out, const char *label, const char *file, int line) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    return cm__buffer_create_q(&q, dev, bytes, out, label, file, line, __func__);
}

cm_status_t cm_buffer_destroy_on_stream(cm_stream_t *stream, cm_buffer_t *buf) {
    if (stream == NULL) {
        return cm__fail(CM_ERROR_INVALID_ARGUMENT, -1, __FILE__, __LINE__, __func__,
                        "pass the stream to order the free on, or release the buffer with "
                        "cm_buffer_destroy()",
                        "stream is NULL; the buffer was left alive");
    }
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    return cm__buffer_destroy_q(&q, buf, __func__);
}

cm_status_t cm_buffer_copy_from_host(cm_stream_t *stream, cm_buffer_t *dst, size_t dst_offset,
                                     const void *src, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_copy_from_host");
    cm_status_t st = cm__buffer_h2d(&q, dst, dst_offset, src, bytes, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_to_host(cm_stream_t *stream, const cm_buffer_t *src, size_t src_offset,
                                   void *dst, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_copy_to_host");
    cm_status_t st = cm__buffer_d2h(&q, src, src_offset, dst, bytes, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_from_host_buffer(cm_stream_t *stream, cm_buffer_t *dst,
                                            size_t dst_offset, const cm_host_buffer_t *src,
                                            size_t src_offset, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_copy_from_host_buffer");
    cm_status_t st = cm__buffer_from_host_buffer(&q, dst, dst_offset, src, src_offset, bytes,
                                                 __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy_to_host_buffer(cm_stream_t *stream, const cm_buffer_t *src,
                                          size_t src_offset, cm_host_buffer_t *dst,
                                          size_t dst_offset, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_copy_to_host_buffer");
    cm_status_t st = cm__buffer_to_host_buffer(&q, src, src_offset, dst, dst_offset, bytes,
                                               __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_copy(cm_stream_t *stream, cm_buffer_t *dst, size_t dst_offset,
                           const cm_buffer_t *src, size_t src_offset, size_t bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_copy");
    cm_status_t st = cm__buffer_d2d(&q, dst, dst_offset, src, src_offset, bytes, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_set(cm_stream_t *stream, cm_buffer_t *buf, size_t offset, size_t bytes,
                          int value) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_set");
    cm_status_t st = cm__buffer_set_q(&q, buf, offset, bytes, value, __func__);
    CM__NVTX_POP();
    return st;
}

cm_status_t cm_buffer_fill(cm_stream_t *stream, cm_buffer_t *buf, size_t offset, size_t bytes,
                           const void *pattern, size_t pattern_bytes) {
    cm__queue_t q;
    CM_TRY(cm__stream_queue(stream, __func__, &q));
    CM__NVTX_PUSH("cm_buffer_fill");
    cm_status_t st = cm__buffer_fill_q(&q, buf, offset, bytes, pattern, pattern_bytes, __func__);
    CM__NVTX_POP();
    /* the fill may be a library kernel: a later fault on the stream names it */
    if (st == CM_OK && bytes > 0) cm__stream_note_op(stream, "cm_buffer_fill");
    return st;
}
