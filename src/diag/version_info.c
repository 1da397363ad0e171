/*
 * cm_version_info() (version.h): the library's version and build, the CUDA runtime and driver,
 * and NCCL in one query. In diag because it reads the internals of core (CUDA versions, the
 * build's architectures) and of multi (NCCL); cm_version_string() stays in core/version.c.
 * A version that cannot be read is 0 in its field, never a failure of the call.
 */
#include <string.h>

#include <cudamodel/version.h>

#include "../core/internal.h"
#include "../multi/multi_internal.h"

cm_status_t cm_version_info(cm_version_info_t *out) {
    CM__REQUIRE(out != NULL, "pass the address of a cm_version_info_t", "out is NULL");
    memset(out, 0, sizeof *out);
    out->library = (unsigned int)CM_VERSION_NUMBER;
    out->library_string = cm_version_string();
    out->runtime = cm__runtime_version();
    out->runtime_built = cm__runtime_version_built();
    out->driver = cm__driver_version();
    out->cuda_architectures = cm__build_cuda_architectures();
    out->nccl_built = cm__nccl_built();
    out->nccl_built_version = cm__nccl_version_built();
    out->nccl = out->nccl_built ? cm__nccl_version() : 0;
    return CM_OK;
}
