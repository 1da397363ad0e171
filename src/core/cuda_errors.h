/* The table of CUDA runtime errors (src/cuda_errors.c). Private. */
#ifndef CUDAMODEL_SRC_CUDA_ERRORS_H
#define CUDAMODEL_SRC_CUDA_ERRORS_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include <cudamodel/status.h>

typedef struct cm__cuda_error_entry {
    int code;            /* cudaError_t value */
    const char *name;    /* its enumerator's name, e.g. "cudaErrorInvalidValue" */
    cm_status_t status;  /* what it maps to */
    bool sticky;         /* loses the context: the process must restart */
    const char *hint;    /* how to fix it */
} cm__cuda_error_entry_t;

/** The entry for code, or NULL when CUDA 13 defines no such error. */
const cm__cuda_error_entry_t *cm__cuda_error_lookup(int code);
/** The entry for code, or a generic "unknown error" entry (never NULL). */
const cm__cuda_error_entry_t *cm__cuda_error_entry(int code);
/** Number of entries, and the i-th (NULL past the end): for tests that walk the table. */
size_t cm__cuda_error_table_size(void);
const cm__cuda_error_entry_t *cm__cuda_error_at(size_t i);

#endif /* CUDAMODEL_SRC_CUDA_ERRORS_H */
