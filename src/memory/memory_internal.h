/*
 * Private parts of the memory module (buffer.h, the device object of device.h): the handle
 * structs, the handle registry, live-buffer accounting, the staging pipeline and the
 * out-of-memory report. Not installed.
 *
 * Locking: one process-wide mutex (cm__mem_lock) guards the registry, the quarantine and its
 * spare handles, every device's live list and counters, and the list of open devices. Each
 * device has a second mutex for its staging buffers, never taken while cm__mem_lock is held.
 * The fast path of a buffer create or destroy takes cm__mem_lock once (cm__buffer_track(), the
 * locked step of the destroy).
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

#include "../core/internal.h"

/* ------------------------------------------------------------------ handles */

#define CM__MAGIC_DEVICE 0x43444556u      /* "DEVC" */
#define CM__MAGIC_BUFFER 0x43465542u      /* "BUFC" */
#define CM__MAGIC_HOST_BUFFER 0x43545348u /* "HSTC" */
#define CM__MAGIC_DEAD 0xdeadc0deu

#define CM__LABEL_MAX 64
#define CM__WHERE_MAX 128

typedef enum cm__kind {
    CM__KIND_NONE = 0,
    CM__KIND_DEVICE = 1,
    CM__KIND_BUFFER = 2,
    CM__KIND_HOST_BUFFER = 3
} cm__kind_t;

/** Node of a device's doubly-linked list of live allocations (creation order). */
typedef struct cm__link {
    struct cm__link *prev, *next;
} cm__link_t;

/** What buffers and host buffers share: identity, size, where created, list node. */
typedef struct cm__alloc {
    /* the fields every create and destroy touch come first (one cache line); the label, written
     * only when the caller gives one, last */
    uint32_t magic;
    cm__kind_t kind;
    struct cm_device *dev;
    size_t bytes;
    uint64_t serial;                /* n-th allocation of its device */
    const char *file;               /* the caller's string (static storage: __FILE__), or NULL */
    int line;
    bool has_label;                 /* label holds the caller's label (else it is not read) */
    cm__link_t link;
    char label[CM__LABEL_MAX];
} cm__alloc_t;

struct cm_buffer {
    cm__alloc_t a; /* first member: a cm_buffer_t * is a cm__alloc_t * */
    void *ptr;     /* NULL for an empty buffer */
    bool stream_ordered;
    cudaStream_t stream;
};

struct cm_host_buffer {
    cm__alloc_t a;
    void *ptr;
    void *device_ptr; /* mapped buffers only */
    unsigned flags;
    bool registered;  /* caller's memory (cudaHostRegister) */
};

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

/** Worker threads of a device that copy host memory in parallel (staging.c). */
typedef struct cm__copy_workers cm__copy_workers_t;

typedef struct cm__staging {
    pthread_mutex_t lock;         /* one staged copy at a time per device */
    cm_staging_config_t cfg;      /* resolved: no zero fields */
    unsigned n_slots;             /* allocated staging buffers (0: none yet) */
    size_t slot_bytes;
    void *slot[CM_STAGING_MAX_BUFFERS];
    cudaEvent_t event[CM_STAGING_MAX_BUFFERS];
    bool event_pending[CM_STAGING_MAX_BUFFERS]; /* recorded, not yet waited for */
    cm__copy_workers_t *workers;
} cm__staging_t;

/** Resolve a configuration (defaults for 0 fields) into out, checking ranges. */
cm_status_t cm__staging_resolve(const cm_staging_config_t *in, cm_staging_config_t *out);

void cm__staging_init(cm__staging_t *st);
/** Wait for pending staging DMA, free the staging buffers and events, stop the workers. */
void cm__staging_release(cm__staging_t *st);

/** Pinned bytes held for staging (reports). Takes the staging lock. */
size_t cm__staging_bytes(cm__staging_t *st);

/** Staged copy host -> device: src pageable, dst a device address on dev. Synchronous when
 *  sync (stream ignored: legacy stream, wait at the end), otherwise queued on stream and
 *  returns once src is read. The device must be current. */
cm_status_t cm__staged_h2d(struct cm_device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync);
/** Staged copy device -> host: returns once the data is in dst. The device must be current. */
cm_status_t cm__staged_d2h(struct cm_device *dev, void *dst, const void *src, size_t bytes,
                           cudaStream_t stream, bool sync);

/* ------------------------------------------------------------------ the device object */

struct cm_device {
    uint32_t magic;
    int ordinal;
    char name[256];
    size_t total_bytes;
    cudaMemPool_t pool;                 /* NULL: the device has no memory pools */
    unsigned long long release_threshold;

    /* under cm__mem_lock */
    cm__link_t live;                    /* sentinel of the live list */
    size_t n_buffers, buffer_bytes, peak_buffer_bytes;
    size_t n_host_buffers, host_bytes;
    uint64_t serial;
    uint64_t peer_ready;                /* bit d: peer access with ordinal d was set up */
    struct cm_device *next_open;

    cm__staging_t staging;
};

void cm__mem_lock(void);
void cm__mem_unlock(void);

/** Whether h is a live handle of kind (registry lookup; nothing is dereferenced unless it is). */
bool cm__handle_live_locked(const void *h, cm__kind_t kind);

/**
 * Check that h is a live handle of kind; record CM_ERROR_INVALID_ARGUMENT naming arg ("dst",
 * "buf"...) and the function otherwise, saying whether it was NULL, destroyed (with what it was
 * and where it was created, while the library still remembers it) or never a handle of that kind.
 */
cm_status_t cm__check_handle(const void *h, cm__kind_t kind, const char *arg, const char *func);

/** What a buffer create needs of its device, read while the device was known live. */
typedef struct cm__dev_info {
    int ordinal;
    cudaMemPool_t pool;   /* NULL: the device has no memory pools */
    uint64_t epoch;       /* device-close count when it was checked (cm__buffer_track) */
    bool stream_known;    /* the stream passed belongs to the device (cm__stream_known) */
} cm__dev_info_t;

/**
 * Check that dev is a live device object, like cm__check_handle (same failure), and read what a
 * buffer create needs, and whether stream (pass 0 when there is none) is known to belong to it
 * without asking CUDA. A per-thread memo of the last device checked answers without the lock
 * while no device object has been closed since.
 */
cm_status_t cm__device_info(const cm_device_t *dev, cudaStream_t stream, const char *func,
                            cm__dev_info_t *info);

/**
 * Create and register a buffer handle in one locked step: check that dev is still open (no
 * look-up while no device was closed since info was read), take recycled handle storage (or
 * malloc), fill it, register it, add it to dev's live list and counters. *out is set on CM_OK
 * only; on failure nothing is registered (ptr stays the caller's to free).
 */
cm_status_t cm__buffer_track(struct cm_device *dev, const cm__dev_info_t *info, size_t bytes,
                             void *ptr, bool stream_ordered, cudaStream_t stream,
                             const char *label, const char *file, int line, const char *func,
                             struct cm_buffer **out);

/** Register a new allocation handle (pinned host buffers; device buffers go through
 *  cm__buffer_track, whose handle storage is recycled) and add it to dev's live list and
 *  counters. */
cm_status_t cm__alloc_track(struct cm_device *dev, cm__alloc_t *a, cm__kind_t kind, size_t bytes,
                            const char *label, const char *file, int line, const char *func);

/** The failure of cm__check_handle for a handle that is not live (cm__mem_lock held). */
cm_status_t cm__handle_fail_locked(const void *h, cm__kind_t kind, const char *arg,
                                   const char *func);

/**
 * Release a live allocation handle (cm__mem_lock held, liveness checked by the caller):
 * unregister it, remove it from its device's list and counters, mark it dead and hand its
 * memory to the quarantine (freed, or reused for a new buffer handle, once CM__QUARANTINE
 * handles were released after it). Read what you need from it before.
 */
void cm__alloc_untrack_locked(cm__alloc_t *a);

/** Make the device current (through the hooks). *saved receives the device to restore, or -1
 *  when nothing was switched (the common case: one cudaGetDevice and no more). */
cm_status_t cm__mem_device_enter(int ordinal, int *saved);
/** Restore the device remembered by cm__mem_device_enter (no-op for -1). Never fails. */
void cm__mem_device_leave(int saved);

/** Whether stream is known to belong to ordinal without asking CUDA: 0, legacy and per-thread
 *  streams, or the calling thread's last stream checked (no CUDA call, no lock). */
bool cm__stream_known(cudaStream_t stream, int ordinal);
/** Check that a stream belongs to ordinal (0, legacy and per-thread streams always do). */
cm_status_t cm__check_stream_device(cudaStream_t stream, int ordinal, const char *func);
/** Forget the calling thread's last checked stream (tests that inject stream faults). */
void cm__stream_check_forget(void);

/** Trim the pools of every open device object of ordinal to 0; returns the bytes released. */
size_t cm__trim_ordinal(int ordinal);

/** Set up peer access between two open devices (both directions, and their pools) when the pair
 *  supports it; once per pair. Returns CM_OK also when the pair does not support it. */
cm_status_t cm__peer_prepare(struct cm_device *a, struct cm_device *b);

/** Bytes this process holds through the library on ordinal (all open device objects): live
 *  buffer bytes and count, and cached pool bytes (reserved - used). */
void cm__ordinal_holdings(int ordinal, size_t *live_bytes, size_t *live_buffers,
                          size_t *cached_bytes);




/** One line describing an allocation: "device buffer of 4.00 MiB (4194304 bytes), created at
 *  a.c:10 \"weights\"". */
void cm__describe_alloc(const cm__alloc_t *a, cm__text_t *t);

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
} cm__oom_numbers_t;

/** Write the report's message and hint from the numbers (pure function; always NUL-terminates). */
void cm__oom_format(const cm__oom_numbers_t *n, char *msg, size_t msg_size, char *hint,
                    size_t hint_size);


/**
 * After an allocation failed with cudaErrorMemoryAllocation even after trimming: gather the
 * numbers (memory info, holdings, a probe for the largest allocation that succeeds) and record
 * CM_ERROR_DEVICE_OUT_OF_MEMORY with the report. The device must be current.
 */
cm_status_t cm__oom_report(struct cm_device *dev, size_t requested, size_t trimmed,
                           bool stream_ordered, cudaError_t err, const char *call, const char *file,
                           int line);

/** Largest allocation that succeeds now (cudaMalloc probes, at most max_probes), up to limit. */
size_t cm__probe_largest(size_t limit, int max_probes, bool *known);

#endif /* CUDAMODEL_SRC_MEMORY_INTERNAL_H */
