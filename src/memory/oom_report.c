/*
 * The out-of-memory report (buffer.h, "Out of memory"): what was asked, what the device has,
 * what this process holds through the library, what is held outside it, the largest allocation
 * that succeeds now (when the request should have fit), and what to do. cm__oom_format() is a
 * pure function of the numbers, so the text is tested without a GPU; cm__oom_report() gathers
 * the numbers on a real failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "../core/nvml_query.h"
#include "memory_internal.h"

#define CM__PROBE_GRANULARITY ((size_t)2 << 20) /* device allocations come in 2 MiB pages */


/* Processes listed by name in the message; the others are summed. */
#define CM__OOM_NAMED_HOLDERS 3
/* Processes the report asks NVML for. */
#define CM__OOM_MAX_PROCESSES 32

/* What the other processes on the GPU hold, summed (known amounts only). */
typedef struct cm__holders {
    size_t visible, invisible, unlisted;          /* other processes by kind */
    size_t visible_bytes, invisible_bytes;
    const cm_process_info_t *largest;             /* the largest visible one, NULL if none */
} cm__holders_t;

/* Entries of n->processes (none without the list). */
static size_t cm__holders_listed(const cm__oom_numbers_t *n) {
    return n->processes != NULL ? n->n_processes : 0;
}

static void cm__holders_sum(const cm__oom_numbers_t *n, cm__holders_t *h) {
    memset(h, 0, sizeof *h);
    size_t listed = cm__holders_listed(n);
    for (size_t i = 0; i < listed; ++i) {
        const cm_process_info_t *p = &n->processes[i];
        if (p->self) continue;
        size_t bytes = p->used_bytes == CM_PROCESS_BYTES_UNKNOWN ? 0 : (size_t)p->used_bytes;
        if (p->visible) {
            ++h->visible;
            h->visible_bytes += bytes;
            if (h->largest == NULL) h->largest = p;
        } else {
            ++h->invisible;
            h->invisible_bytes += bytes;
        }
    }
    if (n->process_count > listed) h->unlisted = n->process_count - listed;
}

/* "python3 (pid 4541) holds 8.50 GiB" */
static void cm__holder_text(cm__text_t *t, const cm_process_info_t *p) {
    char bytes[32];
    if (p->name[0] != '\0') cm__text_printf(t, "%s (pid %u)", p->name, p->pid);
    else cm__text_printf(t, "pid %u", p->pid);
    if (p->used_bytes == CM_PROCESS_BYTES_UNKNOWN)
        cm__text_printf(t, " holds an amount NVML does not report");
    else
        cm__text_printf(t, " holds %s", cm__format_bytes((size_t)p->used_bytes, bytes, sizeof bytes));
}

/* The other processes on the GPU, largest first: "; other processes on this GPU: python3 (pid
 * 4541) holds 8.50 GiB, ... and 2 processes not visible from here hold 3.00 GiB". */
static void cm__holders_message(cm__text_t *m, const cm__oom_numbers_t *n, const cm__holders_t *h) {
    char bytes[32];
    if (h->visible == 0 && h->invisible == 0 && h->unlisted == 0) {
        cm__text_printf(m, "; NVML lists no other process on this GPU");
        return;
    }
    char parts[CM__OOM_NAMED_HOLDERS + 3][128];
    int np = 0;
    size_t more = 0, more_bytes = 0, listed = cm__holders_listed(n);
    for (size_t i = 0; i < listed; ++i) {
        const cm_process_info_t *p = &n->processes[i];
        if (p->self || !p->visible) continue;
        if (np < CM__OOM_NAMED_HOLDERS) {
            cm__text_t t = {parts[np], sizeof parts[np], 0};
            parts[np][0] = '\0';
            cm__holder_text(&t, p);
            ++np;
        } else {
            ++more;
            if (p->used_bytes != CM_PROCESS_BYTES_UNKNOWN) more_bytes += (size_t)p->used_bytes;
        }
    }
    if (more > 0)
        snprintf(parts[np++], sizeof parts[0], "%zu more hold%s %s", more, more == 1 ? "s" : "",
                 cm__format_bytes(more_bytes, bytes, sizeof bytes));
    if (h->invisible > 0)
        snprintf(parts[np++], sizeof parts[0], "%zu process%s not visible from here hold%s %s",
                 h->invisible, h->invisible == 1 ? "" : "es", h->invisible == 1 ? "s" : "",
                 cm__format_bytes(h->invisible_bytes, bytes, sizeof bytes));
    if (h->unlisted > 0)
        snprintf(parts[np++], sizeof parts[0], "%zu more that are not listed here", h->unlisted);
    cm__text_printf(m, "; other processes on this GPU: ");
    for (int i = 0; i < np; ++i) {
        const char *sep = i == 0 ? "" : i < np - 1 ? ", " : np > 2 ? ", and " : " and ";
        cm__text_printf(m, "%s%s", sep, parts[i]);
    }
}

/* Append one "; "-separated item to the hint only when it fits whole. */
static void cm__hint_add(cm__text_t *t, const char *item) {
    size_t sep = t->len > 0 ? 2 : 0;
    if (t->len + sep + strlen(item) + 1 > t->size) return;
    cm__text_printf(t, "%s%s", sep ? "; " : "", item);
}

void cm__oom_format(const cm__oom_numbers_t *n, char *msg, size_t msg_size, char *hint,
                    size_t hint_size) {
    char req[32], total[32], freeb[32], ours[32], live[32], cached[32], trimmed[32], other[32],
        largest[32];
    size_t ours_bytes = n->live_bytes + n->cached_bytes;
    size_t used = n->total_bytes > n->free_bytes ? n->total_bytes - n->free_bytes : 0;
    size_t other_bytes = used > ours_bytes ? used - ours_bytes : 0;
    bool sizes_known = n->total_bytes > 0;
    cm__format_bytes(n->requested, req, sizeof req);
    cm__format_bytes(n->total_bytes, total, sizeof total);
    cm__format_bytes(n->free_bytes, freeb, sizeof freeb);
    cm__format_bytes(ours_bytes, ours, sizeof ours);
    cm__format_bytes(n->live_bytes, live, sizeof live);
    cm__format_bytes(n->cached_bytes, cached, sizeof cached);
    cm__format_bytes(n->trimmed_bytes, trimmed, sizeof trimmed);
    cm__format_bytes(other_bytes, other, sizeof other);
    cm__format_bytes(n->largest_ok, largest, sizeof largest);
    const char *name = n->device_name != NULL && n->device_name[0] ? n->device_name : "GPU";
    cm__holders_t holders;
    cm__holders_sum(n, &holders);

    if (msg != NULL && msg_size > 0) {
        cm__text_t m = {msg, msg_size, 0};
        msg[0] = '\0';
        cm__text_printf(&m, "out of memory: cannot allocate %s (%zu bytes)%s on device %d (%s)", req,
                        n->requested, n->stream_ordered ? " for a stream-ordered buffer" : "",
                        n->device, name);
        if (sizes_known)
            cm__text_printf(&m, "; the device has %s in total, %s free", total, freeb);
        else
            cm__text_printf(&m, "; the device's free and total memory could not be read");
        cm__text_printf(&m, "; this process holds %s through libcudamodel (%s in %zu live buffer%s, "
                        "%s cached in its pools", ours, live, n->live_buffers,
                        n->live_buffers == 1 ? "" : "s", cached);
        if (n->not_attempted)
            cm__text_printf(&m, "); not attempted: no allocation larger than the device's whole "
                            "memory can succeed");
        else if (n->trimmed_bytes > 0)
            cm__text_printf(&m, " after %s were released for a second attempt)", trimmed);
        else
            cm__text_printf(&m, "; a second attempt after trimming them failed too)");
        if (sizes_known)
            cm__text_printf(&m, "; %s is held outside the library (other processes, CUDA contexts, "
                            "direct CUDA allocations)", other);
        if (n->processes_known) cm__holders_message(&m, n, &holders);
        if (n->largest_known) {
            if (n->largest_ok > 0)
                cm__text_printf(&m, "; the largest allocation that succeeds now is %s", largest);
            else
                cm__text_printf(&m, "; not even %zu MiB can be allocated now",
                                CM__PROBE_GRANULARITY >> 20);
        }
    }

    if (hint != NULL && hint_size > 0) {
        cm__text_t h = {hint, hint_size, 0};
        hint[0] = '\0';
        char item[CM_ERROR_HINT_MAX];
        if (sizes_known && n->requested > n->total_bytes) {
            snprintf(item, sizeof item, "the request alone is larger than the whole GPU (%s): split "
                     "the work into smaller batches or tiles", total);
            cm__hint_add(&h, item);
        } else if (n->largest_known && n->largest_ok > 0) {
            snprintf(item, sizeof item, "ask for at most %s at once (smaller batches or tiles)",
                     largest);
            cm__hint_add(&h, item);
        } else if (!n->largest_known && sizes_known && n->free_bytes >= CM__PROBE_GRANULARITY &&
                   n->requested > n->free_bytes) {
            snprintf(item, sizeof item, "ask for at most %s at once, the free memory now (smaller "
                     "batches or tiles)", freeb);
            cm__hint_add(&h, item);
        } else {
            cm__hint_add(&h, "use smaller batches or tiles");
        }
        if (n->live_buffers > 0) {
            snprintf(item, sizeof item, "destroy buffers you no longer need (%zu live, %s; "
                     "cm_device_leak_report() lists them)", n->live_buffers, live);
            cm__hint_add(&h, item);
        }
        if (n->cached_bytes > 0) {
            cm__hint_add(&h, "release cached pool memory of other streams' frees once they "
                             "complete (synchronize, then cm_device_pool_trim())");
        }
        if (!n->processes_known && other_bytes > 0) {
            snprintf(item, sizeof item, "%s is used outside the library: nvidia-smi "
                     "--query-compute-apps=pid,process_name,used_memory --format=csv names the "
                     "processes that hold it", other);
            cm__hint_add(&h, item);
        } else if (n->processes_known && holders.largest != NULL) {
            char big[32];
            const cm_process_info_t *p = holders.largest;
            snprintf(item, sizeof item, "stop the other processes holding this GPU's memory or "
                     "wait for them (the largest: %s%spid %u, %s), or run on another GPU "
                     "(CUDA_VISIBLE_DEVICES)", p->name, p->name[0] ? ", " : "", p->pid,
                     p->used_bytes == CM_PROCESS_BYTES_UNKNOWN
                         ? "amount not reported"
                         : cm__format_bytes((size_t)p->used_bytes, big, sizeof big));
            cm__hint_add(&h, item);
        } else if (n->processes_known && holders.invisible > 0) {
            char held[32];
            snprintf(item, sizeof item, "processes of another container hold %s of this GPU: ask "
                     "their owner, or run on another GPU (CUDA_VISIBLE_DEVICES)",
                     cm__format_bytes(holders.invisible_bytes, held, sizeof held));
            cm__hint_add(&h, item);
        } else if (n->processes_known && other_bytes > 0 && holders.unlisted == 0) {
            snprintf(item, sizeof item, "NVML lists no other process on this GPU: the %s outside "
                     "the library is this process's own (its CUDA context, direct CUDA "
                     "allocations, other libraries)", other);
            cm__hint_add(&h, item);
        }
    }
}

size_t cm__probe_largest(size_t limit, int max_probes, bool *known) {
    *known = false;
    size_t hi = limit - limit % CM__PROBE_GRANULARITY; /* candidate */
    size_t lo = 0;                                      /* largest size that succeeded */
    if (hi == 0) {
        *known = true;
        return 0;
    }
    size_t size = hi;
    for (int probe = 0; probe < max_probes && size > lo; ++probe) {
        void *p = NULL;
        cudaError_t err = cm__cuda.device_malloc(&p, size);
        if (err == cudaSuccess) {
            (void)cm__cuda.device_free(p);
            *known = true;
            lo = size;
        } else if (err == cudaErrorMemoryAllocation) {
            (void)cm__cuda.get_last_error();
            *known = true;
            hi = size;
        } else {
            (void)cm__cuda.get_last_error();
            *known = false;
            return 0;
        }
        /* next: halfway between what worked and what did not, on the granularity */
        size_t mid = lo + (hi - lo) / 2;
        mid -= mid % CM__PROBE_GRANULARITY;
        if (mid <= lo) break;
        size = mid;
    }
    return lo;
}

static cm_status_t cm__oom_record(struct cm__device *dev, size_t requested, size_t trimmed,
                                  bool stream_ordered, bool not_attempted, cudaError_t err,
                                  const char *call, const char *file, int line) {
    cm__oom_numbers_t n;
    memset(&n, 0, sizeof n);
    n.device = dev->ordinal;
    n.device_name = dev->name;
    n.requested = requested;
    n.trimmed_bytes = trimmed;
    n.stream_ordered = stream_ordered;
    n.not_attempted = not_attempted;
    /* free memory and probes are of the current device: make it the buffer's */
    cm__scope_t sc;
    bool in = cm__enter(dev->ordinal, 1, &sc) == CM_OK;
    if (!in || cm__cuda.mem_get_info(&n.free_bytes, &n.total_bytes) != cudaSuccess) {
        (void)cm__cuda.get_last_error();
        n.free_bytes = 0;
        n.total_bytes = 0;
    }
    cm__ordinal_holdings(dev->ordinal, &n.live_bytes, &n.live_buffers, &n.cached_bytes);
    /* Probe only a request that failed although the free memory would hold it (fragmentation,
     * or memory taken meanwhile), and only below the request: a probe holds what it gets for a
     * moment, and one that took all the free memory would make the allocations of other
     * threads and processes fail while it runs. A request larger than the free memory needs no
     * probe: the free memory bounds what fits. 8 probes: within 1/256 of the request. */
    if (in && n.total_bytes > 0 && requested > CM__PROBE_GRANULARITY && requested <= n.free_bytes)
        n.largest_ok = cm__probe_largest(requested - 1, 8, &n.largest_known);
    if (in) cm__leave(&sc);
    /* who else holds the GPU (NVML; without it the hint names nvidia-smi) */
    cm_process_info_t procs[CM__OOM_MAX_PROCESSES];
    char nvml_reason[CM__NVML_REASON_MAX];
    size_t nprocs = 0;
    n.processes_known = cm__nvml_processes(dev->ordinal, procs, CM__OOM_MAX_PROCESSES, &nprocs,
                                           nvml_reason, sizeof nvml_reason);
    n.processes = procs;
    n.process_count = nprocs;
    n.n_processes = nprocs < CM__OOM_MAX_PROCESSES ? nprocs : CM__OOM_MAX_PROCESSES;

    cm_status_t status = cm_record_cuda_error(err, call, file, line);
    cm_error_t *e = cm__detail();
    if (!e->context_lost) {
        status = CM_ERROR_DEVICE_OUT_OF_MEMORY;
        e->status = status;
        e->device = dev->ordinal;
        cm__oom_format(&n, e->message, sizeof e->message, e->hint, sizeof e->hint);
    }
    return status;
}

cm_status_t cm__oom_report(struct cm__device *dev, size_t requested, size_t trimmed,
                           bool stream_ordered, cudaError_t err, const char *call, const char *file,
                           int line) {
    return cm__oom_record(dev, requested, trimmed, stream_ordered, false, err, call, file, line);
}

cm_status_t cm__oom_refuse_oversize(struct cm__device *dev, size_t requested, bool stream_ordered,
                                    const char *call, const char *func, const char *file,
                                    int line) {
    if (dev->total_bytes == 0 || requested <= dev->total_bytes) return CM_OK;
    char text[CM_ERROR_CALL_MAX];
    snprintf(text, sizeof text, "%s(%zu bytes) in %s, not called: more than the device has", call,
             requested, func);
    return cm__oom_record(dev, requested, 0, stream_ordered, true, cudaErrorMemoryAllocation, text,
                          file, line);
}
