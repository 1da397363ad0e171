/*
 * The core's locks and their order (private).
 *
 * Lock order (a thread holding a lock may take only locks below it in this list):
 *   1. a device's staging mutex (memory part, dev->staging.lock): held across a staged copy,
 *      which makes CUDA calls; never held while taking another device's.
 *   2. the core spin lock (cm__core_lock()): the handle table, every device's live list and
 *      counters, the list of open devices, and the execution part's stream and event pools.
 *      Short sections only: no CUDA call, no wait, no allocation but a handle's.
 *   3. the lost-context mutex of status.c (leaf).
 *   4. the NVML state mutex of nvml_query.c (leaf): held across nvmlInit_v2 / nvmlShutdown
 *      only, never across a CUDA call.
 * No CUDA or NCCL call is ever made while a spin lock is held.
 */
#ifndef CUDAMODEL_SRC_CORE_LOCK_H
#define CUDAMODEL_SRC_CORE_LOCK_H

/** Take / drop the core spin lock (test-and-test-and-set, yields after a short spin). */
void cm__core_lock(void);
void cm__core_unlock(void);
/** Whether the core spin lock is taken right now (a test's watchdog samples it to tell a thread
 * stuck under the lock from one stuck in a CUDA call). */
int cm__core_lock_held_for_tests(void);

#endif /* CUDAMODEL_SRC_CORE_LOCK_H */
