/*
 * The per-kind words of the handle table's messages (private; included by core/handle.c only):
 * each kind's name, public type, how a handle of it is obtained and ended. Kept in a header
 * because the function names in these strings are text for the user, not calls.
 */
#ifndef CUDAMODEL_SRC_CORE_HANDLE_NAMES_H
#define CUDAMODEL_SRC_CORE_HANDLE_NAMES_H

/* included by core/handle.c after handle.h (CM__KIND_COUNT) */

static const char *const cm__kind_names[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "handle",
    [CM__KIND_DEVICE] = "device object",
    [CM__KIND_BUFFER] = "buffer",
    [CM__KIND_HOST_BUFFER] = "host buffer",
    [CM__KIND_STREAM] = "stream",
    [CM__KIND_EVENT] = "event",
    [CM__KIND_TIMER] = "timer",
    [CM__KIND_GRAPH] = "graph",
    [CM__KIND_DEVICE_SET] = "device set",
    [CM__KIND_SPLIT] = "split array",
    [CM__KIND_COMM] = "communicator",
    [CM__KIND_PITCHED] = "pitched buffer",
    [CM__KIND_ARRAY] = "CUDA array",
    [CM__KIND_TEXTURE] = "texture",
    [CM__KIND_SURFACE] = "surface",
    [CM__KIND_MANAGED] = "managed buffer",
};

/* How a handle of each kind is obtained and ended, for hints. */
static const char *const cm__kind_create[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "the library",
    [CM__KIND_DEVICE] = "cm_device_open()",
    [CM__KIND_BUFFER] = "cm_buffer_create()",
    [CM__KIND_HOST_BUFFER] = "cm_host_buffer_create()",
    [CM__KIND_STREAM] = "cm_stream_acquire()",
    [CM__KIND_EVENT] = "cm_event_acquire()",
    [CM__KIND_TIMER] = "cm_timer_create()",
    [CM__KIND_GRAPH] = "cm_graph_capture_end()",
    [CM__KIND_DEVICE_SET] = "cm_device_set_open()",
    [CM__KIND_SPLIT] = "cm_split_create()",
    [CM__KIND_COMM] = "cm_comm_create()",
    [CM__KIND_PITCHED] = "cm_pitched_create()",
    [CM__KIND_ARRAY] = "cm_array_create()",
    [CM__KIND_TEXTURE] = "cm_texture_create_from_array() (or _from_pitched, _from_buffer)",
    [CM__KIND_SURFACE] = "cm_surface_create()",
    [CM__KIND_MANAGED] = "cm_managed_create()",
};
static const char *const cm__kind_end[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "it was released",
    [CM__KIND_DEVICE] = "cm_device_close()",
    [CM__KIND_BUFFER] = "cm_buffer_destroy()",
    [CM__KIND_HOST_BUFFER] = "cm_host_buffer_destroy()",
    [CM__KIND_STREAM] = "cm_stream_release() (or its device's close)",
    [CM__KIND_EVENT] = "cm_event_release() (or its device's close)",
    [CM__KIND_TIMER] = "cm_timer_destroy()",
    [CM__KIND_GRAPH] = "cm_graph_destroy()",
    [CM__KIND_DEVICE_SET] = "cm_device_set_close()",
    [CM__KIND_SPLIT] = "cm_split_destroy()",
    [CM__KIND_COMM] = "cm_comm_destroy()",
    [CM__KIND_PITCHED] = "cm_pitched_destroy()",
    [CM__KIND_ARRAY] = "cm_array_destroy()",
    [CM__KIND_TEXTURE] = "cm_texture_destroy()",
    [CM__KIND_SURFACE] = "cm_surface_destroy()",
    [CM__KIND_MANAGED] = "cm_managed_destroy()",
};

static const char *const cm__kind_types[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "handle",
    [CM__KIND_DEVICE] = "cm_device_t",
    [CM__KIND_BUFFER] = "cm_buffer_t",
    [CM__KIND_HOST_BUFFER] = "cm_host_buffer_t",
    [CM__KIND_STREAM] = "cm_stream_t",
    [CM__KIND_EVENT] = "cm_event_t",
    [CM__KIND_TIMER] = "cm_timer_t",
    [CM__KIND_GRAPH] = "cm_graph_t",
    [CM__KIND_DEVICE_SET] = "cm_device_set_t",
    [CM__KIND_SPLIT] = "cm_split_t",
    [CM__KIND_COMM] = "cm_comm_t",
    [CM__KIND_PITCHED] = "cm_pitched_t",
    [CM__KIND_ARRAY] = "cm_array_t",
    [CM__KIND_TEXTURE] = "cm_texture_t",
    [CM__KIND_SURFACE] = "cm_surface_t",
    [CM__KIND_MANAGED] = "cm_managed_t",
};
/* What ending a handle of each kind is called in messages. */
static const char *const cm__kind_ended[CM__KIND_COUNT] = {
    [CM__KIND_NONE] = "released",
    [CM__KIND_DEVICE] = "closed",
    [CM__KIND_BUFFER] = "destroyed",
    [CM__KIND_HOST_BUFFER] = "destroyed",
    [CM__KIND_STREAM] = "released",
    [CM__KIND_EVENT] = "released",
    [CM__KIND_TIMER] = "destroyed",
    [CM__KIND_GRAPH] = "destroyed",
    [CM__KIND_DEVICE_SET] = "closed",
    [CM__KIND_SPLIT] = "destroyed",
    [CM__KIND_COMM] = "destroyed",
    [CM__KIND_PITCHED] = "destroyed",
    [CM__KIND_ARRAY] = "destroyed",
    [CM__KIND_TEXTURE] = "destroyed",
    [CM__KIND_SURFACE] = "destroyed",
    [CM__KIND_MANAGED] = "destroyed",
};

#endif /* CUDAMODEL_SRC_CORE_HANDLE_NAMES_H */
