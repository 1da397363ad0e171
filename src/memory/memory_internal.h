/*
 * Private parts of the memory module (buffer.h, the memory part of the device object of
 * core/device.h): the buffer and host buffer objects, live-buffer accounting, the staging
 * pipeline and the out-of-memory report. Not installed.
 *
 * Buffers and host buffers are handles of the core's table (core/handle.h): struct cm__buffer
 * and struct cm__host_buffer, freed at once by their destroy. Every device object keeps a list
 * of its live buffers and host buffers and their counters, guarded by cm__core_lock()
 * (core/lock.h); a buffer create or destroy takes that lock once, for the handle and the list
 * together, and makes no CUDA call inside it. Each device has a staging mutex, held across a
 * staged copy and never taken while the core lock is held.
 *
 * The memory part registers two functions in its device object (dev->mem, core/device.h) so
 * that cm_device_close() in the core never calls up into this module: busy_locked (refuses the
 * close while buffers live, listing them) and release (frees the deferred frees, the staging
 * buffers and threads). Its state is the deferred-free list (cm__defer_free).
 */
#ifndef CUDAMODEL_SRC_MEMORY_INTERNAL_H
#define CUDAMODEL_SRC_MEMORY_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/interop.h>

#include "../core/device.h"
#include "../core/handle.h"
#include "../core/internal.h"
#include "../core/lock.h"

/* ------------------------------------------------------------------ objects */

#define CM__LABEL_MAX 64
#define CM__WHERE_MAX 128

/** What buffers and host buffers share: identity, size, where created, list node. */
typedef struct cm__alloc {
    /* the fields every create and destroy touch come first; the label, written only when the
     * caller gives one, last */
    void *handle;                   /* this object's handle value */
    struct cm__device *dev;
    cm__kind_t kind;                /* CM__KIND_BUFFER, CM__KIND_HOST_BUFFER, or a kind of
                                       memspace.h's objects (memspace_internal.h) */
    int line;
    size_t bytes;
    uint64_t serial;                /* n-th allocation of its device */
    const char *file;               /* static storage: the caller's __FILE__ or a library copy */
    bool has_label;                 /* label holds the caller's label (else it is not read) */
    cm__link_t link;
    char label[CM__LABEL_MAX];
} cm__alloc_t;

struct cm__buffer {
    cm__alloc_t a; /* first member */
    void *ptr;     /* NULL for an empty buffer */
    bool stream_ordered;
    cudaStream_t stream;
    const void *stream_handle; /* the library stream it was created on (cm_buffer_info) */
};

struct cm__host_buffer {
    cm__alloc_t a; /* first member */
    void *ptr;
    void *device_ptr; /* mapped buffers only */
    unsigned flags;
    bool registered;  /* caller's memory (cudaHostRegister) */
};

/** The object of a buffer handle, checked: on failure records CM_ERROR_INVALID_ARGUMENT naming
 *  arg and func (NULL, another kind, stale with where it was created) and *out is NULL. */
static inline cm_status_t cm__buffer_get(const cm_buffer_t *h, const char *arg, const char *func,
                                         struct cm__buffer **out) {
    void *o;
    cm_status_t s = cm__handle_get(h, CM__KIND_BUFFER, arg, func, &o);
    *out = o;
    return s;
}

/** cm__buffer_get for host buffers. */
static inline cm_status_t cm__host_buffer_get(const cm_host_buffer_t *h, const char *arg,
                                              const char *func, struct cm__host_buffer **out) {
    void *o;
    cm_status_t s = cm__handle_get(h, CM__KIND_HOST_BUFFER, arg, func, &o);
    *out = o;
    return s;
}


/**
 * Give a filled allocation object (a->dev, a->kind, a->bytes, a->file, a->line, label) its
 * handle and link it into its device's live list and counters: one cm__core_lock() section.
 * Refuses (recorded under func, nothing changed) when the device object was closed meanwhile or
 * the handle table cannot grow. On CM_OK a->handle is the new handle.
 */
cm_status_t cm__alloc_track(cm__alloc_t *a, const void *dev_handle, int ordinal,
                            const char *func);

/** Copy a caller's label into a (empty or NULL: none). */
void cm__alloc_set_label(cm__alloc_t *a, const char *label);

/** Unlink a live allocation from its device's list and counters (cm__core_lock() held; the
 *  caller ends its handle in the same section). */
void cm__alloc_untrack_locked(cm__alloc_t *a);

/** The memory part's release (dev->mem.release, registered by the device's first buffer or host
 *  buffer, cm__alloc_track): the deferred frees, then the staging (cm__staging_release). No lock held; no other thread can reach dev. CM_OK, or a recorded
 *  failure saying what stays with the driver. */
cm_status_t cm__memory_release(struct cm__device *dev);

/**
 * Device memory that cannot be freed now (a failed cudaFreeAsync while this thread captures a
 * graph, whose cudaFree fallback CUDA would refuse; a device scope that cannot be entered): keep
 * it on dev's deferred-free list, freed by cudaFree at the end of this thread's capture
 * (cm__deferred_free_drain) or at the device's close. False when it cannot be kept (no host
 * memory for the entry, or dev was closed meanwhile): the memory stays with the driver.
 * Takes the core lock; dev is compared with the open device objects before it is used.
 */
bool cm__defer_free(struct cm__device *dev, void *ptr, size_t bytes);

/** The same for pinned host memory of dev's context (cudaHostAlloc): freed by cudaFreeHost in a
 *  scope of dev, at the end of this thread's capture or at dev's close. */
bool cm__defer_free_host(struct cm__device *dev, void *ptr, size_t bytes);

/** Free what the open device objects' deferred-free lists hold, when this thread captures no
 *  graph (cm_graph_capture_end); what cannot be freed yet stays listed. The caller's detail is
 *  kept. Cheap when no free is deferred. */
void cm__deferred_free_drain(void);

/** One line describing an allocation: "device buffer of 4.00 MiB (4194304 bytes), created at
 *  a.c:10 \"weights\"". */
void cm__describe_alloc(const cm__alloc_t *a, cm__text_t *t);

/* ------------------------------------------------------------------ streams */

/** Whether a CUDA stream needs no device check: 0, the legacy and the per-thread stream are
 *  whichever device's is current when the work is queued. */
static inline bool cm__stream_is_default(cudaStream_t stream) {
    return stream == 0 || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

/**
 * Whether an asynchronous copy's stream (sync: a synchronous copy, never captured) is being
 * captured into a graph: *capturing. A copy with pageable host memory then runs at each launch
 * of the graph, so it is neither staged (the graph would read the staging buffers that later
 * copies refill) nor waited for (a wait invalidates the capture). A failed query is recorded
 * naming func and fails the copy: staging into a capture it could not rule out is the defect
 * this avoids, and the stream's trouble would fail the copy anyway.
 */
cm_status_t cm__copy_capturing(bool sync, cudaStream_t stream, const char *func,
                               bool *capturing);

/**
 * Check that a stream belongs to ordinal (0, legacy and per-thread streams always do). A stream
 * of the device's primary context passes after one driver query (its context); otherwise a stream
 * being captured into a graph is accepted without asking its device (CUDA refuses that query
 * during a capture, and the refusal would invalidate the capture; CUDA itself rejects a stream
 * of another device when the work is queued). Nothing is cached between calls.
 */
cm_status_t cm__check_stream_device_full(cudaStream_t stream, int ordinal, const char *what,
                                         const char *func);
/* The check for `what` ("buffer", "device object") of ordinal; cm__check_stream_device is the
 * buffers' form. */
static inline cm_status_t cm__check_stream_of(cudaStream_t stream, int ordinal, const char *what,
                                              const char *func) {
    if (cm__stream_is_default(stream)) return CM_OK;
    /* One query answers the common case: a stream of the device's primary context (every stream
     * the runtime creates) belongs to the device. cuStreamGetCtx is allowed during a capture.
     * Any other answer (another device, a context of the caller's own, a failed query) takes the
     * full check, which names the stream's device. */
    void *primary = cm__primary_ctx(ordinal), *ctx = NULL;
    if (primary != NULL && cm__cuda.stream_get_ctx(stream, &ctx) == cudaSuccess && ctx == primary)
        return CM_OK;
    return cm__check_stream_device_full(stream, ordinal, what, func);
}
static inline cm_status_t cm__check_stream_device(cudaStream_t stream, int ordinal,
                                                  const char *func) {
    return cm__check_stream_of(stream, ordinal, "buffer", func);
}

/* ------------------------------------------------------------------ across device objects */

/** Trim the pools of every open device object of ordinal to 0; returns the bytes released.
 *  Takes cm__core_lock() to collect the pools, trims outside it. */
size_t cm__trim_ordinal(int ordinal);

/** For a failed call that involves two devices, made in a scope of scope_dev: true when err is a
 *  sticky error that only other_dev's context holds (never when the two are one device). A
 *  peer copy or peer mapping fails with the sticky error of either context, also of a fault on
 *  the other device that another thread reports after this call's context checks. Each context
 *  is asked with cudaMemGetInfo (needs the context, queues nothing; its errors cleared). When
 *  true, *sc is a CM__CTX_NONE scope of other_dev that the caller records the failure in
 *  (charging the sticky error to it) and then leaves; when false the caller records it as usual,
 *  charged to scope_dev. */
bool cm__charge_to_other(cudaError_t err, int scope_dev, int other_dev, cm__scope_t *sc);

/** Set up peer access between two open devices (both directions, and their pools) when the pair
 *  supports it; once per pair. Returns CM_OK also when the pair does not support it. */
cm_status_t cm__peer_prepare(struct cm__device *a, struct cm__device *b);

/** Bytes this process holds through the library on ordinal (all open device objects): live
 *  buffer bytes and count, and cached pool bytes (reserved - used). */
void cm__ordinal_holdings(int ordinal, size_t *live_bytes, size_t *live_buffers,
                          size_t *cached_bytes);

/* ------------------------------------------------------------------ staging */

/** One chunk of a staged copy (cm__staging_chunk_at()). */
typedef struct cm__chunk {
    size_t index;      /* 0 .. count-1 */
    size_t offset;     /* byte offset in the copy */
    size_t bytes;      /* 1 .. chunk size */
    unsigned slot;     /* staging buffer it goes through: index % buffers */
    bool reuses_slot;  /* the slot carried an earlier chunk: wait for its DMA first */
    size_t previous;   /* that earlier chunk (index - buffers), when reuses_slot */
} cm__chunk_t;

/** Number of chunks of a copy of bytes in chunks of chunk_bytes (0 for bytes or chunk 0). */
size_t cm__staging_chunk_count(size_t bytes, size_t chunk_bytes);

/** The i-th chunk of a staged copy: false (out untouched) when i is past the end or an argument
 *  is 0. Pure function: the pipeline and the tests use the same plan. */
bool cm__staging_chunk_at(size_t bytes, size_t chunk_bytes, unsigned buffers, size_t i,
                          cm__chunk_t *out);

/** Part k of parts of a range of bytes split for host threads: boundaries on 64-byte multiples
 *  (cache lines), the last part takes the rest; empty parts have len 0. Pure function. */
void cm__split_range(size_t bytes, unsigned parts, unsigned k, size_t *offset, size_t *len);


/** Resolve a configuration (defaults for 0 fields) into out, checking ranges. */
cm_status_t cm__staging_resolve(const cm_staging_config_t *in, cm_staging_config_t *out);

/** The staging part of the memory part's release (cm__memory_release): wait for pending
 *  staging DMA, free the staging buffers and events in a scope of the device, stop the workers.
 *  No lock held; no other thread can reach dev. CM_OK, or a recorded failure saying what stays
 *  with the driver (a failed free, or no scope of the device). */
cm_status_t cm__staging_release(struct cm__device *dev);

/** The device's staging configuration, resolved (a device object starts with all fields 0:
 *  the defaults). Takes the staging lock. */
cm_staging_config_t cm__staging_config(struct cm__device *dev);

/** Pinned bytes held for staging (reports). Takes the staging lock. */
size_t cm__staging_bytes(struct cm__device *dev);

/** Staged copy host -> device: src pageable, dst a device address on dev. Synchronous when
 *  sync (stream ignored: legacy stream, wait at the end), otherwise queued on stream and
 *  returns once src is read. The caller is in a scope of dev's device (made current). */
cm_status_t cm__staged_h2d(struct cm__device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync);
/** Staged copy device -> host: returns once the data is in dst. Same scope as above. */
cm_status_t cm__staged_d2h(struct cm__device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync);

/* ------------------------------------------------------------------ out-of-memory report */

/** The numbers of an out-of-memory report. */
typedef struct cm__oom_numbers {
    int device;
    const char *device_name;     /* may be NULL or "" */
    size_t requested;
    size_t free_bytes, total_bytes; /* cudaMemGetInfo after the retry (0, 0 when unknown) */
    size_t live_bytes;           /* held through the library in live buffers (this ordinal) */
    size_t live_buffers;
    size_t cached_bytes;         /* held cached by the library's pools after trimming */
    size_t trimmed_bytes;        /* released by the trim before the retry */
    size_t largest_ok;           /* largest allocation a probe got just now */
    bool largest_known;          /* false when the probe could not run */
    bool stream_ordered;         /* the failed call was a stream-ordered allocation */
    bool not_attempted;          /* larger than the whole device: CUDA was not asked */
    /* the processes on the GPU as NVML lists them (cm_device_processes()); when NVML is not
     * available (processes_known false) the hint points at nvidia-smi instead */
    bool processes_known;
    const cm_process_info_t *processes; /* largest first; the caller itself marked self */
    size_t n_processes;          /* entries in processes */
    size_t process_count;        /* processes NVML listed (more than n_processes when cut) */
} cm__oom_numbers_t;

/** Write the report's message and hint from the numbers (pure function; always NUL-terminates). */
void cm__oom_format(const cm__oom_numbers_t *n, char *msg, size_t msg_size, char *hint,
                    size_t hint_size);


/**
 * After an allocation failed with cudaErrorMemoryAllocation even after trimming: gather the
 * numbers (memory info, holdings, a probe for the largest allocation that succeeds) and record
 * CM_ERROR_DEVICE_OUT_OF_MEMORY with the report. Runs in a scope of dev's device (whatever
 * device the caller has current).
 */
cm_status_t cm__oom_report(struct cm__device *dev, size_t requested, size_t trimmed,
                           bool stream_ordered, cudaError_t err, const char *call, const char *file,
                           int line);

/**
 * Before an allocation of requested bytes of device memory through call (its CUDA name) in
 * func: CM_OK when the device's whole memory (dev->total_bytes) could hold it, else record
 * CM_ERROR_DEVICE_OUT_OF_MEMORY with the report ("not attempted"; cuda_error
 * cudaErrorMemoryAllocation; a call text naming call and func, "not called") and return it,
 * without asking CUDA and without trimming the pools. No such allocation can succeed, and the
 * driver may take most of the free memory for a moment before it refuses one, which fails the
 * allocations of other threads and processes meanwhile.
 */
cm_status_t cm__oom_refuse_oversize(struct cm__device *dev, size_t requested, bool stream_ordered,
                                    const char *call, const char *func, const char *file,
                                    int line);

/** Largest allocation that succeeds now (cudaMalloc probes, at most max_probes), up to limit,
 *  on the device current in the caller's scope. */
size_t cm__probe_largest(size_t limit, int max_probes, bool *known);

/* The fix for a close refused while buffers live (a hint naming public calls: text, not calls). */
/* Hints that name calls of buffer.h whose entry points are in the exec layer (buffer_ops.c) */
#define CM__HINT_COPY_BETWEEN_BUFFERS "copy between device buffers with cm_buffer_copy()"
#define CM__HINT_SET_ONE_BYTE                                                                \
    "cm_buffer_set writes one byte value; to write a wider value (an int, a float) use "      \
    "cm_buffer_fill()"

#define CM__HINT_CLOSE_WITH_BUFFERS                                                          \
    "destroy every buffer of the device before closing it (cm_buffer_destroy(), "             \
    "cm_host_buffer_destroy(), and for memspace.h's objects cm_texture_destroy(), "           \
    "cm_surface_destroy(), cm_pitched_destroy(), cm_array_destroy(), cm_managed_destroy()); " \
    "cm_device_leak_report() lists them all"

/* ------------------------------------------------------------------ buffer operations
 * The bodies of buffer.h's calls; the exec layer's entry points (src/exec/buffer_ops.c) resolve
 * the library stream into a queue and call these. Every one checks all of its arguments before
 * it touches memory. */

/** Where a buffer operation runs: handle NULL = synchronous (the legacy default stream of the
 *  buffer's device, complete on return); else the CUDA stream of the library stream `handle`,
 *  which belongs to device `ordinal` (checked against the buffer's device). */
typedef struct cm__queue {
    const void *handle;
    cudaStream_t cs;
    int ordinal;
} cm__queue_t;

/** A queue's stream against the device of the buffers it works on; records the refusal
 *  ("the stream belongs to device 1 but the buffer to device 0") under func. */
cm_status_t cm__check_queue(const cm__queue_t *q, int ordinal, const char *func);

cm_status_t cm__buffer_create_q(const cm__queue_t *q, cm_device_t *dev, size_t bytes,
                                cm_buffer_t **out, const char *label, const char *file, int line,
                                const char *func);
/** Destroy buf (cm_buffer_destroy, _on_stream): a capture of this thread or a device scope that
 *  cannot be entered is refused before anything is released (the buffer stays alive). */
cm_status_t cm__buffer_destroy_q(const cm__queue_t *q, cm_buffer_t *buf, const char *func);
/** Destroy a buffer the library made for itself (a split's parts, a measurement's): the handle
 *  ends whatever happens (nobody could destroy it again), a failure reported. */
cm_status_t cm__buffer_release(cm_buffer_t *buf, const char *func);
cm_status_t cm__buffer_h2d(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                           const void *src, size_t bytes, const char *func);
cm_status_t cm__buffer_d2h(const cm__queue_t *q, const cm_buffer_t *src, size_t src_offset,
                           void *dst, size_t bytes, const char *func);
cm_status_t cm__buffer_from_host_buffer(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                                        const cm_host_buffer_t *src, size_t src_offset,
                                        size_t bytes, const char *func);
cm_status_t cm__buffer_to_host_buffer(const cm__queue_t *q, const cm_buffer_t *src,
                                      size_t src_offset, cm_host_buffer_t *dst, size_t dst_offset,
                                      size_t bytes, const char *func);
cm_status_t cm__buffer_d2d(const cm__queue_t *q, cm_buffer_t *dst, size_t dst_offset,
                           const cm_buffer_t *src, size_t src_offset, size_t bytes,
                           const char *func);
cm_status_t cm__buffer_set_q(const cm__queue_t *q, cm_buffer_t *buf, size_t offset, size_t bytes,
                             int value, const char *func);
cm_status_t cm__buffer_fill_q(const cm__queue_t *q, cm_buffer_t *buf, size_t offset, size_t bytes,
                              const void *pattern, size_t pattern_bytes, const char *func);

#endif /* CUDAMODEL_SRC_MEMORY_INTERNAL_H */
