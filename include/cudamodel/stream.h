/**
 * @file stream.h
 * @brief The execution model: stream and event pools, dependencies, host callbacks,
 *        synchronisation that explains asynchronous faults, timers, and graphs.
 *
 * ## The model
 * Work queued on the GPU (kernels, copies, sets) is asynchronous: a call returns once the work
 * is queued. A **stream** is a queue: work on one stream runs in order, work on different
 * streams may overlap (a copy on one, a kernel on another). The legacy default stream
 * serialises everything; the library never queues work on it implicitly. Every call that
 * queues work (buffer.h, kernels.h, cm_launch()) takes the stream as its first argument; NULL
 * there means **synchronous**: the work goes to the legacy default stream of the device and is
 * complete when the call returns (a fault it causes is reported by that call, naming it).
 * An **event** marks a point in a stream: for timing (two events, elapsed milliseconds) or for
 * ordering (stream B waits until A reaches the event).
 *
 * - **Stream pool.** Each device object (cm_device_t, device.h) owns a fixed set of
 *   non-blocking CUDA streams in two priority classes (CM_STREAM_PRIORITY_LOW, the default
 *   priority, and CM_STREAM_PRIORITY_HIGH, the device's greatest priority), sized by
 *   cm_stream_pool_configure(). cm_stream_acquire() hands one out in O(1) (a free list; the
 *   CUDA stream is created on its first hand-out and kept), cm_stream_release() gives it back
 *   in O(1). Releasing a stream with queued work is allowed: the work still runs, and the next
 *   owner's work is queued after it. cm_device_close() refuses to close while streams are
 *   acquired and names the file:line of each acquire.
 * - **Event pool.** cm_event_acquire() reuses events of the device: timing events
 *   (CM_EVENT_TIMING) and synchronisation-only events (CM_EVENT_SYNC_ONLY, created with
 *   cudaEventDisableTiming, cheaper to record and wait on) are kept in separate lists.
 * - **Dependencies.** cm_stream_wait() makes a stream wait for everything queued so far on
 *   another (through a pooled synchronisation-only event); cm_stream_wait_event() waits for one
 *   event; cm_stream_host_callback() runs a host function in stream order (cudaLaunchHostFunc).
 * - **Faults.** A kernel fault surfaces at a later call. cm_stream_synchronize() and
 *   cm_device_synchronize() return its status, and the detail names the last launch the library
 *   queued on that stream (kernel, file:line) as the likely cause; CUDAMODEL_SYNC=1 names the
 *   exact launch (status.h).
 * - **Timers.** cm_timer_t: start and stop on a stream, elapsed milliseconds from two timing
 *   events. cm_time_callable() times a function N times after warm-up and returns the
 *   minimum, median and maximum (the benchmarks use it).
 * - **Graphs.** cm_graph_capture_begin() / cm_graph_capture_end() capture what is queued on a
 *   stream (launches of cm_launch(), copies between device buffers and pinned host buffers,
 *   sets and fills, stream waits) into an instantiated graph; cm_graph_launch() replays it with
 *   one call. A copy between a buffer and pageable host memory on a stream being captured is
 *   not staged: it is captured as one cudaMemcpyAsync of the caller's memory, which each launch
 *   of the graph reads (writes) anew, so that memory must stay valid while the graph may run.
 *   Synchronous calls cannot be captured: CUDA then reports the capture as invalidated.
 * - **Profilers.** With CUDAMODEL_NVTX=1 every library call that queues GPU work opens an NVTX
 *   range named after the call ("cm_launch", "cm_stream_wait"...) so Nsight Systems shows it.
 *   Off by default, at the cost of one branch.
 *
 * ## Threading
 * The pools are thread-safe: any number of threads may acquire and release streams and events
 * of one device at once. One handle (stream, event, timer, graph) is used by one thread at a
 * time, except that queuing work on one stream from several threads is as safe as CUDA makes
 * it (ordered by whichever call comes first). cm_device_close() must not race with any use.
 *
 * ## Ownership
 * Streams and events belong to their device's pool: acquire lends one, release returns it; a
 * handle must not be used after release (a released handle is reported where it can be: double
 * release, a handle of a closed device, a pointer that is not a handle). Timers and graphs are
 * created and destroyed by the caller; destroy(NULL) is a no-op.
 */
#ifndef CUDAMODEL_STREAM_H
#define CUDAMODEL_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include <cudamodel/buffer.h>
#include <cudamodel/device.h>
#include <cudamodel/export.h>
#include <cudamodel/launch.h>
#include <cudamodel/status.h>

CM_EXTERN_C_BEGIN

/* ============================================================================ stream pool */

/** @brief Priority class of a pooled stream. */
typedef enum cm_stream_priority {
    CM_STREAM_PRIORITY_LOW = 0,  /**< the device's default (least) priority */
    CM_STREAM_PRIORITY_HIGH = 1  /**< the device's greatest priority: its blocks are scheduled first */
} cm_stream_priority_t;

/** @brief Most streams per priority class of one device. */
#define CM_STREAM_POOL_MAX 256

/** @brief Sizes of a device's stream pool; zero-initialise, 0 means the default. */
typedef struct cm_stream_pool_config {
    unsigned low_streams;   /**< streams of CM_STREAM_PRIORITY_LOW (0: 16) */
    unsigned high_streams;  /**< streams of CM_STREAM_PRIORITY_HIGH (0: 4) */
} cm_stream_pool_config_t;

/**
 * @brief Size a device's stream pool.
 * @param[in] dev  the device.
 * @param[in] cfg  the sizes (0 fields take the defaults, 16 and 4); NULL restores the defaults.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev, or a size above
 *         CM_STREAM_POOL_MAX (the message gives it); CM_ERROR_BUSY while streams of the device
 *         are acquired (release them first); CM_ERROR_HOST_OUT_OF_MEMORY;
 *         CM_ERROR_CONTEXT_LOST; a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain
 *         when the device's context cannot be made current (the pool is left as it was); a
 *         CUDA failure of cudaStreamDestroy (the pool is resized; the message counts the old
 *         streams left with the driver).
 * The pool's CUDA streams are destroyed and created again lazily. Thread-safe.
 */
CM_API cm_status_t cm_stream_pool_configure(cm_device_t *dev, const cm_stream_pool_config_t *cfg);

/** @brief What a device's stream pool holds (cm_stream_pool_stats()). */
typedef struct cm_stream_pool_stats {
    unsigned capacity[2];   /**< streams per class, indexed by cm_stream_priority_t */
    unsigned acquired[2];   /**< of which lent out now */
    unsigned created[2];    /**< of which have a CUDA stream (created on first hand-out) */
    unsigned peak_acquired[2]; /**< high-water mark of acquired */
    unsigned events_timing;    /**< timing events the device's event pool holds (lent + free) */
    unsigned events_sync_only; /**< synchronisation-only events it holds */
    unsigned events_acquired;  /**< events lent out now (both kinds) */
} cm_stream_pool_stats_t;

/**
 * @brief Fill the pool statistics of a device.
 * @param[in]  dev  the device.
 * @param[out] out  filled on success.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a closed dev. Thread-safe.
 */
CM_API cm_status_t cm_stream_pool_stats(cm_device_t *dev, cm_stream_pool_stats_t *out);

/**
 * @brief Borrow a stream of the device's pool (O(1)). The stream is non-blocking (it does not
 *        synchronise with the legacy default stream).
 * @param[in]  dev       the device.
 * @param[in]  priority  CM_STREAM_PRIORITY_LOW or CM_STREAM_PRIORITY_HIGH.
 * @param[out] out       receives the stream; unchanged on failure.
 * @param[in]  file      caller's file (copied pointer: pass a string literal, as the macro
 *                       does), or NULL; shown when the device is closed with the stream lent.
 * @param[in]  line      caller's line.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a NULL or closed dev, or an unknown
 *         priority; CM_ERROR_BUSY when every stream of that class is lent (the message gives
 *         the pool size; cm_stream_pool_configure() enlarges it); CM_ERROR_HOST_OUT_OF_MEMORY;
 *         CM_ERROR_CONTEXT_LOST; CUDA failures of cudaStreamCreateWithPriority as recorded.
 * Ownership: the stream is lent; give it back with cm_stream_release(). Thread-safe.
 */
CM_API cm_status_t cm_stream_acquire_at(cm_device_t *dev, cm_stream_priority_t priority,
                                        cm_stream_t **out, const char *file, int line);

/** @brief cm_stream_acquire_at() with the caller's file:line. */
#define cm_stream_acquire(dev, priority, out)                                                \
    cm_stream_acquire_at((dev), (priority), (out), __FILE__, __LINE__)

/**
 * @brief Give a stream back to its pool (O(1)). Work queued on it still runs; the next owner's
 *        work is queued after it. Releasing during a graph capture of the stream is refused.
 * @param[in] stream  the stream, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a stream already released (double release, the
 *         message names where it was acquired), a stream of a closed device, or a pointer that
 *         is not a pooled stream; CM_ERROR_BUSY while the stream is being captured.
 * Thread-safe.
 */
CM_API cm_status_t cm_stream_release(cm_stream_t *stream);

/**
 * @brief The device a stream belongs to.
 * @param[in]  stream  an acquired stream.
 * @param[out] dev     receives the device; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a stream that is not acquired.
 */
CM_API cm_status_t cm_stream_device(const cm_stream_t *stream, cm_device_t **dev);

/**
 * @brief Wait until everything queued on a stream has run.
 * @param[in] stream  an acquired stream.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a stream that is not acquired;
 *         CM_ERROR_CONTEXT_LOST (or another status) when queued work faulted: the detail names
 *         the last launch the library queued on the stream (kernel, file:line).
 */
CM_API cm_status_t cm_stream_synchronize(cm_stream_t *stream);

/**
 * @brief Whether everything queued on a stream has run, without waiting.
 * @param[in]  stream  an acquired stream.
 * @param[out] idle    true when the stream has no pending work.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a stream that is not acquired;
 *         the status of an asynchronous fault, as cm_stream_synchronize().
 */
CM_API cm_status_t cm_stream_query(cm_stream_t *stream, bool *idle);

/**
 * @brief Wait until all work of a device object's GPU has run (cudaDeviceSynchronize).
 * @param[in] dev  the device.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL or closed dev; the status of an
 *         asynchronous fault, with the last library launch on each of the device's acquired
 *         streams named in the message.
 */
CM_API cm_status_t cm_device_synchronize(cm_device_t *dev);

/**
 * @brief Make `waiter` wait for everything queued on `signaler` so far (a pooled
 *        synchronisation-only event is recorded on signaler and waited on by waiter; the host
 *        does not wait). Both streams must belong to the same device object.
 * @param[in] waiter    the stream that waits.
 * @param[in] signaler  the stream waited for; the same stream is a no-op.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for streams that are not acquired or belong to
 *         different devices; CM_ERROR_HOST_OUT_OF_MEMORY; CUDA failures as recorded.
 * Capturable (both streams must then be part of the capture).
 */
CM_API cm_status_t cm_stream_wait(cm_stream_t *waiter, cm_stream_t *signaler);

/** @brief A host function run in stream order: it must not call CUDA (CUDA's rule). */
typedef void (*cm_host_fn_t)(void *user);

/**
 * @brief Queue a host function on a stream (cudaLaunchHostFunc): it runs on a CUDA thread
 *        after the work queued before it, and the stream's later work waits for it.
 * @param[in] stream  an acquired stream.
 * @param[in] fn      the function; it must not make CUDA calls (the library's included).
 * @param[in] user    passed to fn.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL fn or a stream that is not acquired;
 *         CUDA failures as recorded.
 */
CM_API cm_status_t cm_stream_host_callback(cm_stream_t *stream, cm_host_fn_t fn, void *user);

/* ============================================================================ events */

/** @brief An event of a device's event pool (opaque). */
typedef struct cm_event cm_event_t;

/** @brief What an event is for. Timing events can be read with cm_event_elapsed_ms(). */
typedef enum cm_event_kind {
    CM_EVENT_SYNC_ONLY = 0, /**< ordering and host waits only (cudaEventDisableTiming): cheaper */
    CM_EVENT_TIMING = 1     /**< also records a timestamp */
} cm_event_kind_t;

/**
 * @brief Borrow an event of the device's pool (created once, reused afterwards).
 * @param[in]  dev   the device.
 * @param[in]  kind  CM_EVENT_SYNC_ONLY or CM_EVENT_TIMING.
 * @param[out] out   receives the event; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a NULL or closed dev, or an unknown
 *         kind; CM_ERROR_HOST_OUT_OF_MEMORY; CM_ERROR_CONTEXT_LOST; CUDA failures as recorded.
 * Ownership: lent; give it back with cm_event_release(). Thread-safe.
 */
CM_API cm_status_t cm_event_acquire(cm_device_t *dev, cm_event_kind_t kind, cm_event_t **out);

/**
 * @brief Give an event back to its pool. An event recorded but not yet reached may be released:
 *        the next owner's record replaces it (CUDA's rule for re-recorded events).
 * @param[in] event  the event, or NULL (a no-op returning CM_OK).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for an event already released, of a closed device,
 *         or a pointer that is not a pooled event. Thread-safe.
 */
CM_API cm_status_t cm_event_release(cm_event_t *event);

/**
 * @brief Record an event on a stream: it completes when the work queued before it has run.
 * @param[in] event   an acquired event.
 * @param[in] stream  an acquired stream of the same device.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for handles that are not acquired or of different
 *         devices; CUDA failures as recorded. Capturable.
 */
CM_API cm_status_t cm_event_record(cm_event_t *event, cm_stream_t *stream);

/**
 * @brief Make a stream wait for an event (recorded earlier) without blocking the host.
 * @param[in] stream  an acquired stream.
 * @param[in] event   an acquired event of the same device.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT as for cm_event_record(); CUDA failures as recorded.
 */
CM_API cm_status_t cm_stream_wait_event(cm_stream_t *stream, cm_event_t *event);

/**
 * @brief Block the host until an event has completed.
 * @param[in] event  an acquired event.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT; the status of an asynchronous fault, naming the
 *         last launch queued on the stream the event was recorded on.
 */
CM_API cm_status_t cm_event_synchronize(cm_event_t *event);

/**
 * @brief Whether an event has completed, without waiting.
 * @param[in]  event  an acquired event.
 * @param[out] done   true when completed (or never recorded).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or an event that is not acquired;
 *         the status of an asynchronous fault.
 */
CM_API cm_status_t cm_event_query(cm_event_t *event, bool *done);

/**
 * @brief Milliseconds between two completed timing events (cudaEventElapsedTime, about 0.5 us
 *        resolution). Does not wait: synchronise the stop event first.
 * @param[in]  start  an acquired CM_EVENT_TIMING event, recorded.
 * @param[in]  stop   an acquired CM_EVENT_TIMING event, recorded after start and completed.
 * @param[out] ms     receives the time.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments, events not acquired, a
 *         CM_EVENT_SYNC_ONLY event (the message says which), events never recorded, or events
 *         of different devices; CM_ERROR_BUSY when stop has not completed yet.
 */
CM_API cm_status_t cm_event_elapsed_ms(cm_event_t *start, cm_event_t *stop, float *ms);

/* ============================================================================ timers */

/** @brief A stream timer (opaque): two pooled timing events. */
typedef struct cm_timer cm_timer_t;

/**
 * @brief Create a timer on a device (it borrows two timing events of the device's pool).
 * @param[in]  dev  the device.
 * @param[out] out  receives the timer; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out or a NULL or closed dev;
 *         CM_ERROR_HOST_OUT_OF_MEMORY; the statuses of cm_event_acquire().
 * Ownership: the caller owns the timer and destroys it with cm_timer_destroy().
 */
CM_API cm_status_t cm_timer_create(cm_device_t *dev, cm_timer_t **out);

/**
 * @brief Destroy a timer, returning its events to the pool.
 * @param[in] timer  the timer, or NULL (a no-op).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a destroyed timer or a pointer that is not one.
 */
CM_API cm_status_t cm_timer_destroy(cm_timer_t *timer);

/**
 * @brief Start timing on a stream (records the start event).
 * @param[in] timer   the timer.
 * @param[in] stream  an acquired stream of the timer's device.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for bad handles or a stream of another device;
 *         CUDA failures as recorded.
 */
CM_API cm_status_t cm_timer_start(cm_timer_t *timer, cm_stream_t *stream);

/**
 * @brief Stop timing (records the stop event on the stream given to cm_timer_start()).
 * @param[in] timer  a started timer.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a bad handle or a timer that was not started.
 */
CM_API cm_status_t cm_timer_stop(cm_timer_t *timer);

/**
 * @brief The time between start and stop, in milliseconds; waits for the stop event.
 * @param[in]  timer  a stopped timer.
 * @param[out] ms     receives the time.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a timer not started and
 *         stopped; the status of an asynchronous fault in the timed work.
 */
CM_API cm_status_t cm_timer_elapsed_ms(cm_timer_t *timer, float *ms);

/** @brief The work timed by cm_time_callable(): queue it on stream; return CM_OK or a status. */
typedef cm_status_t (*cm_timed_fn_t)(void *user, cm_stream_t *stream);

/** @brief Per-call times of cm_time_callable(), milliseconds. */
typedef struct cm_timing_stats {
    double min_ms;     /**< fastest call */
    double median_ms;  /**< median call (mean of the two middle ones for an even count) */
    double max_ms;     /**< slowest call */
    int reps;          /**< timed calls */
} cm_timing_stats_t;

/** @brief Most timed calls of cm_time_callable(). */
#define CM_TIME_REPS_MAX 100000

/**
 * @brief Time fn(user, stream): `warmup` untimed calls, then `reps` calls each between two
 *        timing events on stream; min / median / max of the per-call times.
 * @param[in]  stream  an acquired stream; fn must queue its work on it.
 * @param[in]  fn      the work.
 * @param[in]  user    passed to fn.
 * @param[in]  warmup  untimed calls first (0..CM_TIME_REPS_MAX).
 * @param[in]  reps    timed calls, 1..CM_TIME_REPS_MAX.
 * @param[out] out     the statistics; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or counts out of range; the first
 *         failing status of fn (its detail kept); CUDA failures as recorded;
 *         CM_ERROR_HOST_OUT_OF_MEMORY.
 */
CM_API cm_status_t cm_time_callable(cm_stream_t *stream, cm_timed_fn_t fn, void *user, int warmup,
                                    int reps, cm_timing_stats_t *out);

/* ============================================================================ graphs */

/** @brief An instantiated CUDA graph (opaque): captured once, replayed many times. */
typedef struct cm_graph cm_graph_t;

/**
 * @brief Start capturing the work queued on a stream into a graph (thread-local capture mode:
 *        other threads are not affected). Until cm_graph_capture_end() nothing queued on the
 *        stream runs; it is recorded.
 * @param[in] stream  an acquired stream that is not being captured.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a stream that is not acquired; CM_ERROR_BUSY
 *         when the stream is already being captured; CUDA failures as recorded.
 */
CM_API cm_status_t cm_graph_capture_begin(cm_stream_t *stream);

/**
 * @brief End a capture and instantiate the graph. Call it on the thread that began the capture
 *        (CUDA's rule for a thread-local capture). Memory whose free the thread's capture
 *        deferred (see cm_buffer_destroy()) is freed once the thread captures nothing else.
 * @param[in]  stream  the stream passed to cm_graph_capture_begin().
 * @param[out] out     receives the graph; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a NULL out, a stream that is not acquired or not
 *         being captured; a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain when
 *         the device's context cannot be made current: nothing is ended (CUDA still captures)
 *         and the call may be repeated; CM_ERROR_CONTEXT_LOST when the device's context was
 *         lost (a sticky error): the capture went with it and the stream is no longer being
 *         captured; CM_ERROR_NOT_SUPPORTED when the capture was invalidated
 *         by a call that cannot be captured (the message says so; the capture is ended either
 *         way); CM_ERROR_HOST_OUT_OF_MEMORY; CUDA failures of instantiation as recorded (the
 *         capture is ended).
 * Ownership: the caller owns the graph and destroys it with cm_graph_destroy().
 */
CM_API cm_status_t cm_graph_capture_end(cm_stream_t *stream, cm_graph_t **out);

/**
 * @brief Replay a graph on a stream (cudaGraphLaunch): one call queues all of its work.
 * @param[in] graph   the graph.
 * @param[in] stream  an acquired stream of the device the graph was captured on.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a destroyed graph or a stream of another
 *         device; CUDA failures as recorded.
 */
CM_API cm_status_t cm_graph_launch(cm_graph_t *graph, cm_stream_t *stream);

/**
 * @brief Number of nodes (kernels, copies, sets, waits...) of a graph.
 * @param[in]  graph  the graph.
 * @param[out] count  receives the number of nodes; unchanged on failure.
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for NULL arguments or a destroyed graph.
 */
CM_API cm_status_t cm_graph_node_count(const cm_graph_t *graph, size_t *count);

/**
 * @brief Destroy a graph. Replays already queued still run (CUDA keeps what they need).
 * @param[in] graph  the graph, or NULL (a no-op).
 * @return CM_OK; CM_ERROR_INVALID_ARGUMENT for a destroyed graph or a pointer that is not one;
 *         a CUDA failure of cuCtxPushCurrent or cuDevicePrimaryCtxRetain when the device's
 *         context cannot be made current (nothing is destroyed: the graph is still alive and
 *         the destroy may be repeated); CUDA failures of the destroy as recorded (the handle is
 *         gone all the same).
 */
CM_API cm_status_t cm_graph_destroy(cm_graph_t *graph);

CM_EXTERN_C_END

#endif /* CUDAMODEL_STREAM_H */
