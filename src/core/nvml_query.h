/*
 * The core's use of NVML (private): initialisation once per process, the NVML device of a CUDA
 * ordinal (by PCI bus id), the processes holding a GPU, and its health (device.h). The memory
 * module's out-of-memory report and the diagnostics build on these; every NVML call goes through
 * the call table (core/calls.h), so host tests fake NVML by replacing its nvml_* members.
 *
 * None of these records a failure in the thread's last-error detail: NVML missing or failing is
 * data ("not available: <reason>"), never an error of the calling operation. Thread-safe.
 */
#ifndef CUDAMODEL_SRC_CORE_NVML_QUERY_H
#define CUDAMODEL_SRC_CORE_NVML_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include <cudamodel/device.h>

#include "nvml_api.h"

/** Capacity of a reason text (why NVML or one of its answers is not available). */
#define CM__NVML_REASON_MAX 256

/** Initialise NVML on first use (nvmlInit_v2 through the table; kept until the process ends,
 *  or until cm__nvml_reset_for_tests()). false with the reason when NVML cannot be used; the
 *  answer of the first attempt is kept. */
bool cm__nvml_ready(char *reason, size_t size);

/** The PCI bus id of a CUDA ordinal ("00000000:3b:00.0", NVML's form) from the device's PCI
 *  attributes; false with the reason when they cannot be read. */
bool cm__nvml_pci_bus_id(int ordinal, char *bus_id, size_t size, char *reason, size_t rsize);

/** The NVML device of a CUDA ordinal, matched by PCI bus id (bus_id receives it; may be NULL).
 *  Initialises NVML when needed. false with the reason. */
bool cm__nvml_device(int ordinal, cm__nvml_device_t *device, char *bus_id, size_t bus_size,
                     char *reason, size_t rsize);

/** The processes on a GPU, largest first (unknown amounts last), with their /proc names:
 *  min(cap, *count) entries in out, *count = all of them. false with the reason (and *count 0)
 *  when NVML cannot list them. No argument checks (callers pass an existing ordinal). */
bool cm__nvml_processes(int ordinal, cm_process_info_t *out, size_t cap, size_t *count,
                        char *reason, size_t rsize);

/** Stable name of an NVML return code ("NVML_ERROR_NO_PERMISSION"); "NVML_ERROR_?" when unknown. */
const char *cm__nvml_error_name(cm__nvml_return_t r);

/** Forget NVML's state: nvmlShutdown through the current table when it was initialised, and
 *  the cached answer (tests that swap the table's NVML members call it before and after). */
void cm__nvml_reset_for_tests(void);

/** Read process names and visibility under root instead of "/proc" (tests; NULL: "/proc").
 *  root must stay valid while set. */
void cm__nvml_set_proc_root_for_tests(const char *root);

#endif /* CUDAMODEL_SRC_CORE_NVML_QUERY_H */
